//! Applying one frame: an exhaustive dispatch on the decoded message.

use bridge_protocol::{CliMessage, ClientMessage, MessageType};
use serde_json::Value;

use super::decode::{Decoded, Frame, Raw};
use super::{Session, Source};
use crate::state::item::SystemKind;

impl Session {
    /// Applies one frame written by the CLI.
    pub fn apply_value(&mut self, frame: &Value) {
        self.apply_from(Source::Worker, frame);
    }

    /// Applies a parsed CLI message (`bridge_protocol::CliMessage`, or anything that serializes to a
    /// frame).
    pub fn apply<M: serde::Serialize>(&mut self, msg: &M) {
        match serde_json::to_value(msg) {
            Ok(v) => self.apply_from(Source::Worker, &v),
            Err(e) => self.notice(format!("could not read a frame: {e}")),
        }
    }

    /// Decodes and applies one frame given as a `Value` (a replayed transcript, a built frame) with
    /// its `source`: decoded from its JSON text, as the stream's frames are ([`Self::apply_text`]),
    /// so the console links one set of decoders.
    pub fn apply_from(&mut self, source: Source, v: &Value) {
        let msg = Frame::decode_ref(&source, v);
        self.apply_decoded(&source, &msg, Raw::Value(v));
    }

    /// Decodes one frame from its JSON text (as the relay sent it) and applies it: the typed
    /// message is read straight from the text; a `Value` of it is built only for a frame shown
    /// raw, a control request (kept to answer) or a system frame shown raw.
    pub fn apply_text(&mut self, source: Source, text: &str) {
        let msg = Frame::decode_text(&source, text);
        self.apply_decoded(&source, &msg, Raw::Text(text));
    }

    /// Applies one decoded frame.
    pub fn apply_frame(&mut self, frame: &Frame) {
        self.apply_decoded(&frame.source, &frame.msg, Raw::Value(&frame.raw));
    }

    fn apply_decoded(&mut self, source: &Source, msg: &Decoded, raw: Raw<'_>) {
        self.applied += 1;
        match msg {
            Decoded::Cli(m) => self.apply_cli(source, m, raw),
            Decoded::Client(m) => self.apply_client(m),
            Decoded::Invalid(error) => {
                let raw = raw.value();
                if MessageType::of(&raw) == Some(MessageType::ControlRequest)
                    && *source != Source::Client
                {
                    self.on_undecoded_control_request(&raw, error)
                } else {
                    self.push_raw(&raw, Some(error))
                }
            }
        }
    }

    /// What a client wrote (another controller's, or this console's own, echoed by the relay).
    fn apply_client(&mut self, m: &ClientMessage) {
        match m {
            ClientMessage::User(u) => self.on_user(&Source::Client, u),
            ClientMessage::ControlRequest(r) => self.on_client_control_request(r),
            ClientMessage::ControlResponse(r) => self.on_control_response(&Source::Client, r),
            ClientMessage::ControlCancelRequest(c) => self.on_cancel(&c.request_id),
            // Environment updates and keep-alives show nothing; nor does a type only clients
            // know (the CLI ignores it too).
            ClientMessage::KeepAlive(_)
            | ClientMessage::UpdateEnvironmentVariables(_)
            | ClientMessage::Unknown(_) => {}
        }
    }

    fn apply_cli(&mut self, source: &Source, m: &CliMessage, raw: Raw<'_>) {
        // A redelivered durable frame changes nothing (stream events are not durable; `user`
        // frames are matched to the prompt they echo by their uuid).
        let durable = !matches!(m, CliMessage::StreamEvent(_) | CliMessage::User(_));
        if durable
            && let Some(id) = m.uuid()
            && !self.seen.insert(id.to_string())
        {
            return;
        }
        match m {
            CliMessage::StreamEvent(e) => self.on_stream_event(e),
            CliMessage::KeepAlive(_) => {}
            CliMessage::ControlRequest(r) => self.on_control_request(r, &raw.value()),
            CliMessage::ControlResponse(r) => self.on_control_response(source, r),
            CliMessage::ControlCancelRequest(c) => self.on_cancel(&c.request_id),
            CliMessage::User(u) => self.on_user(source, u),
            CliMessage::Assistant(a) => self.on_assistant(a),
            CliMessage::Result(r) => self.on_result(r),
            CliMessage::System(sys) => self.on_system(source, sys, raw),
            CliMessage::ToolProgress(p) => self.on_tool_progress(p),
            CliMessage::ToolUseSummary(t) => self.push_system(
                Some(&t.uuid),
                None,
                SystemKind::notice("summary", t.summary.clone(), "info"),
            ),
            CliMessage::RateLimitEvent(r) => self.on_rate_limit(r),
            CliMessage::PromptSuggestion(p) => {
                self.suggestion = Some(p.suggestion.clone());
                self.bump();
            }
            CliMessage::ConversationReset(r) => {
                let trigger = r.trigger.as_deref().unwrap_or("reset");
                self.push_system(
                    Some(&r.uuid),
                    None,
                    SystemKind::notice(
                        "conversation reset",
                        format!("The conversation was reset ({trigger})."),
                        "notice",
                    ),
                );
            }
            CliMessage::ActiveGoal(g) => {
                let text = g.value.as_ref().map_or_else(
                    || "Goal cleared.".to_string(),
                    |v| format!("Goal: {}", v.condition),
                );
                self.push_system(
                    Some(&g.uuid),
                    None,
                    SystemKind::notice("goal", text, "info"),
                );
            }
            CliMessage::AuthStatus(a) => {
                let mut text = a.output.clone();
                text.extend(a.error.clone());
                let level = if a.error.is_some() { "error" } else { "info" };
                self.push_system(
                    Some(&a.uuid),
                    None,
                    SystemKind::notice("authentication", text.join("\n"), level),
                );
            }
            CliMessage::CommandLifecycle(l) => self.on_lifecycle(&l.command_uuid, l.state.as_str()),
            // Internal frames of the CLI (autocompact state, transcript mirror): recognised, shown raw.
            CliMessage::Internal(v) => self.push_raw(v, None),
            CliMessage::Unknown(v) => self.on_unknown(source, v),
        }
    }

    /// A type (or system subtype) bridge-protocol does not know: what the relay writes itself is
    /// shown as a notice, anything else raw.
    fn on_unknown(&mut self, source: &Source, v: &Value) {
        let str_at = |k: &str| v.get(k).and_then(Value::as_str);
        let uuid = str_at("uuid");
        match (MessageType::of(v), bridge_protocol::kind::system_subtype(v)) {
            (Some(MessageType::Other("relay_error")), _) => {
                let mut text = str_at("error").unwrap_or("relay error").to_string();
                if let Some(raw) = str_at("raw") {
                    text.push_str("\n\n");
                    text.extend(raw.chars().take(400));
                }
                self.push_system(uuid, None, SystemKind::notice("relay error", text, "error"));
            }
            (Some(MessageType::System), Some(sub))
                if *source == Source::Relay && !sub.is_empty() =>
            {
                let text = super::system::text_of(v);
                self.push_system(
                    uuid,
                    None,
                    SystemKind::notice(sub.replace('_', " "), text, "info"),
                );
            }
            _ => self.push_raw(v, None),
        }
    }
}
