//! The conversation's own messages: `assistant`, `user` and `result`, with the structs they carry.

use std::collections::BTreeMap;

use serde_json::{Number, Value};

use crate::content::{BetaMessage, MessageParam, Usage};
use crate::extra::open_struct;
use crate::util::present;
use crate::values::{
    AssistantMessageError, FastModeState, ResultSubtype, StopReason, TerminalReason,
};

impl UserMessage {
    /// `true` on `--replay-user-messages` echoes.
    pub fn is_replay(&self) -> bool {
        self.is_replay.unwrap_or(false)
    }

    /// `true` on CLI-generated prompts.
    pub fn is_synthetic(&self) -> bool {
        self.is_synthetic.unwrap_or(false)
    }
}

open_struct! {
    /// `assistant`: one completed content block of a model response (frames of one response share
    /// `message.id`). CLI-made error frames have `model:"<synthetic>"` and `error` set.
    pub struct AssistantMessage {
        /// The API message; `content` holds one block.
        pub message: BetaMessage,
        /// Non-null inside a subagent started by that tool_use.
        #[serialize_always]
        pub parent_tool_use_id: Option<String>,
        pub error: Option<AssistantMessageError>,
        pub request_id: Option<String>,
        pub user_message_uuid: Option<String>,
        pub user_message_uuids: Option<Vec<String>>,
        pub resume_reason: Option<String>,
        pub resumed_from_incomplete_thinking: Option<bool>,
        pub supersedes: Option<Vec<String>>,
        pub aborted: Option<bool>,
        pub agent_id: Option<String>,
        pub subagent_type: Option<String>,
        pub task_description: Option<String>,
        pub timestamp: Option<String>,
        #[serde(default, deserialize_with = "present")]
        pub context_usage: Option<Value>,
        #[serde(default, deserialize_with = "present")]
        pub usage_report: Option<Value>,
        pub uuid: String,
        pub session_id: String,
    }

    /// `user` (both directions): a client prompt, a CLI tool_result / synthetic message, or an
    /// `isReplay` echo of a client message (same `uuid`).
    pub struct UserMessage {
        pub message: MessageParam,
        /// Always sent (as `null` for top-level prompts): the CLI requires the field.
        #[serialize_always]
        pub parent_tool_use_id: Option<String>,
        /// The client-chosen id; echoes and `command_lifecycle` refer to it.
        pub uuid: Option<String>,
        /// `""` is accepted from clients.
        pub session_id: Option<String>,
        /// `true` on `--replay-user-messages` echoes.
        #[serde(rename = "isReplay")]
        pub is_replay: Option<bool>,
        /// `true` on CLI-generated prompts (e.g. the max_tokens auto-continue).
        #[serde(rename = "isSynthetic")]
        pub is_synthetic: Option<bool>,
        /// Structured tool output (any JSON, often an object or a string).
        #[serde(default, deserialize_with = "present")]
        pub tool_use_result: Option<Value>,
        /// Internal: how each tool_result was permitted.
        pub tool_result_meta: Option<Vec<ToolResultMeta>>,
        pub timestamp: Option<String>,
        pub priority: Option<String>,
        #[serde(default, deserialize_with = "present")]
        pub origin: Option<Value>,
        #[serde(rename = "shouldQuery")]
        pub should_query: Option<bool>,
        pub client_composed: Option<bool>,
        pub file_attachments: Option<Vec<Value>>,
        pub pasted_content: Option<Vec<Value>>,
        pub inline_pastes: Option<Vec<String>>,
        pub agent_id: Option<String>,
        pub subagent_type: Option<String>,
        pub task_description: Option<String>,
    }

    /// An entry of `user.tool_result_meta` (internal).
    pub struct ToolResultMeta {
        pub id: String,
        pub permission_decision: Option<PermissionDecisionMeta>,
        pub non_execution_kind: Option<String>,
    }

    /// `tool_result_meta[].permission_decision`.
    pub struct PermissionDecisionMeta {
        /// `accept` or `reject`.
        pub decision: String,
        /// `config`, `user_temporary`, `user_reject`, …
        pub source: String,
        pub reason_type: Option<String>,
    }

    /// `result`: exactly one per turn, the turn-complete signal. API failures end with
    /// `subtype:"success"` and `is_error:true` (see REAL-CLI-NOTES §1).
    pub struct ResultMessage {
        pub subtype: ResultSubtype,
        pub is_error: bool,
        /// The CLI always sends it; absent on the relay's transcript replay (no turn ran).
        #[serde(default)]
        pub duration_ms: Option<Number>,
        #[serde(default)]
        pub duration_api_ms: Option<Number>,
        #[serde(default)]
        pub num_turns: Option<u64>,
        /// Text of the turn's last text block (success only).
        pub result: Option<String>,
        /// `StopReason | null`, may be absent.
        #[serde(default, deserialize_with = "present")]
        pub stop_reason: Option<Option<StopReason>>,
        /// The CLI process's running total.
        #[serde(default)]
        pub total_cost_usd: Option<Number>,
        #[serde(default)]
        pub usage: Option<Usage>,
        #[serde(rename = "modelUsage", default)]
        pub model_usage: Option<BTreeMap<String, ModelUsage>>,
        #[serde(default)]
        pub permission_denials: Option<Vec<PermissionDenial>>,
        /// Error subtypes only.
        pub errors: Option<Vec<String>>,
        #[serde(default, deserialize_with = "present")]
        pub api_error_status: Option<Option<u16>>,
        pub terminal_reason: Option<TerminalReason>,
        #[serde(default, deserialize_with = "present")]
        pub structured_output: Option<Value>,
        #[serde(default, deserialize_with = "present")]
        pub deferred_tool_use: Option<Value>,
        pub queued_turn_count: Option<u64>,
        pub result_index: Option<u64>,
        pub user_message_uuid: Option<String>,
        pub user_message_uuids: Option<Vec<String>>,
        pub resume_reason: Option<String>,
        pub local_command: Option<String>,
        pub fast_mode_state: Option<FastModeState>,
        pub fast_mode_disabled_reason: Option<String>,
        pub ttft_ms: Option<Number>,
        #[serde(default, deserialize_with = "present")]
        pub origin: Option<Value>,
        pub uuid: String,
        pub session_id: String,
    }

    /// Per-model usage in `result.modelUsage`.
    pub struct ModelUsage {
        #[serde(rename = "inputTokens")]
        pub input_tokens: u64,
        #[serde(rename = "outputTokens")]
        pub output_tokens: u64,
        #[serde(rename = "cacheReadInputTokens")]
        pub cache_read_input_tokens: u64,
        #[serde(rename = "cacheCreationInputTokens")]
        pub cache_creation_input_tokens: u64,
        #[serde(rename = "webSearchRequests")]
        pub web_search_requests: u64,
        #[serde(rename = "costUSD")]
        pub cost_usd: Number,
        #[serde(rename = "contextWindow")]
        pub context_window: u64,
        #[serde(rename = "maxOutputTokens")]
        pub max_output_tokens: u64,
        #[serde(rename = "thinkingTokens")]
        pub thinking_tokens: Option<u64>,
    }

    /// An entry of `result.permission_denials`.
    pub struct PermissionDenial {
        pub tool_name: String,
        pub tool_use_id: String,
        pub tool_input: Value,
    }
}
