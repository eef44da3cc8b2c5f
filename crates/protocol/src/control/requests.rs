//! The typed bodies of `control_request`s (the subtypes a client or the CLI sends).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};

use crate::permission::PermissionUpdate;
use crate::util::present;
use crate::values::{DecisionReasonType, HookEvent, PermissionMode};

/// A request with no parameters (`get_session_cost`, `list_models`, `get_settings`, …).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct EmptyRequest {
    #[serde(skip)]
    pub extra: Map<String, Value>,
}

/// `can_use_tool`: the CLI asks whether a tool may run. Answer with a success whose `response` is a
/// [`PermissionResult`] (see [`crate::build::allow`] / [`crate::build::deny`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct CanUseToolRequest {
    pub tool_name: String,
    pub input: Value,
    pub tool_use_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mcp_server: Option<McpServerProvenance>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permission_suggestions: Option<Vec<PermissionUpdate>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocked_path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision_reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision_reason_type: Option<DecisionReasonType>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub classifier_approvable: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suppress_always_allow_rule: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_to_no: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matched_ask_rule: Option<MatchedAskRule>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `AskUserQuestion` and dialog-like asks: answers go in `updatedInput`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requires_user_interaction: Option<bool>,
    #[serde(skip)]
    pub extra: Map<String, Value>,
}

/// `McpServerProvenance`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct McpServerProvenance {
    pub name: String,
    pub source: String,
    #[serde(skip)]
    pub extra: Map<String, Value>,
}

/// `can_use_tool.matched_ask_rule`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct MatchedAskRule {
    pub source: String,
    pub tool_name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule_content: Option<String>,
    #[serde(skip)]
    pub extra: Map<String, Value>,
}

/// `hook_callback`: run the client-registered hook `callback_id`; answer with a `HookJSONOutput`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct HookCallbackRequest {
    pub callback_id: String,
    pub input: HookInput,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    #[serde(skip)]
    pub extra: Map<String, Value>,
}

/// `HookInput`: the base fields plus the event-specific ones most consoles show; the other
/// event-specific fields stay in `extra`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct HookInput {
    pub hook_event_name: HookEvent,
    pub session_id: String,
    pub transcript_path: String,
    pub cwd: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permission_mode: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub tool_input: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    #[serde(skip)]
    pub extra: Map<String, Value>,
}

/// `mcp_message` (both directions): a JSON-RPC message for an SDK MCP server. The CLI-sent one is
/// answered with `{"mcp_response": <JSON-RPC response>}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct McpMessageRequest {
    pub server_name: String,
    pub message: Value,
    #[serde(skip)]
    pub extra: Map<String, Value>,
}

/// `elicitation`: an MCP server asks the user for input (form or URL).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct ElicitationRequest {
    pub mcp_server_name: String,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elicitation_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requested_schema: Option<Map<String, Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub property_order: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip)]
    pub extra: Map<String, Value>,
}

/// `request_user_dialog`: answer only when `dialog_kind` was declared in
/// `initialize.supportedDialogKinds`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct RequestUserDialogRequest {
    pub dialog_kind: String,
    pub payload: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    #[serde(skip)]
    pub extra: Map<String, Value>,
}

/// `initialize`. The common fields are typed; the rest (`sdkMcpServerConfigs`, `toolAliases`,
/// `plugins`, `mcpServers`, …) stay in `extra`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct InitializeRequest {
    /// `hooks: Record<HookEvent, matcher[]> | null` (the Python SDK sends `null`).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub hooks: Option<Option<Value>>,
    #[serde(rename = "sdkMcpServers", skip_serializing_if = "Option::is_none")]
    pub sdk_mcp_servers: Option<Vec<String>>,
    #[serde(rename = "jsonSchema", skip_serializing_if = "Option::is_none")]
    pub json_schema: Option<Value>,
    #[serde(rename = "systemPrompt", skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<Value>,
    #[serde(rename = "appendSystemPrompt", skip_serializing_if = "Option::is_none")]
    pub append_system_prompt: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agents: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skills: Option<Vec<String>>,
    #[serde(rename = "promptSuggestions", skip_serializing_if = "Option::is_none")]
    pub prompt_suggestions: Option<bool>,
    #[serde(
        rename = "agentProgressSummaries",
        skip_serializing_if = "Option::is_none"
    )]
    pub agent_progress_summaries: Option<bool>,
    #[serde(
        rename = "forwardSubagentText",
        skip_serializing_if = "Option::is_none"
    )]
    pub forward_subagent_text: Option<bool>,
    #[serde(
        rename = "supportedDialogKinds",
        skip_serializing_if = "Option::is_none"
    )]
    pub supported_dialog_kinds: Option<Vec<String>>,
    #[serde(
        rename = "excludeDynamicSections",
        skip_serializing_if = "Option::is_none"
    )]
    pub exclude_dynamic_sections: Option<bool>,
    #[serde(skip)]
    pub extra: Map<String, Value>,
}

/// `interrupt`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct InterruptRequest {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cancel_queued: Option<bool>,
    #[serde(skip)]
    pub extra: Map<String, Value>,
}

/// `set_permission_mode`. The answer carries the mode actually in effect.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct SetPermissionModeRequest {
    pub mode: PermissionMode,
    #[serde(skip)]
    pub extra: Map<String, Value>,
}

/// `set_model`: `model: string | null` (`null` = the default model).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct SetModelRequest {
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub model: Option<Option<String>>,
    #[serde(skip)]
    pub extra: Map<String, Value>,
}

/// `set_max_thinking_tokens`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct SetMaxThinkingTokensRequest {
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub max_thinking_tokens: Option<Option<u64>>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub thinking_display: Option<Option<String>>,
    #[serde(skip)]
    pub extra: Map<String, Value>,
}

/// `rewind_files`: restore files to their state at a user message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct RewindFilesRequest {
    pub user_message_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dry_run: Option<bool>,
    #[serde(skip)]
    pub extra: Map<String, Value>,
}

/// `cancel_async_message`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct CancelAsyncMessageRequest {
    pub message_uuid: String,
    #[serde(skip)]
    pub extra: Map<String, Value>,
}

/// `stop_task` / `get_task_output`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct TaskIdRequest {
    pub task_id: String,
    #[serde(skip)]
    pub extra: Map<String, Value>,
}

/// `background_tasks`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct BackgroundTasksRequest {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    #[serde(skip)]
    pub extra: Map<String, Value>,
}

/// `rename_session`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct RenameSessionRequest {
    pub title: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(skip)]
    pub extra: Map<String, Value>,
}

/// `set_color`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct SetColorRequest {
    pub color: String,
    #[serde(skip)]
    pub extra: Map<String, Value>,
}

/// `mcp_status`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct McpStatusRequest {
    #[serde(rename = "liveReply", skip_serializing_if = "Option::is_none")]
    pub live_reply: Option<bool>,
    #[serde(skip)]
    pub extra: Map<String, Value>,
}

/// `mcp_set_servers`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct McpSetServersRequest {
    pub servers: Map<String, Value>,
    #[serde(skip)]
    pub extra: Map<String, Value>,
}

/// `mcp_reconnect`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct McpServerNameRequest {
    #[serde(rename = "serverName")]
    pub server_name: String,
    #[serde(skip)]
    pub extra: Map<String, Value>,
}

/// `mcp_toggle`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct McpToggleRequest {
    #[serde(rename = "serverName")]
    pub server_name: String,
    pub enabled: bool,
    #[serde(skip)]
    pub extra: Map<String, Value>,
}

/// `mcp_call` (the file / timeout options stay in `extra`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct McpCallRequest {
    pub tool: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Map<String, Value>>,
    #[serde(skip)]
    pub extra: Map<String, Value>,
}

/// `mcp_read_resource`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct McpReadResourceRequest {
    #[serde(rename = "serverName")]
    pub server_name: String,
    pub uri: String,
    #[serde(skip)]
    pub extra: Map<String, Value>,
}

/// `get_context_usage`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct GetContextUsageRequest {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    #[serde(skip)]
    pub extra: Map<String, Value>,
}

/// `get_usage`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct GetUsageRequest {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skip_behaviors: Option<bool>,
    #[serde(skip)]
    pub extra: Map<String, Value>,
}

/// `file_suggestions`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct FileSuggestionsRequest {
    pub query: String,
    #[serde(skip)]
    pub extra: Map<String, Value>,
}

/// `read_file`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct ReadFileRequest {
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encoding: Option<String>,
    #[serde(skip)]
    pub extra: Map<String, Value>,
}

/// `seed_read_state`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct SeedReadStateRequest {
    pub path: String,
    pub mtime: Number,
    #[serde(skip)]
    pub extra: Map<String, Value>,
}

/// `register_repo_root`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct RegisterRepoRootRequest {
    pub directory: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reload_claude_md: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reload_plugins: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reload_skills: Option<bool>,
    #[serde(skip)]
    pub extra: Map<String, Value>,
}

/// `reload_plugins`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct ReloadPluginsRequest {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hold_on_cache_impact: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub add_plugins: Option<Vec<Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refuse_if_busy: Option<bool>,
    #[serde(skip)]
    pub extra: Map<String, Value>,
}

/// `set_has_subscribers`: `has_subscribers: boolean | null` (always sent).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct SetHasSubscribersRequest {
    pub has_subscribers: Option<bool>,
    #[serde(skip)]
    pub extra: Map<String, Value>,
}

/// `apply_flag_settings`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct ApplyFlagSettingsRequest {
    pub settings: Map<String, Value>,
    #[serde(skip)]
    pub extra: Map<String, Value>,
}

/// `update_settings` (`source`: `localSettings` | `userSettings`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct UpdateSettingsRequest {
    pub source: String,
    pub settings: Map<String, Value>,
    #[serde(skip)]
    pub extra: Map<String, Value>,
}

crate::extra::with_extra!(
    EmptyRequest,
    CanUseToolRequest,
    McpServerProvenance,
    MatchedAskRule,
    HookCallbackRequest,
    HookInput,
    McpMessageRequest,
    ElicitationRequest,
    RequestUserDialogRequest,
    InitializeRequest,
    InterruptRequest,
    SetPermissionModeRequest,
    SetModelRequest,
    SetMaxThinkingTokensRequest,
    RewindFilesRequest,
    CancelAsyncMessageRequest,
    TaskIdRequest,
    BackgroundTasksRequest,
    RenameSessionRequest,
    SetColorRequest,
    McpStatusRequest,
    McpSetServersRequest,
    McpServerNameRequest,
    McpToggleRequest,
    McpCallRequest,
    McpReadResourceRequest,
    GetContextUsageRequest,
    GetUsageRequest,
    FileSuggestionsRequest,
    ReadFileRequest,
    SeedReadStateRequest,
    RegisterRepoRootRequest,
    ReloadPluginsRequest,
    SetHasSubscribersRequest,
    ApplyFlagSettingsRequest,
    UpdateSettingsRequest,
);
