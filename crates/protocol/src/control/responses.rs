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
        #[serde(skip_serializing_if = "Option::is_none")]
        pub claude_code_version: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub current_permission_mode: Option<PermissionMode>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub session_state: Option<SessionState>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub pid: Option<u64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub capabilities: Option<Vec<String>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub fast_mode_state: Option<FastModeState>,
    }

    /// `SlashCommand`.
    pub struct SlashCommand {
        pub name: String,
        pub description: String,
        #[serde(rename = "argumentHint")]
        pub argument_hint: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub aliases: Option<Vec<String>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub builtin: Option<bool>,
    }

    /// `AgentInfo`.
    pub struct AgentInfo {
        pub name: String,
        pub description: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub model: Option<String>,
    }

    /// `ModelInfo`.
    pub struct ModelInfo {
        pub value: String,
        #[serde(rename = "displayName")]
        pub display_name: String,
        pub description: String,
        #[serde(rename = "resolvedModel", skip_serializing_if = "Option::is_none")]
        pub resolved_model: Option<String>,
        #[serde(rename = "supportsEffort", skip_serializing_if = "Option::is_none")]
        pub supports_effort: Option<bool>,
        #[serde(
            rename = "supportedEffortLevels",
            skip_serializing_if = "Option::is_none"
        )]
        pub supported_effort_levels: Option<Vec<String>>,
    }

    /// `AccountInfo`.
    #[derive(Default)]
    pub struct AccountInfo {
        #[serde(skip_serializing_if = "Option::is_none")]
        pub email: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub organization: Option<String>,
        #[serde(rename = "subscriptionType", skip_serializing_if = "Option::is_none")]
        pub subscription_type: Option<String>,
        #[serde(rename = "tokenSource", skip_serializing_if = "Option::is_none")]
        pub token_source: Option<String>,
        #[serde(rename = "apiKeySource", skip_serializing_if = "Option::is_none")]
        pub api_key_source: Option<String>,
        #[serde(rename = "apiProvider", skip_serializing_if = "Option::is_none")]
        pub api_provider: Option<String>,
    }

    /// `interrupt` answer: `{still_queued, cancelled?}`.
    #[derive(Default)]
    pub struct InterruptResponse {
        pub still_queued: Vec<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub cancelled: Option<Vec<String>>,
    }

    /// `set_permission_mode` answer: the mode in effect.
    #[derive(Default)]
    pub struct SetPermissionModeResponse {
        #[serde(skip_serializing_if = "Option::is_none")]
        pub mode: Option<PermissionMode>,
    }

    /// `rewind_files` answer (`RewindFilesResult`).
    #[derive(Default)]
    pub struct RewindFilesResponse {
        #[serde(rename = "canRewind")]
        pub can_rewind: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub error: Option<String>,
        #[serde(rename = "filesChanged", skip_serializing_if = "Option::is_none")]
        pub files_changed: Option<Vec<String>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub insertions: Option<u64>,
        #[serde(skip_serializing_if = "Option::is_none")]
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
        #[serde(skip_serializing_if = "Option::is_none")]
        pub content: Option<Map<String, Value>>,
    }

    /// Answer to `request_user_dialog`.
    pub struct UserDialogResponse {
        pub behavior: DialogBehavior,
        #[serde(
            default,
            deserialize_with = "present",
            skip_serializing_if = "Option::is_none"
        )]
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
        #[serde(rename = "async", skip_serializing_if = "Option::is_none")]
        pub is_async: Option<bool>,
        #[serde(rename = "continue", skip_serializing_if = "Option::is_none")]
        pub continue_: Option<bool>,
        #[serde(rename = "suppressOutput", skip_serializing_if = "Option::is_none")]
        pub suppress_output: Option<bool>,
        #[serde(rename = "stopReason", skip_serializing_if = "Option::is_none")]
        pub stop_reason: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub decision: Option<String>,
        #[serde(rename = "systemMessage", skip_serializing_if = "Option::is_none")]
        pub system_message: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub reason: Option<String>,
        #[serde(rename = "hookSpecificOutput", skip_serializing_if = "Option::is_none")]
        pub hook_specific_output: Option<Value>,
    }
}
