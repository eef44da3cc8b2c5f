//! A CLI session opened from Claude Code's own JSONL transcript: the relay replays it as frames
//! (crates/relay/src/features/transcripts/parse.rs `history`) and closes it with a `result` that has no
//! `duration_ms`, `usage` or `num_turns`. The console must read that `result` as the end of the turn,
//! or the session looks busy and a message sent to it stays queued.

use bridge_console::state::{ItemKind, Session, SessionState};
use serde_json::json;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

const SID: &str = "27784601-dc95-46a5-9f01-072efd77a9f0";

#[test]
fn a_replayed_transcript_ends_its_turn() {
    let frames = [
        json!({"type": "user", "message": {"role": "user", "content": "write hello.txt"},
            "parent_tool_use_id": null, "session_id": SID, "uuid": "5d3f0e0a-6a57-4d55-9e0c-0d6c3b1d2a01",
            "timestamp": "2026-11-30T10:00:00.000Z", "isReplay": true}),
        json!({"type": "assistant", "message": {"id": "msg_01", "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": "Done."}],
            "stop_reason": "end_turn", "stop_sequence": null,
            "usage": {"input_tokens": 3, "output_tokens": 5}},
            "parent_tool_use_id": null, "session_id": SID, "uuid": "5d3f0e0a-6a57-4d55-9e0c-0d6c3b1d2a02"}),
        json!({"type": "result", "subtype": "success", "is_error": false, "result": "",
            "total_cost_usd": 0.259324, "session_id": SID,
            "uuid": "c791d243-75ca-42b8-a933-9952f7b16edd", "from_transcript": true}),
        json!({"type": "system", "subtype": "session_state_changed", "state": "idle",
            "uuid": "0b4c7a52-2a57-4a8e-9d39-5b0f3a0b8f11", "session_id": SID, "from_transcript": true}),
    ];
    let mut s = Session::new();
    s.set_replaying(true);
    for f in &frames[..2] {
        s.apply_value(f);
    }
    assert!(s.turn_running(), "the replayed prompt starts a turn");
    for f in &frames[2..] {
        s.apply_value(f);
    }
    s.set_replaying(false);
    assert!(!s.turn_running(), "the replayed result ends the turn");
    assert_eq!(s.state(), SessionState::Idle);
    let raw: Vec<_> = s
        .order()
        .iter()
        .filter_map(|k| s.item(k))
        .filter(|i| matches!(i.kind, ItemKind::Raw(_)))
        .collect();
    assert!(
        raw.is_empty(),
        "every replayed frame is read typed: {raw:?}"
    );
    let result = s
        .order()
        .iter()
        .filter_map(|k| s.item(k))
        .find_map(|i| match &i.kind {
            ItemKind::Result(r) => Some(r.clone()),
            _ => None,
        })
        .expect("a result row");
    assert_eq!(result.duration_ms, None);
    assert_eq!(result.num_turns, None);
    // No `usage`: the footer has no token counts to show (not "0 in · 0 out").
    assert_eq!((result.input_tokens, result.output_tokens), (None, None));
    assert!((s.cost_total() - 0.259324).abs() < 1e-9);
}
