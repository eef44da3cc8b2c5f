//! The fields the transcript model shows for `system` frames and for control requests a person
//! answers come from the typed bridge-protocol message: each frame here carries every field it
//! shows, an unknown extra key besides, and (where a key is not modelled) a value only `extra`
//! holds — a field read from the wrong place, or a type's extra lost, fails these tests.

use bridge_console::state::{ItemKind, PromptKind, Session, SystemKind, ToolStatus};
use serde_json::{Value, json};
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

const SID: &str = "5e0c2a1b-7d3f-4c8e-9a6b-1f2e3d4c5b6a";

fn uuid(n: u64) -> String {
    format!("00000000-0000-4000-8000-{n:012}")
}

fn sys(subtype: &str, n: u64, fields: Value) -> Value {
    let mut v = json!({"type": "system", "subtype": subtype, "uuid": uuid(n), "session_id": SID});
    for (k, x) in fields.as_object().unwrap() {
        v[k] = x.clone();
    }
    v
}

/// The system rows, in order: (parent, kind).
fn system_rows(s: &Session) -> Vec<(Option<String>, SystemKind)> {
    s.order()
        .iter()
        .filter_map(|k| {
            let item = s.item(k)?;
            match &item.kind {
                ItemKind::System(row) => Some((item.parent.clone(), row.kind.clone())),
                _ => None,
            }
        })
        .collect()
}

/// The last system row must be a notice saying `text` under `title`, at `level`.
#[track_caller]
fn assert_last_notice(s: &Session, title: &str, text: &str, level: &str) {
    match system_rows(s).pop().map(|(_, k)| k) {
        Some(SystemKind::Notice {
            title: t,
            text: x,
            level: l,
        }) => assert_eq!((t.as_str(), x.as_str(), l.as_str()), (title, text, level)),
        other => panic!("no notice row: {other:?}"),
    }
}

fn init(n: u64) -> Value {
    sys(
        "init",
        n,
        json!({"mcp_servers": [{"name": "docs", "status": "connected"}], "slash_commands": [],
            "apiKeySource": "none", "output_style": "default", "skills": [], "plugins": [],
            "cwd": "/work/proj", "model": "claude-opus-4-7", "permissionMode": "acceptEdits",
            "tools": ["Bash", "Read", "mcp__docs__search"], "claude_code_version": "2.1.332",
            "parent_tool_use_id": "toolu_parent", "brand_new_field": {"x": 1}}),
    )
}

#[test]
fn system_init_fields_come_out_right_with_an_unknown_key() {
    let mut s = Session::new();
    s.apply_value(&init(1));
    let info = s.info();
    assert_eq!(info.model.as_deref(), Some("claude-opus-4-7"));
    assert_eq!(info.cwd.as_deref(), Some("/work/proj"));
    assert_eq!(info.permission_mode.as_deref(), Some("acceptEdits"));
    assert_eq!(info.version.as_deref(), Some("2.1.332"));
    assert_eq!(info.tools, ["Bash", "Read", "mcp__docs__search"]);
    let rows = system_rows(&s);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(
        rows[0].0.as_deref(),
        Some("toolu_parent"),
        "parent from extra"
    );
    assert_eq!(
        rows[0].1,
        SystemKind::Init {
            model: "claude-opus-4-7".into(),
            cwd: "/work/proj".into(),
            tools: vec!["Bash".into(), "Read".into(), "mcp__docs__search".into()],
            permission_mode: "acceptEdits".into(),
            version: "2.1.332".into(),
        }
    );
    // An unknown permission mode (an open value) is shown as sent.
    let mut next = init(2);
    next["permissionMode"] = json!("someFutureMode");
    s.apply_value(&next);
    assert_eq!(s.info().permission_mode.as_deref(), Some("someFutureMode"));
}

#[test]
fn system_rows_read_their_typed_fields() {
    let mut s = Session::new();
    s.apply_value(&sys(
        "api_retry",
        10,
        json!({"attempt": 3, "max_retries": 10, "retry_delay_ms": 2500.7, "error_status": 529,
            "error": "rate_limit", "extra_key": true}),
    ));
    assert_eq!(
        system_rows(&s).pop().unwrap().1,
        SystemKind::ApiRetry {
            attempt: 3,
            max_retries: 10,
            delay_ms: 2500,
            error: "rate_limit".into(),
            status: Some(529),
        }
    );
    s.apply_value(&sys(
        "compact_boundary",
        11,
        json!({"compact_metadata": {"trigger": "manual", "pre_tokens": 91000, "post_tokens": 12000}}),
    ));
    assert_eq!(
        system_rows(&s).pop().unwrap().1,
        SystemKind::CompactBoundary {
            trigger: "manual".into(),
            pre_tokens: Some(91000),
            post_tokens: Some(12000),
        }
    );
    s.apply_value(&sys(
        "status",
        12,
        json!({"status": null, "permissionMode": "plan", "compact_result": "failed",
            "compact_error": "context too small"}),
    ));
    assert_eq!(s.info().permission_mode.as_deref(), Some("plan"));
    assert_last_notice(&s, "compaction", "context too small", "error");
    s.apply_value(&sys(
        "hook_response",
        13,
        json!({"hook_id": "h1", "hook_name": "lint", "hook_event": "PostToolUse", "output": "2 warnings",
            "stdout": "ignored", "stderr": "", "exit_code": 1, "outcome": "error"}),
    ));
    assert_last_notice(&s, "hook", "lint: error\n2 warnings", "warning");
    s.apply_value(&sys(
        "notification",
        14,
        json!({"key": "k", "text": "Update ready", "priority": "immediate"}),
    ));
    assert_last_notice(&s, "notification", "Update ready", "warning");
    // A text key the type does not model still wins in the documented order (message before reason).
    s.apply_value(&sys(
        "worker_shutting_down",
        15,
        json!({"reason": "idle", "message": "Shutting down for maintenance"}),
    ));
    assert_last_notice(
        &s,
        "worker shutting down",
        "Shutting down for maintenance",
        "warning",
    );
    s.apply_value(&sys(
        "informational",
        16,
        json!({"content": "Heads up", "level": "notice"}),
    ));
    assert_last_notice(&s, "information", "Heads up", "notice");
    s.apply_value(&sys(
        "session_writes_lost",
        17,
        json!({"error_code": "disk_full", "lost": ["a"]}),
    ));
    assert_last_notice(&s, "session writes lost", "session writes lost", "warning");
    s.apply_value(&sys(
        "commands_changed",
        18,
        json!({"commands": [{"name": "/review", "description": "Review a PR", "argumentHint": "<pr>"},
            {"name": "__internal", "description": "", "argumentHint": ""}]}),
    ));
    let cmds = &s.info().commands;
    assert_eq!(cmds.len(), 1, "{cmds:?}");
    assert_eq!(
        (
            cmds[0].name.as_str(),
            cmds[0].description.as_str(),
            cmds[0].argument_hint.as_str()
        ),
        ("review", "Review a PR", "<pr>")
    );
    s.apply_value(&sys(
        "session_state_changed",
        19,
        json!({"state": "ended", "exit_code": 3, "signal": null, "stderr_tail": "boom", "source": "relay"}),
    ));
    assert_eq!(
        system_rows(&s).pop().unwrap().1,
        SystemKind::Ended {
            exit_code: Some(3),
            signal: None,
            stderr_tail: "boom".into(),
        }
    );
}

fn agent_tool(s: &mut Session, id: &str) {
    s.apply_value(&json!({"type": "assistant", "message": {"id": "msg_t", "type": "message", "role": "assistant",
        "model": "m", "content": [{"type": "tool_use", "id": id, "name": "Task", "input": {"prompt": "p"}}],
        "stop_reason": null, "usage": {"input_tokens": 1, "output_tokens": 1}},
        "parent_tool_use_id": null, "session_id": SID, "uuid": uuid(30)}));
}

#[test]
fn task_frames_update_the_tool_card_from_typed_fields() {
    let mut s = Session::new();
    agent_tool(&mut s, "toolu_task");
    s.apply_value(&sys(
        "task_started",
        31,
        json!({"task_id": "t1", "tool_use_id": "toolu_task", "description": "Explore the repo",
            "task_type": "local_agent"}),
    ));
    let task = s.tool("toolu_task").unwrap().task.clone().unwrap();
    assert_eq!(task.task_id, "t1");
    assert_eq!(task.status.as_deref(), Some("running"));
    assert_eq!(task.description.as_deref(), Some("Explore the repo"));
    // task_updated names no tool: found by task id; its status is in the patch.
    s.apply_value(&sys(
        "task_updated",
        32,
        json!({"task_id": "t1", "patch": {"status": "killed", "error": "stopped"}}),
    ));
    let task = s.tool("toolu_task").unwrap().task.clone().unwrap();
    assert_eq!(task.status.as_deref(), Some("killed"));
    s.apply_value(&sys(
        "task_notification",
        33,
        json!({"task_id": "t1", "tool_use_id": "toolu_task", "status": "completed",
            "output_file": "/tmp/t1", "summary": "Found 3 modules"}),
    ));
    let task = s.tool("toolu_task").unwrap().task.clone().unwrap();
    assert_eq!(task.summary.as_deref(), Some("Found 3 modules"));
    assert_last_notice(&s, "task completed", "Found 3 modules", "info");
    // A task with no tool card gets a row of its own.
    s.apply_value(&sys(
        "task_started",
        34,
        json!({"task_id": "t9", "description": "Background bash"}),
    ));
    assert_last_notice(&s, "task started", "Background bash", "info");
}

#[test]
fn permission_denied_marks_the_tool_and_says_why() {
    let mut s = Session::new();
    agent_tool(&mut s, "toolu_d");
    s.apply_value(&sys(
        "permission_denied",
        40,
        json!({"tool_name": "Bash", "tool_use_id": "toolu_d", "message": "Denied by rule",
            "decision_reason_type": "rule", "future": 1}),
    ));
    let tool = s.tool("toolu_d").unwrap();
    assert_eq!(tool.status, ToolStatus::Denied);
    assert_eq!(tool.deny_message.as_deref(), Some("Denied by rule"));
    assert_last_notice(
        &s,
        "permission denied",
        "Bash was denied: Denied by rule",
        "warning",
    );
}

#[test]
fn a_permission_request_shows_its_typed_fields_and_keeps_unknown_keys() {
    let mut s = Session::new();
    agent_tool(&mut s, "toolu_p");
    let suggestion = json!({"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "ls:*"}],
        "behavior": "allow", "destination": "localSettings"});
    s.apply_value(
        &json!({"type": "control_request", "request_id": "r1", "request": {
        "subtype": "can_use_tool", "tool_name": "Bash", "input": {"command": "ls -la"},
        "tool_use_id": "toolu_p", "display_name": "Run ls", "title": "Claude wants to run ls",
        "description": "List files", "decision_reason": "ask rule", "decision_reason_type": "rule",
        "blocked_path": "/etc", "permission_suggestions": [suggestion.clone()],
        "new_hint": {"shown": false}}}),
    );
    let p = &s.prompts()[0];
    assert_eq!(p.request_id, "r1");
    assert_eq!(p.kind, PromptKind::Permission);
    assert_eq!(p.tool_name, "Bash");
    assert_eq!(p.display_name.as_deref(), Some("Run ls"));
    assert_eq!(p.title.as_deref(), Some("Claude wants to run ls"));
    assert_eq!(p.description.as_deref(), Some("List files"));
    assert_eq!(p.decision_reason.as_deref(), Some("ask rule"));
    assert_eq!(p.decision_reason_type.as_deref(), Some("rule"));
    assert_eq!(p.blocked_path.as_deref(), Some("/etc"));
    assert_eq!(p.tool_use_id.as_deref(), Some("toolu_p"));
    assert_eq!(p.input, json!({"command": "ls -la"}));
    assert_eq!(p.suggestions, vec![suggestion]);
    assert_eq!(
        p.request["new_hint"],
        json!({"shown": false}),
        "unknown key kept"
    );
    assert_eq!(
        s.tool("toolu_p").unwrap().permission_request.as_deref(),
        Some("r1")
    );

    // A question asked through requires_user_interaction gets the question dialog.
    s.apply_value(
        &json!({"type": "control_request", "request_id": "r2", "request": {
        "subtype": "can_use_tool", "tool_name": "mcp__x__ask", "tool_use_id": "toolu_q",
        "input": {"questions": [{"question": "Which?"}]}, "requires_user_interaction": true}}),
    );
    assert_eq!(s.prompts()[1].kind, PromptKind::Question);
}

#[test]
fn elicitation_and_dialog_prompts_read_their_typed_fields() {
    let mut s = Session::new();
    s.apply_value(&json!({"type": "control_request", "request_id": "e1", "request": {
        "subtype": "elicitation", "mcp_server_name": "docs", "message": "Pick a branch", "mode": "form",
        "requested_schema": {"type": "object", "properties": {"branch": {"type": "string"}}},
        "title": "Branch", "tool_use_id": "toolu_e", "x_future": 2}}));
    s.apply_value(&json!({"type": "control_request", "request_id": "d1", "request": {
        "subtype": "request_user_dialog", "dialog_kind": "confirm_plan", "payload": {"plan": "1. do it"},
        "tool_use_id": "toolu_dlg", "title": "Confirm", "message": "Go ahead?"}}));
    let e = &s.prompts()[0];
    assert_eq!(e.kind, PromptKind::Elicitation);
    assert_eq!(e.tool_name, "docs");
    assert_eq!(e.title.as_deref(), Some("Branch"));
    assert_eq!(
        e.description.as_deref(),
        Some("Pick a branch"),
        "message when no description"
    );
    assert_eq!(e.tool_use_id.as_deref(), Some("toolu_e"), "from extra");
    assert_eq!(
        e.input,
        json!({"type": "object", "properties": {"branch": {"type": "string"}}})
    );
    let d = &s.prompts()[1];
    assert_eq!(d.kind, PromptKind::UserDialog);
    assert_eq!(d.tool_name, "confirm_plan");
    assert_eq!(d.input, json!({"plan": "1. do it"}));
    assert_eq!(d.tool_use_id.as_deref(), Some("toolu_dlg"));
    assert_eq!(d.title.as_deref(), Some("Confirm"), "from extra");
    assert_eq!(d.description.as_deref(), Some("Go ahead?"));
}

#[test]
fn requests_no_person_answers_are_shown_raw_once_and_an_undecodable_prompt_is_still_offered() {
    let mut s = Session::new();
    let hook = json!({"type": "control_request", "request_id": "h1", "request": {
        "subtype": "hook_callback", "callback_id": "cb", "input": {}}});
    s.apply_value(&hook);
    s.apply_value(&hook);
    assert!(s.prompts().is_empty());
    let raw_rows = |s: &Session| {
        s.order()
            .iter()
            .filter(|k| matches!(s.item(k).unwrap().kind, ItemKind::Raw(_)))
            .count()
    };
    assert_eq!(raw_rows(&s), 1);
    // tool_use_id of the wrong type: the body does not decode, the CLI still waits.
    s.apply_value(
        &json!({"type": "control_request", "request_id": "bad", "request": {
        "subtype": "can_use_tool", "tool_name": "Bash", "input": {"command": "x"}, "tool_use_id": 7,
        "display_name": "Run x"}}),
    );
    let p = &s.prompts()[0];
    assert_eq!(p.request_id, "bad");
    assert_eq!(p.kind, PromptKind::Permission);
    assert_eq!(p.display_name.as_deref(), Some("Run x"));
    assert_eq!(p.input, json!({"command": "x"}));
    assert_eq!(raw_rows(&s), 2, "and a raw row with the error");
}
