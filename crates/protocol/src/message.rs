//! The top-level unions: [`CliMessage`] (CLI → client, stdout) and [`ClientMessage`]
//! (client → CLI, stdin), and the message structs that are not system / control / stream types.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Number, Value};

use crate::content::{BetaMessage, MessageParam, Usage};
use crate::control::{ControlCancelRequest, ControlRequest, ControlRequestBody, ControlResponse};
use crate::error::ParseError;
use crate::stream::{AbandonedBlocks, StreamEvent};
use crate::system::SystemMessage;
use crate::util::{present, str_field};
use crate::values::{
    AssistantMessageError, CommandState, FastModeState, RateLimitStatus, ResultSubtype, StopReason,
    TerminalReason,
};

/// Everything the CLI writes on stdout (`StdoutMessage`), keyed by `type`.
///
/// Deserializing reads `type` first (and `subtype` for `system`): an unknown type or system subtype
/// becomes [`CliMessage::Unknown`] with its raw JSON; a known type whose body does not fit is an
/// error. Serializing gives back the JSON it was parsed from (as a `serde_json::Value`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum CliMessage {
    Assistant(AssistantMessage),
    User(UserMessage),
    Result(ResultMessage),
    System(SystemMessage),
    StreamEvent(StreamEventMessage),
    ToolProgress(ToolProgressMessage),
    ToolUseSummary(ToolUseSummaryMessage),
    AuthStatus(AuthStatusMessage),
    RateLimitEvent(RateLimitEventMessage),
    PromptSuggestion(PromptSuggestionMessage),
    ConversationReset(ConversationResetMessage),
    ActiveGoal(ActiveGoalMessage),
    ControlRequest(ControlRequest),
    ControlResponse(ControlResponse),
    ControlCancelRequest(ControlCancelRequest),
    KeepAlive(KeepAlive),
    CommandLifecycle(CommandLifecycleMessage),
    /// A recognised internal top-level frame ([`CliMessage::INTERNAL_TYPES`]), kept whole.
    #[serde(untagged)]
    Internal(Value),
    /// An unknown `type`, or a `system` message with an unknown `subtype`, kept whole.
    #[serde(untagged)]
    Unknown(Value),
}

impl CliMessage {
    /// The `type` values with a typed variant.
    pub const KNOWN_TYPES: &'static [&'static str] = &[
        "assistant",
        "user",
        "result",
        "system",
        "stream_event",
        "tool_progress",
        "tool_use_summary",
        "auth_status",
        "rate_limit_event",
        "prompt_suggestion",
        "conversation_reset",
        "active_goal",
        "control_request",
        "control_response",
        "control_cancel_request",
        "keep_alive",
        "command_lifecycle",
    ];

    /// Internal top-level types of the CLI's stdout union, recognised and kept whole.
    pub const INTERNAL_TYPES: &'static [&'static str] = &["autocompact_state", "transcript_mirror"];

    /// Classifies a JSON value. Errors name the message kind and the reason, not the line (use
    /// [`crate::parse_cli_line`] for that).
    pub fn from_value(value: Value) -> Result<Self, ParseError> {
        let Value::Object(mut map) = value else {
            return Err(ParseError::not_a_message(""));
        };
        let Some(kind) = str_field(&map, "type") else {
            return Err(ParseError::not_a_message(""));
        };
        let kind = kind.to_owned();
        if kind == "system" {
            match str_field(&map, "subtype") {
                Some(subtype) if SystemMessage::is_recognised_subtype(subtype) => {}
                Some(_) => return Ok(Self::Unknown(Value::Object(map))),
                None => {
                    return Err(ParseError::invalid_body(
                        "system",
                        "missing string field `subtype`",
                        "",
                    ));
                }
            }
        } else if Self::INTERNAL_TYPES.contains(&kind.as_str()) {
            return Ok(Self::Internal(Value::Object(map)));
        } else if !Self::KNOWN_TYPES.contains(&kind.as_str()) {
            return Ok(Self::Unknown(Value::Object(map)));
        }
        map.shift_remove("type");
        let body = Value::Object(map);
        let parsed = match kind.as_str() {
            "assistant" => serde_json::from_value(body).map(Self::Assistant),
            "user" => serde_json::from_value(body).map(Self::User),
            "result" => serde_json::from_value(body).map(Self::Result),
            "system" => SystemMessage::from_value(body).map(Self::System),
            "stream_event" => serde_json::from_value(body).map(Self::StreamEvent),
            "tool_progress" => serde_json::from_value(body).map(Self::ToolProgress),
            "tool_use_summary" => serde_json::from_value(body).map(Self::ToolUseSummary),
            "auth_status" => serde_json::from_value(body).map(Self::AuthStatus),
            "rate_limit_event" => serde_json::from_value(body).map(Self::RateLimitEvent),
            "prompt_suggestion" => serde_json::from_value(body).map(Self::PromptSuggestion),
            "conversation_reset" => serde_json::from_value(body).map(Self::ConversationReset),
            "active_goal" => serde_json::from_value(body).map(Self::ActiveGoal),
            "control_request" => serde_json::from_value(body).map(Self::ControlRequest),
            "control_response" => serde_json::from_value(body).map(Self::ControlResponse),
            "control_cancel_request" => {
                serde_json::from_value(body).map(Self::ControlCancelRequest)
            }
            "keep_alive" => serde_json::from_value(body).map(Self::KeepAlive),
            "command_lifecycle" => serde_json::from_value(body).map(Self::CommandLifecycle),
            _ => unreachable!("every KNOWN_TYPES entry is dispatched"),
        };
        parsed.map_err(|err| ParseError::invalid_body(&kind, err.to_string(), ""))
    }

    /// The message kind: `type`, plus `/subtype` for `system`, `result` and `control_request`
    /// (e.g. `"assistant"`, `"system/init"`, `"control_request/can_use_tool"`). For unknown and
    /// internal frames: the raw `type[/subtype]`.
    pub fn kind(&self) -> String {
        match self {
            Self::System(message) => format!("system/{}", message.subtype()),
            Self::Result(message) => format!("result/{}", message.subtype),
            Self::ControlRequest(request) => format!("control_request/{}", request.subtype()),
            Self::Internal(raw) | Self::Unknown(raw) => raw_kind(raw),
            other => other.type_name().to_owned(),
        }
    }

    /// The `type` string.
    pub fn type_name(&self) -> &str {
        match self {
            Self::Assistant(_) => "assistant",
            Self::User(_) => "user",
            Self::Result(_) => "result",
            Self::System(_) => "system",
            Self::StreamEvent(_) => "stream_event",
            Self::ToolProgress(_) => "tool_progress",
            Self::ToolUseSummary(_) => "tool_use_summary",
            Self::AuthStatus(_) => "auth_status",
            Self::RateLimitEvent(_) => "rate_limit_event",
            Self::PromptSuggestion(_) => "prompt_suggestion",
            Self::ConversationReset(_) => "conversation_reset",
            Self::ActiveGoal(_) => "active_goal",
            Self::ControlRequest(_) => "control_request",
            Self::ControlResponse(_) => "control_response",
            Self::ControlCancelRequest(_) => "control_cancel_request",
            Self::KeepAlive(_) => "keep_alive",
            Self::CommandLifecycle(_) => "command_lifecycle",
            Self::Internal(raw) | Self::Unknown(raw) => {
                raw.get("type").and_then(Value::as_str).unwrap_or("")
            }
        }
    }

    /// `false` only for [`CliMessage::Unknown`]. (A `control_request` with an unmodelled subtype is
    /// known: its envelope is typed and it still has to be answered or ignored by `request_id`.)
    pub fn is_known(&self) -> bool {
        !matches!(self, Self::Unknown(_))
    }

    /// The frame's `uuid` (a fresh v4 per frame; for `user` echoes, the client's id).
    pub fn uuid(&self) -> Option<&str> {
        match self {
            Self::Assistant(m) => Some(&m.uuid),
            Self::User(m) => m.uuid.as_deref(),
            Self::Result(m) => Some(&m.uuid),
            Self::System(m) => m.uuid(),
            Self::StreamEvent(m) => Some(&m.uuid),
            Self::ToolProgress(m) => Some(&m.uuid),
            Self::ToolUseSummary(m) => Some(&m.uuid),
            Self::AuthStatus(m) => Some(&m.uuid),
            Self::RateLimitEvent(m) => Some(&m.uuid),
            Self::PromptSuggestion(m) => Some(&m.uuid),
            Self::ConversationReset(m) => Some(&m.uuid),
            Self::ActiveGoal(m) => Some(&m.uuid),
            Self::CommandLifecycle(m) => Some(&m.uuid),
            Self::ControlRequest(_)
            | Self::ControlResponse(_)
            | Self::ControlCancelRequest(_)
            | Self::KeepAlive(_) => None,
            Self::Internal(raw) | Self::Unknown(raw) => raw.get("uuid").and_then(Value::as_str),
        }
    }

    /// The frame's `session_id`.
    pub fn session_id(&self) -> Option<&str> {
        match self {
            Self::Assistant(m) => Some(&m.session_id),
            Self::User(m) => m.session_id.as_deref(),
            Self::Result(m) => Some(&m.session_id),
            Self::System(m) => m.session_id(),
            Self::StreamEvent(m) => Some(&m.session_id),
            Self::ToolProgress(m) => Some(&m.session_id),
            Self::ToolUseSummary(m) => Some(&m.session_id),
            Self::AuthStatus(m) => Some(&m.session_id),
            Self::RateLimitEvent(m) => Some(&m.session_id),
            Self::PromptSuggestion(m) => Some(&m.session_id),
            Self::ConversationReset(m) => Some(&m.session_id),
            Self::ActiveGoal(m) => Some(&m.session_id),
            Self::CommandLifecycle(m) => Some(&m.session_id),
            Self::ControlRequest(_)
            | Self::ControlResponse(_)
            | Self::ControlCancelRequest(_)
            | Self::KeepAlive(_) => None,
            Self::Internal(raw) | Self::Unknown(raw) => {
                raw.get("session_id").and_then(Value::as_str)
            }
        }
    }

    /// `parent_tool_use_id` of `assistant`, `user`, `stream_event` and `tool_progress` frames:
    /// non-null inside a subagent started by that tool_use. `None` for top-level frames and for
    /// other types.
    pub fn parent_tool_use_id(&self) -> Option<&str> {
        match self {
            Self::Assistant(m) => m.parent_tool_use_id.as_deref(),
            Self::User(m) => m.parent_tool_use_id.as_deref(),
            Self::StreamEvent(m) => m.parent_tool_use_id.as_deref(),
            Self::ToolProgress(m) => m.parent_tool_use_id.as_deref(),
            Self::Internal(raw) | Self::Unknown(raw) => {
                raw.get("parent_tool_use_id").and_then(Value::as_str)
            }
            _ => None,
        }
    }

    /// `true` for frames the relay does not store: `stream_event` and the system subtypes
    /// `thinking_tokens`, `post_turn_summary`, `task_summary`, `commands_changed`.
    pub fn is_ephemeral(&self) -> bool {
        match self {
            Self::StreamEvent(_) => true,
            Self::System(message) => message.is_ephemeral(),
            Self::Unknown(raw) => raw.get("type").and_then(Value::as_str) == Some("stream_event"),
            _ => false,
        }
    }

    /// The `request_id` of a control request / response / cancel frame.
    pub fn request_id(&self) -> Option<&str> {
        match self {
            Self::ControlRequest(request) => Some(&request.request_id),
            Self::ControlResponse(response) => response.request_id(),
            Self::ControlCancelRequest(cancel) => Some(&cancel.request_id),
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for CliMessage {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Self::from_value(value).map_err(<D::Error as serde::de::Error>::custom)
    }
}

/// Everything a client may write on the CLI's stdin (`StdinMessage`), keyed by `type`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ClientMessage {
    User(UserMessage),
    ControlRequest(ControlRequest),
    ControlResponse(ControlResponse),
    ControlCancelRequest(ControlCancelRequest),
    KeepAlive(KeepAlive),
    UpdateEnvironmentVariables(UpdateEnvironmentVariables),
    /// An unknown (or internal: `bash_command`, `queued_notification`, `session_notice`) type,
    /// kept whole.
    #[serde(untagged)]
    Unknown(Value),
}

impl ClientMessage {
    /// The `type` values with a typed variant.
    pub const KNOWN_TYPES: &'static [&'static str] = &[
        "user",
        "control_request",
        "control_response",
        "control_cancel_request",
        "keep_alive",
        "update_environment_variables",
    ];

    /// Classifies a JSON value (see [`CliMessage::from_value`]).
    pub fn from_value(value: Value) -> Result<Self, ParseError> {
        let Value::Object(mut map) = value else {
            return Err(ParseError::not_a_message(""));
        };
        let Some(kind) = str_field(&map, "type") else {
            return Err(ParseError::not_a_message(""));
        };
        if !Self::KNOWN_TYPES.contains(&kind) {
            return Ok(Self::Unknown(Value::Object(map)));
        }
        let kind = kind.to_owned();
        map.shift_remove("type");
        let body = Value::Object(map);
        let parsed = match kind.as_str() {
            "user" => serde_json::from_value(body).map(Self::User),
            "control_request" => serde_json::from_value(body).map(Self::ControlRequest),
            "control_response" => serde_json::from_value(body).map(Self::ControlResponse),
            "control_cancel_request" => {
                serde_json::from_value(body).map(Self::ControlCancelRequest)
            }
            "keep_alive" => serde_json::from_value(body).map(Self::KeepAlive),
            "update_environment_variables" => {
                serde_json::from_value(body).map(Self::UpdateEnvironmentVariables)
            }
            _ => unreachable!("every KNOWN_TYPES entry is dispatched"),
        };
        parsed.map_err(|err| ParseError::invalid_body(&kind, err.to_string(), ""))
    }

    /// `type`, plus `/subtype` for `control_request` (e.g. `"control_request/interrupt"`).
    pub fn kind(&self) -> String {
        match self {
            Self::ControlRequest(request) => format!("control_request/{}", request.subtype()),
            Self::Unknown(raw) => raw_kind(raw),
            other => other.type_name().to_owned(),
        }
    }

    /// The `type` string.
    pub fn type_name(&self) -> &str {
        match self {
            Self::User(_) => "user",
            Self::ControlRequest(_) => "control_request",
            Self::ControlResponse(_) => "control_response",
            Self::ControlCancelRequest(_) => "control_cancel_request",
            Self::KeepAlive(_) => "keep_alive",
            Self::UpdateEnvironmentVariables(_) => "update_environment_variables",
            Self::Unknown(raw) => raw.get("type").and_then(Value::as_str).unwrap_or(""),
        }
    }

    /// `false` only for [`ClientMessage::Unknown`].
    pub fn is_known(&self) -> bool {
        !matches!(self, Self::Unknown(_))
    }

    /// The `uuid` of a `user` message (the dedup key on the relay).
    pub fn uuid(&self) -> Option<&str> {
        match self {
            Self::User(message) => message.uuid.as_deref(),
            Self::Unknown(raw) => raw.get("uuid").and_then(Value::as_str),
            _ => None,
        }
    }

    /// The `request_id` of control frames (and of an env update that asks for an answer).
    pub fn request_id(&self) -> Option<&str> {
        match self {
            Self::ControlRequest(request) => Some(&request.request_id),
            Self::ControlResponse(response) => response.request_id(),
            Self::ControlCancelRequest(cancel) => Some(&cancel.request_id),
            Self::UpdateEnvironmentVariables(update) => update.request_id.as_deref(),
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for ClientMessage {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Self::from_value(value).map_err(<D::Error as serde::de::Error>::custom)
    }
}

/// `type[/subtype]` of a raw frame (`subtype`, or `request.subtype` for control requests).
fn raw_kind(raw: &Value) -> String {
    let kind = raw.get("type").and_then(Value::as_str).unwrap_or("");
    let subtype = raw
        .get("subtype")
        .or_else(|| {
            raw.get("request")
                .and_then(|request| request.get("subtype"))
        })
        .and_then(Value::as_str);
    match subtype {
        Some(subtype) => format!("{kind}/{subtype}"),
        None => kind.to_owned(),
    }
}

impl ControlRequestBody {
    /// Wraps the body in a `control_request` with `request_id`.
    pub fn into_request(self, request_id: impl Into<String>) -> ControlRequest {
        ControlRequest::new(request_id, self)
    }
}

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

/// `assistant`: one completed content block of a model response (frames of one response share
/// `message.id`). CLI-made error frames have `model:"<synthetic>"` and `error` set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AssistantMessage {
    /// The API message; `content` holds one block.
    pub message: BetaMessage,
    /// Non-null inside a subagent started by that tool_use.
    pub parent_tool_use_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<AssistantMessageError>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_message_uuid: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_message_uuids: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resume_reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resumed_from_incomplete_thinking: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub supersedes: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aborted: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subagent_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub context_usage: Option<Value>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub usage_report: Option<Value>,
    pub uuid: String,
    pub session_id: String,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `user` (both directions): a client prompt, a CLI tool_result / synthetic message, or an
/// `isReplay` echo of a client message (same `uuid`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserMessage {
    pub message: MessageParam,
    /// Always sent (as `null` for top-level prompts): the CLI requires the field.
    pub parent_tool_use_id: Option<String>,
    /// The client-chosen id; echoes and `command_lifecycle` refer to it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
    /// `""` is accepted from clients.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// `true` on `--replay-user-messages` echoes.
    #[serde(rename = "isReplay", skip_serializing_if = "Option::is_none")]
    pub is_replay: Option<bool>,
    /// `true` on CLI-generated prompts (e.g. the max_tokens auto-continue).
    #[serde(rename = "isSynthetic", skip_serializing_if = "Option::is_none")]
    pub is_synthetic: Option<bool>,
    /// Structured tool output (any JSON, often an object or a string).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub tool_use_result: Option<Value>,
    /// Internal: how each tool_result was permitted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_result_meta: Option<Vec<ToolResultMeta>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority: Option<String>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub origin: Option<Value>,
    #[serde(rename = "shouldQuery", skip_serializing_if = "Option::is_none")]
    pub should_query: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_composed: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_attachments: Option<Vec<Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pasted_content: Option<Vec<Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inline_pastes: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subagent_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_description: Option<String>,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// An entry of `user.tool_result_meta` (internal).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResultMeta {
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permission_decision: Option<PermissionDecisionMeta>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub non_execution_kind: Option<String>,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `tool_result_meta[].permission_decision`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PermissionDecisionMeta {
    /// `accept` or `reject`.
    pub decision: String,
    /// `config`, `user_temporary`, `user_reject`, …
    pub source: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason_type: Option<String>,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `result`: exactly one per turn, the turn-complete signal. API failures end with
/// `subtype:"success"` and `is_error:true` (see REAL-CLI-NOTES §1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultMessage {
    pub subtype: ResultSubtype,
    pub is_error: bool,
    pub duration_ms: Number,
    pub duration_api_ms: Number,
    pub num_turns: u64,
    /// Text of the turn's last text block (success only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    pub stop_reason: Option<StopReason>,
    pub total_cost_usd: Number,
    pub usage: Usage,
    #[serde(rename = "modelUsage")]
    pub model_usage: BTreeMap<String, ModelUsage>,
    pub permission_denials: Vec<PermissionDenial>,
    /// Error subtypes only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub errors: Option<Vec<String>>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub api_error_status: Option<Option<u16>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub terminal_reason: Option<TerminalReason>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub structured_output: Option<Value>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub deferred_tool_use: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queued_turn_count: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result_index: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_message_uuid: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_message_uuids: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resume_reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub local_command: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fast_mode_state: Option<FastModeState>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fast_mode_disabled_reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttft_ms: Option<Number>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub origin: Option<Value>,
    pub uuid: String,
    pub session_id: String,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Per-model usage in `result.modelUsage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    #[serde(rename = "thinkingTokens", skip_serializing_if = "Option::is_none")]
    pub thinking_tokens: Option<u64>,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// An entry of `result.permission_denials`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PermissionDenial {
    pub tool_name: String,
    pub tool_use_id: String,
    pub tool_input: Value,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `stream_event` (ephemeral): one Messages-API stream event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamEventMessage {
    pub event: StreamEvent,
    pub parent_tool_use_id: Option<String>,
    /// Internal, on every live frame: the `msg_…` id of the response.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_message_id: Option<String>,
    /// Internal, on a CLI-synthesised `message_stop` after a cut-short stream.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub abandoned_blocks: Option<AbandonedBlocks>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttft_ms: Option<Number>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_message_uuid: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_message_uuids: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resume_reason: Option<String>,
    pub uuid: String,
    pub session_id: String,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `tool_progress`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolProgressMessage {
    pub tool_use_id: String,
    pub tool_name: String,
    pub parent_tool_use_id: Option<String>,
    pub elapsed_time_seconds: Number,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub heartbeat: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subagent_type: Option<String>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub subagent_retry: Option<Value>,
    pub uuid: String,
    pub session_id: String,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `tool_use_summary`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolUseSummaryMessage {
    pub summary: String,
    pub preceding_tool_use_ids: Vec<String>,
    pub uuid: String,
    pub session_id: String,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `auth_status` (only with `--enable-auth-status`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuthStatusMessage {
    #[serde(rename = "isAuthenticating")]
    pub is_authenticating: bool,
    pub output: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub uuid: String,
    pub session_id: String,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `rate_limit_event` (subscriber auth only).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RateLimitEventMessage {
    pub rate_limit_info: RateLimitInfo,
    pub uuid: String,
    pub session_id: String,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `SDKRateLimitInfo` (the rarer overage fields stay in `extra`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RateLimitInfo {
    pub status: RateLimitStatus,
    #[serde(rename = "resetsAt", skip_serializing_if = "Option::is_none")]
    pub resets_at: Option<Number>,
    #[serde(rename = "rateLimitType", skip_serializing_if = "Option::is_none")]
    pub rate_limit_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub utilization: Option<Number>,
    #[serde(rename = "overageStatus", skip_serializing_if = "Option::is_none")]
    pub overage_status: Option<RateLimitStatus>,
    #[serde(rename = "overageResetsAt", skip_serializing_if = "Option::is_none")]
    pub overage_resets_at: Option<Number>,
    #[serde(
        rename = "overageDisabledReason",
        skip_serializing_if = "Option::is_none"
    )]
    pub overage_disabled_reason: Option<String>,
    #[serde(rename = "isUsingOverage", skip_serializing_if = "Option::is_none")]
    pub is_using_overage: Option<bool>,
    #[serde(rename = "surpassedThreshold", skip_serializing_if = "Option::is_none")]
    pub surpassed_threshold: Option<Number>,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `prompt_suggestion`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptSuggestionMessage {
    pub suggestion: String,
    pub uuid: String,
    pub session_id: String,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `conversation_reset` (`/clear`, plan-mode exit, …).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConversationResetMessage {
    pub new_conversation_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trigger: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_message_uuid: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    pub uuid: String,
    pub session_id: String,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `active_goal`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActiveGoalMessage {
    pub value: Option<ActiveGoal>,
    pub uuid: String,
    pub session_id: String,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `active_goal.value`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActiveGoal {
    pub condition: String,
    pub iterations: u64,
    pub set_at: Number,
    pub tokens_at_start: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_reason: Option<String>,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `keep_alive` (either direction; ignore). May carry a `startup_mark`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct KeepAlive {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub startup_mark: Option<String>,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `command_lifecycle` (internal): progress of a client `user` message that had a `uuid`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommandLifecycleMessage {
    /// The client message `uuid`.
    pub command_uuid: String,
    pub state: CommandState,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub wakeup_source: Option<Value>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub scheduled_for: Option<Value>,
    pub uuid: String,
    pub session_id: String,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `update_environment_variables` (client → CLI). Only allowlisted token variables are applied;
/// with a `request_id` the CLI answers `{applied:[…]}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct UpdateEnvironmentVariables {
    pub variables: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}
