//! Web Push end to end: the `bridge-relay` binary with the demo agent sends to a push service run by
//! the test on 127.0.0.1 (`--push-endpoint-allow`; see `common/push_service.rs`), which checks the
//! VAPID JWT, decrypts each message with the subscription's private key and keeps the payload for the
//! test to assert.

use std::time::{Duration, Instant};

use crate::common::push_service::{PushService, Received, Reply, b64};
use crate::common::send_json as send;
use crate::common::*;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};

// ------------------------------------------------------------------ helpers

fn start(dir: &std::path::Path, ps: &PushService, extra: &[&str]) -> RelayProc {
    let mut o = Opts::demo(dir)
        .arg("--push-endpoint-allow")
        .arg(&ps.allow_flag());
    for a in extra {
        o = o.arg(a);
    }
    RelayProc::start(o)
}

/// A push service and a relay allowed to reach it ([`start`], with `extra`) in a fresh data
/// directory: the service, the directory (kept while the relay runs) and the relay.
async fn started(extra: &[&str]) -> (PushService, tempfile::TempDir, RelayProc) {
    let ps = PushService::start().await;
    let dir = tempfile::tempdir().unwrap();
    let relay = start(dir.path(), &ps, extra);
    (ps, dir, relay)
}

/// `POST path` with `body` as the controller: the status and the answer.
async fn post(relay: &RelayProc, path: &str, body: Value) -> (u16, Value) {
    send(relay, reqwest::Method::POST, path, TOKEN, Some(body)).await
}

async fn subscribe(relay: &RelayProc, body: Value) -> (u16, Value) {
    post(relay, "/v1/push/subscriptions", body).await
}

/// `GET path` as the controller; 200 expected: the answer.
async fn get_ok(relay: &RelayProc, path: &str) -> Value {
    let (s, v) = send(relay, reqwest::Method::GET, path, TOKEN, None).await;
    assert_eq!(s, 200, "{path}: {v}");
    v
}

async fn subscriptions(relay: &RelayProc) -> Vec<Value> {
    let v = get_ok(relay, "/v1/push/subscriptions").await;
    v["subscriptions"].as_array().unwrap().clone()
}

fn with(mut sub: Value, extra: Value) -> Value {
    for (k, v) in extra.as_object().unwrap() {
        sub[k] = v.clone();
    }
    sub
}

/// Starts a turn and returns the permission prompt frame the demo agent asks first.
async fn prompt(relay: &RelayProc, sid: &str, sse: &mut Sse, text: &str) -> Frame {
    relay.say(sid, text).await;
    sse.until_one("can_use_tool", is_can_use_tool).await
}

fn request_id(f: &Frame) -> String {
    f.payload()["request_id"].as_str().unwrap().to_owned()
}

async fn answer(relay: &RelayProc, body: Value) -> (u16, Value) {
    post(relay, "/v1/push/answer", body).await
}

// ------------------------------------------------------------------ tests

#[tokio::test]
async fn prompts_answers_and_long_turns_reach_the_device_signed_and_encrypted() {
    let (ps, _dir, relay) = started(&["--push-min-turn-secs", "0"]).await;
    let key = get_ok(&relay, "/v1/push/vapid-public-key").await;
    let key = key["key"].as_str().unwrap().to_owned();
    assert_eq!(b64(&key).len(), 65);
    let (s, created) = subscribe(&relay, with(ps.device("phone"), json!({"label": "Phone"}))).await;
    assert_eq!(s, 201, "{created}");
    // A second device that only wants turn_done of another session gets nothing here.
    let (s, _) = subscribe(
        &relay,
        with(
            ps.device("tablet"),
            json!({"events": ["turn_done"], "session_ids": ["cse_other"]}),
        ),
    )
    .await;
    assert_eq!(s, 201);

    let sid = relay.create_session().await;
    let mut sse = relay.sse(&sid, None).await;
    let ask = prompt(&relay, &sid, &mut sse, "hello push").await;
    let rid = request_id(&ask);
    let command = ask.payload()["request"]["input"]["command"]
        .as_str()
        .unwrap()
        .to_owned();

    let needs = ps
        .wait_for("needs_you", |r| r.payload["type"] == "needs_you")
        .await;
    let p = &needs.payload;
    assert_eq!(needs.device, "phone");
    assert_eq!(p["v"], 1);
    assert_eq!(p["session_id"], sid.as_str());
    assert_eq!(p["request_id"], rid.as_str());
    assert_eq!(p["tool_name"], "Bash");
    assert_eq!(p["url"], format!("/s/{sid}"));
    assert_eq!(p["answerable"], true);
    assert!(
        p["title"]
            .as_str()
            .unwrap()
            .starts_with("Claude needs you — "),
        "{p}"
    );
    assert_eq!(p["body"], format!("Bash: {command}"));
    assert!(needs.plaintext_len <= 3000);
    assert_eq!(needs.header("urgency"), "high");
    assert_eq!(needs.header("ttl"), "3600");
    let topic = needs.header("topic").to_owned();
    assert_eq!(topic.len(), 32);
    assert!(
        topic
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    );
    assert_eq!(needs.k, key, "signed with the advertised VAPID key");
    assert!(needs.claims["sub"].as_str().unwrap().starts_with("mailto:"));

    // Answered the ordinary way: every device is told it is settled.
    let r = relay.post(&sid, TOKEN, allow_as_asked(&ask)).await;
    assert_eq!(r.status(), 200);
    let resolved = ps
        .wait_for("resolved", |r| r.payload["type"] == "resolved")
        .await;
    assert_eq!(resolved.payload["request_id"], rid.as_str());
    assert_eq!(resolved.payload["body"], "Bash permission: allowed");
    assert_eq!(resolved.header("urgency"), "normal");
    assert_eq!(resolved.header("topic"), topic);
    assert!(resolved.payload.get("answerable").is_none());

    sse.until("result", is_result).await;
    let done = ps
        .wait_for("turn_done", |r| r.payload["type"] == "turn_done")
        .await;
    let body = done.payload["body"].as_str().unwrap();
    assert!(
        body.starts_with("Finished in ") && body.contains(" · $"),
        "{body}"
    );
    assert!(done.payload.get("request_id").is_none());
    assert!(
        done.payload["title"]
            .as_str()
            .unwrap()
            .starts_with("Turn finished — ")
    );

    let got = ps.received();
    assert!(
        got.iter().all(|r| r.device == "phone"),
        "the filtered device got nothing"
    );
    let types: Vec<&str> = got
        .iter()
        .map(|r| r.payload["type"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["needs_you", "resolved", "turn_done"], "in order");
    // The list shows the delivery, never the keys.
    let list = subscriptions(&relay).await;
    let phone = list.iter().find(|s| s["id"] == created["id"]).unwrap();
    assert!(phone["last_success_at"].is_string());
    assert_eq!(phone["label"], "Phone");
    assert_eq!(phone["endpoint_origin"], ps.origin.as_str());
    assert!(phone.get("session_ids").is_none());
    let tablet = list.iter().find(|s| s["id"] != created["id"]).unwrap();
    assert_eq!(tablet["session_ids"], json!(["cse_other"]));
    assert_eq!(tablet["events"], json!(["turn_done"]));
    let text = serde_json::to_string(&list).unwrap();
    assert!(
        !text.contains("p256dh") && !text.contains("\"auth\""),
        "{text}"
    );
}

#[tokio::test]
async fn allow_from_a_notification_answers_once_and_the_audit_names_the_device() {
    let (ps, dir, relay) = started(&[]).await;
    let (_, sub) = subscribe(
        &relay,
        with(ps.device("phone"), json!({"label": "Test phone"})),
    )
    .await;
    let sub_id = sub["id"].as_str().unwrap().to_owned();
    let sid = relay.create_session().await;
    let mut sse = relay.sse(&sid, None).await;
    let ask = prompt(&relay, &sid, &mut sse, "hello").await;
    let rid = request_id(&ask);
    let input = ask.payload()["request"]["input"].clone();
    ps.wait_for("needs_you", |r| r.payload["request_id"] == rid.as_str())
        .await;

    // Bad requests change nothing.
    let (s, e) = answer(&relay, json!({"session_id": sid, "request_id": rid, "decision": "allow", "subscription_id": "psub_nope"})).await;
    assert_eq!(s, 400, "{e}");
    let (s, _) = answer(
        &relay,
        json!({"session_id": sid, "request_id": rid, "decision": "maybe"}),
    )
    .await;
    assert_eq!(s, 400);
    let (s, _) = answer(
        &relay,
        json!({"session_id": "cse_nope", "request_id": rid, "decision": "allow"}),
    )
    .await;
    assert_eq!(s, 404);

    let body = json!({"session_id": sid, "request_id": rid, "decision": "allow", "subscription_id": sub_id});
    let (s, v) = answer(&relay, body.clone()).await;
    assert_eq!((s, &v), (200, &json!({"ok": true, "decision": "allow"})));
    let (s, v) = answer(&relay, body).await;
    assert_eq!(s, 409, "{v}");
    assert_eq!(v["error"]["type"], "request_not_pending");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Test phone"),
        "{v}"
    );
    sse.until("result", is_result).await;

    // Exactly one answer reached the agent, with the unedited input and no permission updates.
    let log = relay.events(&sid, 0).await;
    let answers: Vec<&Value> = log["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| {
            e["payload"]["type"] == "control_response"
                && e["payload"]["response"]["request_id"] == rid.as_str()
        })
        .collect();
    let from_client: Vec<&&Value> = answers.iter().filter(|e| e["source"] == "client").collect();
    assert_eq!(from_client.len(), 1, "{answers:#?}");
    let resp = &from_client[0]["payload"]["response"]["response"];
    assert_eq!(resp["behavior"], "allow");
    assert_eq!(resp["updatedInput"], input);
    assert_eq!(resp["toolUseID"], ask.payload()["request"]["tool_use_id"]);
    assert!(resp.get("updatedPermissions").is_none());
    // The agent replays each answer it reads (--replay-user-messages): it read exactly one.
    assert_eq!(
        answers.iter().filter(|e| e["source"] == "worker").count(),
        1,
        "{answers:#?}"
    );
    let result_text = log["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["payload"]["type"] == "user")
        .filter_map(|e| e["payload"]["message"]["content"].as_array())
        .flatten()
        .find(|b| b["type"] == "tool_result")
        .map(|b| b["content"].to_string())
        .unwrap();
    assert!(
        result_text.contains(input["command"].as_str().unwrap()),
        "{result_text}"
    );

    let entry = last_audit_entry(dir.path());
    assert_eq!(entry["request_id"], rid.as_str());
    assert_eq!(entry["decision"], "allow");
    assert_eq!(entry["who"]["role"], "controller");
    assert_eq!(
        entry["who"]["device"],
        json!({"id": sub_id, "label": "Test phone"})
    );
    let resolved = ps
        .wait_for("resolved", |r| r.payload["type"] == "resolved")
        .await;
    assert_eq!(
        resolved.payload["body"],
        "Bash permission: allowed from Test phone"
    );

    // Deny, without naming a device.
    let ask = prompt(&relay, &sid, &mut sse, "again").await;
    let rid = request_id(&ask);
    let (s, _) = answer(
        &relay,
        json!({"session_id": sid, "request_id": rid, "decision": "deny"}),
    )
    .await;
    assert_eq!(s, 200);
    sse.until("result", is_result).await;
    let log = relay.events(&sid, 0).await;
    let deny = log["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["source"] == "client" && e["payload"]["response"]["request_id"] == rid.as_str())
        .unwrap();
    let resp = &deny["payload"]["response"]["response"];
    assert_eq!(resp["behavior"], "deny");
    assert_eq!(resp["message"], "Denied from a notification");
    assert!(resp.get("interrupt").is_none());
    let entry = last_audit_entry(dir.path());
    assert_eq!(entry["decision"], "deny");
    assert!(entry["who"].get("device").is_none());
}

#[tokio::test]
async fn questions_need_the_console() {
    let (ps, _dir, relay) = started(&["--demo-scenario", "ask"]).await;
    subscribe(&relay, ps.device("phone")).await;
    let sid = relay.create_session().await;
    let mut sse = relay.sse(&sid, None).await;
    let ask = prompt(&relay, &sid, &mut sse, "ask me").await;
    assert_eq!(ask.payload()["request"]["tool_name"], "AskUserQuestion");
    let needs = ps
        .wait_for("needs_you", |r| r.payload["type"] == "needs_you")
        .await;
    assert_eq!(needs.payload["tool_name"], "AskUserQuestion");
    assert!(needs.payload.get("answerable").is_none());
    let q = ask.payload()["request"]["input"]["questions"][0]["question"]
        .as_str()
        .unwrap();
    assert!(needs.payload["body"].as_str().unwrap().starts_with(q));
    let (s, v) = answer(
        &relay,
        json!({"session_id": sid, "request_id": request_id(&ask), "decision": "allow"}),
    )
    .await;
    assert_eq!(s, 400, "{v}");
    assert!(
        v["error"]["message"].as_str().unwrap().contains("console"),
        "{v}"
    );
    assert_eq!(
        relay.session(&sid).await["pending_permissions"],
        1,
        "still waiting"
    );
}

#[tokio::test]
async fn a_gone_subscription_is_deleted_and_a_busy_service_is_retried_after_its_hint() {
    let (ps, _dir, relay) = started(&[]).await;
    let (_, gone) = subscribe(&relay, ps.device("old")).await;
    ps.script([Reply::Status(410, None)]);
    let (s, v) = send(
        &relay,
        reqwest::Method::POST,
        &format!(
            "/v1/push/subscriptions/{}/test",
            gone["id"].as_str().unwrap()
        ),
        TOKEN,
        None,
    )
    .await;
    assert_eq!(s, 502, "{v}");
    assert!(subscriptions(&relay).await.is_empty(), "410 removed it");

    // From the dispatcher too: 410 on a prompt deletes the subscription.
    subscribe(&relay, ps.device("old")).await;
    ps.script([Reply::Status(410, None)]);
    let sid = relay.create_session().await;
    let mut sse = relay.sse(&sid, None).await;
    let ask = prompt(&relay, &sid, &mut sse, "hello").await;
    ps.wait_for("the 410'd prompt", |r| {
        r.payload["request_id"] == request_id(&ask).as_str()
    })
    .await;
    let deadline = Instant::now() + T;
    while !subscriptions(&relay).await.is_empty() {
        assert!(Instant::now() < deadline, "the gone subscription stayed");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // 503 + Retry-After: 2, then 201: delivered by the second attempt, no sooner than the hint.
    let (_, sub) = subscribe(&relay, ps.device("busy")).await;
    ps.script([Reply::Status(503, Some("2"))]);
    let before = ps.paths().len();
    relay.post(&sid, TOKEN, allow_as_asked(&ask)).await;
    ps.wait_requests(before + 2).await;
    let got: Vec<Received> = ps
        .received()
        .into_iter()
        .filter(|r| r.device == "busy")
        .collect();
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].payload, got[1].payload, "the same message again");
    assert_eq!(got[1].payload["type"], "resolved");
    let gap = got[1].at - got[0].at;
    assert!(gap >= Duration::from_millis(1900), "retried after {gap:?}");
    let deadline = Instant::now() + T;
    loop {
        let list = subscriptions(&relay).await;
        let s = list.iter().find(|s| s["id"] == sub["id"]).unwrap();
        if s["last_success_at"].is_string() {
            assert!(s["last_error"].is_null());
            break;
        }
        assert!(Instant::now() < deadline, "{s}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_hanging_push_service_never_slows_a_session() {
    let (ps, _dir, relay) = started(&[]).await;
    subscribe(&relay, ps.device("stuck")).await;
    ps.script(std::iter::repeat_n(Reply::Hang, 20));
    let sid = relay.create_session().await;
    let mut sse = relay.sse(&sid, None).await;
    let t0 = Instant::now();
    let ask = prompt(&relay, &sid, &mut sse, "hello").await;
    ps.wait_requests(1).await;
    let r = relay.post(&sid, TOKEN, allow_as_asked(&ask)).await;
    assert_eq!(r.status(), 200);
    sse.until("result", is_result).await;
    let took = t0.elapsed();
    assert!(
        took < Duration::from_secs(5),
        "the turn took {took:?} with a hanging push service"
    );
    // A second turn is just as quick while the first push still hangs.
    let t1 = Instant::now();
    prompt(&relay, &sid, &mut sse, "again").await;
    assert!(t1.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn endpoints_outside_the_push_services_are_refused_and_never_contacted() {
    let (ps, _dir, relay) = started(&[]).await;
    let good = ps.device("d");
    for endpoint in [
        "http://169.254.169.254/",
        "https://evil.example/",
        "https://fcm.googleapis.com.evil.example/",
        "https://user@fcm.googleapis.com/",
        "file:///etc/passwd",
        // The allowed service, but not under the allowed prefix's scheme/host/port.
        &ps.origin.replace("http://", "https://"),
        &format!("{}@evil.example/push/d", ps.origin),
    ] {
        let (s, v) = subscribe(&relay, with(good.clone(), json!({ "endpoint": endpoint }))).await;
        assert_eq!(s, 400, "{endpoint}: {v}");
        assert_eq!(v["type"], "error");
    }
    // Bad keys: the key, its bad value, what the refusal says.
    for (key, value, says) in [
        ("p256dh", URL_SAFE_NO_PAD.encode([4u8; 65]), "p256dh"),
        ("auth", URL_SAFE_NO_PAD.encode([1u8; 15]), "16 bytes"),
    ] {
        let mut bad = good.clone();
        bad["keys"][key] = json!(value);
        let (s, v) = subscribe(&relay, bad).await;
        assert_eq!(s, 400);
        assert!(
            v["error"]["message"].as_str().unwrap().contains(says),
            "{v}"
        );
    }
    let (s, _) = subscribe(
        &relay,
        with(good.clone(), json!({"events": ["everything"]})),
    )
    .await;
    assert_eq!(s, 400);
    let (s, _) = subscribe(&relay, json!({"endpoint": good["endpoint"]})).await;
    assert_eq!(s, 400);
    assert!(subscriptions(&relay).await.is_empty());
    assert!(ps.paths().is_empty(), "nothing was sent anywhere");
}

#[tokio::test]
async fn observers_get_403_on_every_push_route() {
    let (ps, _dir, relay) = started(&[]).await;
    let (_, sub) = subscribe(&relay, ps.device("d")).await;
    let id = sub["id"].as_str().unwrap();
    let (s, minted) = send(
        &relay,
        reqwest::Method::POST,
        "/v1/observer-tokens",
        TOKEN,
        Some(json!({})),
    )
    .await;
    assert_eq!(s, 201);
    let obs = minted["token"].as_str().unwrap();
    use reqwest::Method as M;
    for (m, path, body) in [
        (M::GET, "/v1/push/vapid-public-key".to_owned(), None),
        (M::GET, "/v1/push/subscriptions".to_owned(), None),
        (
            M::POST,
            "/v1/push/subscriptions".to_owned(),
            Some(ps.device("o")),
        ),
        (M::DELETE, format!("/v1/push/subscriptions/{id}"), None),
        (M::POST, format!("/v1/push/subscriptions/{id}/test"), None),
        (
            M::POST,
            "/v1/push/answer".to_owned(),
            Some(json!({"session_id": "s", "request_id": "r", "decision": "allow"})),
        ),
    ] {
        let (s, v) = send(&relay, m.clone(), &path, obs, body).await;
        assert_eq!(s, 403, "{m} {path}: {v}");
    }
    let (s, _) = send(&relay, M::GET, "/v1/push/subscriptions", "wrong", None).await;
    assert_eq!(s, 401);
    assert_eq!(subscriptions(&relay).await.len(), 1);
    assert!(ps.paths().is_empty());
}

#[tokio::test]
async fn one_endpoint_is_one_subscription_and_the_test_push_arrives() {
    let (ps, _dir, relay) = started(&[]).await;
    let device = ps.device("d");
    let (s, a) = subscribe(&relay, with(device.clone(), json!({"label": "Old name"}))).await;
    assert_eq!(s, 201);
    let (s, b) = subscribe(
        &relay,
        with(
            device.clone(),
            json!({"label": "New name", "events": ["needs_you", "resolved"]}),
        ),
    )
    .await;
    assert_eq!(s, 200);
    assert_eq!(a["id"], b["id"]);
    let list = subscriptions(&relay).await;
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["label"], "New name");
    assert_eq!(list[0]["events"], json!(["needs_you", "resolved"]));
    assert!(
        list[0].get("session_ids").is_none(),
        "absent: every session"
    );

    let id = a["id"].as_str().unwrap();
    let test_path = format!("/v1/push/subscriptions/{id}/test");
    let (s, v) = send(&relay, reqwest::Method::POST, &test_path, TOKEN, None).await;
    assert_eq!((s, &v), (200, &json!({"delivered": true, "status": 201})));
    let got = ps.wait_for("test", |r| r.payload["type"] == "test").await;
    assert_eq!(got.payload["title"], "Bridge Console");
    assert!(
        got.payload["body"]
            .as_str()
            .unwrap()
            .starts_with("Test notification from ")
    );
    // A failing push service: 502 with its answer, recorded on the subscription.
    ps.script([Reply::Status(400, None)]);
    let (s, v) = send(&relay, reqwest::Method::POST, &test_path, TOKEN, None).await;
    assert_eq!(s, 502, "{v}");
    assert!(
        v["error"]["message"].as_str().unwrap().contains("400"),
        "{v}"
    );
    assert!(
        subscriptions(&relay).await[0]["last_error"]
            .as_str()
            .unwrap()
            .contains("400")
    );

    let path = format!("/v1/push/subscriptions/{id}");
    let (s, _) = send(&relay, reqwest::Method::DELETE, &path, TOKEN, None).await;
    assert_eq!(s, 204);
    let (s, _) = send(&relay, reqwest::Method::DELETE, &path, TOKEN, None).await;
    assert_eq!(s, 404);
    let (s, _) = send(&relay, reqwest::Method::POST, &test_path, TOKEN, None).await;
    assert_eq!(s, 404);
}

#[tokio::test]
async fn a_crashing_agent_is_reported_and_its_prompt_resolved() {
    let (ps, _dir, relay) = started(&["--demo-scenario", "crash"]).await;
    subscribe(&relay, ps.device("d")).await;
    let sid = relay.create_session().await;
    relay.say(&sid, "hello").await;
    let exited = ps
        .wait_for("agent_exited", |r| r.payload["type"] == "agent_exited")
        .await;
    let body = exited.payload["body"].as_str().unwrap();
    assert!(body.starts_with("Exited with code 3"), "{body}");
    assert!(
        exited.payload["title"]
            .as_str()
            .unwrap()
            .starts_with("Agent exited — ")
    );
    assert_eq!(exited.payload["session_id"], sid.as_str());

    // Archiving stops an agent on purpose: no agent_exited for that.
    let relay2_dir = tempfile::tempdir().unwrap();
    let relay2 = start(relay2_dir.path(), &ps, &[]);
    subscribe(&relay2, ps.device("d2")).await;
    let sid2 = relay2.create_session().await;
    let mut sse = relay2.sse(&sid2, None).await;
    let ask = prompt(&relay2, &sid2, &mut sse, "hello").await;
    let (s, _) = send(
        &relay2,
        reqwest::Method::POST,
        &format!("/v1/code/sessions/{sid2}/archive"),
        TOKEN,
        None,
    )
    .await;
    assert_eq!(s, 200);
    // The pending prompt is dropped with the agent: devices are told to close it.
    let resolved = ps
        .wait_for("resolved on exit", |r| {
            r.device == "d2" && r.payload["type"] == "resolved"
        })
        .await;
    assert_eq!(resolved.payload["request_id"], request_id(&ask).as_str());
    assert_eq!(
        resolved.payload["body"],
        "Bash permission: dropped: the agent exited"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        ps.received()
            .iter()
            .all(|r| !(r.device == "d2" && r.payload["type"] == "agent_exited"))
    );
}

/// A terminal session's prompt (issue 28) pushes `needs_you`; answered at the terminal (a later
/// `PostToolUse`), it pushes `resolved`; its `Stop` pushes `turn_done`.
#[tokio::test]
async fn a_terminal_sessions_prompt_is_pushed_and_resolved_when_the_terminal_answers() {
    use crate::terminal::{FakeTerminal, mint_hook};
    let ps = PushService::start().await;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("claude-config");
    let work = dir.path().canonicalize().unwrap();
    let relay = start(
        &dir.path().join("data"),
        &ps,
        &[
            "--push-min-turn-secs",
            "0",
            "--claude-config-dir",
            config.to_str().unwrap(),
        ],
    );
    let (s, _) = subscribe(&relay, ps.device("phone")).await;
    assert_eq!(s, 201);
    let (_, hook_token) = mint_hook(&relay).await;
    let term = FakeTerminal::new(&relay, &config, &work, &hook_token);
    term.hook("UserPromptSubmit", json!({"prompt": "go"})).await;
    let asked = json!({"tool_name": "Bash", "tool_input": {"command": "make test"}});
    let held = {
        let t = term.clone();
        let asked = asked.clone();
        tokio::spawn(async move { t.hook("PermissionRequest", asked).await })
    };
    let needs = ps
        .wait_for("needs_you", |r| r.payload["type"] == "needs_you")
        .await;
    assert_eq!(needs.payload["tool_name"], "Bash");
    assert_eq!(needs.payload["body"], "Bash: make test");
    let mut post = asked.clone();
    post["tool_response"] = json!({"stdout": "ok"});
    post["tool_use_id"] = json!("toolu_1");
    term.hook("PostToolUse", post).await;
    let resolved = ps
        .wait_for("resolved", |r| r.payload["type"] == "resolved")
        .await;
    assert_eq!(resolved.payload["request_id"], needs.payload["request_id"]);
    assert_eq!(held.await.unwrap().1, json!({}));
    term.hook(
        "Stop",
        json!({"stop_hook_active": false, "last_assistant_message": "Done."}),
    )
    .await;
    ps.wait_for("turn_done", |r| r.payload["type"] == "turn_done")
        .await;
}
