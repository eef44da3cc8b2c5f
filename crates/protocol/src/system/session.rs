//! `system` subtypes about the session itself: init, status, compaction, retries, refusals,
//! local command output, hooks and plugin installs.

use serde_json::{Number, Value};

use crate::extra::open_struct;
use crate::util::present;
use crate::values::{
    AssistantMessageError, FastModeState, HookEvent, HookOutcome, PermissionMode, StatusKind,
};

open_struct! {
    /// `system/init`: sent at the start of every turn (tools, model, permission mode, …).
    pub struct SystemInit {
        pub cwd: String,
        pub model: String,
        /// The permission mode in effect.
        #[serde(rename = "permissionMode")]
        pub permission_mode: PermissionMode,
        pub tools: Vec<String>,
        pub mcp_servers: Vec<McpServerInfo>,
        pub slash_commands: Vec<String>,
        #[serde(rename = "apiKeySource")]
        pub api_key_source: String,
        pub claude_code_version: String,
        pub output_style: String,
        pub skills: Vec<String>,
        pub plugins: Vec<PluginInfo>,
        pub agents: Option<Vec<String>>,
        pub betas: Option<Vec<String>>,
        pub terminal_slash_commands: Option<Vec<String>>,
        pub plugin_errors: Option<Vec<Value>>,
        pub fast_mode_state: Option<FastModeState>,
        pub fast_mode_disabled_reason: Option<String>,
        #[serde(default, deserialize_with = "present")]
        pub effort: Option<Option<String>>,
        pub view_mode: Option<String>,
        pub capabilities: Option<Vec<String>>,
        /// The prompts this turn answers (observed, internal).
        pub user_message_uuids: Option<Vec<String>>,
        pub uuid: String,
        pub session_id: String,
    }

    /// An entry of `system/init.mcp_servers`.
    pub struct McpServerInfo {
        pub name: String,
        pub status: String,
        pub source: Option<String>,
    }

    /// An entry of `system/init.plugins`.
    pub struct PluginInfo {
        pub name: String,
        pub path: String,
        pub version: Option<String>,
        pub source: Option<String>,
    }

    /// `system/status`: `requesting` before each model request, `compacting`, or `null` with a new
    /// `permissionMode` after `set_permission_mode`.
    pub struct SystemStatus {
        #[serialize_always]
        pub status: Option<StatusKind>,
        #[serde(rename = "permissionMode")]
        pub permission_mode: Option<PermissionMode>,
        pub compact_result: Option<String>,
        pub compact_error: Option<String>,
        pub user_message_uuids: Option<Vec<String>>,
        pub uuid: String,
        pub session_id: String,
    }

    /// `system/compact_boundary`.
    pub struct SystemCompactBoundary {
        /// Always on stdout; a transcript's own boundary line (replayed by the relay) has
        /// `compactMetadata` instead, kept in `extra`.
        #[serde(default)]
        pub compact_metadata: Option<CompactMetadata>,
        pub uuid: String,
        pub session_id: String,
    }

    /// `compact_boundary.compact_metadata` (segment details stay in `extra`).
    pub struct CompactMetadata {
        pub trigger: String,
        pub pre_tokens: u64,
        pub post_tokens: Option<u64>,
        pub duration_ms: Option<Number>,
    }

    /// `system/api_retry`: the CLI is retrying a failed API request.
    pub struct SystemApiRetry {
        pub attempt: u64,
        pub max_retries: u64,
        pub retry_delay_ms: Number,
        #[serialize_always]
        pub error_status: Option<u16>,
        pub error: AssistantMessageError,
        #[serde(default, deserialize_with = "present")]
        pub no_response: Option<Value>,
        pub uuid: String,
        pub session_id: String,
    }

    /// `system/control_request_progress`.
    pub struct SystemControlRequestProgress {
        pub request_id: String,
        pub status: String,
        pub attempt: Option<u64>,
        pub max_retries: Option<u64>,
        pub retry_delay_ms: Option<Number>,
        #[serde(default, deserialize_with = "present")]
        pub error_status: Option<Option<u16>>,
        pub uuid: String,
        pub session_id: String,
    }

    /// `system/model_refusal_fallback`.
    pub struct SystemModelRefusalFallback {
        pub trigger: String,
        pub direction: String,
        pub scope: Option<String>,
        pub original_model: String,
        pub fallback_model: String,
        #[serialize_always]
        pub request_id: Option<String>,
        #[serde(default, deserialize_with = "present")]
        pub api_refusal_category: Option<Option<String>>,
        #[serde(default, deserialize_with = "present")]
        pub api_refusal_explanation: Option<Option<String>>,
        pub retracted_message_uuids: Option<Vec<String>>,
        #[serde(default, deserialize_with = "present")]
        pub refused_user_message_uuid: Option<Option<String>>,
        pub content: String,
        pub uuid: String,
        pub session_id: String,
    }

    /// `system/model_refusal_no_fallback`.
    pub struct SystemModelRefusalNoFallback {
        pub original_model: String,
        #[serialize_always]
        pub request_id: Option<String>,
        #[serde(default, deserialize_with = "present")]
        pub api_refusal_category: Option<Option<String>>,
        #[serde(default, deserialize_with = "present")]
        pub api_refusal_explanation: Option<Option<String>>,
        #[serde(default, deserialize_with = "present")]
        pub refused_user_message_uuid: Option<Option<String>>,
        pub content: String,
        pub uuid: String,
        pub session_id: String,
    }

    /// `system/local_command_output`.
    pub struct SystemLocalCommandOutput {
        pub content: String,
        pub uuid: String,
        pub session_id: String,
    }

    /// `system/hook_started`.
    pub struct SystemHookStarted {
        pub hook_id: String,
        pub hook_name: String,
        pub hook_event: HookEvent,
        pub uuid: String,
        pub session_id: String,
    }

    /// `system/hook_progress`.
    pub struct SystemHookProgress {
        pub hook_id: String,
        pub hook_name: String,
        pub hook_event: HookEvent,
        pub stdout: String,
        pub stderr: String,
        pub output: String,
        pub uuid: String,
        pub session_id: String,
    }

    /// `system/hook_response`.
    pub struct SystemHookResponse {
        pub hook_id: String,
        pub hook_name: String,
        pub hook_event: HookEvent,
        pub output: String,
        pub stdout: String,
        pub stderr: String,
        pub exit_code: Option<i64>,
        pub outcome: HookOutcome,
        pub uuid: String,
        pub session_id: String,
    }

    /// `system/plugin_install`.
    pub struct SystemPluginInstall {
        pub status: String,
        pub name: Option<String>,
        pub error: Option<String>,
        pub uuid: String,
        pub session_id: String,
    }
}
