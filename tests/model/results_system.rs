//! The model after a turn: results and errors, frames after the result, subagents, system and
//! unknown frames, the session's state.

use super::*;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

// ---------------------------------------------------------------- results, errors, frames after result

#[test]
fn api_error_inside_success_result_is_an_error_footer() {
    let mut s = Session::new();
    s.apply_value(&json!({"type": "assistant", "message": {"id": "msg_syn", "type": "message", "role": "assistant", "model": "<synthetic>",
        "content": [text("API Error: 500 Internal Server Error")], "stop_reason": "stop_sequence", "usage": {"input_tokens": 0, "output_tokens": 0}},
        "error": "server_error", "parent_tool_use_id": null, "session_id": "s", "uuid": uuid_like()}));
    s.apply_value(&result(
        0.0,
        json!({"is_error": true, "terminal_reason": "api_error", "api_error_status": 500,
        "stop_reason": "stop_sequence", "result": "API Error: 500 Internal Server Error"}),
    ));
    let mut saw_error_msg = false;
    let mut saw_footer = false;
    for k in s.order() {
        match &s.item(k).unwrap().kind {
            ItemKind::Assistant(a) => {
                assert_eq!(a.error.as_deref(), Some("server_error"));
                assert_eq!(a.model.as_deref(), Some("<synthetic>"));
                saw_error_msg = true;
            }
            ItemKind::Result(r) => {
                assert_eq!(r.subtype, "success");
                assert!(r.is_error);
                assert_eq!(r.api_error_status, Some(500));
                assert_eq!(
                    r.errors,
                    vec!["API Error: 500 Internal Server Error".to_string()]
                );
                saw_footer = true;
            }
            _ => {}
        }
    }
    assert!(saw_error_msg && saw_footer);
}

#[test]
fn frames_after_result_and_a_turn_the_cli_starts_itself() {
    let mut s = Session::new();
    apply_all(&mut s, &streamed_turn());
    assert_eq!(s.state(), SessionState::Idle);
    // A background subagent keeps working after the result...
    s.apply_value(&sub_assistant(
        "msg_bg",
        "toolu_1",
        text("background progress"),
    ));
    assert_eq!(
        s.state(),
        SessionState::Idle,
        "subagent frames do not restart the main turn"
    );
    // ...then the CLI starts a new turn on its own: init, streamed answer, a second result.
    s.apply_value(&json!({"type": "system", "subtype": "init", "mcp_servers": [], "slash_commands": [], "apiKeySource": "none", "output_style": "default", "skills": [], "plugins": [], "cwd": "/w", "model": "claude-sonnet-4-5", "permissionMode": "default",
        "tools": ["Bash"], "claude_code_version": "2.1.332", "uuid": uuid_like(), "session_id": "s"}));
    assert_eq!(s.state(), SessionState::Running);
    let m = "msg_auto";
    apply_all(
        &mut s,
        &[
            start(m),
            block_start(m, 0, json!({"type": "text", "text": ""})),
            text_delta(m, 0, "Background work finished."),
            assistant(m, text("Background work finished.")),
            block_stop(m, 0),
            message_stop(m),
            result(0.015, json!({})),
        ],
    );
    assert_eq!(s.state(), SessionState::Idle);
    assert_eq!(rows_of_role(&s, "result"), 2);
    assert!(
        (s.cost_total() - 0.015).abs() < 1e-12,
        "cumulative CLI total: {}",
        s.cost_total()
    );
    let costs = rows(&s, |k| match k {
        ItemKind::Result(r) => Some((r.turn_cost, r.session_cost)),
        _ => None,
    });
    assert!(
        (costs[0].0 - 0.01).abs() < 1e-12 && (costs[1].0 - 0.005).abs() < 1e-12,
        "{costs:?}"
    );
}

#[test]
fn running_cost_survives_a_cli_restart_and_prefers_per_turn_usage() {
    let mut s = Session::new();
    s.apply_value(&result(0.02, json!({})));
    s.apply_value(&result(0.05, json!({})));
    // A new CLI process (total restarts from 0).
    s.apply_value(&result(0.01, json!({})));
    assert!((s.cost_total() - 0.06).abs() < 1e-12, "{}", s.cost_total());
    s.apply_value(&result(
        0.04,
        json!({"model_usage_since_last_result": {"m": {"costUSD": 0.03}}}),
    ));
    let last = rows(&s, |k| match k {
        ItemKind::Result(r) => Some(r.clone()),
        _ => None,
    })
    .pop()
    .unwrap();
    assert!((last.turn_cost - 0.03).abs() < 1e-12);
    assert!(
        (last.session_cost - 0.09).abs() < 1e-12,
        "{}",
        last.session_cost
    );
    assert_eq!(last.input_tokens, Some(15));
}

// ---------------------------------------------------------------- subagents

#[test]
fn subagent_frames_nest_under_the_agent_tool_call() {
    let mut s = Session::new();
    s.apply_value(&assistant(
        "msg_a",
        tool_use(
            "toolu_agent",
            "Agent",
            json!({"description": "Explore", "prompt": "Find it"}),
        ),
    ));
    s.apply_value(&json!({"type": "user", "message": {"role": "user", "content": "Find it"}, "parent_tool_use_id": "toolu_agent",
        "session_id": "s", "uuid": uuid_like()}));
    s.apply_value(&sub_assistant(
        "msg_sub",
        "toolu_agent",
        tool_use("toolu_inner", "Bash", json!({"command": "grep -r x"})),
    ));
    let mut inner_result = tool_result("toolu_inner", "x found", false);
    inner_result["parent_tool_use_id"] = json!("toolu_agent");
    s.apply_value(&inner_result);
    s.apply_value(&tool_result("toolu_agent", "Report: found x", false));
    assert_eq!(
        s.order().len(),
        1,
        "everything nests under the one top-level row"
    );
    let agent = s.tool("toolu_agent").unwrap().clone();
    assert_eq!(agent.children.len(), 2);
    assert_eq!(agent.status, ToolStatus::Done);
    let inner = s.tool("toolu_inner").unwrap();
    assert_eq!(inner.status, ToolStatus::Done);
    assert_eq!(inner.owner, "a:msg_sub");
    // Changing a nested card bumps the top-level row's revision (so it re-renders).
    let top = s.order()[0].clone();
    let before = s.item_rev(&top);
    s.apply_value(&json!({"type": "tool_progress", "tool_use_id": "toolu_inner", "tool_name": "Bash", "parent_tool_use_id": "toolu_agent",
        "elapsed_time_seconds": 1.0, "uuid": uuid_like(), "session_id": "s"}));
    assert!(s.item_rev(&top) > before);
    match &s.item(&agent.children[0]).unwrap().kind {
        ItemKind::User(u) => assert_eq!(u.origin, UserOrigin::SubagentPrompt),
        _ => panic!("subagent prompt first"),
    }
}

// ---------------------------------------------------------------- system frames, unknown frames, state

#[test]
fn system_frames_become_rows_or_state() {
    let mut s = Session::new();
    let init = |model: &str| {
        json!({"type": "system", "subtype": "init", "mcp_servers": [], "slash_commands": [], "apiKeySource": "none", "output_style": "default", "skills": [], "plugins": [], "cwd": "/w", "model": model, "permissionMode": "default",
        "tools": ["Bash", "Read"], "claude_code_version": "2.1.332", "uuid": uuid_like(), "session_id": "s"})
    };
    s.apply_value(&init("m1"));
    s.apply_value(&init("m1"));
    s.apply_value(&init("m2"));
    assert_eq!(
        rows_of_role(&s, "system"),
        2,
        "init shown first and on change only"
    );
    assert_eq!(s.info().model.as_deref(), Some("m2"));
    s.apply_value(&json!({"type": "system", "subtype": "status", "status": null, "permissionMode": "acceptEdits", "uuid": uuid_like(), "session_id": "s"}));
    assert_eq!(s.info().permission_mode.as_deref(), Some("acceptEdits"));
    s.apply_value(&json!({"type": "system", "subtype": "api_retry", "attempt": 2, "max_retries": 10, "retry_delay_ms": 1200,
        "error_status": 529, "error": "overloaded", "uuid": uuid_like(), "session_id": "s"}));
    s.apply_value(&json!({"type": "system", "subtype": "compact_boundary", "compact_metadata": {"trigger": "manual", "pre_tokens": 5000},
        "uuid": uuid_like(), "session_id": "s"}));
    s.apply_value(&json!({"type": "rate_limit_event", "rate_limit_info": {"status": "allowed_warning", "rateLimitType": "five_hour",
        "resetsAt": 1_900_000_000}, "uuid": uuid_like(), "session_id": "s"}));
    assert_eq!(s.rate_limit().unwrap().status, "allowed_warning");
    s.apply_value(&json!({"type": "system", "subtype": "thinking_tokens", "estimated_tokens": 5, "estimated_tokens_delta": 5, "uuid": uuid_like(), "session_id": "s"}));
    s.apply_value(&json!({"type": "system", "subtype": "informational", "content": "Heads up", "level": "warning", "uuid": uuid_like(), "session_id": "s"}));
    let kinds: Vec<String> = rows(&s, |k| match k {
        ItemKind::System(sr) => Some(match &sr.kind {
            SystemKind::Init { .. } => "init".to_string(),
            SystemKind::ApiRetry { attempt, .. } => format!("retry{attempt}"),
            SystemKind::CompactBoundary { .. } => "compact".into(),
            SystemKind::RateLimit { .. } => "ratelimit".into(),
            SystemKind::Notice { level, .. } => format!("notice-{level}"),
            SystemKind::Ended { .. } => "ended".into(),
        }),
        _ => None,
    });
    assert_eq!(
        kinds,
        vec![
            "init",
            "init",
            "retry2",
            "compact",
            "ratelimit",
            "notice-warning"
        ]
    );
    s.apply_from(Source::Relay, &json!({"type": "system", "subtype": "session_state_changed", "state": "ended", "exit_code": 1,
        "signal": null, "stderr_tail": "boom", "uuid": uuid_like(), "session_id": "s"}));
    assert_eq!(s.state(), SessionState::Ended);
}

#[test]
fn unknown_types_and_subtypes_are_kept_as_raw_rows() {
    let mut s = Session::new();
    s.apply_value(&json!({"type": "brand_new_thing", "payload": {"x": 1}, "uuid": "n1"}));
    s.apply_value(
        &json!({"type": "system", "subtype": "from_the_future", "uuid": "n2", "session_id": "s"}),
    );
    s.apply_value(&json!({"no_type_at_all": true}));
    let labels: Vec<String> = rows(&s, |k| match k {
        ItemKind::Raw(r) => Some(r.label.clone()),
        _ => None,
    });
    assert_eq!(
        labels,
        vec![
            "brand_new_thing",
            "system/from_the_future",
            "(no type) (could not read: not a message: expected a JSON object with a string \"type\" field)"
        ]
    );
    match &s.item(&s.order()[0]).unwrap().kind {
        ItemKind::Raw(r) => assert!(r.json.contains("\"x\": 1")),
        _ => unreachable!(),
    }
    // A redelivery (same uuid) is not shown twice.
    s.apply_value(&json!({"type": "brand_new_thing", "payload": {"x": 1}, "uuid": "n1"}));
    assert_eq!(rows_of_role(&s, "raw"), 3);
}

#[test]
fn set_model_and_mode_are_acknowledged_and_initialize_fills_models() {
    let mut s = Session::new();
    s.set_summary(&json!({"id": "x", "state": "idle", "model": "claude-sonnet-4-5", "permission_mode": "default", "cwd": "/w",
        "initialize": {"models": [{"value": "default", "displayName": "Default", "description": "d"},
                                  {"value": "opus", "displayName": "Opus", "description": "o"}], "current_permission_mode": "default"}}));
    assert_eq!(
        s.info()
            .models
            .iter()
            .map(|m| m.value.as_str())
            .collect::<Vec<_>>(),
        vec!["default", "opus"]
    );
    s.local_request("m1", LocalRequest::SetModel(Some("opus".into())));
    s.apply_value(&json!({"type": "control_response", "response": {"subtype": "success", "request_id": "m1", "response": {}}}));
    assert_eq!(s.info().model.as_deref(), Some("opus"));
    s.local_request("p1", LocalRequest::SetPermissionMode("plan".into()));
    s.apply_value(&json!({"type": "control_response", "response": {"subtype": "success", "request_id": "p1", "response": {"mode": "plan"}}}));
    assert_eq!(s.info().permission_mode.as_deref(), Some("plan"));
    s.local_request(
        "p2",
        LocalRequest::SetPermissionMode("bypassPermissions".into()),
    );
    s.apply_value(&json!({"type": "control_response", "response": {"subtype": "error", "request_id": "p2", "error": "not allowed"}}));
    assert_eq!(s.info().permission_mode.as_deref(), Some("plan"));
    assert!(s.notices().last().unwrap().text.contains("not allowed"));
}

#[test]
fn a_detail_read_after_the_turn_ended_does_not_restart_it() {
    // Fresh: the detail says a turn runs (the session is opened mid-turn).
    let mut fresh = Session::new();
    fresh.set_summary(&json!({"id": "x", "state": "running"}));
    assert_eq!(fresh.state().to_string(), "running");
    // Frames applied: the turn ran and ended; a detail read before the result, answered after it
    // (a retried read, a gateway's registry a moment behind), changes nothing.
    let mut s = Session::new();
    s.apply_value(&user_replay("u1", "hello"));
    s.apply_value(&assistant("m1", text("hi")));
    s.apply_value(&result(0.01, json!({})));
    assert_eq!(s.state().to_string(), "idle");
    s.set_summary(&json!({"id": "x", "state": "running"}));
    assert_eq!(s.state().to_string(), "idle");
    // The ended state still counts.
    s.set_summary(&json!({"id": "x", "state": "ended"}));
    assert_eq!(s.state().to_string(), "ended");
}

#[test]
fn interrupt_from_another_controller_is_shown() {
    let mut s = Session::new();
    s.apply_from(
        Source::Client,
        &json!({"type": "control_request", "request_id": "x", "request": {"subtype": "interrupt"}}),
    );
    assert_eq!(s.interrupt_state(), InterruptState::Requested);
    s.apply_value(&json!({"type": "control_response", "response": {"subtype": "success", "request_id": "x", "response": {"still_queued": []}}}));
    assert_eq!(s.interrupt_state(), InterruptState::Acknowledged);
}

#[test]
fn revisions_change_only_for_touched_rows() {
    let frames = streamed_turn();
    let mut s = Session::new();
    apply_all(&mut s, &frames[..8]);
    let first = s.order()[0].clone();
    let rev_first = s.item_rev(&first);
    let order_rev = s.order_rev();
    s.apply_value(&frames[8]); // a json delta for a block of the same row
    assert!(s.item_rev(&first) > rev_first);
    assert_eq!(
        s.order_rev(),
        order_rev,
        "a delta does not change the row order"
    );
}

fn form_rows(s: &Session) -> Vec<(String, String)> {
    rows(s, |k| match k {
        ItemKind::System(row) => match &row.kind {
            SystemKind::Notice { title, text, .. } if title.starts_with("form · ") => {
                Some((title.clone(), text.clone()))
            }
            _ => None,
        },
        _ => None,
    })
}

fn elicitation(rid: &str) -> Value {
    json!({"type": "control_request", "request_id": rid, "request": {"subtype": "elicitation",
        "mcp_server_name": "deploy", "message": "Where to?", "mode": "form",
        "requested_schema": {"type": "object", "properties": {"env": {"type": "string"}}}}})
}

#[test]
fn an_answered_form_stays_in_the_transcript_as_text() {
    let mut s = Session::new();
    s.apply_value(&elicitation("e1"));
    assert_eq!(s.prompts()[0].kind, PromptKind::Elicitation);
    // Answered here: the echo of our own answer settles it.
    s.answer_locally("e1");
    let hostile = "<img src=x onerror=alert(1)>".repeat(20);
    s.apply_from(
        Source::Client,
        &json!({"type": "control_response", "response": {"subtype": "success", "request_id": "e1",
            "response": {"action": "accept", "content": {"env": "staging", "replicas": 2, "notify": false, "note": hostile}}}}),
    );
    assert!(s.prompts().is_empty());
    let rows = form_rows(&s);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].0, "form · deploy");
    assert!(
        rows[0]
            .1
            .starts_with("You submitted: env = staging, replicas = 2, notify = no, note = <img"),
        "{rows:?}"
    );
    assert!(rows[0].1.ends_with('…'), "long values are cut");
    // A second echo adds nothing.
    s.apply_from(
        Source::Client,
        &json!({"type": "control_response", "response": {"subtype": "success", "request_id": "e1",
            "response": {"action": "accept", "content": {}}}}),
    );
    assert_eq!(form_rows(&s).len(), 1);

    // Declined elsewhere; withdrawn by the CLI.
    s.apply_value(&elicitation("e2"));
    s.apply_from(
        Source::Client,
        &json!({"type": "control_response", "response": {"subtype": "success", "request_id": "e2",
            "response": {"action": "decline"}}}),
    );
    s.apply_value(&elicitation("e3"));
    s.apply_value(&json!({"type": "control_cancel_request", "request_id": "e3"}));
    let rows = form_rows(&s);
    assert_eq!(rows[1].1, "Another window declined to answer.");
    assert_eq!(
        rows[2].1,
        "Withdrawn by Claude Code before it was answered."
    );

    // An observer reads who it was.
    let mut o = Session::observer();
    o.apply_value(&elicitation("e4"));
    o.apply_from(
        Source::Client,
        &json!({"type": "control_response", "response": {"subtype": "success", "request_id": "e4",
            "response": {"action": "cancel"}}}),
    );
    assert_eq!(form_rows(&o)[0].1, "The controller dismissed the form.");
}

#[test]
fn slash_commands_come_from_initialize_and_match_by_prefix_first() {
    let mut s = Session::new();
    s.set_initialize(&json!({"commands": [
        {"name": "review", "description": "Review a PR", "argumentHint": "<pr>"},
        {"name": "compact", "description": "Compact"},
        {"name": "/config", "description": "Config"},
        {"name": "", "description": "nameless"},
        {"name": "__remote-workflow", "description": "internal"},
        {"description": "no name"},
    ]}));
    let cmds = s.info().commands.clone();
    assert_eq!(
        cmds.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
        ["review", "compact", "config"],
        "a leading slash is dropped; nameless and internal (`__`) entries skipped"
    );
    assert_eq!(cmds[0].argument_hint, "<pr>");
    let names = |t: &str, limit| {
        slash_matches(&cmds, t, limit)
            .into_iter()
            .map(|c| c.name.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(names("/", 8), ["review", "compact", "config"]);
    assert_eq!(names("/co", 8), ["compact", "config"]);
    assert_eq!(names("/CO", 8), ["compact", "config"], "case-insensitive");
    assert_eq!(names("/ev", 8), ["review"], "contains, after prefixes");
    assert_eq!(names("/c", 1), ["compact"]);
    assert!(names("co", 8).is_empty(), "only after a slash");
    assert!(
        names("/compact now", 8).is_empty(),
        "not once arguments start"
    );
    // commands_changed replaces the list.
    s.apply_value(
        &json!({"type": "system", "subtype": "commands_changed", "commands": [{"name": "init", "description": "", "argumentHint": ""}],
        "uuid": uuid_like(), "session_id": "s"}),
    );
    let now: Vec<_> = slash_matches(&s.info().commands, "/", 8)
        .into_iter()
        .map(|c| c.name.clone())
        .collect();
    assert_eq!(now, ["init"]);
}

#[test]
fn a_known_type_whose_body_does_not_fit_is_shown_raw_with_the_error() {
    let mut s = Session::new();
    // `result` without its required fields: decoded as a `result`, it does not fit.
    s.apply_value(
        &json!({"type": "result", "subtype": "success", "uuid": "bad1", "session_id": "s"}),
    );
    // An `assistant` whose message is a string.
    s.apply_value(
        &json!({"type": "assistant", "message": "hi", "uuid": "bad2", "session_id": "s",
        "parent_tool_use_id": null}),
    );
    let raw: Vec<(String, String)> = rows(&s, |k| match k {
        ItemKind::Raw(r) => Some((r.label.clone(), r.json.clone())),
        _ => None,
    });
    assert_eq!(raw.len(), 2, "both shown, neither dropped: {raw:?}");
    assert!(
        raw[0]
            .0
            .starts_with("result/success (could not read: bad `result` message")
    );
    assert!(raw[0].1.contains("\"bad1\""));
    assert!(
        raw[1]
            .0
            .starts_with("assistant (could not read: bad `assistant` message")
    );
    assert_eq!(rows_of_role(&s, "result"), 0);
    assert_eq!(rows_of_role(&s, "assistant"), 0);
}

#[test]
fn a_prompt_whose_request_does_not_fit_is_still_offered_with_the_error_shown() {
    let mut s = Session::new();
    // `tool_use_id` must be a string: the request does not decode, but the CLI waits on it.
    s.apply_value(&json!({"type": "control_request", "request_id": "r-odd", "request": {
        "subtype": "can_use_tool", "tool_name": "Bash", "input": {"command": "ls"}, "tool_use_id": 7}}));
    assert_eq!(s.prompts().len(), 1, "still answerable");
    assert_eq!(s.prompts()[0].kind, PromptKind::Permission);
    assert_eq!(rows_of_role(&s, "raw"), 1, "and shown raw with the error");
    // A request nobody answers here (not a prompt) that does not fit: shown raw once.
    s.apply_value(
        &json!({"type": "control_request", "request_id": "r-hook", "request": {
        "subtype": "hook_callback", "callback_id": 3}}),
    );
    assert_eq!(s.prompts().len(), 1);
    assert_eq!(rows_of_role(&s, "raw"), 2);
}
