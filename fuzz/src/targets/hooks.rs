//! What a terminal session sends the relay (crates/relay/src/features/hooks): a hook input (`POST
//! /v1/hooks`), a transcript line it follows, and an answer turned into the `PermissionRequest`
//! hook's decision. Nothing may panic; an accepted input names a Claude Code session id and an
//! absolute cwd; a decision is always `allow` with an object input or `deny` with a message.

use bridge_relay::features::hooks::{api, live};
use serde_json::Value;

/// One input, as libFuzzer gives it (`fuzz_targets/hooks.rs`) and as the relay's test replays the
/// committed corpus (`crates/relay/tests/fuzz_corpus.rs`).
pub fn input(data: &[u8]) {
    let Ok(v) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    if let Ok(h) = api::parse_input(&v) {
        assert!(bridge_relay::features::transcripts::index::valid_id(
            &h.session_id
        ));
        assert!(h.cwd.starts_with('/'));
        assert!(!h.event.is_empty() && h.event.chars().all(|c| c.is_ascii_alphanumeric()));
    }
    // As a transcript line the relay follows.
    let _ = bridge_relay::features::transcripts::parse::to_frame(&v);
    // As the answer to a prompt (`response` of a control_response), about the input it holds.
    let asked = v.get("tool_input").cloned().unwrap_or(Value::Null);
    let d = live::decision_of(&v, &asked);
    match d["behavior"].as_str() {
        Some("allow") => assert!(d["updatedInput"].is_object() || d["updatedInput"] == asked),
        Some("deny") => assert!(d["message"].is_string()),
        other => panic!("decision {other:?}"),
    }
}
