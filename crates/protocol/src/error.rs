//! Parse errors for one NDJSON line.

use std::fmt;

use crate::util::snippet;

/// How many characters of the offending line an error quotes.
const EXCERPT_CHARS: usize = 160;

/// Why a line is not a message. Every variant carries an excerpt of the offending line (empty when
/// parsing started from a `serde_json::Value`, see [`ParseError::with_line`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseError {
    /// The line is not valid JSON.
    InvalidJson { reason: String, line: String },
    /// Valid JSON, but not an object with a string `type`.
    NotAMessage { line: String },
    /// A known `type` whose body does not fit its type (missing field, wrong type, …).
    InvalidBody {
        kind: String,
        reason: String,
        line: String,
    },
}

impl ParseError {
    pub(crate) fn invalid_json(reason: impl fmt::Display, line: &str) -> Self {
        Self::InvalidJson {
            reason: reason.to_string(),
            line: snippet(line, EXCERPT_CHARS),
        }
    }

    pub(crate) fn not_a_message(line: &str) -> Self {
        Self::NotAMessage {
            line: snippet(line, EXCERPT_CHARS),
        }
    }

    pub(crate) fn invalid_body(kind: &str, reason: impl Into<String>, line: &str) -> Self {
        Self::InvalidBody {
            kind: kind.to_owned(),
            reason: reason.into(),
            line: snippet(line, EXCERPT_CHARS),
        }
    }

    /// Attaches (an excerpt of) the offending line.
    pub fn with_line(mut self, text: &str) -> Self {
        let excerpt = snippet(text, EXCERPT_CHARS);
        match &mut self {
            Self::InvalidJson { line, .. }
            | Self::NotAMessage { line }
            | Self::InvalidBody { line, .. } => *line = excerpt,
        }
        self
    }

    /// The excerpt of the offending line (may be empty).
    pub fn line_excerpt(&self) -> &str {
        match self {
            Self::InvalidJson { line, .. }
            | Self::NotAMessage { line }
            | Self::InvalidBody { line, .. } => line,
        }
    }

    /// The message kind (`type`) for [`ParseError::InvalidBody`].
    pub fn kind(&self) -> Option<&str> {
        match self {
            Self::InvalidBody { kind, .. } => Some(kind),
            _ => None,
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidJson { reason, .. } => write!(f, "not valid JSON: {reason}"),
            Self::NotAMessage { .. } => {
                f.write_str("not a message: expected a JSON object with a string \"type\" field")
            }
            Self::InvalidBody { kind, reason, .. } => write!(f, "bad `{kind}` message: {reason}"),
        }?;
        let line = self.line_excerpt();
        if !line.is_empty() {
            write!(f, " (line: {line})")?;
        }
        Ok(())
    }
}

impl std::error::Error for ParseError {}
