use super::*;
use crate::core::auth::Principal;
use crate::core::auth::Role;
use crate::core::error::Fault;
use crate::core::store::MemoryStore;
use crate::core::store::Source;
use serde_json::json;

struct Rig {
    session: Arc<Session>,
    stdin: mpsc::Receiver<Bytes>,
    store: Arc<MemoryStore>,
    audit_path: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

fn controller() -> Principal {
    Principal {
        role: Role::Controller,
        token_id: "controller".into(),
        session_scope: None,
        login_id: None,
        transcripts: true,
    }
}

fn rig(timeout: Option<Duration>, retention: Option<u64>) -> Rig {
    rig_with_audit(timeout, retention, None)
}

/// [`rig`] with the audit log at `audit_path` (default: a fresh file in the rig's tempdir).
fn rig_with_audit(
    timeout: Option<Duration>,
    retention: Option<u64>,
    audit_path: Option<&std::path::Path>,
) -> Rig {
    let dir = tempfile::tempdir().unwrap();
    let audit_path = audit_path.map_or_else(|| dir.path().join("audit.jsonl"), Into::into);
    let store = Arc::new(MemoryStore::default());
    let ctx = Arc::new(SessionCtx {
        audit: Arc::new(AuditLog::open(&audit_path).unwrap()),
        permission_timeout: timeout,
        retention_events: retention,
        ..SessionCtx::for_tests(store.clone())
    });
    let meta = SessionMeta::new("cse_t".into(), "/tmp".into(), None, None, None);
    let (session, stdin) = Session::with_test_agent(meta, ctx, 1 << 16);
    Rig {
        session,
        stdin,
        store,
        audit_path,
        _dir: dir,
    }
}

fn drain(rx: &mut mpsc::Receiver<Bytes>) -> Vec<Value> {
    let mut out = Vec::new();
    while let Ok(b) = rx.try_recv() {
        let s = std::str::from_utf8(&b).unwrap();
        assert!(
            s.ends_with('\n') && s.matches('\n').count() == 1,
            "one line per write: {s:?}"
        );
        out.push(serde_json::from_str(s).unwrap());
    }
    out
}

fn can_use_tool(rid: &str) -> String {
    json!({"type":"control_request","request_id":rid,"request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"ls"},"tool_use_id":"toolu_1"}}).to_string()
}

fn answer(rid: &str, uuid: &str, command: &str) -> Value {
    json!({"type":"control_response","response":{"subtype":"success","request_id":rid,"response":{"behavior":"allow","updatedInput":{"command":command},"toolUseID":"toolu_1"}},"uuid":uuid})
}

fn user_msg(uuid: &str) -> Value {
    json!({"type":"user","message":{"role":"user","content":"x"},"parent_tool_use_id":null,"session_id":"","uuid":uuid})
}

fn payloads(r: &Rig) -> Vec<(u64, Source, Value)> {
    r.store
        .read_after("cse_t", 0, 10_000)
        .unwrap()
        .into_iter()
        .map(|e| (e.seq, e.source, serde_json::from_str(&e.payload).unwrap()))
        .collect()
}

#[tokio::test]
async fn relay_initialize_is_sent_first_and_its_answer_kept_out_of_the_log() {
    let mut r = rig(None, None);
    let sent = drain(&mut r.stdin);
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["request"]["subtype"], "initialize");
    let rid = sent[0]["request_id"].as_str().unwrap();
    r.session.on_line(&json!({"type":"control_response","response":{"subtype":"success","request_id":rid,"response":{"models":[{"value":"m"}]}}}).to_string());
    assert_eq!(r.session.detail().initialize["models"][0]["value"], "m");
    assert!(payloads(&r).is_empty());
    // Someone else's initialize answer is an ordinary durable event.
    r.session.on_line(r#"{"type":"control_response","response":{"subtype":"success","request_id":"sdk1","response":{}}}"#);
    assert_eq!(payloads(&r).len(), 1);
}

#[tokio::test]
async fn a_full_stdin_queue_refuses_the_whole_batch() {
    let r = rig(None, None);
    let (tx, mut stdin) = mpsc::channel(3);
    r.session.attach_agent(AgentHandle {
        stdin: tx,
        control: AgentControl::detached(),
    });
    // The relay's initialize takes one place: two are left.
    let who = controller();
    let before = payloads(&r).len();
    let err = r
        .session
        .ingest(&who, vec![user_msg("a"), user_msg("b"), user_msg("c")])
        .unwrap_err();
    assert_eq!(err.fault, Fault::Unavailable);
    assert!(err.message.contains("--max-stdin-queue"), "{}", err.message);
    assert_eq!(payloads(&r).len(), before, "nothing stored");
    r.session
        .ingest(&who, vec![user_msg("a"), user_msg("b")])
        .unwrap();
    assert!(r.session.ingest(&who, vec![user_msg("c")]).is_err());
    // A retry of something already applied needs no room.
    r.session.ingest(&who, vec![user_msg("a")]).unwrap();
    assert_eq!(drain(&mut stdin).len(), 3);
    r.session.ingest(&who, vec![user_msg("c")]).unwrap();
    assert_eq!(payloads(&r).len(), before + 3);
}

#[tokio::test]
async fn an_unopened_session_holds_no_fanout_ring() {
    let r = rig(None, None);
    r.session.on_line(r#"{"type":"assistant","n":1}"#);
    assert!(!r.session.has_fanout(), "nobody subscribed yet");
    let mut sub = r.session.subscribe();
    assert!(r.session.has_fanout());
    r.session.on_line(r#"{"type":"assistant","n":2}"#);
    assert_eq!(sub.rx.try_recv().unwrap().seq, Some(2));
}

#[tokio::test]
async fn bad_batches_change_nothing() {
    let mut r = rig(None, None);
    drain(&mut r.stdin);
    let who = controller();
    let good = json!({"type":"user","message":{"role":"user","content":"a"},"parent_tool_use_id":null,"session_id":"","uuid":"u1"});
    for bad in [
        json!("str"),
        json!({"no":"type"}),
        answer("nope", "u9", "x"),
    ] {
        let err = r.session.ingest(&who, vec![good.clone(), bad]).unwrap_err();
        assert!(
            !matches!(
                err.fault,
                Fault::Internal | Fault::Upstream | Fault::Unavailable | Fault::TimedOut
            ),
            "the request is refused, not the relay failing: {err}"
        );
    }
    assert!(payloads(&r).is_empty());
    assert!(drain(&mut r.stdin).is_empty());
    let observer = Principal {
        role: Role::Observer,
        token_id: "o".into(),
        session_scope: None,
        login_id: None,
        transcripts: false,
    };
    assert_eq!(
        r.session.ingest(&observer, vec![good]).unwrap_err().fault,
        Fault::Forbidden
    );
    assert!(payloads(&r).is_empty());
}

#[tokio::test]
async fn exit_ends_the_session_and_refuses_new_messages() {
    let mut r = rig(None, None);
    r.session.on_line(&can_use_tool("req-3"));
    r.session.on_exit(ExitInfo {
        exit_code: Some(3),
        signal: None,
        stderr_tail: "boom".into(),
        at: now_rfc3339(),
        reason: None,
    });
    assert_eq!(r.session.state(), SessionState::Ended);
    let log = payloads(&r);
    let last = &log.last().unwrap();
    assert_eq!(last.1, Source::Worker, "stands in for the worker");
    assert_eq!(last.2["relay_generated"], true);
    assert_eq!(last.2["subtype"], "session_state_changed");
    assert_eq!(last.2["state"], "ended");
    assert_eq!(last.2["exit_code"], 3);
    assert_eq!(last.2["stderr_tail"], "boom");
    let user = json!({"type":"user","message":{"role":"user","content":"a"},"parent_tool_use_id":null,"session_id":""});
    assert_eq!(
        r.session
            .ingest(&controller(), vec![user])
            .unwrap_err()
            .fault,
        Fault::Gone
    );
    assert_eq!(payloads(&r).len(), log.len());
    drain(&mut r.stdin);
}

/// A fresh [`rig`] whose agent wrote `lines`: the rig and every frame a subscriber got, in order.
fn fed(lines: &[&str]) -> (Rig, Vec<Arc<Frame>>) {
    let r = rig(None, None);
    let mut sub = r.session.subscribe();
    for line in lines {
        r.session.on_line(line);
    }
    let frames = std::iter::from_fn(|| sub.rx.try_recv().ok()).collect();
    (r, frames)
}

#[tokio::test]
async fn ephemeral_frames_are_broadcast_not_stored_and_garbage_is_surfaced() {
    let (r, frames) = fed(&[
        r#"{"type":"stream_event","event":{"type":"ping"}}"#,
        r#"{"type":"system","subtype":"thinking_tokens","estimated_tokens":3}"#,
        r#"{"type":"keep_alive"}"#,
        "this is not json",
    ]);
    let seqs: Vec<_> = frames.iter().map(|f| f.seq).collect();
    assert_eq!(seqs, [None, None, Some(1)], "keep_alive dropped");
    let log = payloads(&r);
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].1, Source::Worker);
    assert_eq!(log[0].2["relay_generated"], true);
    assert_eq!(log[0].2["type"], "relay_error");
    assert_eq!(log[0].2["raw"], "this is not json");
}

/// Stream deltas are routed from their tags without being parsed into a tree: what is not JSON
/// still never reaches a subscriber, and bytes that would break an SSE data line are written anew.
#[tokio::test]
async fn delta_lines_are_checked_and_kept_whole_on_the_fast_path() {
    let exact = r#"{"type":"stream_event","event":{"n":2},"uuid":"u"}"#;
    let (r, frames) = fed(&[
        // Cut short, and a trailing garbage byte after a valid object: relay errors, stored.
        r#"{"type":"stream_event","event":{"type":"content_block_delta""#,
        r#"{"type":"stream_event","event":{}}x"#,
        // A raw carriage return between tokens is JSON whitespace, but would split an SSE data line.
        "{\"type\":\"stream_event\",\r\"event\":{\"n\":1}}",
        // Exactly as written.
        exact,
        // A type written with an escape is still a stream event.
        r#"{"type":"stream\u005fevent","event":{"n":3}}"#,
    ]);
    let seqs: Vec<_> = frames.iter().map(|f| f.seq).collect();
    assert_eq!(seqs, [Some(1), Some(2), None, None, None]);
    for f in &frames {
        let sse = std::str::from_utf8(&f.sse).unwrap();
        assert!(!sse.contains('\r'), "{sse:?}");
    }
    let data = |f: &Frame| -> Value {
        let sse = std::str::from_utf8(&f.sse).unwrap();
        let line = sse.lines().find_map(|l| l.strip_prefix("data: ")).unwrap();
        serde_json::from_str(line).unwrap()
    };
    assert_eq!(data(&frames[2])["payload"]["event"]["n"], 1);
    assert!(std::str::from_utf8(&frames[3].sse).unwrap().contains(exact));
    assert_eq!(data(&frames[4])["event_type"], "stream_event");
    let log = payloads(&r);
    assert_eq!(log.len(), 2);
    assert!(log.iter().all(|e| e.2["type"] == "relay_error"), "{log:?}");
}

mod log;
mod prompts;

#[tokio::test]
async fn summary_and_detail_keep_the_wire_shape() {
    let r = rig(None, None);
    let v = serde_json::to_value(r.session.summary()).unwrap();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "id",
            "state",
            "cwd",
            "model",
            "permission_mode",
            "title",
            "created_at",
            "last_activity_at",
            "pending_permissions",
            "exit",
            "archived",
            "last_sequence_num"
        ],
        "no CLI-only fields, no origin (the list adds it)"
    );
    assert_eq!(v["exit"], Value::Null, "exit is null while the agent runs");
    assert_eq!(v["state"], "idle");
    let d = serde_json::to_value(r.session.detail()).unwrap();
    assert_eq!(d["initialize"], Value::Null);
    assert_eq!(d["pending_requests"], json!([]));
    assert_eq!(d["id"], v["id"]);
}
