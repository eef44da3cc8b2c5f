//! What the terminal shows beside the transcript, from real CLI 2.1.332 captures: the task list the
//! task tools build, the context usage and MCP answers, the interrupted turn's footer and a turn
//! with nothing billed. (Native only: it reads the capture files.)

use std::path::PathBuf;

use bridge_console::format;
use bridge_console::state::{ItemKind, McpServer, Session, Source, TaskStatus, tasks::card_line};
use bridge_protocol::McpServerState;
use serde_json::{Value, json};

use crate::model::rows::rows;

/// `<< ` lines are the CLI's, `>> ` lines what the client wrote (as the relay echoes them).
fn capture(name: &str) -> Vec<(Source, Value)> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!(
        "tests/fixtures/real-cli-2.1.332/bridge-capture-{name}.ndjson"
    ));
    std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .filter_map(|l| {
            let (src, body) = match (l.strip_prefix("<< "), l.strip_prefix(">> ")) {
                (Some(b), _) => (Source::Worker, b),
                (_, Some(b)) => (Source::Client, b),
                _ => return None,
            };
            Some((src, serde_json::from_str(body).unwrap()))
        })
        .collect()
}

fn session_of(frames: &[(Source, Value)]) -> Session {
    let mut s = Session::new();
    for (src, v) in frames {
        s.apply_from(src.clone(), v);
    }
    s
}

#[test]
fn the_task_list_follows_each_task_call_live() {
    let frames = capture("tasks-interrupt");
    let mut s = Session::new();
    let mut seen: Vec<Vec<(String, String)>> = Vec::new();
    for (src, v) in &frames {
        s.apply_from(src.clone(), v);
        let now: Vec<(String, String)> = s
            .tasks()
            .tasks()
            .iter()
            .map(|t| (t.label().to_string(), t.status.as_str().to_string()))
            .collect();
        if seen.last() != Some(&now) {
            seen.push(now);
        }
    }
    let st = |v: &[(&str, &str)]| -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    };
    assert_eq!(
        seen,
        vec![
            vec![],
            st(&[("Write the parser", "pending")]),
            st(&[("Write the parser", "pending"), ("Add tests", "pending")]),
            // In progress: the active form, as the terminal's spinner says it.
            st(&[
                ("Writing the parser", "in_progress"),
                ("Add tests", "pending")
            ]),
            st(&[("Write the parser", "completed"), ("Add tests", "pending")]),
        ],
        "TaskList and TaskGet confirm the list without changing it"
    );
    let t = &s.tasks().tasks()[1];
    assert_eq!(
        (t.id.as_str(), t.description.as_str(), &t.status),
        ("2", "Cover the parser", &TaskStatus::Pending)
    );
    assert_eq!(s.tasks().progress(), (1, 2));
}

#[test]
fn task_cards_say_what_happened_in_one_line() {
    let s = session_of(&capture("tasks-interrupt"));
    let lines: Vec<String> = rows(&s, |k| match k {
        ItemKind::Assistant(a) => Some(a.blocks.clone()),
        _ => None,
    })
    .into_iter()
    .flatten()
    .filter_map(|slot| match slot.block {
        bridge_console::state::Block::ToolUse(id) => s.tool(&id).cloned(),
        _ => None,
    })
    .filter(|t| t.name.starts_with("Task"))
    .map(|t| {
        card_line(
            &t.name,
            &t.display_input(),
            t.output
                .as_ref()
                .map(|o| (o.text.as_str(), o.structured.as_ref(), o.is_error)),
        )
    })
    .collect();
    assert_eq!(
        lines,
        [
            "Created task 1: Write the parser",
            "Created task 2: Add tests",
            "Task 1: pending → in progress",
            "Task 1: in progress → completed",
            "Listed 2 tasks",
            "Task 2: Add tests (pending)",
        ]
    );
}

#[test]
fn the_interrupted_turn_hides_the_cli_diagnostic() {
    let s = session_of(&capture("tasks-interrupt"));
    let last = rows(&s, |k| match k {
        ItemKind::Result(r) => Some(r.clone()),
        _ => None,
    })
    .pop()
    .unwrap();
    assert_eq!(last.subtype, "error_during_execution");
    assert!(
        last.errors
            .iter()
            .any(|e| e.starts_with("[ede_diagnostic]")),
        "the capture carries the diagnostic: {:?}",
        last.errors
    );
    let (shown, kept) = format::split_diagnostics(&last.errors);
    assert!(shown.is_empty(), "nothing of it in the footer: {shown:?}");
    assert_eq!(kept.len(), 1, "kept for the details");
}

#[test]
fn context_usage_answers_reach_the_model_from_the_log() {
    let frames = capture("tasks-interrupt");
    // An observer's model: it asked nothing, the requests and answers are in the log.
    let mut s = Session::observer();
    let mut before_turn = None;
    for (src, v) in &frames {
        s.apply_from(src.clone(), v);
        if before_turn.is_none() && v["type"] == "user" {
            before_turn = s.agent_info().context().cloned();
        }
    }
    let first = before_turn.expect("ctx0 answered before the first prompt");
    let last = s.agent_info().context().unwrap();
    assert_eq!(last.window, 1_000_000);
    assert!(last.used > first.used);
    assert!(last.parts.iter().any(|p| p.name == "Messages" && p.used));
    assert!(last.parts.iter().any(|p| p.name == "Free space" && !p.used));
    // No notice or raw row for these answers.
    assert!(s.notices().is_empty(), "{:?}", s.notices());
    let mcp: Vec<McpServer> = s.agent_info().mcp().unwrap().to_vec();
    assert!(mcp.is_empty(), "no MCP server configured in that capture");
}

#[test]
fn mcp_states_from_the_real_cli() {
    let s = session_of(&capture("mcp-status"));
    let servers = s.agent_info().mcp().unwrap();
    let state = |n: &str| servers.iter().find(|m| m.name == n).unwrap();
    assert_eq!(state("asker").state, McpServerState::Connected);
    assert_eq!(state("asker").tools, 1);
    assert_eq!(state("broken").state, McpServerState::Failed);
    assert!(state("broken").error.as_deref().unwrap().contains("ENOENT"));
    assert_eq!(state("remote").transport.as_deref(), Some("http"));
}

#[test]
fn a_turn_with_nothing_billed_costs_zero_not_minus_zero() {
    let mut s = Session::new();
    // `/cost` (or an API error after retries): no billed call, an empty usage map.
    s.apply_value(&json!({
        "type": "result", "subtype": "success", "is_error": false, "duration_ms": 3,
        "duration_api_ms": 0, "num_turns": 0, "total_cost_usd": 0, "stop_reason": null,
        "usage": {"input_tokens": 0, "output_tokens": 0}, "modelUsage": {}, "permission_denials": [],
        "model_usage_since_last_result": {},
        "uuid": "6f3c8f58-0c1a-4f43-9a43-3e1e1c1f0001", "session_id": "s"
    }));
    let row = rows(&s, |k| match k {
        ItemKind::Result(r) => Some(r.clone()),
        _ => None,
    })
    .remove(0);
    assert!(
        row.turn_cost == 0.0 && row.turn_cost.is_sign_positive(),
        "turn cost {:?}",
        row.turn_cost
    );
    assert_eq!(format::cost(row.turn_cost), "$0.0000");
}
