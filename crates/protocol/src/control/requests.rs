//! The typed bodies of `control_request`s (the subtypes a client or the CLI sends).

use serde_json::{Map, Number, Value};

use crate::extra::open_struct;
use crate::permission::PermissionUpdate;
use crate::util::present;
use crate::values::{DecisionReasonType, HookEvent, PermissionMode};

open_struct! {
    /// A request with no parameters (`get_session_cost`, `list_models`, `get_settings`, …).
    #[derive(Default)]
    pub struct EmptyRequest {
    }

    /// `can_use_tool`: the CLI asks whether a tool may run. Answer with a success whose `response` is a
    /// [`PermissionResult`] (see [`crate::build::allow`] / [`crate::build::deny`]).
    pub struct CanUseToolRequest {
        pub tool_name: String,
        pub input: Value,
        pub tool_use_id: String,
        pub mcp_server: Option<McpServerProvenance>,
        pub permission_suggestions: Option<Vec<PermissionUpdate>>,
        pub blocked_path: Option<String>,
        pub decision_reason: Option<String>,
        pub decision_reason_type: Option<DecisionReasonType>,
        pub classifier_approvable: Option<bool>,
        pub suppress_always_allow_rule: Option<bool>,
        pub default_to_no: Option<bool>,
        pub matched_ask_rule: Option<MatchedAskRule>,
        pub title: Option<String>,
        pub display_name: Option<String>,
        pub agent_id: Option<String>,
        pub description: Option<String>,
        /// `AskUserQuestion` and dialog-like asks: answers go in `updatedInput`.
        pub requires_user_interaction: Option<bool>,
    }

    /// `McpServerProvenance`.
    pub struct McpServerProvenance {
        pub name: String,
        pub source: String,
    }

    /// `can_use_tool.matched_ask_rule`.
    pub struct MatchedAskRule {
        pub source: String,
        pub tool_name: String,
        pub rule_content: Option<String>,
    }

    /// `hook_callback`: run the client-registered hook `callback_id`; answer with a `HookJSONOutput`.
    pub struct HookCallbackRequest {
        pub callback_id: String,
        pub input: HookInput,
        pub tool_use_id: Option<String>,
    }

    /// `HookInput`: the base fields plus the event-specific ones most consoles show; the other
    /// event-specific fields stay in `extra`.
    pub struct HookInput {
        pub hook_event_name: HookEvent,
        pub session_id: String,
        pub transcript_path: String,
        pub cwd: String,
        pub permission_mode: Option<String>,
        pub agent_id: Option<String>,
        pub tool_name: Option<String>,
        #[serde(default, deserialize_with = "present")]
        pub tool_input: Option<Value>,
        pub tool_use_id: Option<String>,
        pub prompt: Option<String>,
    }

    /// `mcp_message` (both directions): a JSON-RPC message for an SDK MCP server. The CLI-sent one is
    /// answered with `{"mcp_response": <JSON-RPC response>}`.
    pub struct McpMessageRequest {
        pub server_name: String,
        pub message: Value,
    }

    /// `elicitation`: an MCP server asks the user for input (form or URL).
    pub struct ElicitationRequest {
        pub mcp_server_name: String,
        pub message: String,
        pub mode: Option<String>,
        pub url: Option<String>,
        pub elicitation_id: Option<String>,
        pub requested_schema: Option<Map<String, Value>>,
        pub property_order: Option<Vec<String>>,
        pub title: Option<String>,
        pub display_name: Option<String>,
        pub description: Option<String>,
    }

    /// `request_user_dialog`: answer only when `dialog_kind` was declared in
    /// `initialize.supportedDialogKinds`.
    pub struct RequestUserDialogRequest {
        pub dialog_kind: String,
        pub payload: Value,
        pub tool_use_id: Option<String>,
    }

    /// `initialize`. The common fields are typed; the rest (`sdkMcpServerConfigs`, `toolAliases`,
    /// `plugins`, `mcpServers`, …) stay in `extra`.
    #[derive(Default)]
    pub struct InitializeRequest {
        /// `hooks: Record<HookEvent, matcher[]> | null` (the Python SDK sends `null`).
        #[serde(default, deserialize_with = "present")]
        pub hooks: Option<Option<Value>>,
        #[serde(rename = "sdkMcpServers")]
        pub sdk_mcp_servers: Option<Vec<String>>,
        #[serde(rename = "jsonSchema")]
        pub json_schema: Option<Value>,
        #[serde(rename = "systemPrompt")]
        pub system_prompt: Option<Value>,
        #[serde(rename = "appendSystemPrompt")]
        pub append_system_prompt: Option<String>,
        pub agents: Option<Value>,
        pub title: Option<String>,
        pub skills: Option<Vec<String>>,
        #[serde(rename = "promptSuggestions")]
        pub prompt_suggestions: Option<bool>,
        #[serde(rename = "agentProgressSummaries")]
        pub agent_progress_summaries: Option<bool>,
        #[serde(rename = "forwardSubagentText")]
        pub forward_subagent_text: Option<bool>,
        #[serde(rename = "supportedDialogKinds")]
        pub supported_dialog_kinds: Option<Vec<String>>,
        #[serde(rename = "excludeDynamicSections")]
        pub exclude_dynamic_sections: Option<bool>,
    }

    /// `interrupt`.
    #[derive(Default)]
    pub struct InterruptRequest {
        pub cancel_queued: Option<bool>,
    }

    /// `set_permission_mode`. The answer carries the mode actually in effect.
    pub struct SetPermissionModeRequest {
        pub mode: PermissionMode,
    }

    /// `set_model`: `model: string | null` (`null` = the default model).
    #[derive(Default)]
    pub struct SetModelRequest {
        #[serde(default, deserialize_with = "present")]
        pub model: Option<Option<String>>,
    }

    /// `set_max_thinking_tokens`.
    #[derive(Default)]
    pub struct SetMaxThinkingTokensRequest {
        #[serde(default, deserialize_with = "present")]
        pub max_thinking_tokens: Option<Option<u64>>,
        #[serde(default, deserialize_with = "present")]
        pub thinking_display: Option<Option<String>>,
    }

    /// `rewind_files`: restore files to their state at a user message.
    pub struct RewindFilesRequest {
        pub user_message_id: String,
        pub dry_run: Option<bool>,
    }

    /// `cancel_async_message`.
    pub struct CancelAsyncMessageRequest {
        pub message_uuid: String,
    }

    /// `stop_task` / `get_task_output`.
    pub struct TaskIdRequest {
        pub task_id: String,
    }

    /// `background_tasks`.
    #[derive(Default)]
    pub struct BackgroundTasksRequest {
        pub tool_use_id: Option<String>,
    }

    /// `rename_session`.
    pub struct RenameSessionRequest {
        pub title: String,
        pub source: Option<String>,
        pub session_id: Option<String>,
    }

    /// `set_color`.
    pub struct SetColorRequest {
        pub color: String,
    }

    /// `mcp_status`.
    #[derive(Default)]
    pub struct McpStatusRequest {
        #[serde(rename = "liveReply")]
        pub live_reply: Option<bool>,
    }

    /// `mcp_set_servers`.
    pub struct McpSetServersRequest {
        pub servers: Map<String, Value>,
    }

    /// `mcp_reconnect`.
    pub struct McpServerNameRequest {
        #[serde(rename = "serverName")]
        pub server_name: String,
    }

    /// `mcp_toggle`.
    pub struct McpToggleRequest {
        #[serde(rename = "serverName")]
        pub server_name: String,
        pub enabled: bool,
    }

    /// `mcp_call` (the file / timeout options stay in `extra`).
    pub struct McpCallRequest {
        pub tool: String,
        pub arguments: Option<Map<String, Value>>,
    }

    /// `mcp_read_resource`.
    pub struct McpReadResourceRequest {
        #[serde(rename = "serverName")]
        pub server_name: String,
        pub uri: String,
    }

    /// `get_context_usage`.
    #[derive(Default)]
    pub struct GetContextUsageRequest {
        pub detail: Option<String>,
    }

    /// `get_usage`.
    #[derive(Default)]
    pub struct GetUsageRequest {
        pub skip_behaviors: Option<bool>,
    }

    /// `file_suggestions`.
    pub struct FileSuggestionsRequest {
        pub query: String,
    }

    /// `read_file`.
    pub struct ReadFileRequest {
        pub path: String,
        pub max_bytes: Option<u64>,
        pub encoding: Option<String>,
    }

    /// `seed_read_state`.
    pub struct SeedReadStateRequest {
        pub path: String,
        pub mtime: Number,
    }

    /// `register_repo_root`.
    pub struct RegisterRepoRootRequest {
        pub directory: String,
        pub reload_claude_md: Option<bool>,
        pub reload_plugins: Option<bool>,
        pub reload_skills: Option<bool>,
    }

    /// `reload_plugins`.
    #[derive(Default)]
    pub struct ReloadPluginsRequest {
        pub hold_on_cache_impact: Option<bool>,
        pub add_plugins: Option<Vec<Value>>,
        pub refuse_if_busy: Option<bool>,
    }

    /// `set_has_subscribers`: `has_subscribers: boolean | null` (always sent).
    #[derive(Default)]
    pub struct SetHasSubscribersRequest {
        #[serialize_always]
        pub has_subscribers: Option<bool>,
    }

    /// `apply_flag_settings`.
    pub struct ApplyFlagSettingsRequest {
        pub settings: Map<String, Value>,
    }

    /// `update_settings` (`source`: `localSettings` | `userSettings`).
    pub struct UpdateSettingsRequest {
        pub source: String,
        pub settings: Map<String, Value>,
    }
}
