//! The control protocol (both directions): `control_request`, `control_response`,
//! `control_cancel_request`, and the typed payloads of the common requests and answers.

mod requests;
mod responses;

pub use requests::*;
pub use responses::*;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::extra::open_struct;
use crate::permission::PermissionResult;
use crate::util::{present, tagged_union};

open_struct! {
    /// `{"type":"control_request","request_id","request":{subtype,…}}`. The `request_id` is chosen by
    /// the sender; exactly one `control_response` answers it. `extra` keeps the fields not modelled
    /// here (inside `pending_*` arrays this includes `"type"`).
    pub struct ControlRequest {
        pub request_id: String,
        pub request: ControlRequestBody,
    }
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

    /// Which prompt a person answers this request is, or `None` for the requests no person
    /// answers. Exhaustive: a subtype added here does not compile until it is decided.
    pub fn person_prompt(&self) -> Option<PersonPrompt> {
        match self {
            Self::CanUseTool(_) => Some(PersonPrompt::CanUseTool),
            Self::Elicitation(_) => Some(PersonPrompt::Elicitation),
            Self::RequestUserDialog(_) => Some(PersonPrompt::RequestUserDialog),
            Self::HookCallback(_)
            | Self::McpMessage(_)
            | Self::Initialize(_)
            | Self::Interrupt(_)
            | Self::SetPermissionMode(_)
            | Self::SetModel(_)
            | Self::SetMaxThinkingTokens(_)
            | Self::RewindFiles(_)
            | Self::CancelAsyncMessage(_)
            | Self::StopTask(_)
            | Self::GetTaskOutput(_)
            | Self::BackgroundTasks(_)
            | Self::RenameSession(_)
            | Self::SetColor(_)
            | Self::McpStatus(_)
            | Self::McpSetServers(_)
            | Self::McpReconnect(_)
            | Self::McpToggle(_)
            | Self::McpCall(_)
            | Self::McpReadResource(_)
            | Self::GetContextUsage(_)
            | Self::GetSessionCost(_)
            | Self::ListModels(_)
            | Self::GetUsage(_)
            | Self::GetBinaryVersion(_)
            | Self::FileSuggestions(_)
            | Self::ReadFile(_)
            | Self::SeedReadState(_)
            | Self::RegisterRepoRoot(_)
            | Self::ReloadPlugins(_)
            | Self::ReloadSkills(_)
            | Self::ReloadOutputStyles(_)
            | Self::SetHasSubscribers(_)
            | Self::ApplyFlagSettings(_)
            | Self::GetSettings(_)
            | Self::GetHooksListing(_)
            | Self::UpdateSettings(_)
            | Self::ListPermissionRules(_)
            | Self::Other(_) => None,
        }
    }
}

/// The control requests the CLI sends that a person answers (a permission or question, an MCP
/// server's form, a dialog). [`PersonPrompt::of_subtype`] reads it from the tag alone, for a
/// router that forwards the frame as it came or a request whose body does not decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PersonPrompt {
    /// `can_use_tool`.
    CanUseTool,
    /// `elicitation`.
    Elicitation,
    /// `request_user_dialog`.
    RequestUserDialog,
}

impl PersonPrompt {
    /// The prompt a request `subtype` is, if a person answers it.
    pub fn of_subtype(subtype: &str) -> Option<Self> {
        match subtype {
            "can_use_tool" => Some(Self::CanUseTool),
            "elicitation" => Some(Self::Elicitation),
            "request_user_dialog" => Some(Self::RequestUserDialog),
            _ => None,
        }
    }

    /// The `subtype` tag.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::CanUseTool => "can_use_tool",
            Self::Elicitation => "elicitation",
            Self::RequestUserDialog => "request_user_dialog",
        }
    }
}

open_struct! {
    /// `{"type":"control_response","response":{subtype:"success"|"error",request_id,…}}`. `extra`
    /// keeps the fields not modelled here (e.g. the relay's `"source":"relay"`).
    pub struct ControlResponse {
        pub response: ControlResponseBody,
    }
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

open_struct! {
    /// A success answer. `response` is the request-specific payload (missing or `{}` for a bare
    /// acknowledgement); read it with [`ControlSuccess::payload`] or the typed accessors.
    pub struct ControlSuccess {
        pub request_id: String,
        #[serde(default, deserialize_with = "present")]
        pub response: Option<Value>,
        pub pending_permission_requests: Option<Vec<ControlRequest>>,
        pub pending_user_dialog_requests: Option<Vec<ControlRequest>>,
        pub pending_elicitation_requests: Option<Vec<ControlRequest>>,
    }
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

open_struct! {
    /// An error answer. `error_code` is internal but sent by the CLI (e.g. `unsupported_request`).
    pub struct ControlError {
        pub request_id: String,
        pub error: String,
        pub error_code: Option<String>,
        pub pending_permission_requests: Option<Vec<ControlRequest>>,
        pub pending_user_dialog_requests: Option<Vec<ControlRequest>>,
        pub pending_elicitation_requests: Option<Vec<ControlRequest>>,
    }

    /// `{"type":"control_cancel_request","request_id"}`: the sender withdraws a request it made.
    pub struct ControlCancelRequest {
        pub request_id: String,
    }
}

#[cfg(test)]
mod person_prompt_tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_tag_peek_agrees_with_the_typed_body() {
        let bodies = [
            json!({"subtype": "can_use_tool", "tool_name": "Bash", "input": {}, "tool_use_id": "t"}),
            json!({"subtype": "elicitation", "mcp_server_name": "docs", "message": "Pick"}),
            json!({"subtype": "request_user_dialog", "dialog_kind": "k", "payload": {}}),
            json!({"subtype": "interrupt"}),
            json!({"subtype": "set_model", "model": null}),
            json!({"subtype": "some_future_request"}),
        ];
        for body in bodies {
            let typed = ControlRequestBody::from_value(body.clone()).unwrap();
            assert_eq!(
                typed.person_prompt(),
                PersonPrompt::of_subtype(typed.subtype()),
                "{body}"
            );
        }
        for tag in ControlRequestBody::KNOWN_TAGS {
            if let Some(p) = PersonPrompt::of_subtype(tag) {
                assert_eq!(p.as_str(), *tag);
            }
        }
        let people = ControlRequestBody::KNOWN_TAGS
            .iter()
            .filter(|t| PersonPrompt::of_subtype(t).is_some())
            .count();
        assert_eq!(people, 3);
    }
}
