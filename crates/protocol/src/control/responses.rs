//! The typed success payloads of `control_response`s (`initialize`, `interrupt`, …).

use serde_json::{Map, Value};

use crate::extra::open_struct;
use crate::util::present;
use crate::values::{
    DialogBehavior, ElicitationAction, FastModeState, PermissionMode, SessionState,
};

open_struct! {
    /// `SDKControlInitializeResponse` (plus the internal keys a console uses:
    /// `current_permission_mode`, `session_state`, `pid`, `capabilities`).
    pub struct InitializeResponse {
        pub commands: Vec<SlashCommand>,
        pub agents: Vec<AgentInfo>,
        pub output_style: String,
        pub available_output_styles: Vec<String>,
        pub models: Vec<ModelInfo>,
        pub account: AccountInfo,
        pub claude_code_version: Option<String>,
        pub current_permission_mode: Option<PermissionMode>,
        pub session_state: Option<SessionState>,
        pub pid: Option<u64>,
        pub capabilities: Option<Vec<String>>,
        pub fast_mode_state: Option<FastModeState>,
    }

    /// `SlashCommand`.
    pub struct SlashCommand {
        pub name: String,
        pub description: String,
        #[serde(rename = "argumentHint")]
        pub argument_hint: String,
        pub aliases: Option<Vec<String>>,
        pub builtin: Option<bool>,
    }

    /// `AgentInfo`.
    pub struct AgentInfo {
        pub name: String,
        pub description: String,
        pub model: Option<String>,
    }

    /// `ModelInfo`.
    pub struct ModelInfo {
        pub value: String,
        #[serde(rename = "displayName")]
        pub display_name: String,
        pub description: String,
        #[serde(rename = "resolvedModel")]
        pub resolved_model: Option<String>,
        #[serde(rename = "supportsEffort")]
        pub supports_effort: Option<bool>,
        #[serde(rename = "supportedEffortLevels")]
        pub supported_effort_levels: Option<Vec<String>>,
    }

    /// `AccountInfo`.
    #[derive(Default)]
    pub struct AccountInfo {
        pub email: Option<String>,
        pub organization: Option<String>,
        #[serde(rename = "subscriptionType")]
        pub subscription_type: Option<String>,
        #[serde(rename = "tokenSource")]
        pub token_source: Option<String>,
        #[serde(rename = "apiKeySource")]
        pub api_key_source: Option<String>,
        #[serde(rename = "apiProvider")]
        pub api_provider: Option<String>,
    }

    /// `interrupt` answer: `{still_queued, cancelled?}`.
    #[derive(Default)]
    pub struct InterruptResponse {
        pub still_queued: Vec<String>,
        pub cancelled: Option<Vec<String>>,
    }

    /// `set_permission_mode` answer: the mode in effect.
    #[derive(Default)]
    pub struct SetPermissionModeResponse {
        pub mode: Option<PermissionMode>,
    }

    /// `rewind_files` answer (`RewindFilesResult`).
    #[derive(Default)]
    pub struct RewindFilesResponse {
        #[serde(rename = "canRewind")]
        pub can_rewind: bool,
        pub error: Option<String>,
        #[serde(rename = "filesChanged")]
        pub files_changed: Option<Vec<String>>,
        pub insertions: Option<u64>,
        pub deletions: Option<u64>,
    }

    /// `update_environment_variables` answer: the keys actually applied (allowlisted ones only).
    #[derive(Default)]
    pub struct EnvironmentUpdateResponse {
        pub applied: Vec<String>,
    }

    /// Answer to `elicitation`.
    pub struct ElicitationResponse {
        pub action: ElicitationAction,
        pub content: Option<Map<String, Value>>,
    }

    /// Answer to `request_user_dialog`.
    pub struct UserDialogResponse {
        pub behavior: DialogBehavior,
        #[serde(default, deserialize_with = "present")]
        pub result: Option<Value>,
    }

    /// Answer to a CLI-sent `mcp_message`.
    pub struct McpMessageResponse {
        pub mcp_response: Value,
    }

    /// `HookJSONOutput` (sync form; the async form is `{"async":true,"asyncTimeout"?}`), the answer to
    /// `hook_callback`.
    #[derive(Default)]
    pub struct HookOutput {
        #[serde(rename = "async")]
        pub is_async: Option<bool>,
        #[serde(rename = "continue")]
        pub continue_: Option<bool>,
        #[serde(rename = "suppressOutput")]
        pub suppress_output: Option<bool>,
        #[serde(rename = "stopReason")]
        pub stop_reason: Option<String>,
        pub decision: Option<String>,
        #[serde(rename = "systemMessage")]
        pub system_message: Option<String>,
        pub reason: Option<String>,
        #[serde(rename = "hookSpecificOutput")]
        pub hook_specific_output: Option<Value>,
    }
}
