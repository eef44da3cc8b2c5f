//! What a raw frame is, read from its `type` tag (and a `system` frame's `subtype`) without
//! decoding its body: for the relay and the transport, which route thousands of frames a second
//! and forward the exact bytes they got. This is the one place outside the typed unions that knows
//! the tag strings; [`CliMessage`](crate::CliMessage) and [`ClientMessage`](crate::ClientMessage)
//! agree with it (tested).

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::Value;

use crate::system::SystemMessage;

/// The top-level `type` of a frame, CLI → client or client → CLI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MessageType<'a> {
    Assistant,
    User,
    Result,
    System,
    StreamEvent,
    ToolProgress,
    ToolUseSummary,
    AuthStatus,
    RateLimitEvent,
    PromptSuggestion,
    ConversationReset,
    ActiveGoal,
    ControlRequest,
    ControlResponse,
    ControlCancelRequest,
    KeepAlive,
    CommandLifecycle,
    UpdateEnvironmentVariables,
    /// Any other `type`: an internal or relay-made frame, or one newer than this crate.
    Other(&'a str),
}

impl<'a> MessageType<'a> {
    /// The type of a frame, or `None` when it is not an object with a string `type`.
    pub fn of(frame: &'a Value) -> Option<Self> {
        frame
            .get("type")
            .and_then(Value::as_str)
            .map(Self::from_tag)
    }

    /// The type named by a `type` tag (a `match`: this runs for every frame the relay routes).
    pub fn from_tag(tag: &'a str) -> Self {
        match tag {
            "assistant" => Self::Assistant,
            "user" => Self::User,
            "result" => Self::Result,
            "system" => Self::System,
            "stream_event" => Self::StreamEvent,
            "tool_progress" => Self::ToolProgress,
            "tool_use_summary" => Self::ToolUseSummary,
            "auth_status" => Self::AuthStatus,
            "rate_limit_event" => Self::RateLimitEvent,
            "prompt_suggestion" => Self::PromptSuggestion,
            "conversation_reset" => Self::ConversationReset,
            "active_goal" => Self::ActiveGoal,
            "control_request" => Self::ControlRequest,
            "control_response" => Self::ControlResponse,
            "control_cancel_request" => Self::ControlCancelRequest,
            "keep_alive" => Self::KeepAlive,
            "command_lifecycle" => Self::CommandLifecycle,
            "update_environment_variables" => Self::UpdateEnvironmentVariables,
            other => Self::Other(other),
        }
    }

    /// `true` if `frame`, of this type, is one the relay does not store (see [`is_ephemeral`]; the
    /// `subtype` is read only for `system`).
    pub fn is_ephemeral(self, frame: &Value) -> bool {
        match self {
            Self::StreamEvent => true,
            Self::System => frame
                .get("subtype")
                .and_then(Value::as_str)
                .is_some_and(|sub| SystemMessage::EPHEMERAL_SUBTYPES.contains(&sub)),
            _ => false,
        }
    }

    /// The `type` tag.
    pub fn as_str(self) -> &'a str {
        match self {
            Self::Assistant => "assistant",
            Self::User => "user",
            Self::Result => "result",
            Self::System => "system",
            Self::StreamEvent => "stream_event",
            Self::ToolProgress => "tool_progress",
            Self::ToolUseSummary => "tool_use_summary",
            Self::AuthStatus => "auth_status",
            Self::RateLimitEvent => "rate_limit_event",
            Self::PromptSuggestion => "prompt_suggestion",
            Self::ConversationReset => "conversation_reset",
            Self::ActiveGoal => "active_goal",
            Self::ControlRequest => "control_request",
            Self::ControlResponse => "control_response",
            Self::ControlCancelRequest => "control_cancel_request",
            Self::KeepAlive => "keep_alive",
            Self::CommandLifecycle => "command_lifecycle",
            Self::UpdateEnvironmentVariables => "update_environment_variables",
            Self::Other(tag) => tag,
        }
    }
}

/// A frame's `type` and `subtype`, read from its JSON text in one pass without building it (every
/// other field is skipped, and checked to be JSON on the way): what a router needs to place a
/// frame whose bytes it forwards as they came.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tags<'a> {
    tag: Cow<'a, str>,
    subtype: Option<Cow<'a, str>>,
}

impl<'a> Tags<'a> {
    /// The tags of `text`; `None` when it is not an object with a string `type` and (if present) a
    /// string `subtype`, is not JSON, or repeats a key (a `Value` reads the last of repeated keys:
    /// read such a text as a `Value`).
    pub fn peek(text: &'a str) -> Option<Tags<'a>> {
        #[derive(Deserialize)]
        struct Raw<'a> {
            #[serde(rename = "type", borrow)]
            tag: Cow<'a, str>,
            #[serde(default, borrow)]
            subtype: Option<Cow<'a, str>>,
        }
        let raw: Raw<'a> = serde_json::from_str(text).ok()?;
        Some(Tags {
            tag: raw.tag,
            subtype: raw.subtype,
        })
    }

    pub fn kind(&self) -> MessageType<'_> {
        MessageType::from_tag(&self.tag)
    }

    pub fn tag(&self) -> &str {
        &self.tag
    }

    pub fn subtype(&self) -> Option<&str> {
        self.subtype.as_deref()
    }

    /// As [`is_ephemeral`] says of the frame.
    pub fn is_ephemeral(&self) -> bool {
        match self.kind() {
            MessageType::StreamEvent => true,
            MessageType::System => self
                .subtype()
                .is_some_and(|sub| SystemMessage::EPHEMERAL_SUBTYPES.contains(&sub)),
            _ => false,
        }
    }
}

/// The `subtype` of a `system` frame (`None` for any other frame, or without a string subtype).
pub fn system_subtype(frame: &Value) -> Option<&str> {
    match MessageType::of(frame)? {
        MessageType::System => frame.get("subtype").and_then(Value::as_str),
        _ => None,
    }
}

/// `true` for the frames the relay does not store: `stream_event` and the ephemeral `system`
/// subtypes ([`SystemMessage::EPHEMERAL_SUBTYPES`]). The raw-frame form of
/// [`CliMessage::is_ephemeral`](crate::CliMessage::is_ephemeral).
pub fn is_ephemeral(frame: &Value) -> bool {
    MessageType::of(frame).is_some_and(|ty| ty.is_ephemeral(frame))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn tags_agree_with_the_value_reading() {
        let texts = [
            r#"{"type":"stream_event","event":{"type":"content_block_delta"}}"#,
            r#"{"subtype":"thinking_tokens","type":"system","x":[1,{"y":null}]}"#,
            r#"{"type":"system","subtype":"init"}"#,
            r#"{"type":"sys\u0074em","subtype":"status"}"#,
            r#"{"type":"keep_alive"}"#,
            r#"{"type":"result","subtype":"success","usage":{}}"#,
            r#"{"type":"something_new","subtype":7}"#,
            r#"{"type":3}"#,
            r#"{"subtype":"init"}"#,
            r#"[{"type":"user"}]"#,
            r#"{"type":"user","uuid":"a","uuid":"b"}"#,
            r#"{"type":"user","message":{"content":"unclosed"}"#,
            r#"{"type":"user"} trailing"#,
        ];
        for text in texts {
            let value: Option<Value> = serde_json::from_str(text).ok();
            match Tags::peek(text) {
                Some(tags) => {
                    let v = value.expect("a text the peek reads is JSON");
                    assert_eq!(MessageType::of(&v), Some(tags.kind()), "{text}");
                    assert_eq!(is_ephemeral(&v), tags.is_ephemeral(), "{text}");
                    assert_eq!(v["subtype"].as_str(), tags.subtype(), "{text}");
                }
                // Refused: not JSON, or not a string type/subtype, or a repeated key — the caller
                // reads it as a Value then.
                None => assert!(
                    value.is_none()
                        || MessageType::of(value.as_ref().unwrap()).is_none()
                        || !value.as_ref().unwrap()["subtype"].is_string()
                        || text.matches("\"uuid\"").count() > 1,
                    "{text}"
                ),
            }
        }
        assert_eq!(
            Tags::peek(r#"{"type":"sys\u0074em","subtype":"status"}"#)
                .unwrap()
                .kind(),
            MessageType::System
        );
    }
    use crate::{CliMessage, ClientMessage};

    const ALL: &[MessageType<'static>] = &[
        MessageType::Assistant,
        MessageType::User,
        MessageType::Result,
        MessageType::System,
        MessageType::StreamEvent,
        MessageType::ToolProgress,
        MessageType::ToolUseSummary,
        MessageType::AuthStatus,
        MessageType::RateLimitEvent,
        MessageType::PromptSuggestion,
        MessageType::ConversationReset,
        MessageType::ActiveGoal,
        MessageType::ControlRequest,
        MessageType::ControlResponse,
        MessageType::ControlCancelRequest,
        MessageType::KeepAlive,
        MessageType::CommandLifecycle,
        MessageType::UpdateEnvironmentVariables,
    ];

    #[test]
    fn the_table_is_the_typed_unions_tags() {
        let mut known: Vec<&str> = CliMessage::KNOWN_TYPES.to_vec();
        for t in ClientMessage::KNOWN_TYPES {
            if !known.contains(t) {
                known.push(t);
            }
        }
        let named: Vec<&str> = known
            .iter()
            .copied()
            .filter(|t| !matches!(MessageType::from_tag(t), MessageType::Other(_)))
            .collect();
        assert_eq!(named, known, "every typed tag has a named MessageType");
        for tag in &known {
            assert_eq!(MessageType::from_tag(tag).as_str(), *tag);
        }
        let named_count = ALL.len();
        assert_eq!(
            named_count,
            known.len(),
            "no named MessageType without a typed tag"
        );
        for ty in ALL {
            assert_eq!(MessageType::from_tag(ty.as_str()), *ty);
        }
    }

    #[test]
    fn frames_are_classified_by_their_tag() {
        let v = json!({"type": "stream_event", "event": {"type": "ping"}});
        assert_eq!(MessageType::of(&v), Some(MessageType::StreamEvent));
        let v = json!({"type": "sources_changed"});
        assert_eq!(
            MessageType::of(&v),
            Some(MessageType::Other("sources_changed"))
        );
        assert_eq!(MessageType::Other("x").as_str(), "x");
        assert_eq!(MessageType::of(&json!({"type": 3})), None);
        assert_eq!(MessageType::of(&json!({})), None);
        assert_eq!(MessageType::of(&json!("keep_alive")), None);
        let init = json!({"type": "system", "subtype": "init"});
        assert_eq!(system_subtype(&init), Some("init"));
        assert_eq!(
            system_subtype(&json!({"type": "user", "subtype": "init"})),
            None
        );
    }

    #[test]
    fn ephemeral_frames_match_the_typed_rule() {
        let cases = [
            json!({"type": "stream_event"}),
            json!({"type": "system", "subtype": "thinking_tokens"}),
            json!({"type": "system", "subtype": "commands_changed"}),
            json!({"type": "system", "subtype": "post_turn_summary"}),
            json!({"type": "system", "subtype": "task_summary"}),
        ];
        for v in &cases {
            assert!(is_ephemeral(v), "{v}");
        }
        for v in [
            json!({"type": "system", "subtype": "init"}),
            json!({"type": "system"}),
            json!({"type": "assistant"}),
            json!({"type": "keep_alive"}),
            json!({"type": "brand_new"}),
        ] {
            assert!(!is_ephemeral(&v), "{v}");
        }
        for sub in SystemMessage::EPHEMERAL_SUBTYPES {
            assert!(is_ephemeral(&json!({"type": "system", "subtype": sub})));
        }
    }
}
