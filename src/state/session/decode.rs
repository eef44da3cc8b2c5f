//! Decoding a frame once, where it reaches the console: the CLI's messages as
//! [`bridge_protocol::CliMessage`], a client's (the relay echoes them) as
//! [`bridge_protocol::ClientMessage`]. A frame that does not decode is kept with the reason, and the
//! transcript shows it raw.

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

    /// Decodes a borrowed `raw` (the CLI's frames without a copy; a client's echo, rare, is copied).
    pub fn decode_ref(source: &Source, raw: &Value) -> Decoded {
        if *source == Source::Client {
            ClientMessage::from_value(raw.clone()).map(Decoded::Client)
        } else {
            CliMessage::from_value_ref(raw).map(Decoded::Cli)
        }
        .unwrap_or_else(|e| Decoded::Invalid(e.to_string()))
    }
}
