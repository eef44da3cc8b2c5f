//! Streaming an API message: `message_start`, content blocks as `stream_event` deltas and whole
//! `assistant` frames, then `message_delta`/`message_stop`, after which the message's allowed tools run.

use std::io::{self, Write};
use std::time::Instant;

use serde_json::{Value, json};

use super::models::{hex_id, new_uuid, now_iso, tokens_for};
use super::tool_run::REJECTED_TEXT;
use super::{Abort, Agent, Flow, OpenBlock, OpenMsg, Turn};
use crate::tools;

impl<W: Write> Agent<W> {
    /// Opens an API message if none is open, or starts a new one after tool calls.
    pub(super) fn ensure_msg(&mut self, turn: &mut Turn, is_tool: bool) -> Flow<()> {
        if let Some(m) = &turn.msg {
            if (is_tool || !m.after_tool) && !m.closed {
                return Ok(());
            }
            self.close_msg(turn)?;
        }
        if turn.num_msgs > 0 {
            self.status(json!("requesting"), Some(&turn.uuids.clone()))?;
        }
        let t0 = Instant::now();
        self.pause(300)?;
        let ttft = t0.elapsed().as_millis() as u64;
        turn.model = self.model.clone();
        let input_tokens = 12 + tokens_for(turn.context_chars);
        let msg = OpenMsg {
            id: format!("msg_{}", hex_id(24)),
            request_id: format!("req_{}", hex_id(24)),
            next_index: 0,
            out_chars: 0,
            input_tokens,
            after_tool: false,
            to_run: Vec::new(),
            closed: false,
        };
        let mut v = json!({
            "type": "stream_event",
            "event": {
                "type": "message_start",
                "message": {
                    "id": msg.id,
                    "type": "message",
                    "role": "assistant",
                    "model": turn.model,
                    "content": [],
                    "stop_reason": null,
                    "stop_sequence": null,
                    "usage": self.msg_usage(input_tokens)
                }
            },
            "session_id": self.session_id,
            "parent_tool_use_id": null,
            "uuid": new_uuid(),
            "ttft_ms": ttft,
            "thinking_display": "updates",
            "api_message_id": msg.id,
        });
        if turn.num_msgs == 0
            && let Some(o) = v.as_object_mut()
        {
            turn.uuid_fields(o, true);
        }
        v["owed_rows"] = json!([]);
        turn.num_msgs += 1;
        turn.input_tokens += input_tokens;
        self.info.message_tokens += input_tokens;
        turn.ttft_ms.get_or_insert(ttft);
        turn.message_ids.push(msg.id.clone());
        turn.msg = Some(msg);
        if self.opts.include_partial_messages {
            self.emit(&v)?;
        }
        Ok(())
    }

    pub(super) fn msg_usage(&self, input_tokens: u64) -> Value {
        json!({
            "input_tokens": input_tokens,
            "output_tokens": 1,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0
        })
    }

    pub(super) fn stream_event(&mut self, turn: &Turn, event: Value) -> io::Result<()> {
        if !self.opts.include_partial_messages {
            return Ok(());
        }
        let api_id = turn.msg.as_ref().map(|m| m.id.clone()).unwrap_or_default();
        let v = json!({
            "type": "stream_event",
            "event": event,
            "session_id": self.session_id,
            "parent_tool_use_id": null,
            "uuid": new_uuid(),
            "api_message_id": api_id,
        });
        self.emit(&v)
    }

    pub(super) fn assistant(&mut self, turn: &mut Turn, block: Value) -> io::Result<()> {
        let Some(m) = &turn.msg else { return Ok(()) };
        let mut v = json!({
            "type": "assistant",
            "message": {
                "id": m.id,
                "type": "message",
                "role": "assistant",
                "model": turn.model,
                "content": [block],
                "stop_reason": null,
                "stop_sequence": null,
                "usage": self.msg_usage(m.input_tokens),
                "context_management": null
            },
            "parent_tool_use_id": null,
            "session_id": self.session_id,
            "uuid": new_uuid(),
            "timestamp": now_iso(),
            "request_id": m.request_id,
        });
        if !turn.first_assistant_sent
            && let Some(o) = v.as_object_mut()
        {
            turn.uuid_fields(o, true);
        }
        turn.first_assistant_sent = true;
        self.emit(&v)
    }

    pub(super) fn begin_block(
        &mut self,
        turn: &mut Turn,
        kind: &'static str,
        content_block: Value,
    ) -> io::Result<u32> {
        let m = turn.msg.as_mut().expect("message open");
        let index = m.next_index;
        m.next_index += 1;
        m.after_tool = kind == "tool_use";
        turn.block = Some(OpenBlock {
            index,
            kind,
            partial: String::new(),
        });
        self.stream_event(
            turn,
            json!({"type": "content_block_start", "index": index, "content_block": content_block}),
        )?;
        Ok(index)
    }

    pub(super) fn end_block(
        &mut self,
        turn: &mut Turn,
        index: u32,
        block: Value,
    ) -> io::Result<()> {
        self.assistant(turn, block)?;
        turn.block = None;
        self.stream_event(turn, json!({"type": "content_block_stop", "index": index}))
    }

    pub(super) fn stream_text_like(
        &mut self,
        turn: &mut Turn,
        kind: &'static str,
        text: &str,
        signature: Option<&str>,
        chunk_chars: usize,
        delay_ms: u64,
    ) -> Flow<()> {
        let start_block = if kind == "thinking" {
            json!({"type": "thinking", "thinking": "", "signature": ""})
        } else {
            json!({"type": "text", "text": ""})
        };
        let index = self.begin_block(turn, kind, start_block)?;
        let mut estimated = 0u64;
        for piece in chunks(text, chunk_chars) {
            self.pause(delay_ms)?;
            if let Some(b) = turn.block.as_mut() {
                b.partial.push_str(&piece);
            }
            if let Some(m) = turn.msg.as_mut() {
                m.out_chars += piece.chars().count();
            }
            turn.context_chars += piece.chars().count();
            if kind == "thinking" {
                let delta_tokens = tokens_for(piece.chars().count()).max(1);
                estimated += delta_tokens;
                turn.thinking_tokens += delta_tokens;
                self.stream_event(
                    turn,
                    json!({"type": "content_block_delta", "index": index,
                           "delta": {"type": "thinking_delta", "thinking": piece, "estimated_tokens": estimated}}),
                )?;
                if self.opts.include_partial_messages {
                    let mut v = json!({
                        "type": "system",
                        "subtype": "thinking_tokens",
                        "estimated_tokens": estimated,
                        "estimated_tokens_delta": delta_tokens,
                    });
                    if let Some(u) = turn.uuids.first() {
                        v["user_message_uuid"] = json!(u);
                    }
                    v["uuid"] = json!(new_uuid());
                    v["session_id"] = json!(self.session_id);
                    self.emit(&v)?;
                }
            } else {
                self.stream_event(
                    turn,
                    json!({"type": "content_block_delta", "index": index,
                           "delta": {"type": "text_delta", "text": piece}}),
                )?;
            }
        }
        let block = if let Some(sig) = signature {
            self.stream_event(
                turn,
                json!({"type": "content_block_delta", "index": index,
                       "delta": {"type": "signature_delta", "signature": sig}}),
            )?;
            json!({"type": "thinking", "thinking": text, "signature": sig})
        } else {
            json!({"type": "text", "text": text})
        };
        self.end_block(turn, index, block)?;
        Ok(())
    }

    pub(super) fn stream_tool_input(
        &mut self,
        turn: &mut Turn,
        id: &str,
        name: &str,
        input: &Value,
        delay_ms: u64,
    ) -> Flow<()> {
        let index = self.begin_block(
            turn,
            "tool_use",
            json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
        )?;
        let json_text = serde_json::to_string(input).map_err(|e| Abort::Fatal(e.into()))?;
        let len = json_text.chars().count();
        let pieces = (len / 24).clamp(3, 64);
        for piece in split_even(&json_text, pieces) {
            self.pause(delay_ms)?;
            if let Some(b) = turn.block.as_mut() {
                b.partial.push_str(&piece);
            }
            self.stream_event(
                turn,
                json!({"type": "content_block_delta", "index": index,
                       "delta": {"type": "input_json_delta", "partial_json": piece}}),
            )?;
        }
        if let Some(m) = turn.msg.as_mut() {
            m.out_chars += len;
        }
        turn.context_chars += len;
        let block = json!({"type": "tool_use", "id": id, "name": name, "input": tools::with_defaults(name, input)});
        self.end_block(turn, index, block)?;
        Ok(())
    }

    /// Writes message_delta + message_stop for the open message, then runs its allowed tools.
    pub(super) fn close_msg(&mut self, turn: &mut Turn) -> Flow<()> {
        let Some(m) = turn.msg.as_mut() else {
            return Ok(());
        };
        if !m.closed {
            m.closed = true;
            let stop_reason = if m.after_tool { "tool_use" } else { "end_turn" };
            let out = tokens_for(m.out_chars).max(1);
            turn.output_tokens += out;
            turn.last_stop_reason = json!(stop_reason);
            self.stream_event(
                turn,
                json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null},
                       "usage": {"output_tokens": out}}),
            )?;
            self.stream_event(turn, json!({"type": "message_stop"}))?;
        }
        let to_run = std::mem::take(&mut turn.msg.as_mut().expect("open").to_run);
        let mut rest = to_run.into_iter();
        while let Some(t) = rest.next() {
            if let Err(e) = self.pause(t.run_ms) {
                // Put the unfinished tools back for the interrupt clean-up.
                let m = turn.msg.as_mut().expect("open");
                m.to_run.push(t);
                m.to_run.extend(rest);
                return Err(e);
            }
            let mut t = t;
            if let Some(form) = t.elicit.take() {
                match self.elicit(&t.name, form) {
                    Ok(text) => t.output = Some(text),
                    Err(Abort::Interrupted) => {
                        self.reject_result(turn, &t.id, REJECTED_TEXT, "user_abort")?;
                        let m = turn.msg.as_mut().expect("open");
                        m.to_run.extend(rest);
                        return Err(Abort::InterruptedTools);
                    }
                    Err(e) => return Err(e),
                }
            }
            self.run_tool(turn, t)?;
        }
        turn.msg = None;
        Ok(())
    }
}

/// Splits text into deltas of about `n` characters, preferring to cut after whitespace.
pub(super) fn chunks(s: &str, n: usize) -> Vec<String> {
    let n = n.max(1);
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut count = 0;
    for ch in s.chars() {
        cur.push(ch);
        count += 1;
        if (count >= n && ch.is_whitespace()) || count >= 2 * n {
            out.push(std::mem::take(&mut cur));
            count = 0;
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Splits `s` into `parts` pieces of nearly equal character counts (fewer if `s` is short).
pub(super) fn split_even(s: &str, parts: usize) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    let parts = parts.clamp(1, chars.len().max(1));
    let size = chars.len().div_ceil(parts).max(1);
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_rejoin_to_the_text() {
        let s = "Hello wörld, this is a ünïcode test with a veryveryveryverylongword in it.";
        for n in [1, 3, 12, 100] {
            let c = chunks(s, n);
            assert_eq!(c.concat(), s);
            assert!(c.iter().all(|p| p.chars().count() <= 2 * n));
        }
        assert!(chunks("", 5).is_empty());
    }

    #[test]
    fn split_even_rejoins() {
        let s = r#"{"command":"touch x","description":"d"}"#;
        let p = split_even(s, 3);
        assert_eq!(p.len(), 3);
        assert_eq!(p.concat(), s);
        assert_eq!(split_even("ab", 5).len(), 2);
    }
}
