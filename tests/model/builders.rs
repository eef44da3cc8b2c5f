//! Frame builders and small readers the model tests share.

use bridge_console::state::{Block, ItemKind, Session};
use serde_json::{Value, json};

use super::rows::rows;

pub fn ev(msg: &str, event: Value) -> Value {
    json!({"type": "stream_event", "event": event, "session_id": "s", "parent_tool_use_id": null,
           "uuid": uuid_like(), "api_message_id": msg})
}

pub fn uuid_like() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(1);
    format!(
        "00000000-0000-4000-8000-{:012}",
        N.fetch_add(1, Ordering::Relaxed)
    )
}

pub fn start(msg: &str) -> Value {
    ev(
        msg,
        json!({"type": "message_start", "message": {"id": msg, "type": "message", "role": "assistant",
        "model": "claude-sonnet-4-5", "content": [], "stop_reason": null, "usage": {"input_tokens": 1, "output_tokens": 1}}}),
    )
}
pub fn block_start(msg: &str, index: u64, block: Value) -> Value {
    ev(
        msg,
        json!({"type": "content_block_start", "index": index, "content_block": block}),
    )
}
pub fn text_delta(msg: &str, index: u64, text: &str) -> Value {
    ev(
        msg,
        json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": text}}),
    )
}
pub fn thinking_delta(msg: &str, index: u64, text: &str) -> Value {
    ev(
        msg,
        json!({"type": "content_block_delta", "index": index, "delta": {"type": "thinking_delta", "thinking": text, "estimated_tokens": null}}),
    )
}
pub fn json_delta(msg: &str, index: u64, partial: &str) -> Value {
    ev(
        msg,
        json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": partial}}),
    )
}
pub fn block_stop(msg: &str, index: u64) -> Value {
    ev(msg, json!({"type": "content_block_stop", "index": index}))
}
pub fn message_delta(msg: &str, reason: Option<&str>) -> Value {
    ev(
        msg,
        json!({"type": "message_delta", "delta": {"stop_reason": reason, "stop_sequence": null}, "usage": {"output_tokens": 5}}),
    )
}
pub fn message_stop(msg: &str) -> Value {
    ev(msg, json!({"type": "message_stop"}))
}
pub fn message_stop_abandoned(msg: &str, from: u64) -> Value {
    let mut v = message_stop(msg);
    v["abandoned_blocks"] = json!({"api_message_id": msg, "from_block_index": from});
    v
}
pub fn assistant(msg: &str, block: Value) -> Value {
    json!({"type": "assistant", "message": {"id": msg, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [block], "stop_reason": null, "usage": {"input_tokens": 1, "output_tokens": 1}},
        "parent_tool_use_id": null, "session_id": "s", "uuid": uuid_like()})
}
pub fn sub_assistant(msg: &str, parent: &str, block: Value) -> Value {
    let mut v = assistant(msg, block);
    v["parent_tool_use_id"] = json!(parent);
    v
}
pub fn text(t: &str) -> Value {
    json!({"type": "text", "text": t})
}
pub fn tool_use(id: &str, name: &str, input: Value) -> Value {
    json!({"type": "tool_use", "id": id, "name": name, "input": input})
}
pub fn tool_result(id: &str, content: &str, is_error: bool) -> Value {
    json!({"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": id,
        "content": content, "is_error": is_error}]}, "parent_tool_use_id": null, "session_id": "s", "uuid": uuid_like()})
}
pub fn user_replay(uuid: &str, text: &str) -> Value {
    json!({"type": "user", "message": {"role": "user", "content": text}, "session_id": "s",
           "parent_tool_use_id": null, "uuid": uuid, "isReplay": true})
}
pub fn can_use_tool(rid: &str, tool_id: &str, tool: &str, input: Value) -> Value {
    json!({"type": "control_request", "request_id": rid, "request": {"subtype": "can_use_tool", "tool_name": tool,
        "display_name": tool, "input": input, "tool_use_id": tool_id,
        "permission_suggestions": [{"type": "addRules", "rules": [{"toolName": tool}], "behavior": "allow", "destination": "session"}]}})
}
pub fn allow(rid: &str, updated: Value) -> Value {
    json!({"type": "control_response", "response": {"subtype": "success", "request_id": rid,
        "response": {"behavior": "allow", "updatedInput": updated}}})
}
pub fn deny(rid: &str, message: &str) -> Value {
    json!({"type": "control_response", "response": {"subtype": "success", "request_id": rid,
        "response": {"behavior": "deny", "message": message}}})
}
pub fn result(cost: f64, extra: Value) -> Value {
    let mut v = json!({"type": "result", "subtype": "success", "is_error": false, "duration_ms": 1200, "duration_api_ms": 900,
        "num_turns": 1, "result": "ok", "stop_reason": "end_turn", "total_cost_usd": cost,
        "usage": {"input_tokens": 10, "output_tokens": 20, "cache_read_input_tokens": 5, "cache_creation_input_tokens": 0},
        "modelUsage": {}, "permission_denials": [], "uuid": uuid_like(), "session_id": "s"});
    if let (Some(o), Some(e)) = (v.as_object_mut(), extra.as_object()) {
        for (k, x) in e {
            o.insert(k.clone(), x.clone());
        }
    }
    v
}

pub fn apply_all(s: &mut Session, frames: &[Value]) {
    for f in frames {
        s.apply_value(f);
    }
}

/// A new session with `frames` applied.
pub fn session_of(frames: &[Value]) -> Session {
    let mut s = Session::new();
    apply_all(&mut s, frames);
    s
}

/// Applies `frames` to `s`, whose assistant blocks must then be `expected`.
#[track_caller]
pub fn apply_expecting(s: &mut Session, frames: &[Value], expected: Vec<Block>) {
    apply_all(s, frames);
    assert_eq!(assistant_blocks(s), expected);
}

/// The session of `frames`, checked on the way: its assistant blocks are `streamed` after the
/// first `at` frames, and `settled` after all of them.
#[track_caller]
pub fn streamed_then_settled(
    frames: &[Value],
    at: usize,
    streamed: Vec<Block>,
    settled: Vec<Block>,
) -> Session {
    let mut s = Session::new();
    apply_expecting(&mut s, &frames[..at], streamed);
    apply_expecting(&mut s, &frames[at..], settled);
    s
}

pub fn only_durable(frames: &[Value]) -> Vec<Value> {
    frames
        .iter()
        .filter(|f| f["type"] != "stream_event")
        .cloned()
        .collect()
}

pub fn assistant_blocks(s: &Session) -> Vec<Block> {
    rows(s, |k| match k {
        ItemKind::Assistant(a) => Some(
            a.blocks
                .iter()
                .map(|sl| sl.block.clone())
                .collect::<Vec<_>>(),
        ),
        _ => None,
    })
    .into_iter()
    .flatten()
    .collect()
}

pub fn rows_of_role(s: &Session, role: &str) -> usize {
    s.order()
        .iter()
        .filter(|k| s.item(k).unwrap().role() == role)
        .count()
}

/// A turn: text streamed in three deltas, a Bash tool_use whose JSON streams in pieces, then text.
pub fn streamed_turn() -> Vec<Value> {
    let m = "msg_1";
    vec![
        start(m),
        block_start(m, 0, json!({"type": "text", "text": ""})),
        text_delta(m, 0, "Hello "),
        text_delta(m, 0, "**world**"),
        text_delta(m, 0, "!"),
        assistant(m, text("Hello **world**!")),
        block_stop(m, 0),
        block_start(
            m,
            1,
            json!({"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}}),
        ),
        json_delta(m, 1, "{\"command\": \"ls -"),
        json_delta(m, 1, "la\", \"description\": \"List\"}"),
        assistant(
            m,
            tool_use(
                "toolu_1",
                "Bash",
                json!({"command": "ls -la", "description": "List"}),
            ),
        ),
        block_stop(m, 1),
        message_delta(m, Some("tool_use")),
        message_stop(m),
        tool_result("toolu_1", "a\nb", false),
        start("msg_2"),
        block_start("msg_2", 0, json!({"type": "text", "text": ""})),
        text_delta("msg_2", 0, "Done."),
        assistant("msg_2", text("Done.")),
        block_stop("msg_2", 0),
        message_delta("msg_2", Some("end_turn")),
        message_stop("msg_2"),
        result(0.01, json!({})),
    ]
}
