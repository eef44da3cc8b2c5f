//! The top-level unions: [`CliMessage`] (CLI → client, stdout) and [`ClientMessage`]
//! (client → CLI, stdin). The message structs that are not system / control / stream types live in
//! [`turn`] (assistant, user, result) and [`events`] (everything else).

mod events;
mod turn;

pub use events::*;
pub use turn::*;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::control::{ControlCancelRequest, ControlRequest, ControlRequestBody, ControlResponse};
use crate::error::ParseError;
use crate::extra::SkipType;
use crate::system::SystemMessage;
use crate::tagged::from_text;
use crate::util::str_field;

/// What [`CliMessage::classify`] found.
enum Class {
    Known(&'static str),
    Internal,
    Unknown,
}

/// `type` (and `subtype`, when it comes next) of a line that starts with them:
/// `{"type":"…","subtype":"…"`, no escapes, no spaces.
fn leading_tags(line: &str) -> Option<(&str, Option<&str>)> {
    fn string(rest: &str) -> Option<(&str, &str)> {
        let end = rest.find('"')?;
        let text = &rest[..end];
        (!text.contains('\\')).then_some((text, &rest[end + 1..]))
    }
    let (kind, rest) = string(line.strip_prefix(r#"{"type":""#)?)?;
    let subtype = rest
        .strip_prefix(r#","subtype":""#)
        .and_then(string)
        .map(|(subtype, _)| subtype);
    Some((kind, subtype))
}

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
        match Self::classify(&value)? {
            Class::Known(kind) => Self::from_body(kind, &value),
            Class::Internal => Ok(Self::Internal(value)),
            Class::Unknown => Ok(Self::Unknown(value)),
        }
    }

    /// [`Self::from_value`] without taking the value: the fields are read from it (strings
    /// copied) and nothing else is cloned — for a caller that keeps the raw frame too.
    pub fn from_value_ref(value: &Value) -> Result<Self, ParseError> {
        match Self::classify(value)? {
            Class::Known(kind) => Self::from_body(kind, value),
            Class::Internal => Ok(Self::Internal(value.clone())),
            Class::Unknown => Ok(Self::Unknown(value.clone())),
        }
    }

    /// What a frame is, from its `type` (and `subtype` for `system`).
    fn classify(value: &Value) -> Result<Class, ParseError> {
        let Value::Object(map) = value else {
            return Err(ParseError::not_a_message(""));
        };
        let Some(kind) = str_field(map, "type") else {
            return Err(ParseError::not_a_message(""));
        };
        Self::class_of(kind, str_field(map, "subtype"))
    }

    fn class_of(kind: &str, subtype: Option<&str>) -> Result<Class, ParseError> {
        if kind == "system" {
            match subtype {
                Some(subtype) if SystemMessage::is_recognised_subtype(subtype) => {}
                Some(_) => return Ok(Class::Unknown),
                None => {
                    return Err(ParseError::invalid_body(
                        "system",
                        "missing string field `subtype`",
                        "",
                    ));
                }
            }
        } else if Self::INTERNAL_TYPES.contains(&kind) {
            return Ok(Class::Internal);
        }
        Ok(
            match Self::KNOWN_TYPES.iter().find(|known| **known == kind) {
                Some(known) => Class::Known(known),
                None => Class::Unknown,
            },
        )
    }

    fn from_body(kind: &str, value: &Value) -> Result<Self, ParseError> {
        Self::decode_body(kind, SkipType(value))
            .map_err(|err| ParseError::invalid_body(kind, err.to_string(), ""))
    }

    /// Decodes a frame from its JSON text with the same results and errors as [`Self::from_value`]
    /// (an invalid JSON text: [`ParseError::InvalidJson`] quoting it; other errors do not quote
    /// the text, use [`crate::parse_cli_line`] for that), reading it only with the text decoders:
    /// a line the CLI wrote straight ([`Self::from_line`]); anything else (another key first, a
    /// repeated key) is read as a `Value` for its classification, and a known type decoded from
    /// that `Value`'s text (its keys unique, the last one kept, as a `Value` decode sees them).
    pub fn from_text(text: &str) -> Result<Self, ParseError> {
        if let Some(message) = Self::from_line(text) {
            return Ok(message);
        }
        let value = crate::parse_json(text)?;
        match Self::classify(&value)? {
            Class::Known(kind) => from_text(&value.to_string(), |de| {
                Self::decode_body(kind, SkipType(de))
            })
            .map_err(|err| ParseError::invalid_body(kind, err.to_string(), "")),
            Class::Internal => Ok(Self::Internal(value)),
            Class::Unknown => Ok(Self::Unknown(value)),
        }
    }

    /// Decodes one line the CLI wrote straight from the text (no intermediate `Value`), when it
    /// starts with a known `type` (and `subtype`, for `system`) as the CLI writes every line.
    /// `None` for anything else — another key first, an unknown or internal type, a body that does
    /// not fit, bad JSON: the general path of [`Self::from_text`] then decodes it, or words the
    /// error, as the `Value` path would.
    pub(crate) fn from_line(line: &str) -> Option<Self> {
        let (kind, subtype) = leading_tags(line)?;
        let Ok(Class::Known(kind)) = Self::class_of(kind, subtype) else {
            return None;
        };
        let mut de = serde_json::Deserializer::from_str(line);
        let message = Self::decode_body(kind, SkipType(&mut de)).ok()?;
        de.end().ok()?;
        Some(message)
    }

    fn decode_body<'de, D>(kind: &str, body: D) -> Result<Self, serde_json::Error>
    where
        D: Deserializer<'de, Error = serde_json::Error>,
    {
        match kind {
            "assistant" => Deserialize::deserialize(body).map(Self::Assistant),
            "user" => Deserialize::deserialize(body).map(Self::User),
            "result" => Deserialize::deserialize(body).map(Self::Result),
            "system" => Deserialize::deserialize(body).map(Self::System),
            "stream_event" => Deserialize::deserialize(body).map(Self::StreamEvent),
            "tool_progress" => Deserialize::deserialize(body).map(Self::ToolProgress),
            "tool_use_summary" => Deserialize::deserialize(body).map(Self::ToolUseSummary),
            "auth_status" => Deserialize::deserialize(body).map(Self::AuthStatus),
            "rate_limit_event" => Deserialize::deserialize(body).map(Self::RateLimitEvent),
            "prompt_suggestion" => Deserialize::deserialize(body).map(Self::PromptSuggestion),
            "conversation_reset" => Deserialize::deserialize(body).map(Self::ConversationReset),
            "active_goal" => Deserialize::deserialize(body).map(Self::ActiveGoal),
            "control_request" => Deserialize::deserialize(body).map(Self::ControlRequest),
            "control_response" => Deserialize::deserialize(body).map(Self::ControlResponse),
            "control_cancel_request" => {
                Deserialize::deserialize(body).map(Self::ControlCancelRequest)
            }
            "keep_alive" => Deserialize::deserialize(body).map(Self::KeepAlive),
            "command_lifecycle" => Deserialize::deserialize(body).map(Self::CommandLifecycle),
            _ => unreachable!("every KNOWN_TYPES entry is dispatched"),
        }
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
        self.ids().0
    }

    /// The frame's `session_id`.
    pub fn session_id(&self) -> Option<&str> {
        self.ids().1
    }

    /// The frame's `uuid` and `session_id`, where its type has them.
    fn ids(&self) -> (Option<&str>, Option<&str>) {
        fn both<'a>(uuid: &'a str, session_id: &'a str) -> (Option<&'a str>, Option<&'a str>) {
            (Some(uuid), Some(session_id))
        }
        match self {
            Self::Assistant(m) => both(&m.uuid, &m.session_id),
            Self::User(m) => (m.uuid.as_deref(), m.session_id.as_deref()),
            Self::Result(m) => both(&m.uuid, &m.session_id),
            Self::System(m) => {
                let e = m.envelope();
                (e.uuid, e.session_id)
            }
            Self::StreamEvent(m) => both(&m.uuid, &m.session_id),
            Self::ToolProgress(m) => both(&m.uuid, &m.session_id),
            Self::ToolUseSummary(m) => both(&m.uuid, &m.session_id),
            Self::AuthStatus(m) => both(&m.uuid, &m.session_id),
            Self::RateLimitEvent(m) => both(&m.uuid, &m.session_id),
            Self::PromptSuggestion(m) => both(&m.uuid, &m.session_id),
            Self::ConversationReset(m) => both(&m.uuid, &m.session_id),
            Self::ActiveGoal(m) => both(&m.uuid, &m.session_id),
            Self::CommandLifecycle(m) => both(&m.uuid, &m.session_id),
            Self::ControlRequest(_)
            | Self::ControlResponse(_)
            | Self::ControlCancelRequest(_)
            | Self::KeepAlive(_) => (None, None),
            Self::Internal(raw) | Self::Unknown(raw) => (
                raw.get("uuid").and_then(Value::as_str),
                raw.get("session_id").and_then(Value::as_str),
            ),
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
        let (kind, body) = match Self::classify(value)? {
            Ok(known) => known,
            Err(unknown) => return Ok(Self::Unknown(unknown)),
        };
        // Decoded from the borrowed `Value` (native callers; the console reads text: `from_text`).
        Self::decode_body(kind, &body)
            .map_err(|err| ParseError::invalid_body(kind, err.to_string(), ""))
    }

    /// [`Self::from_value`] from the JSON text, with its results and errors (see
    /// [`CliMessage::from_text`]): the known body is decoded from the text of the `Value`.
    pub fn from_text(text: &str) -> Result<Self, ParseError> {
        let (kind, body) = match Self::classify(crate::parse_json(text)?)? {
            Ok(known) => known,
            Err(unknown) => return Ok(Self::Unknown(unknown)),
        };
        from_text(&body.to_string(), |de| Self::decode_body(kind, de))
            .map_err(|err| ParseError::invalid_body(kind, err.to_string(), ""))
    }

    /// A known type and its body (the object without `type`), or an unknown frame kept whole.
    #[allow(clippy::type_complexity)]
    fn classify(value: Value) -> Result<Result<(&'static str, Value), Value>, ParseError> {
        let Value::Object(mut map) = value else {
            return Err(ParseError::not_a_message(""));
        };
        let Some(kind) = str_field(&map, "type") else {
            return Err(ParseError::not_a_message(""));
        };
        let Some(&kind) = Self::KNOWN_TYPES.iter().find(|known| **known == kind) else {
            return Ok(Err(Value::Object(map)));
        };
        map.shift_remove("type");
        Ok(Ok((kind, Value::Object(map))))
    }

    fn decode_body<'de, D>(kind: &str, body: D) -> Result<Self, serde_json::Error>
    where
        D: Deserializer<'de, Error = serde_json::Error>,
    {
        match kind {
            "user" => Deserialize::deserialize(body).map(Self::User),
            "control_request" => Deserialize::deserialize(body).map(Self::ControlRequest),
            "control_response" => Deserialize::deserialize(body).map(Self::ControlResponse),
            "control_cancel_request" => {
                Deserialize::deserialize(body).map(Self::ControlCancelRequest)
            }
            "keep_alive" => Deserialize::deserialize(body).map(Self::KeepAlive),
            "update_environment_variables" => {
                Deserialize::deserialize(body).map(Self::UpdateEnvironmentVariables)
            }
            _ => unreachable!("every KNOWN_TYPES entry is dispatched"),
        }
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
