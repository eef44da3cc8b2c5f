//! The control protocol (both directions): `control_request`, `control_response`,
//! `control_cancel_request`, and the typed payloads of the common requests and answers.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};

use crate::permission::{PermissionResult, PermissionUpdate};
use crate::util::{present, tagged_union};
use crate::values::{
    DecisionReasonType, DialogBehavior, ElicitationAction, FastModeState, HookEvent,
    PermissionMode, SessionState,
};

/// `{"type":"control_request","request_id","request":{subtype,…}}`. The `request_id` is chosen by
/// the sender; exactly one `control_response` answers it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ControlRequest {
    pub request_id: String,
    pub request: ControlRequestBody,
    /// Fields not modelled here (inside `pending_*` arrays this includes `"type"`).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ControlRequest {
    /// A request with no extra fields.
    pub fn new(request_id: impl Into<String>, request: ControlRequestBody) -> Self {
        Self {
            request_id: request_id.into(),
            request,
            extra: Map::new(),
        }
    }

    /// The id the answer must echo.
    pub fn request_id(&self) -> &str {
        &self.request_id
    }

    /// The request's `subtype` (raw for subtypes this crate does not model).
    pub fn subtype(&self) -> &str {
        self.request.subtype()
    }
}

tagged_union! {
    /// `request` of a control request, keyed by `subtype`. Every public subtype of
    /// `SDKControlRequestInner` is typed; internal and future subtypes are kept whole in
    /// [`ControlRequestBody::Other`].
    pub enum ControlRequestBody (tag = "subtype") {
        // CLI -> client (the client must answer)
        "can_use_tool" => CanUseTool(CanUseToolRequest),
        "hook_callback" => HookCallback(HookCallbackRequest),
        "mcp_message" => McpMessage(McpMessageRequest),
        "elicitation" => Elicitation(ElicitationRequest),
        "request_user_dialog" => RequestUserDialog(RequestUserDialogRequest),
        // client -> CLI
        "initialize" => Initialize(InitializeRequest),
        "interrupt" => Interrupt(InterruptRequest),
        "set_permission_mode" => SetPermissionMode(SetPermissionModeRequest),
        "set_model" => SetModel(SetModelRequest),
        "set_max_thinking_tokens" => SetMaxThinkingTokens(SetMaxThinkingTokensRequest),
        "rewind_files" => RewindFiles(RewindFilesRequest),
        "cancel_async_message" => CancelAsyncMessage(CancelAsyncMessageRequest),
        "stop_task" => StopTask(TaskIdRequest),
        "get_task_output" => GetTaskOutput(TaskIdRequest),
        "background_tasks" => BackgroundTasks(BackgroundTasksRequest),
        "rename_session" => RenameSession(RenameSessionRequest),
        "set_color" => SetColor(SetColorRequest),
        "mcp_status" => McpStatus(McpStatusRequest),
        "mcp_set_servers" => McpSetServers(McpSetServersRequest),
        "mcp_reconnect" => McpReconnect(McpServerNameRequest),
        "mcp_toggle" => McpToggle(McpToggleRequest),
        "mcp_call" => McpCall(McpCallRequest),
        "mcp_read_resource" => McpReadResource(McpReadResourceRequest),
        "get_context_usage" => GetContextUsage(GetContextUsageRequest),
        "get_session_cost" => GetSessionCost(EmptyRequest),
        "list_models" => ListModels(EmptyRequest),
        "get_usage" => GetUsage(GetUsageRequest),
        "get_binary_version" => GetBinaryVersion(EmptyRequest),
        "file_suggestions" => FileSuggestions(FileSuggestionsRequest),
        "read_file" => ReadFile(ReadFileRequest),
        "seed_read_state" => SeedReadState(SeedReadStateRequest),
        "register_repo_root" => RegisterRepoRoot(RegisterRepoRootRequest),
        "reload_plugins" => ReloadPlugins(ReloadPluginsRequest),
        "reload_skills" => ReloadSkills(EmptyRequest),
        "reload_output_styles" => ReloadOutputStyles(EmptyRequest),
        "set_has_subscribers" => SetHasSubscribers(SetHasSubscribersRequest),
        "apply_flag_settings" => ApplyFlagSettings(ApplyFlagSettingsRequest),
        "get_settings" => GetSettings(EmptyRequest),
        "get_hooks_listing" => GetHooksListing(EmptyRequest),
        "update_settings" => UpdateSettings(UpdateSettingsRequest),
        "list_permission_rules" => ListPermissionRules(EmptyRequest),
        _ => Other,
    }
}

impl ControlRequestBody {
    /// The `subtype` string.
    pub fn subtype(&self) -> &str {
        self.tag()
    }

    /// `true` for the subtypes the CLI sends and a client must answer (`can_use_tool`,
    /// `hook_callback`, `mcp_message`, `elicitation`, `request_user_dialog`).
    pub fn expects_client_answer(&self) -> bool {
        matches!(
            self,
            Self::CanUseTool(_)
                | Self::HookCallback(_)
                | Self::McpMessage(_)
                | Self::Elicitation(_)
                | Self::RequestUserDialog(_)
        )
    }
}

/// A request with no parameters (`get_session_cost`, `list_models`, `get_settings`, …).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EmptyRequest {
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `can_use_tool`: the CLI asks whether a tool may run. Answer with a success whose `response` is a
/// [`PermissionResult`] (see [`crate::build::allow`] / [`crate::build::deny`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `McpServerProvenance`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpServerProvenance {
    pub name: String,
    pub source: String,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `can_use_tool.matched_ask_rule`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatchedAskRule {
    pub source: String,
    pub tool_name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule_content: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `hook_callback`: run the client-registered hook `callback_id`; answer with a `HookJSONOutput`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookCallbackRequest {
    pub callback_id: String,
    pub input: HookInput,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `HookInput`: the base fields plus the event-specific ones most consoles show; the other
/// event-specific fields stay in `extra`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `mcp_message` (both directions): a JSON-RPC message for an SDK MCP server. The CLI-sent one is
/// answered with `{"mcp_response": <JSON-RPC response>}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpMessageRequest {
    pub server_name: String,
    pub message: Value,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `elicitation`: an MCP server asks the user for input (form or URL).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `request_user_dialog`: answer only when `dialog_kind` was declared in
/// `initialize.supportedDialogKinds`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestUserDialogRequest {
    pub dialog_kind: String,
    pub payload: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `initialize`. The common fields are typed; the rest (`sdkMcpServerConfigs`, `toolAliases`,
/// `plugins`, `mcpServers`, …) stay in `extra`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `interrupt`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct InterruptRequest {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cancel_queued: Option<bool>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `set_permission_mode`. The answer carries the mode actually in effect.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetPermissionModeRequest {
    pub mode: PermissionMode,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `set_model`: `model: string | null` (`null` = the default model).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SetModelRequest {
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub model: Option<Option<String>>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `set_max_thinking_tokens`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `rewind_files`: restore files to their state at a user message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RewindFilesRequest {
    pub user_message_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dry_run: Option<bool>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `cancel_async_message`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CancelAsyncMessageRequest {
    pub message_uuid: String,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `stop_task` / `get_task_output`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskIdRequest {
    pub task_id: String,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `background_tasks`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BackgroundTasksRequest {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `rename_session`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RenameSessionRequest {
    pub title: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `set_color`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetColorRequest {
    pub color: String,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `mcp_status`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct McpStatusRequest {
    #[serde(rename = "liveReply", skip_serializing_if = "Option::is_none")]
    pub live_reply: Option<bool>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `mcp_set_servers`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpSetServersRequest {
    pub servers: Map<String, Value>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `mcp_reconnect`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpServerNameRequest {
    #[serde(rename = "serverName")]
    pub server_name: String,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `mcp_toggle`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpToggleRequest {
    #[serde(rename = "serverName")]
    pub server_name: String,
    pub enabled: bool,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `mcp_call` (the file / timeout options stay in `extra`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpCallRequest {
    pub tool: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Map<String, Value>>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `mcp_read_resource`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpReadResourceRequest {
    #[serde(rename = "serverName")]
    pub server_name: String,
    pub uri: String,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `get_context_usage`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GetContextUsageRequest {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `get_usage`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GetUsageRequest {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skip_behaviors: Option<bool>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `file_suggestions`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileSuggestionsRequest {
    pub query: String,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `read_file`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadFileRequest {
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encoding: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `seed_read_state`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeedReadStateRequest {
    pub path: String,
    pub mtime: Number,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `register_repo_root`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RegisterRepoRootRequest {
    pub directory: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reload_claude_md: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reload_plugins: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reload_skills: Option<bool>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `reload_plugins`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReloadPluginsRequest {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hold_on_cache_impact: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub add_plugins: Option<Vec<Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refuse_if_busy: Option<bool>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `set_has_subscribers`: `has_subscribers: boolean | null` (always sent).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SetHasSubscribersRequest {
    pub has_subscribers: Option<bool>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `apply_flag_settings`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApplyFlagSettingsRequest {
    pub settings: Map<String, Value>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `update_settings` (`source`: `localSettings` | `userSettings`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UpdateSettingsRequest {
    pub source: String,
    pub settings: Map<String, Value>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `{"type":"control_response","response":{subtype:"success"|"error",request_id,…}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ControlResponse {
    pub response: ControlResponseBody,
    /// Fields not modelled here (e.g. the relay's `"source":"relay"`).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ControlResponse {
    /// The id of the request this answers (`None` only for an unknown body without one).
    pub fn request_id(&self) -> Option<&str> {
        self.response.request_id()
    }
}

tagged_union! {
    /// `ControlResponse | ControlErrorResponse`, keyed by `subtype`.
    pub enum ControlResponseBody (tag = "subtype") {
        "success" => Success(ControlSuccess),
        "error" => Error(ControlError),
        _ => Other,
    }
}

impl ControlResponseBody {
    /// The id of the request this answers.
    pub fn request_id(&self) -> Option<&str> {
        match self {
            Self::Success(success) => Some(&success.request_id),
            Self::Error(error) => Some(&error.request_id),
            Self::Other(raw) => raw.get("request_id").and_then(Value::as_str),
        }
    }
}

/// A success answer. `response` is the request-specific payload (missing or `{}` for a bare
/// acknowledgement); read it with [`ControlSuccess::payload`] or the typed accessors.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ControlSuccess {
    pub request_id: String,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub response: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending_permission_requests: Option<Vec<ControlRequest>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending_user_dialog_requests: Option<Vec<ControlRequest>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending_elicitation_requests: Option<Vec<ControlRequest>>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ControlSuccess {
    /// Decodes the payload as `T` (a missing payload decodes from `{}`).
    pub fn payload<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        let value = self
            .response
            .clone()
            .unwrap_or_else(|| Value::Object(Map::new()));
        serde_json::from_value(value)
    }

    /// The payload as a permission answer, if it is one (`behavior` present).
    pub fn permission_result(&self) -> Option<Result<PermissionResult, serde_json::Error>> {
        let response = self.response.as_ref()?;
        response.get("behavior")?;
        Some(PermissionResult::from_value(response.clone()))
    }
}

/// An error answer. `error_code` is internal but sent by the CLI (e.g. `unsupported_request`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ControlError {
    pub request_id: String,
    pub error: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending_permission_requests: Option<Vec<ControlRequest>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending_user_dialog_requests: Option<Vec<ControlRequest>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending_elicitation_requests: Option<Vec<ControlRequest>>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `{"type":"control_cancel_request","request_id"}`: the sender withdraws a request it made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ControlCancelRequest {
    pub request_id: String,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

// ---- typed success payloads ------------------------------------------------------------------

/// `SDKControlInitializeResponse` (plus the internal keys a console uses:
/// `current_permission_mode`, `session_state`, `pid`, `capabilities`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `SlashCommand`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SlashCommand {
    pub name: String,
    pub description: String,
    #[serde(rename = "argumentHint")]
    pub argument_hint: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aliases: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub builtin: Option<bool>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `AgentInfo`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentInfo {
    pub name: String,
    pub description: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `ModelInfo`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `AccountInfo`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `interrupt` answer: `{still_queued, cancelled?}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct InterruptResponse {
    pub still_queued: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cancelled: Option<Vec<String>>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `set_permission_mode` answer: the mode in effect.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SetPermissionModeResponse {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<PermissionMode>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `rewind_files` answer (`RewindFilesResult`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `update_environment_variables` answer: the keys actually applied (allowlisted ones only).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EnvironmentUpdateResponse {
    pub applied: Vec<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Answer to `elicitation`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ElicitationResponse {
    pub action: ElicitationAction,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<Map<String, Value>>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Answer to `request_user_dialog`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserDialogResponse {
    pub behavior: DialogBehavior,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub result: Option<Value>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Answer to a CLI-sent `mcp_message`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpMessageResponse {
    pub mcp_response: Value,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `HookJSONOutput` (sync form; the async form is `{"async":true,"asyncTimeout"?}`), the answer to
/// `hook_callback`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}
