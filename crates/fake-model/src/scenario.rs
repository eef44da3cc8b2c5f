//! Scenario files: the scripted model turns the fake server answers with.
//!
//! A scenario file is JSON, either a bare list of turns or an object:
//!
//! ```json
//! {
//!   "turns": [
//!     { "match": "create a file",
//!       "blocks": [
//!         { "type": "text", "chunks": ["I'll create ", "it."] },
//!         { "type": "tool_use", "name": "Bash",
//!           "input": { "command": "touch x.txt", "description": "Create x.txt" } }
//!       ] },
//!     { "match": "doesn't want to proceed", "blocks": [{ "type": "text", "text": "Understood." }] }
//!   ],
//!   "default": { "blocks": [{ "type": "text", "text": "Done." }] }
//! }
//! ```
//!
//! Picking the reply to a request: the first turn that is not used up and whose `match` is a substring of the
//! text of the last user message (its text blocks and its tool_result contents); a turn without `match` fits
//! any request. A turn is used up once served, unless `"reuse": true`. No turn fits → `default` (or a built-in
//! one-line text answer).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A whole scenario: the scripted turns and the reply used when none fits.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Scenario {
    /// Scripted turns, tried in order.
    pub turns: Vec<Turn>,
    /// The reply when no turn fits (built-in text answer when absent).
    pub default: Option<Turn>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum ScenarioFile {
    List(Vec<Turn>),
    Object {
        #[serde(default)]
        turns: Vec<Turn>,
        #[serde(default)]
        default: Option<Box<Turn>>,
    },
}

impl<'de> Deserialize<'de> for Scenario {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match ScenarioFile::deserialize(d)? {
            ScenarioFile::List(turns) => Scenario {
                turns,
                default: None,
            },
            ScenarioFile::Object { turns, default } => Scenario {
                turns,
                default: default.map(|d| *d),
            },
        })
    }
}

impl Scenario {
    /// Parse a scenario from JSON text.
    pub fn from_json(text: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// Read and parse a scenario file; the error names the file.
    pub fn load(path: &std::path::Path) -> anyhow::Result<Self> {
        use anyhow::Context as _;
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading scenario {}", path.display()))?;
        Self::from_json(&text).with_context(|| format!("parsing scenario {}", path.display()))
    }

    /// The reply used when no turn fits.
    pub fn default_turn(&self) -> Turn {
        self.default.clone().unwrap_or_else(|| Turn {
            blocks: vec![Block::Text {
                text: Some("OK.".into()),
                chunks: Vec::new(),
                chunk_chars: None,
                repeat: 1,
            }],
            ..Turn::default()
        })
    }
}

/// One scripted model response (one API round trip).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    /// Substring of the last user message's text or tool_result content that selects this turn.
    #[serde(default, rename = "match", skip_serializing_if = "Option::is_none")]
    pub matches: Option<String>,
    /// Keep the turn available after it was served (several tests can share one fake model).
    #[serde(default)]
    pub reuse: bool,
    /// Content blocks, streamed in order.
    #[serde(default)]
    pub blocks: Vec<Block>,
    /// `stop_reason` of the message; default `tool_use` when a tool_use block is present, else `end_turn`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// Usage numbers reported in `message_start` / `message_delta` / the JSON body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Delay before every streamed delta (and before `message_start`), in milliseconds.
    #[serde(default)]
    pub delay_ms: u64,
    /// Model name to report; default: the `model` of the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Answer with an HTTP error (`times` times) before serving the blocks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<HttpError>,
    /// Only fit streaming (`true`) or non-streaming (`false`) requests; both when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<bool>,
}

impl Turn {
    /// Does this turn fit a request whose last user message has the text `haystack`?
    pub fn fits(&self, haystack: &str, streaming: bool) -> bool {
        self.stream.is_none_or(|s| s == streaming)
            && self.matches.as_deref().is_none_or(|m| haystack.contains(m))
    }

    /// The stop reason to report.
    pub fn effective_stop_reason(&self) -> String {
        if let Some(s) = &self.stop_reason {
            return s.clone();
        }
        if self
            .blocks
            .iter()
            .any(|b| matches!(b, Block::ToolUse { .. }))
        {
            "tool_use".into()
        } else {
            "end_turn".into()
        }
    }
}

fn one() -> usize {
    1
}

fn three() -> usize {
    3
}

/// A content block of a scripted answer (or a stream-level event).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Block {
    /// A text block: `chunks` streamed as they are, or `text` split every `chunk_chars` characters.
    Text {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        chunks: Vec<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        chunk_chars: Option<usize>,
        /// Stream the chunks this many times (long answers for interrupt tests).
        #[serde(default = "one")]
        repeat: usize,
    },
    /// A thinking block: `thinking_delta`s then one `signature_delta`.
    Thinking {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        thinking: Option<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        chunks: Vec<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
    },
    /// A tool call whose input JSON streams as `pieces` `input_json_delta`s.
    ToolUse {
        name: String,
        #[serde(default)]
        input: Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        #[serde(default = "three")]
        pieces: usize,
    },
    /// A mid-stream SSE `error` event; the stream ends right after it.
    Error {
        #[serde(default = "overloaded")]
        error_type: String,
        #[serde(default = "overloaded_message")]
        message: String,
    },
    /// Drop the connection without a proper end of stream.
    Disconnect,
}

fn overloaded() -> String {
    "overloaded_error".into()
}

fn overloaded_message() -> String {
    "Overloaded".into()
}

impl Block {
    /// The deltas of a text or thinking block.
    pub fn text_chunks(&self) -> Vec<String> {
        match self {
            Block::Text {
                text,
                chunks,
                chunk_chars,
                repeat,
            } => {
                let base = split_text(text.as_deref(), chunks, chunk_chars.unwrap_or(12));
                let mut out = Vec::with_capacity(base.len() * (*repeat).max(1));
                for _ in 0..(*repeat).max(1) {
                    out.extend(base.iter().cloned());
                }
                out
            }
            Block::Thinking {
                thinking, chunks, ..
            } => split_text(thinking.as_deref(), chunks, 16),
            _ => Vec::new(),
        }
    }
}

fn split_text(text: Option<&str>, chunks: &[String], every: usize) -> Vec<String> {
    let mut out: Vec<String> = chunks.to_vec();
    if let Some(text) = text {
        out.extend(split_chars(text, every.max(1)));
    }
    out
}

/// Split `s` into pieces of `every` characters (never inside a UTF-8 sequence).
pub fn split_chars(s: &str, every: usize) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    chars
        .chunks(every.max(1))
        .map(|c| c.iter().collect())
        .collect()
}

/// Split `s` into `n` (at most `s.chars().count()`) contiguous non-empty pieces.
pub fn split_pieces(s: &str, n: usize) -> Vec<String> {
    let count = s.chars().count();
    if count == 0 {
        return vec![String::new()];
    }
    let n = n.clamp(1, count);
    let every = count.div_ceil(n);
    split_chars(s, every)
}

/// Token counts reported for a turn.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_creation_input_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read_input_tokens: Option<u64>,
}

/// An HTTP error answer (status + Anthropic-style JSON error body).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HttpError {
    pub status: u16,
    /// `error.type` in the body, e.g. `overloaded_error`, `api_error`, `rate_limit_error`.
    #[serde(default = "api_error", rename = "type")]
    pub error_type: String,
    #[serde(default = "error_message")]
    pub message: String,
    /// `retry-after` header value in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after: Option<u64>,
    /// How many requests get this error before the turn's blocks are served (default 1). A turn with an
    /// error and no blocks is used up after its errors.
    #[serde(default = "one_u32")]
    pub times: u32,
}

fn api_error() -> String {
    "api_error".into()
}

fn error_message() -> String {
    "Internal server error (fake)".into()
}

fn one_u32() -> u32 {
    1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_list_and_object_forms() {
        let list = Scenario::from_json(r#"[{"blocks":[{"type":"text","text":"hi"}]}]"#).unwrap();
        assert_eq!(list.turns.len(), 1);
        assert!(list.default.is_none());
        let obj = Scenario::from_json(
            r#"{"turns":[{"match":"x","reuse":true,"blocks":[]}],"default":{"blocks":[{"type":"text","chunks":["a","b"]}]}}"#,
        )
        .unwrap();
        assert_eq!(obj.turns[0].matches.as_deref(), Some("x"));
        assert!(obj.turns[0].reuse);
        assert_eq!(
            obj.default_turn().blocks[0].text_chunks(),
            vec!["a".to_string(), "b".to_string()]
        );
    }

    #[test]
    fn rejects_unknown_block_type() {
        let err = Scenario::from_json(r#"[{"blocks":[{"type":"nope"}]}]"#);
        assert!(err.is_err());
    }

    #[test]
    fn stop_reason_defaults_follow_blocks() {
        let t: Turn =
            serde_json::from_str(r#"{"blocks":[{"type":"tool_use","name":"Bash","input":{}}]}"#)
                .unwrap();
        assert_eq!(t.effective_stop_reason(), "tool_use");
        let t: Turn = serde_json::from_str(r#"{"blocks":[{"type":"text","text":"x"}]}"#).unwrap();
        assert_eq!(t.effective_stop_reason(), "end_turn");
        let t: Turn = serde_json::from_str(r#"{"stop_reason":"max_tokens"}"#).unwrap();
        assert_eq!(t.effective_stop_reason(), "max_tokens");
    }

    #[test]
    fn splitting_keeps_every_character_once() {
        let s = "héllo wörld ✓ ok";
        for n in 1..=20 {
            let p = split_pieces(s, n);
            assert_eq!(p.concat(), s);
            assert!(p.len() <= n);
            assert!(p.iter().all(|x| !x.is_empty()));
        }
        assert_eq!(split_chars("abcdef", 4), vec!["abcd", "ef"]);
        assert_eq!(split_pieces("", 3), vec![""]);
    }

    #[test]
    fn repeat_multiplies_chunks() {
        let b: Block =
            serde_json::from_str(r#"{"type":"text","text":"abcd","chunk_chars":2,"repeat":3}"#)
                .unwrap();
        assert_eq!(b.text_chunks().len(), 6);
        assert_eq!(b.text_chunks().concat(), "abcdabcdabcd");
    }

    #[test]
    fn match_is_substring() {
        let t = Turn {
            matches: Some("touch".into()),
            ..Turn::default()
        };
        assert!(t.fits("please touch x", true));
        assert!(!t.fits("please tap x", true));
        assert!(Turn::default().fits("anything", false));
        let only_stream = Turn {
            stream: Some(true),
            ..Turn::default()
        };
        assert!(only_stream.fits("x", true));
        assert!(!only_stream.fits("x", false));
    }
}
