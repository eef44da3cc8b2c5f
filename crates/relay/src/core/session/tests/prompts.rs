//! Prompts: first answer wins, audit records, cancellations, timeouts and their push notifications.

use super::*;

/// Asserts that the controller's `answer` is refused with `fault` and a message that says `says`.
#[track_caller]
fn assert_refused(r: &Rig, answer: Value, fault: Fault, says: &str) {
    let err = r.session.ingest(&controller(), vec![answer]).unwrap_err();
    assert_eq!(err.fault, fault);
    assert!(err.message.contains(says), "{}", err.message);
}

#[tokio::test]
async fn first_answer_wins_and_later_ones_change_nothing() {
    let mut r = rig(None, None);
    drain(&mut r.stdin);
    let who = controller();
    r.session.ingest(&who, vec![json!({"type":"user","message":{"role":"user","content":"hi"},"parent_tool_use_id":null,"session_id":"","uuid":"u-user"})]).unwrap();
    assert_eq!(r.session.state(), SessionState::Running);
    r.session.on_line(&can_use_tool("req-1"));
    assert_eq!(r.session.state(), SessionState::RequiresAction);
    assert_eq!(r.session.summary().pending_permissions, 1);
    let first = r
        .session
        .ingest(&who, vec![answer("req-1", "u-a", "echo edited")])
        .unwrap();
    assert_refused(
        &r,
        answer("req-1", "u-b", "rm -rf /"),
        Fault::Conflict,
        "answered first",
    );
    // A retry of the winner is idempotent.
    let retry = r
        .session
        .ingest(&who, vec![answer("req-1", "u-a", "echo edited")])
        .unwrap();
    assert_eq!(first, retry);
    let sent = drain(&mut r.stdin);
    assert_eq!(sent.len(), 2, "user + exactly one answer: {sent:?}");
    assert_eq!(sent[0]["uuid"], "u-user", "user messages keep their uuid");
    assert_eq!(
        sent[1]["response"]["response"]["updatedInput"]["command"],
        "echo edited"
    );
    assert!(
        sent[1].get("uuid").is_none(),
        "uuid stripped from control_* lines"
    );
    assert_eq!(r.session.state(), SessionState::Running);
    let log = payloads(&r);
    assert_eq!(
        log.iter().map(|e| e.0).collect::<Vec<_>>(),
        vec![1, 2, 3],
        "dense sequence"
    );
    assert_eq!(log[2].1, Source::Client);
    assert_eq!(log[2].2["uuid"], "u-a", "the stored echo keeps the uuid");
    r.session
        .on_line(r#"{"type":"result","subtype":"success","uuid":"x","session_id":"s"}"#);
    assert_eq!(r.session.state(), SessionState::Idle);
    let audit = std::fs::read_to_string(&r.audit_path).unwrap();
    let lines: Vec<Value> = audit
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["decision"], "allow");
    assert_eq!(lines[0]["updated_input"]["command"], "echo edited");
    assert_eq!(lines[0]["input"]["command"], "ls");
    assert_eq!(lines[0]["who"]["role"], "controller");
}

#[tokio::test]
async fn an_answer_whose_audit_record_cannot_be_written_is_refused_and_not_forwarded() {
    // Every write to /dev/full fails (ENOSPC), like a full disk.
    let mut r = rig_with_audit(None, None, Some(std::path::Path::new("/dev/full")));
    r.session.on_line(&can_use_tool("req-1"));
    drain(&mut r.stdin);
    let before = payloads(&r).len();
    assert_refused(
        &r,
        answer("req-1", "u1", "rm -rf /"),
        Fault::Internal,
        "audit log",
    );
    assert!(drain(&mut r.stdin).is_empty(), "nothing reached the agent");
    assert_eq!(payloads(&r).len(), before, "nothing stored");
    assert_eq!(r.session.summary().pending_permissions, 1, "still waiting");
}

#[tokio::test]
async fn cancelled_prompt_cannot_be_answered() {
    let mut r = rig(None, None);
    r.session.on_line(&can_use_tool("req-2"));
    r.session
        .on_line(r#"{"type":"control_cancel_request","request_id":"req-2"}"#);
    assert_eq!(r.session.summary().pending_permissions, 0);
    assert_refused(&r, answer("req-2", "u", "x"), Fault::Conflict, "cancelled");
    drain(&mut r.stdin);
    assert_eq!(payloads(&r).len(), 2);
}

#[tokio::test]
async fn push_events_follow_prompts_turns_and_exits() {
    use crate::core::notice::{Event, Resolution};
    let (push, mut rx) = crate::core::notice::PushHandle::channel(64);
    let ctx = Arc::new(SessionCtx {
        push: Some(push),
        ..SessionCtx::for_tests(Arc::new(MemoryStore::default()))
    });
    let meta = SessionMeta::new("cse_p".into(), "/home/me/project".into(), None, None, None);
    let (s, _stdin) = Session::with_test_agent(meta, ctx.clone(), 64);
    let who = controller();
    s.ingest(&who, vec![user_msg("u1")]).unwrap();
    s.on_line(&can_use_tool("r1"));
    s.on_line(&can_use_tool("r2"));
    s.ingest(&who, vec![answer("r1", "a1", "ls")]).unwrap();
    s.on_line(r#"{"type":"control_cancel_request","request_id":"r2"}"#);
    // Not a person's prompt: no notification.
    s.on_line(
        r#"{"type":"control_request","request_id":"m1","request":{"subtype":"mcp_message"}}"#,
    );
    s.on_line(r#"{"type":"result","subtype":"error_max_turns","total_cost_usd":0.5}"#);
    let mut got = Vec::new();
    while let Ok(e) = rx.try_recv() {
        assert_eq!(e.session_id, "cse_p");
        assert_eq!(e.session_label, "project");
        got.push(e.event);
    }
    assert_eq!(got.len(), 5, "{got:#?}");
    let Event::NeedsYou(p) = &got[0] else {
        panic!()
    };
    assert_eq!(
        (p.request_id.as_str(), p.tool_name.as_deref()),
        ("r1", Some("Bash"))
    );
    assert_eq!(p.input, Some(json!({"command": "ls"})));
    assert!(matches!(&got[1], Event::NeedsYou(p) if p.request_id == "r2"));
    assert!(
        matches!(&got[2], Event::Resolved { prompt, resolution: Resolution::Answered { decision, device: None }, others_pending: true }
        if prompt.request_id == "r1" && decision == "allow")
    );
    assert!(matches!(
        &got[3],
        Event::Resolved {
            resolution: Resolution::Withdrawn,
            others_pending: false,
            ..
        }
    ));
    let Event::TurnDone {
        duration,
        cost_usd,
        error,
    } = &got[4]
    else {
        panic!()
    };
    assert!(
        *duration < Duration::from_secs(5),
        "wall time since the turn started"
    );
    assert_eq!(
        (*cost_usd, error.as_deref()),
        (Some(0.5), Some("error_max_turns"))
    );

    // The agent dies with a prompt open: it is resolved, and the death reported.
    s.on_line(&can_use_tool("r3"));
    s.on_exit(ExitInfo {
        exit_code: Some(1),
        signal: None,
        stderr_tail: "boom".into(),
        at: now_rfc3339(),
        reason: None,
    });
    let _needs = rx.try_recv().unwrap();
    assert!(matches!(
        rx.try_recv().unwrap().event,
        Event::Resolved {
            resolution: Resolution::AgentExited,
            ..
        }
    ));
    assert!(matches!(
        rx.try_recv().unwrap().event,
        Event::AgentExited {
            exit_code: Some(1),
            ..
        }
    ));

    // Stopped by the relay: not news.
    let meta = SessionMeta::new(
        "cse_q".into(),
        "/tmp".into(),
        None,
        None,
        Some("Title".into()),
    );
    let s = Session::create(meta, ctx).unwrap();
    s.shutdown_agent(Duration::from_millis(1), Duration::from_millis(1))
        .await;
    s.on_exit(ExitInfo {
        exit_code: None,
        signal: Some(15),
        stderr_tail: String::new(),
        at: now_rfc3339(),
        reason: None,
    });
    assert!(rx.try_recv().is_err());
}

#[tokio::test]
async fn unanswered_prompt_is_denied_by_the_relay_after_the_timeout() {
    let mut r = rig(Some(Duration::from_millis(50)), None);
    drain(&mut r.stdin);
    r.session.on_line(&can_use_tool("slow"));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let sent = drain(&mut r.stdin);
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["type"], "control_response");
    assert_eq!(sent[0]["response"]["subtype"], "success");
    assert_eq!(sent[0]["response"]["request_id"], "slow");
    assert_eq!(sent[0]["response"]["response"]["behavior"], "deny");
    assert_eq!(sent[0]["response"]["response"]["toolUseID"], "toolu_1");
    assert!(
        sent[0]["response"]["response"]["message"]
            .as_str()
            .unwrap()
            .contains("relay denied")
    );
    let log = payloads(&r);
    assert_eq!(log.last().unwrap().1, Source::Relay);
    assert_eq!(r.session.state(), SessionState::Running);
    let err = r
        .session
        .ingest(&controller(), vec![answer("slow", "late", "x")])
        .unwrap_err();
    assert!(err.message.contains("relay denied"), "{}", err.message);
    assert!(
        std::fs::read_to_string(&r.audit_path)
            .unwrap()
            .contains("\"timeout\"")
    );
    // A form nobody fills in gets an error answer.
    r.session.on_line(
        &json!({"type":"control_request","request_id":"form","request":{"subtype":"elicitation",
            "mcp_server_name":"docs","message":"Pick"}})
        .to_string(),
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    let sent = drain(&mut r.stdin);
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["response"]["subtype"], "error");
    assert_eq!(sent[0]["response"]["request_id"], "form");
    assert!(
        sent[0]["response"]["error"]
            .as_str()
            .unwrap()
            .contains("relay denied")
    );
}

#[tokio::test]
async fn prompts_and_answers_are_routed_by_their_typed_kind() {
    let r = rig(None, None);
    let who = controller();
    // A form from an MCP server: a person must act, but it is not a permission.
    r.session.on_line(
        &json!({"type":"control_request","request_id":"e1","request":{"subtype":"elicitation",
            "mcp_server_name":"docs","message":"Pick a branch","requested_schema":{"type":"object"}}})
        .to_string(),
    );
    assert_eq!(r.session.state(), SessionState::RequiresAction);
    assert_eq!(r.session.summary().pending_permissions, 0);
    let e1 = r.session.pending_request("e1").unwrap();
    assert_eq!(e1.tool_name.as_deref(), Some("docs"));
    assert_eq!(e1.input.unwrap()["message"], "Pick a branch");
    // A permission request whose body does not decode (tool_use_id is a number) is still one the
    // CLI waits on.
    r.session.on_line(
        &json!({"type":"control_request","request_id":"p1","request":{"subtype":"can_use_tool",
            "tool_name":"Bash","input":{"command":"ls"},"tool_use_id":7}})
        .to_string(),
    );
    assert_eq!(r.session.summary().pending_permissions, 1);
    // Hook callbacks are answered by nobody here: pending (for the SDK), not a person's prompt.
    r.session.on_line(
        r#"{"type":"control_request","request_id":"h1","request":{"subtype":"hook_callback","callback_id":"c","input":{}}}"#,
    );
    assert_eq!(r.session.summary().pending_permissions, 1);
    r.session
        .ingest(
            &who,
            vec![json!({"type":"control_response","response":{"subtype":"error","request_id":"e1","error":"no form here"}})],
        )
        .unwrap();
    r.session
        .ingest(
            &who,
            vec![
                json!({"type":"control_response","response":{"subtype":"success","request_id":"p1",
                "response":{"behavior":"deny","message":"not now"}}}),
            ],
        )
        .unwrap();
    assert_eq!(r.session.summary().pending_permissions, 0);
    let audit: Vec<Value> = std::fs::read_to_string(&r.audit_path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        (
            &audit[0]["decision"],
            &audit[0]["message"],
            &audit[0]["subtype"]
        ),
        (
            &json!("error"),
            &json!("no form here"),
            &json!("elicitation")
        )
    );
    assert_eq!(
        (
            &audit[1]["decision"],
            &audit[1]["message"],
            &audit[1]["subtype"]
        ),
        (&json!("deny"), &json!("not now"), &json!("can_use_tool"))
    );
    // A client's mode change is checked from the decoded request.
    let err = r
        .session
        .ingest(
            &who,
            vec![json!({"type":"control_request","request_id":"m1","request":{"subtype":"set_permission_mode","mode":"bypassPermissions"}})],
        )
        .unwrap_err();
    assert_eq!(err.fault, Fault::Forbidden);
    assert!(err.message.starts_with("events[0]: "), "{}", err.message);
    // system/init: the model and permission mode the session shows.
    r.session.on_line(
        &json!({"type":"system","subtype":"init","cwd":"/tmp","model":"claude-opus-4-7",
            "permissionMode":"plan","tools":[],"mcp_servers":[],"slash_commands":[],"apiKeySource":"none",
            "claude_code_version":"2.1.332","output_style":"default","skills":[],"plugins":[],
            "uuid":"i1","session_id":"cli-1","future_key":1})
        .to_string(),
    );
    let summary = r.session.summary();
    assert_eq!(summary.model.as_deref(), Some("claude-opus-4-7"));
    assert_eq!(summary.permission_mode.as_deref(), Some("plan"));
}
