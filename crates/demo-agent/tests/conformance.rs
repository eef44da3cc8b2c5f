//! Replays the client side of the real CLI 2.1.332 captures against the demo agent (with a scenario
//! synthesized from the capture's own `assistant` frames) and checks that the agent writes the same
//! frames in the same order, with at least the same fields.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use crate::common::*;
use bridge_demo_agent::harness::{InProcess, kind};
use bridge_demo_agent::{AgentOptions, Scenario};
use serde_json::{Value, json};

enum Rec {
    In(Value),
    Out(Value),
}

fn load_capture(name: &str) -> Vec<Rec> {
    let path = format!(
        "{}/../../tests/fixtures/real-cli-2.1.332/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines()
        .filter_map(|l| {
            let (dir, body) = l.split_at_checked(3)?;
            let v: Value = serde_json::from_str(body).ok()?;
            match dir {
                ">> " => Some(Rec::In(v)),
                "<< " => Some(Rec::Out(v)),
                _ => None,
            }
        })
        .collect()
}

/// `kind` plus the detail that matters for ordering (delta / block type, replay vs tool_result).
fn fine_kind(v: &Value) -> String {
    let k = kind(v);
    match v["type"].as_str() {
        Some("stream_event") => match v["event"]["type"].as_str() {
            Some("content_block_delta") => format!(
                "{k}:{}",
                v["event"]["delta"]["type"].as_str().unwrap_or("?")
            ),
            Some("content_block_start") => {
                format!(
                    "{k}:{}",
                    v["event"]["content_block"]["type"].as_str().unwrap_or("?")
                )
            }
            _ => k,
        },
        Some("assistant") => format!(
            "assistant:{}",
            v["message"]["content"][0]["type"].as_str().unwrap_or("?")
        ),
        Some("user") => {
            if v["isReplay"] == true {
                "user:replay".into()
            } else if v["message"]["content"][0]["type"] == "tool_result" {
                "user:tool_result".into()
            } else {
                "user:text".into()
            }
        }
        _ => k,
    }
}

fn collapse(kinds: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for k in kinds {
        if out.last() != Some(&k) {
            out.push(k);
        }
    }
    out
}

/// Scenario whose replies are the capture's assistant blocks, one reply per prompt (matched by its text).
fn scenario_from(capture: &[Rec]) -> Scenario {
    let block = |b: &Value| match b["type"].as_str() {
        Some("text") => json!({"type": "text", "text": b["text"]}),
        Some("tool_use") => json!({"type": "tool_use", "name": b["name"], "input": b["input"]}),
        Some("thinking") => json!({"type": "thinking", "thinking": b["thinking"]}),
        other => panic!("unexpected block {other:?}"),
    };
    let mut replies: Vec<(String, Vec<Value>)> = Vec::new();
    for r in capture {
        match r {
            Rec::In(v) if v["type"] == "user" => {
                let text = v["message"]["content"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                replies.push((text, Vec::new()));
            }
            Rec::Out(v) if v["type"] == "assistant" && v["parent_tool_use_id"].is_null() => {
                if let Some((_, steps)) = replies.last_mut() {
                    steps.push(block(&v["message"]["content"][0]));
                }
            }
            _ => {}
        }
    }
    let replies: Vec<Value> = replies
        .into_iter()
        .filter(|(_, steps)| !steps.is_empty())
        .map(|(text, steps)| json!({"match": text, "steps": steps}))
        .collect();
    Scenario::from_json(
        &json!({"name": "capture", "replies": replies}).to_string(),
        "capture",
    )
    .unwrap()
}

/// Keys the real CLI writes that the demo agent deliberately leaves out (internal telemetry).
const OMITTED: &[&str] = &[
    "memory_paths",
    "messaging_socket_path",
    "product_feedback_disabled",
    "per_turn_effort_active",
    "ultrathink_available",
    "ultrathink_typed_raises",
    "subagent_stats",
    "safety_stops",
    "ttft_stream_ms",
    "time_to_request_ms",
    "first_content_frame_ms",
    "request_sent_wall_ms",
    "first_request_input_tokens",
    "first_request_cache_read_input_tokens",
    "model_usage_since_last_result",
    "user_output_styles_dir",
    "hooks_when_unanswered_kept",
    "other_hook_ask_outranks_host",
    "feedback_mode",
    "remote_control_auto_enable",
    "remote_control_auto_connect_default",
    "remote_control_available",
    "remote_control_auto_on_by_default",
    "ide_rc_auto_enable_gate",
];

fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default()
}

/// Fields of `real` (top level and one level into message/event/request/response) missing from `mine`.
fn missing_fields(real: &Value, mine: &Value) -> Vec<String> {
    let mut missing = Vec::new();
    let mut check = |path: &str, r: &Value, m: &Value| {
        for k in keys(r).difference(&keys(m)) {
            if !OMITTED.contains(&k.as_str()) {
                missing.push(format!("{path}{k}"));
            }
        }
    };
    check("", real, mine);
    for nested in ["message", "event", "request", "response"] {
        if real[nested].is_object() {
            check(&format!("{nested}."), &real[nested], &mine[nested]);
        }
    }
    if real["response"]["response"].is_object() {
        check(
            "response.response.",
            &real["response"]["response"],
            &mine["response"]["response"],
        );
    }
    missing
}

fn conformance(capture_name: &str) {
    let capture = load_capture(capture_name);
    let replay = capture
        .iter()
        .any(|r| matches!(r, Rec::Out(v) if v["isReplay"] == true));
    let opts = AgentOptions {
        model: Some("claude-sonnet-4-5".into()),
        replay_user_messages: replay,
        ..opts()
    };
    let mut agent = InProcess::start(scenario_from(&capture), opts);
    let mut mine: Vec<Value> = Vec::new();
    let mut expected: Vec<String> = Vec::new();
    let mut real_frames: Vec<Value> = Vec::new();
    for rec in &capture {
        match rec {
            Rec::Out(v) => {
                expected.push(fine_kind(v));
                real_frames.push(v.clone());
            }
            Rec::In(v) => {
                // Let the agent catch up with what the real CLI had written before this input.
                let want = collapse(expected.clone());
                let deadline = Instant::now() + T;
                while collapse(mine.iter().map(fine_kind)).len() < want.len() {
                    let left = deadline.saturating_duration_since(Instant::now());
                    match agent.next(left) {
                        Some(f) => mine.push(f),
                        None => panic!(
                            "{capture_name}: agent stalled.\nexpected: {want:#?}\ngot: {:#?}",
                            collapse(mine.iter().map(fine_kind))
                        ),
                    }
                }
                let mut v = v.clone();
                if v["type"] == "control_response"
                    && v["response"]["response"]["behavior"].is_string()
                {
                    // Point the captured permission answer at the agent's own request.
                    let req = mine
                        .iter()
                        .rev()
                        .find(|f| kind(f) == "control_request/can_use_tool")
                        .expect("a can_use_tool before the answer");
                    v["response"]["request_id"] = req["request_id"].clone();
                    v["response"]["response"]["toolUseID"] = req["request"]["tool_use_id"].clone();
                }
                agent.send(&v);
            }
        }
    }
    let (res, rest) = agent.finish(Duration::from_secs(10));
    res.expect("agent exits cleanly when stdin closes");
    mine.extend(rest);
    let got = collapse(mine.iter().map(fine_kind));
    let want = collapse(expected);
    assert_eq!(
        got, want,
        "{capture_name}: frame order differs from the real CLI"
    );

    // Same fields as the real frames (first occurrence of each kind).
    let mut firsts: BTreeMap<String, &Value> = BTreeMap::new();
    for f in &mine {
        firsts.entry(fine_kind(f)).or_insert(f);
    }
    let mut seen = BTreeSet::new();
    for real in &real_frames {
        let k = fine_kind(real);
        if !seen.insert(k.clone()) {
            continue;
        }
        let m = firsts.get(&k).unwrap_or_else(|| panic!("no {k} frame"));
        let missing = missing_fields(real, m);
        assert!(
            missing.is_empty(),
            "{capture_name}: {k} lacks {missing:?}\nmine: {m}\nreal: {real}"
        );
    }
}

#[test]
fn matches_real_capture_allow_with_updated_input_and_replay() {
    conformance("live-capture-allow-updatedInput-replay.ndjson");
}

#[test]
fn matches_real_capture_autoallowed() {
    conformance("live-capture-autoallowed.ndjson");
}

#[test]
fn matches_real_capture_deny_and_idle_interrupt() {
    conformance("live-capture-deny-interrupt.ndjson");
}

#[test]
fn matches_real_capture_compact() {
    conformance("bridge-capture-compact.ndjson");
}
