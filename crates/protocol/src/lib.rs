//! `bridge-protocol`: the Claude Code stream-json protocol as CLI 2.1.332 speaks it over stdio,
//! plus NDJSON framing. Types only, no I/O; compiles natively and to `wasm32-unknown-unknown`.
//!
//! * [`CliMessage`] — everything the CLI writes (stdout); [`parse_cli_line`].
//! * [`ClientMessage`] — everything a client writes (stdin); [`parse_client_line`].
//! * [`api`] — the relay's REST shapes (session summaries, event sources).
//! * [`build`] — constructors for exactly what the CLI accepts.
//! * [`framing::NdjsonDecoder`] — sans-IO line splitting.
//! * [`kind`] — what a raw frame is, from its `type` tag alone (for routing without decoding).
//!
//! Forward compatibility: an unknown `type` (or `system` subtype) is kept whole as
//! `Unknown(Value)`; unknown content blocks, stream events, deltas, control subtypes and permission
//! updates are kept whole in their own catch-all variants; open value sets (permission modes, stop
//! reasons, …) have an `Other(String)` arm. Every struct keeps unmodelled fields in `extra`, so
//! serializing a parsed line gives back the same JSON value. A *known* type whose body does not fit
//! is a [`ParseError`].

pub mod api;
#[cfg(feature = "bench-corpus")]
pub mod bench_corpus;
pub mod build;
mod content;
mod control;
mod error;
mod extra;
pub mod framing;
pub mod kind;
mod message;
mod permission;
mod stream;
mod system;
mod tagged;
mod usage;
mod util;
mod values;

pub use content::*;
pub use control::*;
pub use error::ParseError;
pub use kind::MessageType;
pub use message::*;
pub use permission::*;
pub use stream::*;
pub use system::*;
pub use usage::*;
pub use values::*;

pub use uuid::Uuid;

use serde_json::Value;

/// Parses one line the CLI wrote. Errors quote the line.
pub fn parse_cli_line(line: &str) -> Result<CliMessage, ParseError> {
    CliMessage::from_text(line).map_err(|err| err.with_line(line))
}

/// Parses one line a client wrote. Errors quote the line.
pub fn parse_client_line(line: &str) -> Result<ClientMessage, ParseError> {
    ClientMessage::from_text(line).map_err(|err| err.with_line(line))
}

fn parse_json(line: &str) -> Result<Value, ParseError> {
    serde_json::from_str(line).map_err(|err| ParseError::invalid_json(err, line))
}

/// Decodes `T` from a `Value` by way of its JSON text, with `serde_json::from_value`'s result and
/// error wording (no position): for a caller that decodes `T` from text elsewhere, so that it links
/// one decoder of `T` (the console), not a second one reading a `Value`.
pub fn from_value_text<T: serde::de::DeserializeOwned>(
    value: &Value,
) -> Result<T, serde_json::Error> {
    tagged::from_text(&value.to_string(), |de| T::deserialize(de))
}

/// Serializes a message as one NDJSON line (with the trailing `\n`).
pub fn to_line<T: serde::Serialize>(message: &T) -> String {
    let mut line = serde_json::to_string(message).expect("protocol messages serialize to JSON");
    line.push('\n');
    line
}
