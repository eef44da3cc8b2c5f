//! Chaos at scale (issue 13): a fault-injecting TCP proxy between a transport and the real relay
//! cuts 1,000 connections at random byte offsets (FIN or RST, in the middle of frames and of HTTP
//! requests) during a 50,000-event session in which every turn asks a permission prompt that the
//! client answers through the same cut connections. It prints the figures and asserts 0 lost, 0
//! shown twice, every posted message applied once, and 0 duplicate control responses at the agent
//! (counted on the agent's own stdin, copied by a wrapper around the demo agent).
//!
//! By default (what `cargo test` and so CI run) a small session: 3,000 events and 60 cuts, about
//! half a minute. `scripts/chaos.sh` runs the full size (50,000 events, 1,000 cuts; several
//! minutes). Sizes and transport from the environment: `BRIDGE_CHAOS_EVENTS`, `BRIDGE_CHAOS_CUTS`,
//! `BRIDGE_CHAOS_TRANSPORT` (`sse`, `ws` or `hybrid`; default `hybrid`), `BRIDGE_CHAOS_SEED`.
//!
//! Needs the relay binary: `cargo build -p bridge-relay` first.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use bridge_transport::TransportKind;
use serde_json::Value;

use crate::common::{Chaos, ChaosClient, Pacer, Relay, posts_applied, relay_binary};

/// Every message gets a turn of 20 quick tool calls that need no answer, then one that asks.
const SCENARIO: &str = r#"{
  "name": "chaos",
  "description": "Load with prompts: 20 quick tool calls, then one that asks permission.",
  "replies": [{"steps": [
    {"type": "text", "text": "Running 20 quick steps."},
    {"type": "tool_use", "name": "Bash", "permission": "allow",
     "input": {"command": "echo step {i}", "description": "Quick step {i}"}, "repeat": 20},
    {"type": "tool_use", "name": "Bash", "permission": "ask",
     "input": {"command": "touch chaos-output", "description": "Needs an answer"}},
    {"type": "text", "text": "Done: {tool_result}"}
  ]}]
}"#;

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.replace('_', "").parse().ok())
        .unwrap_or(default)
}

// ---------------------------------------------------------------- the relay

/// The relay, running the demo agent with the scenario in `SCENARIO` behind a wrapper that copies
/// the agent's stdin to `<dir>/stdin.ndjson`: what the agent really read.
fn start_relay_with(extra: &[String]) -> Relay {
    use std::os::unix::fs::PermissionsExt as _;
    crate::common::start_relay("bridge-chaos-scale", |dir, cmd| {
        std::fs::write(dir.join("scenario.json"), SCENARIO).unwrap();
        let wrapper = dir.join("agent.sh");
        std::fs::write(
            &wrapper,
            "#!/bin/sh\ntee -a \"$MARK_DIR/stdin.ndjson\" | \"$RELAY_BIN\" demo-agent --scenario \"$MARK_DIR/scenario.json\" \"$@\"\n",
        )
        .unwrap();
        std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
        cmd.arg("--claude")
            .arg(&wrapper)
            .args(extra)
            .env("MARK_DIR", dir)
            .env("RELAY_BIN", relay_binary());
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_at_scale() {
    let target_events = env_u64("BRIDGE_CHAOS_EVENTS", 3_000);
    let min_cuts = env_u64("BRIDGE_CHAOS_CUTS", 60);
    let seed = env_u64("BRIDGE_CHAOS_SEED", 0x5EED_5CA1);
    let kind = match std::env::var("BRIDGE_CHAOS_TRANSPORT").as_deref() {
        Ok("sse") => TransportKind::SsePost,
        Ok("ws") => TransportKind::WebSocket,
        _ => TransportKind::Hybrid,
    };
    let started = Instant::now();
    let mut run = Chaos::start(kind, seed, start_relay_with).await;
    let deadline = started + Duration::from_secs(env_u64("BRIDGE_CHAOS_TIMEOUT_S", 3_000));
    let client = run
        .run(Pacer::new(started, deadline), (target_events, min_cuts))
        .await;
    let ChaosClient {
        prompts,
        answers,
        prompts_shown_twice: shown_twice_prompts,
        delivered,
        ..
    } = &client;
    let (end, relay) = run.end(&client).await;
    let (log, mine) = (&end.log, client.mine());
    // Every post applied exactly once: once in the log as a client event.
    let (posts_lost, posts_twice) = posts_applied(log, mine.iter());
    // At the agent: what it read on stdin, per prompt and per posted message.
    let stdin = std::fs::read_to_string(relay.dir.join("stdin.ndjson")).unwrap_or_default();
    let mut responses_read: HashMap<String, usize> = HashMap::new();
    let mut users_read: HashMap<String, usize> = HashMap::new();
    for line in stdin.lines().filter(|l| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(line).expect("the agent reads JSON lines");
        match v["type"].as_str() {
            Some("control_response") => {
                if let Some(r) = v["response"]["request_id"].as_str() {
                    *responses_read.entry(r.to_owned()).or_default() += 1;
                }
            }
            Some("user") => {
                if let Some(u) = v["uuid"].as_str() {
                    *users_read.entry(u.to_owned()).or_default() += 1;
                }
            }
            _ => {}
        }
    }
    let prompts_in_log: HashSet<&str> = log
        .iter()
        .filter(|e| {
            e["payload"]["type"] == "control_request"
                && e["payload"]["request"]["subtype"] == "can_use_tool"
        })
        .filter_map(|e| e["payload"]["request_id"].as_str())
        .collect();
    let responses_twice = responses_read.values().filter(|n| **n > 1).count();
    let responses_missing = prompts_in_log
        .iter()
        .filter(|r| !responses_read.contains_key(**r))
        .count();
    let users_twice_at_agent = prompts
        .iter()
        .filter(|u| users_read.get(u.as_str()).copied().unwrap_or(0) != 1)
        .count();
    let turns = log
        .iter()
        .filter(|e| e["payload"]["type"] == "result")
        .count();

    println!(
        "chaos at scale {kind:?} (seed {seed:#x}): {}, turns {turns}, prompts {} answered {}, \
         control responses at the agent {} (duplicates {responses_twice}, missing \
         {responses_missing}), posts {} (lost {posts_lost}, applied twice {posts_twice}, not read \
         exactly once by the agent {users_twice_at_agent}), prompt shown twice \
         {shown_twice_prompts}, {:.1} s",
        end.figures(),
        prompts_in_log.len(),
        answers.len(),
        responses_read.values().sum::<usize>(),
        mine.len(),
        started.elapsed().as_secs_f64()
    );
    end.assert_enough(kind, target_events, min_cuts);
    end.transcript.assert_exact(kind);
    assert_eq!(
        (posts_lost, posts_twice, users_twice_at_agent),
        (0, 0, 0),
        "{kind:?}"
    );
    assert_eq!((responses_twice, responses_missing), (0, 0), "{kind:?}");
    assert_eq!(*shown_twice_prompts, 0);
    assert_eq!(
        delivered.len(),
        mine.len(),
        "{kind:?}: every send confirmed"
    );
}
