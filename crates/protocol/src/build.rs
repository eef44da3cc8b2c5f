//! Builders for what a client sends, producing exactly what the CLI 2.1.332 accepts:
//! * user messages carry `parent_tool_use_id: null` (required by the CLI) and `session_id: ""`;
//! * `allow` always carries `updatedInput` (older CLIs require it) and `toolUseID` when known;
//! * `deny` carries `message`, and `interrupt: true` only when asked (the CLI treats a missing
//!   `interrupt` as `false`);
//! * permission rules omit `ruleContent` rather than sending `null`;
//! * control requests carry the caller's `request_id` (see [`new_request_id`]).

use serde_json::{Map, Value};
use uuid::Uuid;

/// The flags that start the CLI in the SDK's stream-json mode, as every agent the relay spawns gets
/// them (`--model`, `--permission-mode`, `--resume` … follow): JSON lines both ways, the prompts
/// asked over stdio (`can_use_tool`), partial messages streamed, and the user's messages echoed
/// back once read.
pub const STREAM_JSON_FLAGS: &[&str] = &[
    "--output-format",
    "stream-json",
    "--verbose",
    "--input-format",
    "stream-json",
    "--permission-prompt-tool",
    "stdio",
    "--include-partial-messages",
    "--replay-user-messages",
];

mod answers;

pub use answers::{elicitation, question_answers, user_dialog};

use crate::content::{ContentBlock, MessageContent, MessageParam};
use crate::control::{
    ControlCancelRequest, ControlError, ControlRequest, ControlRequestBody, ControlResponse,
    ControlResponseBody, ControlSuccess, GetContextUsageRequest, InitializeRequest,
    InterruptRequest, McpStatusRequest, RewindFilesRequest, SetMaxThinkingTokensRequest,
    SetModelRequest, SetPermissionModeRequest,
};
use crate::message::{ClientMessage, KeepAlive, UpdateEnvironmentVariables, UserMessage};
use crate::permission::{PermissionAllow, PermissionDeny, PermissionResult, PermissionUpdate};
use crate::values::PermissionMode;

/// A fresh request id (a UUID v4, as the CLI itself uses).
pub fn new_request_id() -> String {
    Uuid::new_v4().to_string()
}

/// A prompt: `{"type":"user","message":{"role":"user","content":text},"parent_tool_use_id":null,
/// "session_id":"","uuid":…}`. The `uuid` comes back on the `isReplay` echo and in
/// `command_lifecycle`.
pub fn user_text(text: &str, uuid: Uuid) -> ClientMessage {
    user_content(MessageContent::Text(text.to_owned()), uuid)
}

/// A prompt made of content blocks (text, images, …).
pub fn user_blocks(blocks: Vec<ContentBlock>, uuid: Uuid) -> ClientMessage {
    user_content(MessageContent::Blocks(blocks), uuid)
}

/// A `text` content block.
pub fn text_block(text: &str) -> ContentBlock {
    ContentBlock::Text(crate::content::TextBlock {
        text: text.to_owned(),
        citations: None,
        extra: Map::new(),
    })
}

/// An `image` content block with inline data: `{"type":"image","source":{"type":"base64",
/// "media_type":…,"data":…}}` (`data` is the base64 of the file, without a `data:` prefix).
pub fn image_base64(media_type: &str, data: &str) -> ContentBlock {
    ContentBlock::Image(crate::content::SourceBlock {
        source: value::image_source(media_type, data),
        extra: Map::new(),
    })
}

fn user_content(content: MessageContent, uuid: Uuid) -> ClientMessage {
    ClientMessage::User(UserMessage {
        message: MessageParam {
            role: "user".to_owned(),
            content,
            extra: Map::new(),
        },
        parent_tool_use_id: None,
        uuid: Some(uuid.to_string()),
        session_id: Some(String::new()),
        is_replay: None,
        is_synthetic: None,
        tool_use_result: None,
        tool_result_meta: None,
        timestamp: None,
        priority: None,
        origin: None,
        should_query: None,
        client_composed: None,
        file_attachments: None,
        pasted_content: None,
        inline_pastes: None,
        agent_id: None,
        subagent_type: None,
        task_description: None,
        extra: Map::new(),
    })
}

/// Any control request.
pub fn control_request(request_id: &str, body: ControlRequestBody) -> ClientMessage {
    ClientMessage::ControlRequest(ControlRequest::new(request_id, body))
}

/// `initialize` as the Python SDK sends it: `{"subtype":"initialize","hooks":null}`.
pub fn initialize(request_id: &str) -> ClientMessage {
    initialize_with(
        request_id,
        InitializeRequest {
            hooks: Some(None),
            ..Default::default()
        },
    )
}

/// `initialize` with options (e.g. `supportedDialogKinds`, `promptSuggestions`).
pub fn initialize_with(request_id: &str, request: InitializeRequest) -> ClientMessage {
    control_request(request_id, ControlRequestBody::Initialize(request))
}

/// `interrupt`: abort the current turn.
pub fn interrupt(request_id: &str) -> ClientMessage {
    control_request(
        request_id,
        ControlRequestBody::Interrupt(InterruptRequest::default()),
    )
}

/// `get_context_usage`: how full the context window is, by category (answer:
/// [`crate::ContextUsageResponse`]). CLI 2.1.332 sends the same body for `summary` and `full`.
pub fn get_context_usage(request_id: &str) -> ClientMessage {
    control_request(
        request_id,
        ControlRequestBody::GetContextUsage(GetContextUsageRequest::default()),
    )
}

/// `mcp_status`: the MCP servers and their state (answer: [`crate::McpStatusResponse`]).
pub fn mcp_status(request_id: &str) -> ClientMessage {
    control_request(
        request_id,
        ControlRequestBody::McpStatus(McpStatusRequest::default()),
    )
}

/// `set_model`; `None` sends `"model": null` (back to the default model).
pub fn set_model(request_id: &str, model: Option<&str>) -> ClientMessage {
    control_request(
        request_id,
        ControlRequestBody::SetModel(SetModelRequest {
            model: Some(model.map(str::to_owned)),
            extra: Map::new(),
        }),
    )
}

/// `set_permission_mode`. The answer carries the mode actually in effect.
pub fn set_permission_mode(request_id: &str, mode: PermissionMode) -> ClientMessage {
    control_request(
        request_id,
        ControlRequestBody::SetPermissionMode(SetPermissionModeRequest {
            mode,
            extra: Map::new(),
        }),
    )
}

/// `set_max_thinking_tokens`; `None` sends `null` (the default budget).
pub fn set_max_thinking_tokens(
    request_id: &str,
    max_thinking_tokens: Option<u64>,
) -> ClientMessage {
    control_request(
        request_id,
        ControlRequestBody::SetMaxThinkingTokens(SetMaxThinkingTokensRequest {
            max_thinking_tokens: Some(max_thinking_tokens),
            thinking_display: None,
            extra: Map::new(),
        }),
    )
}

/// `rewind_files` to the state at `user_message_id`.
pub fn rewind_files(request_id: &str, user_message_id: &str, dry_run: bool) -> ClientMessage {
    control_request(
        request_id,
        ControlRequestBody::RewindFiles(RewindFilesRequest {
            user_message_id: user_message_id.to_owned(),
            dry_run: dry_run.then_some(true),
            extra: Map::new(),
        }),
    )
}

/// Allows a `can_use_tool` request. `updated_input` is always sent (pass the request's `input`
/// unchanged to allow as asked); `updatedPermissions` is sent only when not empty.
pub fn allow(
    request_id: &str,
    tool_use_id: Option<&str>,
    updated_input: Value,
    updated_permissions: Vec<PermissionUpdate>,
) -> ClientMessage {
    let result = PermissionResult::Allow(PermissionAllow {
        updated_input: Some(updated_input),
        updated_permissions: (!updated_permissions.is_empty()).then_some(updated_permissions),
        tool_use_id: tool_use_id.map(str::to_owned),
        decision_classification: None,
        extra: Map::new(),
    });
    permission(request_id, result)
}

/// Denies a `can_use_tool` request. `message` becomes the tool_result text the model sees;
/// `interrupt` also aborts the turn.
pub fn deny(
    request_id: &str,
    tool_use_id: Option<&str>,
    message: &str,
    interrupt: bool,
) -> ClientMessage {
    let result = PermissionResult::Deny(PermissionDeny {
        message: message.to_owned(),
        interrupt: interrupt.then_some(true),
        tool_use_id: tool_use_id.map(str::to_owned),
        decision_classification: None,
        extra: Map::new(),
    });
    permission(request_id, result)
}

/// Answers a `can_use_tool` request with any [`PermissionResult`].
pub fn permission(request_id: &str, result: PermissionResult) -> ClientMessage {
    let payload = serde_json::to_value(&result).expect("a PermissionResult serializes to JSON");
    success(request_id, Some(payload))
}

/// A success `control_response`; `response: None` omits the payload (a bare acknowledgement).
pub fn success(request_id: &str, response: Option<Value>) -> ClientMessage {
    ClientMessage::ControlResponse(ControlResponse {
        response: ControlResponseBody::Success(ControlSuccess {
            request_id: request_id.to_owned(),
            response,
            pending_permission_requests: None,
            pending_user_dialog_requests: None,
            pending_elicitation_requests: None,
            extra: Map::new(),
        }),
        extra: Map::new(),
    })
}

/// An error `control_response`.
pub fn error(request_id: &str, message: &str) -> ClientMessage {
    ClientMessage::ControlResponse(ControlResponse {
        response: ControlResponseBody::Error(ControlError {
            request_id: request_id.to_owned(),
            error: message.to_owned(),
            error_code: None,
            pending_permission_requests: None,
            pending_user_dialog_requests: None,
            pending_elicitation_requests: None,
            extra: Map::new(),
        }),
        extra: Map::new(),
    })
}

/// `control_cancel_request`: withdraws a request this client sent.
pub fn cancel(request_id: &str) -> ClientMessage {
    ClientMessage::ControlCancelRequest(ControlCancelRequest {
        request_id: request_id.to_owned(),
        extra: Map::new(),
    })
}

/// `{"type":"keep_alive"}`.
pub fn keep_alive() -> ClientMessage {
    ClientMessage::KeepAlive(KeepAlive::default())
}

/// `update_environment_variables` (only allowlisted token variables are applied). With a
/// `request_id` the CLI answers `{applied:[…]}`.
pub fn update_environment_variables(
    variables: impl IntoIterator<Item = (String, String)>,
    request_id: Option<&str>,
) -> ClientMessage {
    ClientMessage::UpdateEnvironmentVariables(UpdateEnvironmentVariables {
        variables: variables.into_iter().collect(),
        request_id: request_id.map(str::to_owned),
        extra: Map::new(),
    })
}

/// The same builders producing the JSON payload directly (what a transport posts), equal to
/// `serde_json::to_value(&build::x(..))` for the typed builder of the same name.
///
/// A client that only needs to *send* these (the wasm console) avoids linking the typed
/// [`ClientMessage`] serializer — every control request and content variant — this way.
pub mod value {
    use serde_json::{Map, Value};
    use uuid::Uuid;

    pub use super::answers::value::*;

    use crate::permission::PermissionUpdate;
    use crate::values::PermissionMode;

    fn object(pairs: Vec<(&str, Value)>) -> Value {
        let mut map = Map::new();
        for (k, v) in pairs {
            map.insert(k.to_owned(), v);
        }
        Value::Object(map)
    }

    fn string(s: &str) -> Value {
        Value::String(s.to_owned())
    }

    /// See [`super::user_text`].
    pub fn user_text(text: &str, uuid: Uuid) -> Value {
        object(vec![
            ("type", string("user")),
            (
                "message",
                object(vec![("role", string("user")), ("content", string(text))]),
            ),
            ("parent_tool_use_id", Value::Null),
            ("uuid", Value::String(uuid.to_string())),
            ("session_id", string("")),
        ])
    }

    /// See [`super::user_blocks`]: `blocks` from [`text_block`] and [`image_base64`].
    pub fn user_blocks(blocks: Vec<Value>, uuid: Uuid) -> Value {
        object(vec![
            ("type", string("user")),
            (
                "message",
                object(vec![
                    ("role", string("user")),
                    ("content", Value::Array(blocks)),
                ]),
            ),
            ("parent_tool_use_id", Value::Null),
            ("uuid", Value::String(uuid.to_string())),
            ("session_id", string("")),
        ])
    }

    /// See [`super::text_block`].
    pub fn text_block(text: &str) -> Value {
        object(vec![("type", string("text")), ("text", string(text))])
    }

    /// See [`super::image_base64`].
    pub fn image_base64(media_type: &str, data: &str) -> Value {
        object(vec![
            ("type", string("image")),
            ("source", image_source(media_type, data)),
        ])
    }

    pub(super) fn image_source(media_type: &str, data: &str) -> Value {
        object(vec![
            ("type", string("base64")),
            ("media_type", string(media_type)),
            ("data", string(data)),
        ])
    }

    /// Any control request: `request` is the body including its `subtype`.
    pub fn control_request(request_id: &str, request: Value) -> Value {
        object(vec![
            ("type", string("control_request")),
            ("request_id", string(request_id)),
            ("request", request),
        ])
    }

    /// See [`super::initialize`].
    pub fn initialize(request_id: &str) -> Value {
        control_request(
            request_id,
            object(vec![
                ("subtype", string("initialize")),
                ("hooks", Value::Null),
            ]),
        )
    }

    /// See [`super::interrupt`].
    pub fn interrupt(request_id: &str) -> Value {
        control_request(request_id, object(vec![("subtype", string("interrupt"))]))
    }

    /// See [`super::get_context_usage`].
    pub fn get_context_usage(request_id: &str) -> Value {
        control_request(
            request_id,
            object(vec![("subtype", string("get_context_usage"))]),
        )
    }

    /// See [`super::mcp_status`].
    pub fn mcp_status(request_id: &str) -> Value {
        control_request(request_id, object(vec![("subtype", string("mcp_status"))]))
    }

    /// See [`super::set_model`].
    pub fn set_model(request_id: &str, model: Option<&str>) -> Value {
        control_request(
            request_id,
            object(vec![
                ("subtype", string("set_model")),
                ("model", model.map_or(Value::Null, string)),
            ]),
        )
    }

    /// See [`super::set_permission_mode`].
    pub fn set_permission_mode(request_id: &str, mode: PermissionMode) -> Value {
        control_request(
            request_id,
            object(vec![
                ("subtype", string("set_permission_mode")),
                ("mode", string(mode.as_str())),
            ]),
        )
    }

    /// See [`super::allow`].
    pub fn allow(
        request_id: &str,
        tool_use_id: Option<&str>,
        updated_input: Value,
        updated_permissions: Vec<PermissionUpdate>,
    ) -> Value {
        let mut result = vec![
            ("behavior", string("allow")),
            ("updatedInput", updated_input),
        ];
        if !updated_permissions.is_empty() {
            result.push((
                "updatedPermissions",
                serde_json::to_value(&updated_permissions)
                    .expect("a PermissionUpdate serializes to JSON"),
            ));
        }
        if let Some(id) = tool_use_id {
            result.push(("toolUseID", string(id)));
        }
        success(request_id, Some(object(result)))
    }

    /// See [`super::deny`].
    pub fn deny(
        request_id: &str,
        tool_use_id: Option<&str>,
        message: &str,
        interrupt: bool,
    ) -> Value {
        let mut result = vec![("behavior", string("deny")), ("message", string(message))];
        if interrupt {
            result.push(("interrupt", Value::Bool(true)));
        }
        if let Some(id) = tool_use_id {
            result.push(("toolUseID", string(id)));
        }
        success(request_id, Some(object(result)))
    }

    /// See [`super::success`].
    pub fn success(request_id: &str, response: Option<Value>) -> Value {
        let mut body = vec![
            ("subtype", string("success")),
            ("request_id", string(request_id)),
        ];
        if let Some(response) = response {
            body.push(("response", response));
        }
        object(vec![
            ("type", string("control_response")),
            ("response", object(body)),
        ])
    }

    /// See [`super::error`].
    pub fn error(request_id: &str, message: &str) -> Value {
        object(vec![
            ("type", string("control_response")),
            (
                "response",
                object(vec![
                    ("subtype", string("error")),
                    ("request_id", string(request_id)),
                    ("error", string(message)),
                ]),
            ),
        ])
    }

    /// See [`super::cancel`].
    pub fn cancel(request_id: &str) -> Value {
        object(vec![
            ("type", string("control_cancel_request")),
            ("request_id", string(request_id)),
        ])
    }

    /// See [`super::keep_alive`].
    pub fn keep_alive() -> Value {
        object(vec![("type", string("keep_alive"))])
    }
}
