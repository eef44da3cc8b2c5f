//! `bridge-console-client`: the Bridge Console's client as a JavaScript package, with no UI.
//!
//! `scripts/pack.sh` builds this crate with wasm-bindgen (`--target web`) into `pkg/`, an ES module
//! package for browsers and Node 20 (see `pkg/README.md`). It is a thin layer: the connection is
//! `bridge-transport` (the console's own SSE+POST / WebSocket / hybrid transports with reconnect,
//! lossless resume, dedup and the outbox), messages are decoded and classified by
//! `bridge-protocol`, and every client→CLI payload is made by `bridge_protocol::build`.
//!
//! The pure parts are tested natively: option parsing (`options`), the permission answer
//! (`permissions`), and here [`classify`], [`parse_ndjson`] and the state names. The JS bindings
//! live in `js` (wasm32 only).

use bridge_protocol::framing::NdjsonDecoder;
use bridge_protocol::{CliMessage, ParseError, SystemMessage};
use bridge_transport::{CloseReason, ConnectionState};
use serde_json::Value;

#[cfg(target_arch = "wasm32")]
mod http;
#[cfg(target_arch = "wasm32")]
mod js;
mod options;
mod permissions;

pub use options::{
    ConnectOptions, CreateOptions, LoginOptions, RelayAccess, connect_options, create_options,
    login_options,
};
pub use permissions::{
    SeenPermission, permission_answer, permission_request, permission_updates, set_permission_mode,
    settled_request,
};

/// What [`classify`] answers besides the protocol's own types ([`CliMessage::KNOWN_TYPES`]); both
/// are listed in the package's `.d.ts` (`MessageClass`).
pub const OTHER_CLASSES: &[&str] = &[
    "can_use_tool",
    "elicitation",
    "internal",
    "unknown",
    "invalid",
];

/// Whether [`classify`] can answer `class`.
pub fn is_class(class: &str) -> bool {
    CliMessage::KNOWN_TYPES.contains(&class) || OTHER_CLASSES.contains(&class)
}

/// Classifies a CLI→client message by the protocol crate's unions: its `type`, except that a
/// `control_request` asking for a tool permission is `can_use_tool` and an MCP form or URL request
/// is `elicitation` (other control requests stay `control_request`). Internal frames the protocol
/// recognises are `internal`; a type (or `system` subtype) it does not know, kept whole, is
/// `unknown`; something that is not an object with a string `type` is `invalid`.
///
/// Only the tags are read: the typed body decoder (`CliMessage::from_value`) would more than double
/// the package's wasm, so a known type with a bad body is classified by its type here (the tests
/// check that both agree on the golden corpus).
pub fn classify(message: &Value) -> &'static str {
    let Some(kind) = message.get("type").and_then(Value::as_str) else {
        return "invalid";
    };
    match kind {
        "system" => match message.get("subtype").and_then(Value::as_str) {
            Some(subtype) if SystemMessage::is_recognised_subtype(subtype) => "system",
            Some(_) => "unknown",
            None => "invalid",
        },
        "control_request" => match message.pointer("/request/subtype").and_then(Value::as_str) {
            Some("can_use_tool") => "can_use_tool",
            Some("elicitation") => "elicitation",
            Some(_) => "control_request",
            None => "invalid",
        },
        _ if CliMessage::INTERNAL_TYPES.contains(&kind) => "internal",
        _ => CliMessage::KNOWN_TYPES
            .iter()
            .find(|known| **known == kind)
            .copied()
            .unwrap_or("unknown"),
    }
}

/// A line [`parse_ndjson`] could not turn into a message.
#[derive(Debug, Clone, PartialEq)]
pub struct LineError {
    /// 1-based line number in the input (blank lines count).
    pub line: u64,
    /// What is wrong with it (the protocol crate's message, which quotes the line).
    pub message: String,
}

/// The result of [`parse_ndjson`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Parsed {
    /// Every message, as its JSON (unknown types included, kept whole), in order.
    pub messages: Vec<Value>,
    /// Lines that are not messages: invalid UTF-8 or JSON, over-long, or not an object with a
    /// string `type`.
    pub errors: Vec<LineError>,
}

/// Splits NDJSON text with the protocol crate's sans-IO decoder (CRLF, blank lines, a last line
/// without `\n`, over-long lines) and keeps each line that is a message (a JSON object with a string
/// `type`). A bad line is reported with the protocol crate's error and skipped; the lines after it
/// are still read. Bodies are not checked against their type (see [`classify`]).
pub fn parse_ndjson(text: &str) -> Parsed {
    let mut decoder = NdjsonDecoder::default();
    let mut lines = decoder.feed(text.as_bytes());
    lines.extend(decoder.finish());
    let mut parsed = Parsed::default();
    for line in lines {
        let line = match line {
            Ok(line) => line,
            Err(err) => {
                parsed.errors.push(LineError {
                    line: err.line(),
                    message: err.to_string(),
                });
                continue;
            }
        };
        let error = match serde_json::from_str::<Value>(&line.text) {
            Ok(value) if value.get("type").is_some_and(Value::is_string) => {
                parsed.messages.push(value);
                continue;
            }
            Ok(_) => ParseError::NotAMessage {
                line: String::new(),
            },
            Err(e) => ParseError::InvalidJson {
                reason: e.to_string(),
                line: String::new(),
            },
        };
        parsed.errors.push(LineError {
            line: line.number,
            message: error.with_line(&line.text).to_string(),
        });
    }
    parsed
}

/// The state names the package reports: `connecting`, `live`, `reconnecting`, `offline` (closed:
/// by `close()`, or a failure retrying cannot fix) or `ended` (the session is over and its whole
/// log was delivered). The same mapping as the console's header.
pub fn state_name(state: &ConnectionState) -> &'static str {
    match state {
        ConnectionState::Connecting { .. } => "connecting",
        ConnectionState::Open => "live",
        // The package never suspends; a suspended transport would resume from its cursor.
        ConnectionState::Reconnecting { .. } | ConnectionState::Suspended => "reconnecting",
        ConnectionState::Closed {
            reason: CloseReason::Permanent(why),
        } if why.contains("session_ended") => "ended",
        ConnectionState::Closed { .. } => "offline",
    }
}

/// A hint for a connect failure, by what the relay said.
pub fn connect_hint(error: &str) -> &'static str {
    if error.contains("HTTP 401") || error.contains("code 1008") || error.contains("code 4001") {
        " (check the token, or log in first when relying on the cookie)"
    } else if error.contains("HTTP 403") || error.contains("code 4003") {
        " (this token may not read that session)"
    } else if error.contains("HTTP 404") || error.contains("code 4404") {
        " (no such session on this relay)"
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_d_ts_lists_every_class() {
        let d_ts = include_str!("types.d.ts");
        let union = d_ts
            .split_once("export type MessageClass =")
            .and_then(|(_, rest)| rest.split_once(';'))
            .map(|(union, _)| union)
            .expect("types.d.ts declares MessageClass");
        let mut listed: Vec<&str> = union.split('\'').skip(1).step_by(2).collect();
        let mut classes: Vec<&str> = CliMessage::KNOWN_TYPES
            .iter()
            .chain(OTHER_CLASSES)
            .copied()
            .collect();
        listed.sort_unstable();
        classes.sort_unstable();
        assert_eq!(listed, classes);
    }

    #[test]
    fn classifies_with_the_protocol_decoder() {
        let cases = [
            (json!({"type":"keep_alive"}), "keep_alive"),
            (
                json!({"type":"control_request","request_id":"r","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"ls"},"tool_use_id":"t"}}),
                "can_use_tool",
            ),
            (
                json!({"type":"control_request","request_id":"r","request":{"subtype":"interrupt"}}),
                "control_request",
            ),
            (json!({"type":"brand_new","x":1}), "unknown"),
            (json!({"type":"autocompact_state"}), "internal"),
            // only the tags are read: a known type with a bad body keeps its class
            (json!({"type":"assistant","message":42}), "assistant"),
            (json!({"type":"system"}), "invalid"),
            (json!({"type":"system","subtype":"brand_new"}), "unknown"),
            (json!({"type":"system","subtype":"init"}), "system"),
            (
                json!({"type":"control_request","request":{"subtype":"elicitation"}}),
                "elicitation",
            ),
            (json!("text"), "invalid"),
            (json!({"no":"type"}), "invalid"),
            (
                json!({"type":"control_cancel_request","request_id":"r"}),
                "control_cancel_request",
            ),
        ];
        for (message, class) in cases {
            assert_eq!(classify(&message), class, "{message}");
            assert!(is_class(class));
        }
    }

    #[test]
    fn every_cli_line_of_the_corpus_classifies() {
        // Capture format: `<< ` lines are what the CLI wrote, `>> ` what a client wrote.
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures");
        let mut seen = std::collections::BTreeSet::new();
        let mut count = 0;
        for path in walk(std::path::Path::new(dir)) {
            let text = std::fs::read_to_string(&path).unwrap();
            let cli: String = text
                .lines()
                .filter_map(|l| l.strip_prefix("<< "))
                .map(|l| format!("{l}\n"))
                .collect();
            let parsed = parse_ndjson(&cli);
            assert!(
                parsed.errors.is_empty(),
                "{}: {:?}",
                path.display(),
                parsed.errors
            );
            for m in &parsed.messages {
                let class = classify(m);
                assert!(is_class(class));
                assert_eq!(class, typed_class(m), "{}: {m}", path.display());
                seen.insert(class);
                count += 1;
            }
        }
        assert!(count > 100, "the golden corpus was read ({count} messages)");
        for class in [
            "assistant",
            "stream_event",
            "can_use_tool",
            "result",
            "system",
            "user",
        ] {
            assert!(seen.contains(class), "{class} not in the corpus: {seen:?}");
        }
    }

    /// What the typed decoder says (`classify` reads only the tags).
    fn typed_class(message: &Value) -> &'static str {
        use bridge_protocol::ControlRequestBody;
        match CliMessage::from_value(message.clone()) {
            Err(_) => "invalid",
            Ok(CliMessage::Unknown(_)) => "unknown",
            Ok(CliMessage::Internal(_)) => "internal",
            Ok(CliMessage::ControlRequest(request)) => match request.request {
                ControlRequestBody::CanUseTool(_) => "can_use_tool",
                ControlRequestBody::Elicitation(_) => "elicitation",
                _ => "control_request",
            },
            Ok(known) => CliMessage::KNOWN_TYPES
                .iter()
                .find(|c| **c == known.type_name())
                .copied()
                .unwrap_or("unknown"),
        }
    }

    fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                out.extend(walk(&path));
            } else if path.extension().is_some_and(|e| e == "ndjson")
                && !path.ends_with("malformed.ndjson")
            {
                out.push(path);
            }
        }
        out
    }

    #[test]
    fn ndjson_keeps_going_after_a_bad_line() {
        let text = "{\"type\":\"keep_alive\"}\r\n\nnot json\n[1,2]\n{\"type\":\"new_kind\"}";
        let parsed = parse_ndjson(text);
        assert_eq!(
            parsed.messages,
            vec![json!({"type":"keep_alive"}), json!({"type":"new_kind"})]
        );
        let lines: Vec<u64> = parsed.errors.iter().map(|e| e.line).collect();
        assert_eq!(lines, vec![3, 4]);
        assert!(parsed.errors[0].message.starts_with("not valid JSON"));
        assert!(parsed.errors[0].message.contains("not json"));
        assert!(parsed.errors[1].message.starts_with("not a message"));

        assert_eq!(parse_ndjson(""), Parsed::default());
    }

    #[test]
    fn states_are_named_like_the_console() {
        use bridge_transport::Failure;
        assert_eq!(
            state_name(&ConnectionState::Connecting { attempt: 0 }),
            "connecting"
        );
        assert_eq!(state_name(&ConnectionState::Open), "live");
        assert_eq!(
            state_name(&ConnectionState::Reconnecting {
                attempt: 1,
                next_retry_ms: 1000,
                last_error: "x".into()
            }),
            "reconnecting"
        );
        let closed = |reason| state_name(&ConnectionState::Closed { reason });
        assert_eq!(closed(CloseReason::Client), "offline");
        assert_eq!(
            closed(CloseReason::Permanent("HTTP 404 (session_ended)".into())),
            "ended"
        );
        let ws = Failure::WsClosed {
            code: 4404,
            reason: "session_ended: nothing after 9".into(),
        };
        assert_eq!(closed(CloseReason::Permanent(ws.to_string())), "ended");
        assert_eq!(
            closed(CloseReason::Permanent("HTTP 401 (unauthorized)".into())),
            "offline"
        );
    }
}
