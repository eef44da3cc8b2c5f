//! Decoding a frame once, where it reaches the console: the CLI's messages as
//! [`bridge_protocol::CliMessage`], a client's (the relay echoes them) as
//! [`bridge_protocol::ClientMessage`]. A frame that does not decode is kept with the reason, and the
//! transcript shows it raw. Frames from the stream are decoded straight from their JSON text
//! ([`Frame::decode_text`]); a `Value` of one is built only when it is shown or read raw ([`Raw`]).

use std::borrow::Cow;

use bridge_protocol::{CliMessage, ClientMessage, parse_cli_line, parse_client_line};
use serde_json::Value;

use super::Source;

/// One frame of a session, decoded: who wrote it, its JSON as it came, and what it is.
#[derive(Clone, Debug, PartialEq)]
pub struct Frame {
    /// Who wrote it (the relay's envelope `source`).
    pub source: Source,
    /// The JSON as it arrived (shown as is for raw rows).
    pub raw: Value,
    /// The typed message.
    pub msg: Decoded,
}

/// What a frame is.
#[derive(Clone, Debug, PartialEq)]
pub enum Decoded {
    /// Written by the CLI (or the relay speaking for it).
    Cli(CliMessage),
    /// Written by a client (echoed by the relay).
    Client(ClientMessage),
    /// A known type whose body does not fit, or not a message at all: the reason.
    Invalid(String),
}

impl Frame {
    /// Decodes `raw` as what `source` writes.
    pub fn decode(source: Source, raw: Value) -> Frame {
        let msg = Frame::decode_ref(&source, &raw);
        Frame { source, raw, msg }
    }

    /// Decodes a borrowed `raw` (the CLI's frames without a copy; a client's echo, rare, is copied).
    pub fn decode_ref(source: &Source, raw: &Value) -> Decoded {
        if *source == Source::Client {
            ClientMessage::from_value(raw.clone()).map(Decoded::Client)
        } else {
            CliMessage::from_value_ref(raw).map(Decoded::Cli)
        }
        .unwrap_or_else(|e| Decoded::Invalid(e.to_string()))
    }

    /// Decodes a frame from its JSON text (bridge-protocol's tag-first path: no `Value` of it is
    /// built). A frame that does not decode is worded as [`Frame::decode_ref`] words it.
    pub fn decode_text(source: &Source, text: &str) -> Decoded {
        let decoded = if *source == Source::Client {
            parse_client_line(text).map(Decoded::Client)
        } else {
            parse_cli_line(text).map(Decoded::Cli)
        };
        decoded.unwrap_or_else(|e| match serde_json::from_str::<Value>(text) {
            Ok(raw) => Frame::decode_ref(source, &raw),
            Err(_) => Decoded::Invalid(e.to_string()),
        })
    }
}

/// A frame as it came, for what is shown or read raw: a `Value` already at hand, or the JSON text
/// (parsed only when asked).
#[derive(Clone, Copy, Debug)]
pub enum Raw<'a> {
    /// Applied from a `Value`.
    Value(&'a Value),
    /// Applied from its text.
    Text(&'a str),
}

impl<'a> Raw<'a> {
    /// The frame as a `Value` (text that is not JSON: that text as a string).
    pub fn value(self) -> Cow<'a, Value> {
        match self {
            Raw::Value(v) => Cow::Borrowed(v),
            Raw::Text(text) => Cow::Owned(
                serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned())),
            ),
        }
    }
}
