//! The relay's narrow view of the protocol crate: NDJSON framing for the agent's stdout and typed
//! validation of lines. Routing itself works on `serde_json::Value` so frames are forwarded
//! byte-faithfully; the typed parse only classifies and validates.

pub use bridge_protocol::framing::{DEFAULT_MAX_LINE_BYTES, FrameError, Line, NdjsonDecoder};

/// Validates one CLI stdout line with the typed model. `Err` names what is wrong.
pub fn validate_cli_line(line: &str) -> Result<(), String> {
    bridge_protocol::parse_cli_line(line)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// Validates one client → CLI payload with the typed model. `Err` names what is wrong.
pub fn validate_client_line(line: &str) -> Result<(), String> {
    bridge_protocol::parse_client_line(line)
        .map(|_| ())
        .map_err(|e| e.to_string())
}
