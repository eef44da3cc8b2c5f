//! NDJSON framing as a sans-IO decoder: feed it byte chunks split anywhere, get complete lines.
//!
//! * Lines end with `\n`; a `\r` before it is dropped (CRLF).
//! * Blank lines (empty or ASCII whitespace only) are skipped, but still counted in line numbers.
//! * A line that is not UTF-8, or longer than the cap, yields a [`FrameError`] for that line and
//!   decoding goes on with the next line. An over-long line is never buffered beyond the cap.

/// Default cap on one line's length in bytes (16 MiB). Single CLI frames exceed 100 KB.
pub const DEFAULT_MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// A complete line (without its terminator).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// 1-based physical line number (blank lines count).
    pub number: u64,
    /// The line text, without `\n` / `\r\n`.
    pub text: String,
}

/// A line the decoder could not deliver. The stream continues after it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// The line is longer than the cap; its bytes were discarded.
    #[error("line {line}: {len} bytes exceeds the {max}-byte line limit; the line was skipped")]
    TooLong { line: u64, len: usize, max: usize },
    /// The line is not valid UTF-8.
    #[error("line {line}: invalid UTF-8 at byte {valid_up_to} of {len}; the line was skipped")]
    InvalidUtf8 {
        line: u64,
        valid_up_to: usize,
        len: usize,
    },
}

impl FrameError {
    /// The 1-based line number of the failed line.
    pub fn line(&self) -> u64 {
        match self {
            Self::TooLong { line, .. } | Self::InvalidUtf8 { line, .. } => *line,
        }
    }
}

/// Sans-IO NDJSON decoder.
#[derive(Debug, Clone)]
pub struct NdjsonDecoder {
    max_line_bytes: usize,
    /// Bytes of the current, unterminated line (at most `max_line_bytes + 1`: room for a `\r`).
    buffer: Vec<u8>,
    /// Length of the current line once it went over the cap (its bytes are being discarded).
    overflow_len: Option<usize>,
    /// Whether the last discarded byte was `\r` (so it is not counted as content).
    overflow_ends_with_cr: bool,
    /// Number of the current line.
    line_number: u64,
}

impl Default for NdjsonDecoder {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_LINE_BYTES)
    }
}

impl NdjsonDecoder {
    /// A decoder that rejects lines longer than `max_line_bytes` (excluding the terminator).
    pub fn new(max_line_bytes: usize) -> Self {
        Self {
            max_line_bytes,
            buffer: Vec::new(),
            overflow_len: None,
            overflow_ends_with_cr: false,
            line_number: 1,
        }
    }

    /// The configured cap.
    pub fn max_line_bytes(&self) -> usize {
        self.max_line_bytes
    }

    /// Bytes buffered for the current partial line.
    pub fn buffered_len(&self) -> usize {
        self.buffer.len()
    }

    /// Feeds a chunk; returns the lines it completed (in order), blank lines skipped.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<Result<Line, FrameError>> {
        let mut out = Vec::new();
        let mut rest = chunk;
        while !rest.is_empty() {
            match rest.iter().position(|&byte| byte == b'\n') {
                Some(newline) => {
                    self.push_partial(&rest[..newline]);
                    if let Some(item) = self.end_line() {
                        out.push(item);
                    }
                    rest = &rest[newline + 1..];
                }
                None => {
                    self.push_partial(rest);
                    break;
                }
            }
        }
        out
    }

    /// Ends the stream: returns the trailing line that had no `\n`, if any (not blank).
    pub fn finish(&mut self) -> Option<Result<Line, FrameError>> {
        if self.buffer.is_empty() && self.overflow_len.is_none() {
            return None;
        }
        self.end_line()
    }

    /// Appends bytes of the current line, switching to discard mode past the cap.
    fn push_partial(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        if let Some(len) = self.overflow_len.as_mut() {
            *len += bytes.len();
            self.overflow_ends_with_cr = bytes.last() == Some(&b'\r');
            return;
        }
        // One extra byte is allowed: it may be the `\r` of a CRLF terminator.
        let limit = self.max_line_bytes.saturating_add(1);
        if self.buffer.len() + bytes.len() > limit {
            self.overflow_len = Some(self.buffer.len() + bytes.len());
            self.overflow_ends_with_cr = bytes.last() == Some(&b'\r');
            self.buffer = Vec::new();
        } else {
            self.buffer.extend_from_slice(bytes);
        }
    }

    /// Closes the current line and starts the next one.
    fn end_line(&mut self) -> Option<Result<Line, FrameError>> {
        let number = self.line_number;
        self.line_number += 1;
        if let Some(len) = self.overflow_len.take() {
            let len = if self.overflow_ends_with_cr {
                len - 1
            } else {
                len
            };
            self.overflow_ends_with_cr = false;
            return Some(Err(FrameError::TooLong {
                line: number,
                len,
                max: self.max_line_bytes,
            }));
        }
        let mut bytes = std::mem::take(&mut self.buffer);
        if bytes.last() == Some(&b'\r') {
            bytes.pop();
        }
        if bytes.len() > self.max_line_bytes {
            return Some(Err(FrameError::TooLong {
                line: number,
                len: bytes.len(),
                max: self.max_line_bytes,
            }));
        }
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        Some(match String::from_utf8(bytes) {
            Ok(text) => Ok(Line { number, text }),
            Err(err) => Err(FrameError::InvalidUtf8 {
                line: number,
                valid_up_to: err.utf8_error().valid_up_to(),
                len: err.as_bytes().len(),
            }),
        })
    }
}

/// Decodes a whole buffer at once (feed + finish).
pub fn decode_all(bytes: &[u8], max_line_bytes: usize) -> Vec<Result<Line, FrameError>> {
    let mut decoder = NdjsonDecoder::new(max_line_bytes);
    let mut out = decoder.feed(bytes);
    out.extend(decoder.finish());
    out
}
