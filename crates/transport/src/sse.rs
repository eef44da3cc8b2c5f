//! A sans-IO Server-Sent Events parser: feed it bytes as they arrive, it
//! yields what the bytes completed. No socket, no clock.
//!
//! It follows the WHATWG event-stream rules: lines end in `\n`, `\r\n` or `\r`
//! (also when the `\r` and `\n` arrive in different chunks); a leading BOM is
//! skipped; `data:` lines are joined with `\n`; a blank line dispatches; an
//! `id` containing NUL is ignored; `retry:` must be all digits. Lines are
//! decoded as UTF-8 with replacement, after the whole line has arrived, so a
//! character split across chunks is never damaged. A line longer than the
//! configured cap is reported as [`SseItem::TooLong`] and skipped, so a hostile
//! or broken server cannot make the buffer grow without bound.

/// The default cap on one line (16 MiB, the same as the NDJSON framing).
pub const DEFAULT_MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `id:` given in this event's block, if any (the relay sends the
    /// sequence number of durable events here).
    pub id: Option<String>,
    /// The `event:` name, `"message"` when the block had none.
    pub event: String,
    /// The `data:` lines joined with `\n`.
    pub data: String,
}

/// What a chunk of bytes completed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SseItem {
    /// A dispatched event (a block with at least one `data` field).
    Event(SseEvent),
    /// A `:comment` line (its text without the colon and one leading space).
    Comment(String),
    /// A valid `retry:` field, in milliseconds.
    Retry(u64),
    /// A line longer than the cap; it was skipped (the block it was part of
    /// is discarded, because its data is incomplete).
    TooLong {
        /// How many bytes the line had when it was given up.
        len: usize,
        /// The cap.
        max: usize,
    },
}

/// The push parser.
#[derive(Debug, Clone)]
pub struct SseParser {
    max_line_bytes: usize,
    line: Vec<u8>,
    /// The previous chunk ended in `\r`: a `\n` at the start of the next one
    /// belongs to the same line ending.
    after_cr: bool,
    /// Set while the rest of an over-long line is being skipped.
    skipping: bool,
    /// No byte seen yet (a BOM is only skipped at the very start).
    at_start: bool,
    bom_progress: usize,
    // the block being built
    id: Option<String>,
    event: Option<String>,
    data: String,
    has_data: bool,
    discard_block: bool,
}

const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

impl Default for SseParser {
    fn default() -> Self {
        Self::new()
    }
}

impl SseParser {
    /// A parser with the default line cap.
    pub fn new() -> Self {
        Self::with_max_line_bytes(DEFAULT_MAX_LINE_BYTES)
    }

    /// A parser whose lines may not exceed `max_line_bytes`.
    pub fn with_max_line_bytes(max_line_bytes: usize) -> Self {
        Self {
            max_line_bytes,
            line: Vec::new(),
            after_cr: false,
            skipping: false,
            at_start: true,
            bom_progress: 0,
            id: None,
            event: None,
            data: String::new(),
            has_data: false,
            discard_block: false,
        }
    }

    /// Feeds a chunk; returns what it completed, in order.
    pub fn feed(&mut self, mut chunk: &[u8]) -> Vec<SseItem> {
        let mut out = Vec::new();
        if self.at_start {
            // Skip a BOM, which may itself be split across chunks.
            while self.bom_progress < BOM.len() {
                let Some(&b) = chunk.first() else { return out };
                if b == BOM[self.bom_progress] {
                    self.bom_progress += 1;
                    chunk = &chunk[1..];
                } else {
                    // Not a BOM after all: the bytes matched so far are data.
                    let matched = self.bom_progress;
                    self.at_start = false;
                    self.bom_progress = BOM.len();
                    if matched > 0 {
                        let prefix = BOM[..matched].to_vec();
                        self.push_bytes(&prefix, &mut out);
                    }
                    break;
                }
            }
            self.at_start = false;
        }
        self.push_bytes(chunk, &mut out);
        out
    }

    /// Discards any partial line and block (the stream ended or was cut). A
    /// block that was not terminated by a blank line is never dispatched.
    pub fn reset(&mut self) {
        *self = Self::with_max_line_bytes(self.max_line_bytes);
    }

    fn push_bytes(&mut self, chunk: &[u8], out: &mut Vec<SseItem>) {
        let mut rest = chunk;
        while !rest.is_empty() {
            if self.after_cr {
                self.after_cr = false;
                if rest[0] == b'\n' {
                    rest = &rest[1..];
                    continue;
                }
            }
            match rest.iter().position(|&b| b == b'\n' || b == b'\r') {
                Some(pos) => {
                    self.append(&rest[..pos], out);
                    if rest[pos] == b'\r' {
                        self.after_cr = true;
                    }
                    rest = &rest[pos + 1..];
                    self.end_line(out);
                }
                None => {
                    self.append(rest, out);
                    rest = &[];
                }
            }
        }
    }

    fn append(&mut self, bytes: &[u8], out: &mut Vec<SseItem>) {
        if self.skipping {
            return;
        }
        if self.line.len() + bytes.len() > self.max_line_bytes {
            out.push(SseItem::TooLong {
                len: self.line.len() + bytes.len(),
                max: self.max_line_bytes,
            });
            self.line = Vec::new();
            self.skipping = true;
            self.discard_block = true;
            return;
        }
        self.line.extend_from_slice(bytes);
    }

    fn end_line(&mut self, out: &mut Vec<SseItem>) {
        if self.skipping {
            self.skipping = false;
            return;
        }
        let line = std::mem::take(&mut self.line);
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        let text = String::from_utf8_lossy(&line);
        if let Some(comment) = text.strip_prefix(':') {
            out.push(SseItem::Comment(
                comment.strip_prefix(' ').unwrap_or(comment).to_owned(),
            ));
            return;
        }
        let (field, value) = match text.find(':') {
            Some(i) => {
                let v = &text[i + 1..];
                (&text[..i], v.strip_prefix(' ').unwrap_or(v))
            }
            None => (&text[..], ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => self.event = Some(value.to_owned()),
            // An id containing NUL is ignored (WHATWG).
            "id" if !value.contains('\0') => self.id = Some(value.to_owned()),
            "retry" => {
                if !value.is_empty()
                    && value.bytes().all(|b| b.is_ascii_digit())
                    && let Ok(ms) = value.parse::<u64>()
                {
                    out.push(SseItem::Retry(ms));
                }
            }
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseItem>) {
        let id = self.id.take();
        let event = self.event.take();
        let data = std::mem::take(&mut self.data);
        let has_data = std::mem::replace(&mut self.has_data, false);
        if std::mem::replace(&mut self.discard_block, false) || !has_data {
            return;
        }
        out.push(SseItem::Event(SseEvent {
            id,
            event: event
                .filter(|e| !e.is_empty())
                .unwrap_or_else(|| "message".to_owned()),
            data,
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test;

    fn ev(id: Option<&str>, event: &str, data: &str) -> SseItem {
        SseItem::Event(SseEvent {
            id: id.map(str::to_owned),
            event: event.to_owned(),
            data: data.to_owned(),
        })
    }

    /// A stream exercising every rule, and what it must produce.
    fn corpus() -> (Vec<u8>, Vec<SseItem>) {
        let mut bytes = Vec::new();
        bytes.extend_from_slice(&BOM);
        bytes.extend_from_slice(
            "id: 13\nevent: client_event\ndata: {\"a\":\"é😀\"}\n\n\
             : keepalive\n\n\
             event: ephemeral_event\r\ndata: one\r\ndata:two\r\n\r\n\
             retry: 1500\rretry: x1\r\r\
             data\n\n\
             id: bad\0id\nevent: catch_up_truncated\ndata: {}\n\n\
             event: nothing\n\n\
             data: trailing-ignored-field\nfoo: bar\n\n\
             id: 14\nevent: client_event\ndata: x\n\n\
             data: never dispatched"
                .as_bytes(),
        );
        let expected = vec![
            ev(Some("13"), "client_event", "{\"a\":\"é😀\"}"),
            SseItem::Comment("keepalive".into()),
            ev(None, "ephemeral_event", "one\ntwo"),
            SseItem::Retry(1500),
            ev(None, "message", ""),
            ev(None, "catch_up_truncated", "{}"),
            ev(None, "message", "trailing-ignored-field"),
            ev(Some("14"), "client_event", "x"),
        ];
        (bytes, expected)
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn whole_stream_at_once() {
        let (bytes, expected) = corpus();
        assert_eq!(SseParser::new().feed(&bytes), expected);
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn split_at_every_byte_gives_the_same_events() {
        let (bytes, expected) = corpus();
        for cut in 0..=bytes.len() {
            let mut p = SseParser::new();
            let mut got = p.feed(&bytes[..cut]);
            got.extend(p.feed(&bytes[cut..]));
            assert_eq!(got, expected, "split at byte {cut}");
        }
        // and one byte at a time
        let mut p = SseParser::new();
        let got: Vec<_> = bytes.iter().flat_map(|b| p.feed(&[*b])).collect();
        assert_eq!(got, expected);
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn cr_then_lf_in_the_next_chunk_is_one_line_ending() {
        let mut p = SseParser::new();
        assert!(p.feed(b"data: a\r").is_empty());
        // If the \n were a second line ending, this would dispatch an event now.
        assert!(p.feed(b"\n").is_empty());
        assert_eq!(p.feed(b"\r\n"), vec![ev(None, "message", "a")]);
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn bom_only_at_start_and_partial_bom_is_data() {
        let mut p = SseParser::new();
        // A stray 0xEF that is not a BOM: the line is kept (lossy-decoded).
        let got = p.feed(b"\xEFdata: x\n\n");
        assert!(got.is_empty(), "field name is not 'data': {got:?}");
        let mut p = SseParser::new();
        let mut bytes = b"data: a\n\n".to_vec();
        bytes.extend_from_slice(&BOM);
        bytes.extend_from_slice(b"data: b\n\n");
        // The second BOM is not at the start: its line's field name is "\u{feff}data".
        assert_eq!(p.feed(&bytes), vec![ev(None, "message", "a")]);
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn over_long_line_is_reported_skipped_and_stream_goes_on() {
        let mut p = SseParser::with_max_line_bytes(16);
        let mut got = p.feed(b"event: x\ndata: 0123456789");
        got.extend(p.feed(b"abcdef more more\n\n"));
        got.extend(p.feed(b"data: ok\n\n"));
        assert_eq!(got.len(), 2, "{got:?}");
        assert!(matches!(got[0], SseItem::TooLong { max: 16, .. }));
        assert_eq!(got[1], ev(None, "message", "ok"));
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn reset_drops_a_partial_block() {
        let mut p = SseParser::new();
        assert!(p.feed(b"id: 1\nevent: client_event\ndata: {").is_empty());
        p.reset();
        assert_eq!(
            p.feed(b"data: fresh\n\n"),
            vec![ev(None, "message", "fresh")]
        );
    }
}
