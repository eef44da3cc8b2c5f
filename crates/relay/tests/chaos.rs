//! Faults at the relay, through the real binary (issue 13, "Fuzzing and faults at scale"):
//!
//! * the relay killed with SIGKILL in the middle of a turn (a permission prompt pending, a tool's
//!   background process running) and started again on the same data dir: the log is intact, both
//!   clients resume from their own cursor and get exactly the rest, no sequence number is reused,
//!   and nothing the crashed run started is left running;
//! * ten clients race to answer one prompt: exactly one POST gets 200, nine get 409, and the agent
//!   reads exactly one answer on its stdin.
//!
//! The agent is the demo agent behind a small shell wrapper that copies the agent's stdin to a
//! file (what the agent really read) and starts a background `sleep` (what a tool leaves behind).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::common::*;
use serde_json::{Value, json};

/// The wrapper agent: records its pid and its background child's, copies stdin to
/// `$MARK_DIR/stdin.ndjson`, runs the demo agent's default scenario (a Bash call that asks).
fn tee_agent(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt as _;
    let script = dir.join("agent.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\necho $$ > \"$MARK_DIR/agent.pid\"\nsleep 120 &\necho $! > \"$MARK_DIR/bg.pid\"\n\
         tee -a \"$MARK_DIR/stdin.ndjson\" | \"$RELAY_BIN\" demo-agent --scenario default \"$@\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

fn tee_relay<'a>(data: &'a Path, script: &Path, marks: &Path) -> Opts<'a> {
    let mut o = Opts::demo(data);
    o.args = vec!["--claude".into(), script.display().to_string()];
    o.env("MARK_DIR", &marks.display().to_string())
        .env("RELAY_BIN", env!("CARGO_BIN_EXE_bridge-relay"))
}

/// Stops a process this test started, should an assertion have left it running.
fn reap(pid: u32) {
    if alive(pid) {
        let _ = std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status();
    }
}

/// Every line of what the agent read on stdin.
fn agent_stdin(marks: &Path) -> Vec<Value> {
    std::fs::read_to_string(marks.join("stdin.ndjson"))
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("the relay writes JSON lines to the agent"))
        .collect()
}

fn log_of(page: &Value) -> Vec<Value> {
    page["events"].as_array().unwrap().clone()
}

#[tokio::test]
async fn sigkill_mid_turn_then_restart_keeps_the_log_and_leaves_no_orphan() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let script = tee_agent(dir.path());
    let mut relay = RelayProc::start(tee_relay(&data, &script, dir.path()));
    let sid = relay.create_session().await;
    let agent = read_pid(&dir.path().join("agent.pid")).await;
    let bg = read_pid(&dir.path().join("bg.pid")).await;

    // Two clients: A follows everything, B stops reading early (an older cursor).
    let mut a = relay.sse(&sid, None).await;
    let mut b = relay.sse(&sid, None).await;
    let r = relay.post(&sid, TOKEN, user("crash in the middle")).await;
    assert_eq!(r.status(), 200);
    let seen_a = a.until("prompt on A", is_can_use_tool).await;
    let first_b = b.next(T).await.expect("B sees the first event");
    let cursor_a = seen_a.iter().filter_map(|f| f.id).max().unwrap();
    let cursor_b = first_b.id.unwrap();
    let before = log_of(&relay.events(&sid, 0).await);
    assert_eq!(
        before.last().unwrap()["sequence_num"].as_u64(),
        Some(cursor_a),
        "A has seen the whole log: the prompt is the newest event"
    );

    // Mid-turn: the agent waits for the answer, its tool's background process runs.
    relay.kill();
    drop((a, b));
    tokio::time::sleep(Duration::from_millis(200)).await;

    let relay = RelayProc::start(tee_relay(&data, &script, dir.path()));
    let orphans_gone = gone_within(agent, 10).await && gone_within(bg, 10).await;
    reap(agent);
    reap(bg);
    assert!(
        orphans_gone,
        "the restarted relay stopped the crashed run's agent and its background process"
    );

    let after = log_of(&relay.events(&sid, 0).await);
    assert_eq!(
        &after[..before.len()],
        &before[..],
        "the log survived the crash unchanged"
    );
    let seqs: Vec<u64> = seqs_of(&after);
    let expect: Vec<u64> = (1..=seqs.len() as u64).collect();
    assert_eq!(seqs, expect, "dense, no sequence number reused");
    assert!(after.len() > before.len(), "the restart recorded the end");

    // Both clients resume from their own cursor and get exactly the rest.
    for (name, cursor) in [("A", cursor_a), ("B", cursor_b)] {
        let mut s = relay.sse(&sid, Some(cursor)).await;
        assert_eq!(s.status, 200, "{name} resumes");
        let mut got = Vec::new();
        while let Some(f) = s.next(Duration::from_secs(5)).await {
            got.push(f.data);
        }
        assert_eq!(got, after[cursor as usize..], "{name}: exactly the rest");
    }

    // The prompt's answer can no longer reach anyone; the relay says so instead of storing it.
    let ask = before.last().unwrap();
    let rid = ask["payload"]["request_id"].as_str().unwrap();
    let tuid = ask["payload"]["request"]["tool_use_id"].as_str().unwrap();
    let r = relay
        .post(&sid, TOKEN, allow(rid, tuid, json!({"command": "late"})))
        .await;
    assert!(
        r.status().is_client_error(),
        "an answer to a dead turn: {}",
        r.status()
    );
    assert_eq!(
        log_of(&relay.events(&sid, 0).await).len(),
        after.len(),
        "nothing appended after the end"
    );

    // A new session on the restarted relay runs a turn from sequence 1.
    let _ = std::fs::remove_file(dir.path().join("agent.pid"));
    let fresh = relay.create_session().await;
    let agent2 = read_pid(&dir.path().join("agent.pid")).await;
    let bg2 = read_pid(&dir.path().join("bg.pid")).await;
    let mut s = relay.prompt(&fresh, "after the crash").await;
    let frames = s.until("prompt", is_can_use_tool).await;
    assert_eq!(frames.first().and_then(|f| f.id), Some(1));
    drop(relay);
    reap(agent2);
    reap(bg2);
}

#[tokio::test]
async fn ten_clients_race_to_answer_one_prompt_exactly_one_reaches_the_agent() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let script = tee_agent(dir.path());
    let relay = RelayProc::start(tee_relay(&data, &script, dir.path()));
    let sid = relay.create_session().await;
    let agent = read_pid(&dir.path().join("agent.pid")).await;
    let bg = read_pid(&dir.path().join("bg.pid")).await;

    let mut clients = Vec::new();
    for _ in 0..10 {
        clients.push(relay.sse(&sid, None).await);
    }
    relay.post(&sid, TOKEN, user("race of ten")).await;
    let mut prompts = HashSet::new();
    for c in &mut clients {
        let ask = c.until_one("prompt", is_can_use_tool).await;
        prompts.insert(ask.data.to_string());
    }
    assert_eq!(prompts.len(), 1, "all ten see the same prompt");
    let ask: Value = serde_json::from_str(prompts.iter().next().unwrap()).unwrap();
    let rid = ask["payload"]["request_id"].as_str().unwrap().to_owned();
    let tuid = ask["payload"]["request"]["tool_use_id"]
        .as_str()
        .unwrap()
        .to_owned();

    // Ten answers at once, each with its own command.
    let posts = (0..10).map(|i| {
        let body = allow(
            &rid,
            &tuid,
            json!({"command": format!("echo from-client-{i}")}),
        );
        let (relay, sid) = (&relay, &sid);
        async move { (i, relay.post(sid, TOKEN, body).await) }
    });
    let answers = futures::future::join_all(posts).await;
    let mut by_status: HashMap<u16, Vec<usize>> = HashMap::new();
    for (i, r) in &answers {
        by_status.entry(r.status().as_u16()).or_default().push(*i);
    }
    let winners = by_status.get(&200).cloned().unwrap_or_default();
    let losers = by_status.get(&409).map_or(0, Vec::len);
    println!(
        "race of ten: {} answered 200, {losers} answered 409, statuses {:?}",
        winners.len(),
        by_status.keys().collect::<Vec<_>>()
    );
    assert_eq!((winners.len(), losers), (1, 9), "{by_status:?}");
    let winner = winners[0];

    let frames = clients[0].until("result", is_result).await;
    let result = frames.iter().find_map(tool_result_text).unwrap();
    assert!(
        result.contains(&format!("from-client-{winner}")),
        "{result}"
    );

    // At the agent: exactly one control_response for the prompt, the winner's.
    let read = agent_stdin(dir.path());
    let answers_read: Vec<&Value> = read
        .iter()
        .filter(|l| l["type"] == "control_response" && l["response"]["request_id"] == rid.as_str())
        .collect();
    println!(
        "race of ten: the agent read {} answer(s) for {rid}",
        answers_read.len()
    );
    assert_eq!(answers_read.len(), 1, "{answers_read:#?}");
    assert_eq!(
        answers_read[0]["response"]["response"]["updatedInput"]["command"],
        format!("echo from-client-{winner}")
    );
    // In the log: one stored answer from a client.
    let log = log_of(&relay.events(&sid, 0).await);
    let stored = client_answers(&log, &rid);
    assert_eq!(stored, 1);
    // In the audit: one decision.
    let audit = std::fs::read_to_string(data.join("audit.jsonl")).unwrap();
    let decisions = audit
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["request_id"] == rid.as_str())
        .count();
    assert_eq!(decisions, 1, "{audit}");
    drop(relay);
    reap(agent);
    reap(bg);
}
