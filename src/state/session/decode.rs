//! Decoding a frame once, where it reaches the console: the CLI's messages as
//! [`bridge_protocol::CliMessage`], a client's (the relay echoes them) as
//! [`bridge_protocol::ClientMessage`]. A frame that does not decode is kept with the reason, and the
//! transcript shows it raw. Frames from the stream are decoded straight from their JSON text
//! ([`Frame::decode_text`]); a `Value` of one is built only when it is shown or read raw ([`Raw`]).

use std::borrow::Cow;

use bridge_protocol::{CliMessage, ClientMessage};
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

    /// Decodes a borrowed `raw` by way of its JSON text (a replayed or built frame, rare): the
    /// console links one set of decoders, the text ones ([`Frame::decode_text`]).
    pub fn decode_ref(source: &Source, raw: &Value) -> Decoded {
        Frame::decode_text(source, &raw.to_string())
    }

    /// Decodes a frame from its JSON text (bridge-protocol's text decoders: no `Value` of a line
    /// the CLI wrote is built). An error does not quote the frame, except text that is not JSON.
    pub fn decode_text(source: &Source, text: &str) -> Decoded {
        if *source == Source::Client {
            ClientMessage::from_text(text).map(Decoded::Client)
        } else {
            CliMessage::from_text(text).map(Decoded::Cli)
        }
        .unwrap_or_else(|e| Decoded::Invalid(e.to_string()))
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
