//! End-to-end tests over real HTTP: the `bridge-relay` binary on 127.0.0.1:0 driving the demo agent
//! (spawned as `<relay> demo-agent …`, i.e. through the real child-process path).

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use crate::common::*;
use serde_json::{Value, json};

#[tokio::test]
async fn full_turn_streams_stores_and_settles() {
    let dir = tempfile::tempdir().unwrap();
    let relay = RelayProc::start(Opts::demo(dir.path()));
    let sid = relay.create_session().await;
    let mut sse = relay.sse(&sid, None).await;
    assert_eq!(sse.status, 200);
    assert_eq!(sse.headers["content-type"], "text/event-stream");

    let prompt = user("hello relay");
    let r = relay.post(&sid, TOKEN, prompt.clone()).await;
    assert_eq!(r.status(), 200);
    let posted: Value = r.json().await.unwrap();
    let my_seq = posted["results"][0]["sequence_num"].as_u64().unwrap();
    let my_event_id = posted["results"][0]["event_id"]
        .as_str()
        .unwrap()
        .to_owned();

    let mut frames = sse.until("can_use_tool", is_can_use_tool).await;
    let ask = frames.last().unwrap().clone();
    assert_eq!(ask.source(), "worker");
    assert_eq!(relay.session(&sid).await["state"], "requires_action");
    assert_eq!(relay.session(&sid).await["pending_permissions"], 1);
    let req = &ask.payload()["request"];
    let answer = allow(
        ask.payload()["request_id"].as_str().unwrap(),
        req["tool_use_id"].as_str().unwrap(),
        req["input"].clone(),
    );
    assert_eq!(relay.post(&sid, TOKEN, answer).await.status(), 200);
    frames.extend(sse.until("result", is_result).await);

    // The echo of our prompt: durable, source client, same uuid, the sequence number we were given.
    let echo = frames
        .iter()
        .find(|f| is_type(f, "user") && f.source() == "client")
        .expect("client echo");
    assert_eq!(echo.id, Some(my_seq));
    assert_eq!(echo.data["event_id"], my_event_id.as_str());
    assert_eq!(echo.payload()["uuid"], prompt["uuid"]);
    // Delivery updates for it.
    assert!(
        frames
            .iter()
            .any(|f| f.event == "delivery_update" && f.data["event_id"] == my_event_id.as_str())
    );
    // Streaming deltas arrive as ephemeral frames without ids.
    let eph: Vec<&Frame> = frames
        .iter()
        .filter(|f| f.event == "ephemeral_event")
        .collect();
    assert!(
        eph.iter()
            .any(|f| f.data["payload"]["type"] == "stream_event")
    );
    assert!(eph.iter().all(|f| f.id.is_none()));
    // Everything from the agent is source worker.
    for f in frames.iter().filter(|f| is_durable(f)) {
        let want = if f.ptype() == "user"
            && f.payload()["isReplay"] != true
            && tool_result_text(f).is_none()
        {
            "client"
        } else {
            "worker"
        };
        if f.ptype() == "control_response" {
            continue; // our answer (client) and the CLI's replay of it (worker)
        }
        assert_eq!(f.source(), want, "{f:?}");
    }
    assert!(frames.iter().any(|f| is_type(f, "assistant")));
    assert!(frames.iter().any(|f| tool_result_text(f).is_some()));

    // Sequence numbers: dense from 1, each once, and the REST list agrees byte for byte.
    let ids: Vec<u64> = frames.iter().filter_map(|f| f.id).collect();
    assert_eq!(ids, (1..=ids.len() as u64).collect::<Vec<_>>());
    let list = relay.events(&sid, 0).await;
    let rest: Vec<Value> = list["events"].as_array().unwrap().clone();
    assert!(rest.len() >= ids.len());
    for f in frames.iter().filter(|f| f.id.is_some()) {
        assert_eq!(rest[f.id.unwrap() as usize - 1], f.data);
    }
    assert_eq!(list["truncated"], false);

    let s = relay.session(&sid).await;
    assert_eq!(s["state"], "idle");
    assert!(
        s["initialize"].is_object(),
        "the relay's own initialize answer is kept: {s}"
    );
    assert!(
        s["initialize"]["commands"].is_array() || s["initialize"]["models"].is_array(),
        "{s}"
    );
    let list = get_json(&relay.url("/v1/code/sessions"), TOKEN).await;
    let mine = list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["id"] == sid.as_str())
        .unwrap()
        .clone();
    for k in [
        "cwd",
        "created_at",
        "last_activity_at",
        "model",
        "title",
        "permission_mode",
    ] {
        assert!(mine.get(k).is_some(), "{k} missing in {mine}");
    }
}

#[tokio::test]
async fn permission_answered_with_edited_input_reaches_the_tool() {
    let dir = tempfile::tempdir().unwrap();
    let relay = RelayProc::start(Opts::demo(dir.path()));
    let sid = relay.create_session().await;
    let mut sse = relay.sse(&sid, None).await;
    relay.post(&sid, TOKEN, user("run it")).await;
    let ask = sse
        .until("can_use_tool", is_can_use_tool)
        .await
        .pop()
        .unwrap();
    let rid = ask.payload()["request_id"].as_str().unwrap().to_owned();
    let original = ask.payload()["request"]["input"]["command"]
        .as_str()
        .unwrap()
        .to_owned();
    let tool_use_id = ask.payload()["request"]["tool_use_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let edited = json!({"command": "echo edited-by-the-test", "description": "edited"});
    assert_eq!(
        relay
            .post(&sid, TOKEN, allow(&rid, &tool_use_id, edited))
            .await
            .status(),
        200
    );
    let frames = sse.until("result", is_result).await;
    let result_text = frames
        .iter()
        .find_map(tool_result_text)
        .expect("tool_result");
    assert!(
        result_text.contains("edited-by-the-test"),
        "tool_result: {result_text}"
    );
    assert!(
        !result_text.contains(&original) || original.contains("edited"),
        "{result_text}"
    );

    // The decision is in the audit log with the edited input and who made it.
    let audit = std::fs::read_to_string(dir.path().join("audit.jsonl")).unwrap();
    let entry: Value = serde_json::from_str(audit.lines().last().unwrap()).unwrap();
    assert_eq!(entry["request_id"], rid.as_str());
    assert_eq!(entry["decision"], "allow");
    assert_eq!(entry["updated_input"]["command"], "echo edited-by-the-test");
    assert_eq!(entry["who"]["role"], "controller");
    assert!(entry["at"].is_string());
    assert!(!audit.contains(TOKEN));
}

#[tokio::test]
async fn two_clients_race_exactly_one_answer_reaches_the_agent() {
    let dir = tempfile::tempdir().unwrap();
    let relay = RelayProc::start(Opts::demo(dir.path()));
    let sid = relay.create_session().await;
    let mut a = relay.sse(&sid, None).await;
    let mut b = relay.sse(&sid, None).await;
    relay.post(&sid, TOKEN, user("race")).await;
    let ask_a = a.until("prompt on A", is_can_use_tool).await.pop().unwrap();
    let ask_b = b.until("prompt on B", is_can_use_tool).await.pop().unwrap();
    assert_eq!(ask_a.data, ask_b.data, "both clients see the same prompt");
    let rid = ask_a.payload()["request_id"].as_str().unwrap().to_owned();
    let tuid = ask_a.payload()["request"]["tool_use_id"]
        .as_str()
        .unwrap()
        .to_owned();

    let (ra, rb) = tokio::join!(
        relay.post(
            &sid,
            TOKEN,
            allow(&rid, &tuid, json!({"command": "echo from-client-a"}))
        ),
        relay.post(
            &sid,
            TOKEN,
            allow(&rid, &tuid, json!({"command": "echo from-client-b"}))
        ),
    );
    let (sa, sb) = (ra.status().as_u16(), rb.status().as_u16());
    let mut statuses = [sa, sb];
    statuses.sort_unstable();
    assert_eq!(statuses, [200, 409], "exactly one wins");
    let loser = if sa == 409 { ra } else { rb };
    let err: Value = loser.json().await.unwrap();
    assert_eq!(err["error"]["type"], "request_not_pending");
    assert!(err["error"]["message"].as_str().unwrap().contains(&rid));
    let winner = if sa == 200 {
        "from-client-a"
    } else {
        "from-client-b"
    };

    let frames = a.until("result", is_result).await;
    let result = frames.iter().find_map(tool_result_text).unwrap();
    assert!(result.contains(winner), "{result}");
    // One answer stored (client echo) and one replayed by the agent: the agent saw exactly one.
    let answers: Vec<&Frame> = frames
        .iter()
        .filter(|f| {
            is_type(f, "control_response") && f.payload()["response"]["request_id"] == rid.as_str()
        })
        .collect();
    assert_eq!(
        answers.iter().filter(|f| f.source() == "client").count(),
        1,
        "{answers:#?}"
    );
    assert!(answers.iter().filter(|f| f.source() == "worker").count() <= 1);
    // B sees the settling answer too.
    let frames_b = b.until("result on B", is_result).await;
    assert!(
        frames_b
            .iter()
            .any(|f| is_type(f, "control_response") && f.source() == "client")
    );
}

#[tokio::test]
async fn observer_reads_but_every_write_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let relay = RelayProc::start(Opts::demo(dir.path()));
    let sid = relay.create_session().await;
    let other = relay.create_session().await;
    let c = http();
    let minted = relay
        .mint_observer(json!({"session_id": sid, "expires_in_secs": 3600}))
        .await;
    let obs = minted["token"].as_str().unwrap().to_owned();
    assert!(
        minted["console_url"]
            .as_str()
            .unwrap()
            .contains(&format!("#login={obs}"))
    );
    let me = get_json(&relay.url("/v1/me"), &obs).await;
    assert_eq!(me, json!({"role": "observer", "session_id": sid}));

    // Reads work.
    let list = get_json(&relay.url("/v1/code/sessions"), &obs).await;
    assert_eq!(
        list["sessions"].as_array().unwrap().len(),
        1,
        "scoped to one session"
    );
    let mut sse = Sse::connect(
        &relay.url(&format!("/v1/code/sessions/{sid}/events/stream")),
        &obs,
        None,
    )
    .await;
    assert_eq!(sse.status, 200);
    let before = relay.session(&sid).await["last_sequence_num"].clone();

    // Writes don't.
    let s = relay.post(&sid, &obs, user("let me in")).await;
    assert_eq!(s.status(), 403);
    let body: Value = s.json().await.unwrap();
    assert_eq!(body["error"]["type"], "permission_error");
    let checks = [
        c.post(relay.url("/v1/code/sessions"))
            .bearer_auth(&obs)
            .json(&json!({}))
            .send()
            .await
            .unwrap()
            .status(),
        c.post(relay.url(&format!("/v1/code/sessions/{sid}/archive")))
            .bearer_auth(&obs)
            .send()
            .await
            .unwrap()
            .status(),
        c.post(relay.url("/v1/observer-tokens"))
            .bearer_auth(&obs)
            .json(&json!({}))
            .send()
            .await
            .unwrap()
            .status(),
    ];
    assert!(checks.iter().all(|s| s.as_u16() == 403), "{checks:?}");
    // Other sessions are out of scope.
    let r = c
        .get(relay.url(&format!("/v1/code/sessions/{other}/events/stream")))
        .bearer_auth(&obs)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    assert_eq!(
        relay.session(&sid).await["last_sequence_num"],
        before,
        "nothing was written"
    );
    assert!(
        sse.next(Duration::from_millis(300)).await.is_none(),
        "no event from refused writes"
    );

    // Revocation takes effect at once.
    let id = minted["id"].as_str().unwrap();
    let r = c
        .delete(relay.url(&format!("/v1/observer-tokens/{id}")))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    let r = c
        .get(relay.url("/v1/code/sessions"))
        .bearer_auth(&obs)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
}

#[tokio::test]
async fn resume_after_a_dropped_stream_loses_and_repeats_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let relay = RelayProc::start(Opts::demo(dir.path()));
    let sid = relay.create_session().await;
    let mut sse = relay.sse(&sid, None).await;
    relay.post(&sid, TOKEN, user("first")).await;
    let first = sse.until("can_use_tool", is_can_use_tool).await;
    let ask = first.last().unwrap().clone();
    // Keep only part of what arrived: drop the stream after the second durable frame.
    let seen: Vec<u64> = first.iter().filter_map(|f| f.id).take(2).collect();
    let cursor = *seen.last().unwrap();
    drop(sse);

    // While nobody listens: answer, let the turn finish, start another turn.
    let req = &ask.payload()["request"];
    relay
        .post(
            &sid,
            TOKEN,
            allow(
                ask.payload()["request_id"].as_str().unwrap(),
                req["tool_use_id"].as_str().unwrap(),
                req["input"].clone(),
            ),
        )
        .await;
    let deadline = Instant::now() + T;
    while relay.session(&sid).await["state"] != "idle" {
        assert!(Instant::now() < deadline, "turn did not finish");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let last = relay.session(&sid).await["last_sequence_num"]
        .as_u64()
        .unwrap();

    // Resume with Last-Event-ID: strictly after the cursor, each once, up to the end.
    let mut resumed = relay.sse(&sid, Some(cursor)).await;
    let frames = resumed
        .until("replay to the end", |f| f.id == Some(last))
        .await;
    let ids: Vec<u64> = frames.iter().filter_map(|f| f.id).collect();
    assert_eq!(ids, ((cursor + 1)..=last).collect::<Vec<_>>());
    let all: BTreeSet<u64> = seen.iter().chain(ids.iter()).copied().collect();
    assert_eq!(all.len(), seen.len() + ids.len(), "no repeats");
    assert_eq!(all, (1..=last).collect::<BTreeSet<u64>>(), "no gaps");
    assert!(!frames.iter().any(|f| f.event == "catch_up_truncated"));

    // Live frames continue after the replay, and ?from_sequence_num works the same way.
    relay.post(&sid, TOKEN, user("second")).await;
    let live = resumed.until("next prompt", is_can_use_tool).await;
    assert_eq!(live.iter().filter_map(|f| f.id).next(), Some(last + 1));
    let mut q = Sse::connect(
        &relay.url(&format!(
            "/v1/code/sessions/{sid}/events/stream?from_sequence_num={last}"
        )),
        TOKEN,
        None,
    )
    .await;
    let f = q
        .until("first durable", |f| f.id.is_some())
        .await
        .pop()
        .unwrap();
    assert_eq!(f.id, Some(last + 1));
}

#[tokio::test]
async fn retention_reports_catch_up_truncated() {
    let dir = tempfile::tempdir().unwrap();
    let relay = RelayProc::start(Opts::demo(dir.path()).arg("--retention-events").arg("5"));
    let sid = relay.create_session().await;
    let mut sse = relay.sse(&sid, None).await;
    relay.post(&sid, TOKEN, user("x")).await;
    let ask = sse
        .until("can_use_tool", is_can_use_tool)
        .await
        .pop()
        .unwrap();
    let req = &ask.payload()["request"];
    relay
        .post(
            &sid,
            TOKEN,
            allow(
                ask.payload()["request_id"].as_str().unwrap(),
                req["tool_use_id"].as_str().unwrap(),
                req["input"].clone(),
            ),
        )
        .await;
    sse.until("result", is_result).await;
    let list = relay.events(&sid, 0).await;
    assert_eq!(list["truncated"], true);
    let mut old = relay.sse(&sid, Some(1)).await;
    let f = old.next(T).await.unwrap();
    assert_eq!(f.event, "catch_up_truncated");
    assert_eq!(f.data, json!({}));
    let next = old.next(T).await.unwrap();
    assert!(next.id.unwrap() > 2);
}

#[tokio::test]
async fn relay_restarted_on_the_same_data_dir_keeps_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let mut relay = RelayProc::start(Opts::demo(dir.path()));
    let sid = relay.create_session().await;
    let mut sse = relay.sse(&sid, None).await;
    relay.post(&sid, TOKEN, user("remember me")).await;
    sse.until("can_use_tool", is_can_use_tool).await;
    let before = relay.events(&sid, 0).await["events"]
        .as_array()
        .unwrap()
        .clone();
    assert!(before.len() >= 3);
    relay.kill();

    let relay = RelayProc::start(Opts::demo(dir.path()));
    let s = relay.session(&sid).await;
    assert_eq!(s["state"], "ended", "its agent process is gone: {s}");
    let after = relay.events(&sid, 0).await["events"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(
        &after[..before.len()],
        &before[..],
        "nothing lost, nothing changed"
    );
    let ended = &after[before.len()];
    assert_eq!(ended["sequence_num"], before.len() as u64 + 1);
    // Stands in for the worker (the SDK drops non-worker system events), marked as relay-made.
    assert_eq!(ended["source"], "worker");
    assert_eq!(ended["payload"]["relay_generated"], true);
    assert_eq!(ended["payload"]["subtype"], "session_state_changed");
    assert_eq!(ended["payload"]["state"], "ended");
    // A client resuming where it was gets exactly the rest, then the response ends.
    let mut sse = relay.sse(&sid, Some(before.len() as u64)).await;
    let f = sse.until("ended", |f| f.id.is_some()).await.pop().unwrap();
    assert_eq!(f.data, *ended);
    sse.expect_end(Duration::from_secs(5)).await;
    // Reconnecting at the end of an ended session's log is final for the SDK: 404 session_ended.
    let last = ended["sequence_num"].as_u64().unwrap();
    let r = http()
        .get(relay.url(&format!("/v1/code/sessions/{sid}/events/stream")))
        .bearer_auth(TOKEN)
        .header("last-event-id", last.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["type"], "error");
    assert_eq!(body["error"]["type"], "session_ended");
    let r = http()
        .get(relay.url(&format!(
            "/v1/code/sessions/{sid}/events/stream?from_sequence_num={}",
            last + 5
        )))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    // A cursor past the end names events this log never had: refused, never taken as "the end".
    assert_eq!(r.status(), 400, "a cursor past the end is refused");
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["type"], "cursor_beyond_end");
    // A fresh load (cursor 0) still gets the whole transcript, then the end.
    let mut full = relay.sse(&sid, None).await;
    assert_eq!(full.status, 200);
    let mut got = Vec::new();
    while let Some(f) = full.next(Duration::from_secs(5)).await {
        got.push(f.data);
    }
    assert!(
        full.ended,
        "the replay of an ended session ends the response"
    );
    assert_eq!(got, after, "every event, in order, exactly once");
    // The ended session refuses messages; new sessions work.
    let r = relay.post(&sid, TOKEN, user("anyone?")).await;
    assert_eq!(r.status(), 410);
    let fresh = relay.create_session().await;
    assert_ne!(fresh, sid);
}

#[tokio::test]
async fn agent_crash_is_surfaced_with_exit_status_and_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("fake-claude.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\necho 'this is not json'\necho 'fatal: the fake claude gave up' >&2\nexit 3\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let relay = RelayProc::start(Opts {
        args: vec!["--claude".into(), script.display().to_string()],
        env: vec![],
        data_dir: dir.path(),
        static_dir: None,
        token: Some(TOKEN),
        start_dir: None,
    });
    let started = Instant::now();
    let sid = relay.create_session().await;
    let mut sse = relay.sse(&sid, None).await;
    let frames = sse
        .until("ended", |f| {
            is_type(f, "system") && f.payload()["state"] == "ended"
        })
        .await;
    let elapsed = started.elapsed();
    let err = frames
        .iter()
        .find(|f| is_type(f, "relay_error"))
        .expect("relay_error for the bad line");
    assert_eq!(err.source(), "worker");
    assert_eq!(err.payload()["relay_generated"], true);
    assert_eq!(err.payload()["raw"], "this is not json");
    let ended = frames.last().unwrap();
    assert_eq!(ended.source(), "worker");
    assert_eq!(ended.payload()["relay_generated"], true);
    assert_eq!(ended.payload()["exit_code"], 3);
    // Nothing follows the exit event: a live subscriber's response ends after it.
    sse.expect_end(Duration::from_secs(5)).await;
    assert!(
        ended.payload()["stderr_tail"]
            .as_str()
            .unwrap()
            .contains("fatal: the fake claude gave up")
    );
    assert!(
        elapsed < Duration::from_secs(3),
        "reported after {elapsed:?}"
    );
    let s = relay.session(&sid).await;
    assert_eq!(s["state"], "ended");
    assert_eq!(s["exit"]["exit_code"], 3);
    let r = relay.post(&sid, TOKEN, user("still there?")).await;
    assert_eq!(r.status(), 410);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["type"], "session_ended");
}

#[tokio::test]
async fn demo_crash_mid_turn_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let relay = RelayProc::start(Opts::demo(dir.path()).env("BRIDGE_DEMO_SCENARIO", "crash"));
    let sid = relay.create_session().await;
    let mut sse = relay.sse(&sid, None).await;
    relay.post(&sid, TOKEN, user("go")).await;
    let frames = sse
        .until("ended", |f| {
            is_type(f, "system") && f.payload()["state"] == "ended"
        })
        .await;
    let ended = frames.last().unwrap();
    assert_eq!(ended.payload()["exit_code"], 3);
    assert!(
        ended.payload()["stderr_tail"]
            .as_str()
            .unwrap()
            .contains("simulated crash")
    );
}

#[tokio::test]
async fn auth_host_origin_and_cors() {
    let dir = tempfile::tempdir().unwrap();
    let relay = RelayProc::start(
        Opts::demo(dir.path())
            .arg("--allowed-origin")
            .arg("http://console.example:8080"),
    );
    let c = http();
    let url = relay.url("/v1/code/sessions");
    // No token / bad token → 401 JSON.
    let r = c.get(&url).send().await.unwrap();
    assert_eq!(r.status(), 401);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["type"], "authentication_error");
    assert_eq!(
        c.get(&url)
            .bearer_auth("wrong")
            .send()
            .await
            .unwrap()
            .status(),
        401
    );
    // With a good token: the status for a Host and an Origin header (None: not sent).
    let status = |host: Option<String>, origin: Option<String>| {
        let mut req = c.get(&url).bearer_auth(TOKEN);
        if let Some(h) = host {
            req = req.header("host", h);
        }
        if let Some(o) = origin {
            req = req.header("origin", o);
        }
        async move { req.send().await.unwrap().status().as_u16() }
    };
    let some = |s: &str| Some(s.to_owned());
    // Bad Origin → 403, even with a good token; bad Host → 403.
    assert_eq!(status(None, some("http://evil.example")).await, 403);
    assert_eq!(status(some("evil.example"), None).await, 403);
    // Same origin and localhost:PORT are fine.
    let same = format!("http://{}", relay.addr);
    assert_eq!(status(None, Some(same.clone())).await, 200);
    let lh = format!("localhost:{}", relay.addr.port());
    assert_eq!(status(Some(lh), None).await, 200);
    // A local reverse proxy's portless loopback Host is fine; its Origin is not same-origin.
    assert_eq!(status(some("127.0.0.1"), None).await, 200);
    assert_eq!(
        status(some("127.0.0.1"), some("http://127.0.0.1")).await,
        403
    );
    // CORS only for the configured origin.
    let pre = c
        .request(reqwest::Method::OPTIONS, &url)
        .header("origin", "http://console.example:8080")
        .header("access-control-request-method", "POST")
        .header(
            "access-control-request-headers",
            "authorization, content-type",
        )
        .send()
        .await
        .unwrap();
    assert!(pre.status().is_success());
    assert_eq!(
        pre.headers()["access-control-allow-origin"],
        "http://console.example:8080"
    );
    assert!(
        pre.headers()["access-control-allow-headers"]
            .to_str()
            .unwrap()
            .contains("last-event-id")
    );
    let r = c
        .get(&url)
        .bearer_auth(TOKEN)
        .header("origin", "http://console.example:8080")
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["access-control-expose-headers"], "Retry-After");
    let r = c
        .get(&url)
        .bearer_auth(TOKEN)
        .header("origin", &same)
        .send()
        .await
        .unwrap();
    assert!(r.headers().get("access-control-allow-origin").is_none());

    // Login: the token becomes an HttpOnly SameSite=Strict cookie plus a login secret; neither
    // alone authenticates. The printed link carries a one-time code, never the token.
    assert!(!relay.console_url.contains(TOKEN), "{}", relay.console_url);
    let code = relay
        .console_url
        .split("#login=")
        .nth(1)
        .unwrap()
        .to_owned();
    let r = c
        .post(relay.url("/v1/auth/login"))
        .json(&json!({"token": code}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "the printed code logs in once");
    let r = c
        .post(relay.url("/v1/auth/login"))
        .json(&json!({"token": code}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401, "and only once");
    assert_eq!(
        c.post(relay.url("/v1/auth/login"))
            .json(&json!({"token": "nope"}))
            .send()
            .await
            .unwrap()
            .status(),
        401
    );
    let r = c
        .post(relay.url("/v1/auth/login"))
        .json(&json!({"token": TOKEN}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let set = r.headers()["set-cookie"].to_str().unwrap().to_owned();
    assert!(
        set.contains("HttpOnly") && set.contains("SameSite=Strict"),
        "{set}"
    );
    assert!(!set.contains(TOKEN), "the cookie is not the token");
    let cookie = set.split(';').next().unwrap().to_owned();
    let login: Value = r.json().await.unwrap();
    let secret = login["login_secret"].as_str().unwrap().to_owned();
    assert!(!cookie.contains(&secret));
    // A replayed cookie (another local server received it) without the secret: 401.
    assert_eq!(
        c.get(relay.url("/v1/me"))
            .header("cookie", &cookie)
            .send()
            .await
            .unwrap()
            .status(),
        401
    );
    let me: Value = c
        .get(relay.url("/v1/me"))
        .header("cookie", &cookie)
        .header("x-bridge-login", &secret)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(me["role"], "controller");
    let r = c
        .post(relay.url("/v1/auth/logout"))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    assert_eq!(
        c.get(relay.url("/v1/me"))
            .header("cookie", &cookie)
            .header("x-bridge-login", &secret)
            .send()
            .await
            .unwrap()
            .status(),
        401
    );

    // Tokens never reach the log, and only a hash is on disk.
    assert!(!relay.stderr_text().contains(TOKEN));
    let db = std::fs::read(dir.path().join("relay.db")).unwrap();
    assert!(!db.windows(TOKEN.len()).any(|w| w == TOKEN.as_bytes()));
}

#[tokio::test]
async fn bad_input_gets_json_4xx_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let relay = RelayProc::start(Opts::demo(dir.path()).arg("--max-body-bytes").arg("4096"));
    let sid = relay.create_session().await;
    let c = http();
    let send = |body: String| {
        c.post(relay.url(&format!("/v1/code/sessions/{sid}/events")))
            .bearer_auth(TOKEN)
            .header("content-type", "application/json")
            .body(body)
            .send()
    };
    let before = relay.session(&sid).await["last_sequence_num"].clone();
    let cases: Vec<(String, u16)> = vec![
        ("{not json".into(), 400),
        ("{\"events\": 3}".into(), 400),
        (json!({"events":[{"payload":{"no_type":1}}]}).to_string(), 400),
        (json!({"events":[{"payload":{"type":"user","message":"not an object"}}]}).to_string(), 400),
        (json!({"events":[{"payload":{"type":"control_response","response":{"subtype":"success","request_id":"never-asked"}}}]}).to_string(), 409),
        (json!({"events":[{"payload":user(&"x".repeat(5000))}]}).to_string(), 413),
    ];
    for (body, want) in cases {
        let r = send(body.clone()).await.unwrap();
        assert_eq!(r.status().as_u16(), want, "{body:.80}");
        let v: Value = r.json().await.unwrap();
        assert!(
            v["error"]["type"].is_string() && v["error"]["message"].is_string(),
            "{v}"
        );
    }
    assert_eq!(relay.session(&sid).await["last_sequence_num"], before);
    let r = relay.post("cse_nope", TOKEN, user("x")).await;
    assert_eq!(r.status(), 404);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["error"]["type"], "not_found_error");
    let r = c
        .get(relay.url("/v1/nope"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    // Retrying the same uuid is idempotent.
    let p = user("once");
    let a: Value = relay
        .post(&sid, TOKEN, p.clone())
        .await
        .json()
        .await
        .unwrap();
    let b: Value = relay.post(&sid, TOKEN, p).await.json().await.unwrap();
    assert_eq!(a, b);
}

#[tokio::test]
async fn permission_timeout_makes_the_relay_deny() {
    let dir = tempfile::tempdir().unwrap();
    let relay = RelayProc::start(
        Opts::demo(dir.path())
            .arg("--permission-timeout-secs")
            .arg("1"),
    );
    let sid = relay.create_session().await;
    let mut sse = relay.sse(&sid, None).await;
    relay.post(&sid, TOKEN, user("nobody answers")).await;
    let frames = sse.until("result", is_result).await;
    let deny = frames
        .iter()
        .find(|f| is_type(f, "control_response") && f.source() == "relay")
        .expect("relay deny");
    assert_eq!(deny.payload()["response"]["response"]["behavior"], "deny");
    let text = frames.iter().find_map(tool_result_text).unwrap();
    assert!(text.contains("relay denied"), "{text}");
    let audit = std::fs::read_to_string(dir.path().join("audit.jsonl")).unwrap();
    assert!(audit.contains("\"role\":\"relay\""));
}

#[tokio::test]
async fn sse_keepalive_comments_flow() {
    let dir = tempfile::tempdir().unwrap();
    let relay = RelayProc::start(Opts::demo(dir.path()).arg("--sse-keepalive-secs").arg("1"));
    let sid = relay.create_session().await;
    let mut sse = relay.sse(&sid, None).await;
    assert!(sse.next(Duration::from_millis(2500)).await.is_none());
    assert!(
        sse.comments.iter().filter(|c| *c == "keepalive").count() >= 2,
        "{:?}",
        sse.comments
    );
}

#[tokio::test]
async fn static_console_with_spa_fallback() {
    let dir = tempfile::tempdir().unwrap();
    let stat = dir.path().join("dist");
    std::fs::create_dir_all(&stat).unwrap();
    std::fs::write(
        stat.join("index.html"),
        "<!doctype html><title>console</title>",
    )
    .unwrap();
    std::fs::write(stat.join("app_bg.wasm"), b"\0asm\x01\0\0\0").unwrap();
    let relay = RelayProc::start(Opts {
        static_dir: Some(&stat),
        ..Opts::demo(dir.path())
    });
    let c = http();
    let r = c.get(relay.url("/")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.text().await.unwrap().contains("console"));
    let r = c.get(relay.url("/s/cse_whatever")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert!(
        r.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html")
    );
    let r = c.get(relay.url("/app_bg.wasm")).send().await.unwrap();
    assert_eq!(r.headers()["content-type"], "application/wasm");
    let r = c
        .get(relay.url("/v1/not-an-endpoint"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    assert!(
        r.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/json")
    );
}

/// The body of a static-file response, decoded by its `Content-Encoding`.
async fn decoded(r: reqwest::Response) -> (Option<String>, Vec<u8>) {
    let coding = r
        .headers()
        .get("content-encoding")
        .map(|v| v.to_str().unwrap().to_owned());
    let body = r.bytes().await.unwrap().to_vec();
    let mut out = Vec::new();
    match coding.as_deref() {
        Some("br") => brotli::BrotliDecompress(&mut &body[..], &mut out).unwrap(),
        Some("gzip") => {
            std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&body[..]), &mut out)
                .unwrap();
        }
        None => out = body,
        Some(other) => panic!("unexpected coding {other}"),
    }
    (coding, out)
}

#[tokio::test]
async fn console_files_go_out_compressed_and_a_rebuild_is_served_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let stat = dir.path().join("dist");
    std::fs::create_dir_all(&stat).unwrap();
    std::fs::write(
        stat.join("index.html"),
        "<!doctype html><title>console</title>",
    )
    .unwrap();
    let wasm: Vec<u8> = (0..60_000u32)
        .flat_map(|i| (i % 977).to_le_bytes())
        .collect();
    std::fs::write(stat.join("app_bg.wasm"), &wasm).unwrap();
    let relay = RelayProc::start(Opts {
        static_dir: Some(&stat),
        ..Opts::demo(dir.path())
    });
    let c = http();
    let get = |enc: &'static str| {
        let mut rq = c.get(relay.url("/app_bg.wasm"));
        if !enc.is_empty() {
            rq = rq.header("accept-encoding", enc);
        }
        rq.send()
    };
    // The copies are made at startup, off the request path.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let r = loop {
        let r = get("gzip, deflate, br").await.unwrap();
        if r.headers().get("content-encoding").is_some() {
            break r;
        }
        assert!(std::time::Instant::now() < deadline, "never compressed");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "application/wasm");
    assert_eq!(r.headers()["vary"], "accept-encoding");
    assert_eq!(r.headers()["cache-control"], "no-cache");
    let etag = r.headers()["etag"].to_str().unwrap().to_owned();
    let sent = r.headers()["content-length"]
        .to_str()
        .unwrap()
        .parse::<usize>()
        .unwrap();
    assert!(sent < wasm.len() / 4, "{sent} of {} bytes", wasm.len());
    assert_eq!(decoded(r).await, (Some("br".into()), wasm.clone()));
    // gzip when Brotli is not accepted; the file as is when nothing is.
    assert_eq!(
        decoded(get("gzip").await.unwrap()).await,
        (Some("gzip".into()), wasm.clone())
    );
    assert_eq!(
        decoded(get("br;q=0, gzip").await.unwrap())
            .await
            .0
            .as_deref(),
        Some("gzip")
    );
    assert_eq!(decoded(get("").await.unwrap()).await, (None, wasm.clone()));
    // Revalidation is a 304.
    let r = c
        .get(relay.url("/app_bg.wasm"))
        .header("accept-encoding", "br")
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 304);
    assert!(r.bytes().await.unwrap().is_empty());
    // The relay serves the console it read at start: a file rebuilt under it changes nothing
    // until the relay starts again (an upgrade), then the new build goes out, compressed.
    let rebuilt: Vec<u8> = (0..70_000u32)
        .flat_map(|i| (i % 13).to_le_bytes())
        .collect();
    std::fs::write(stat.join("app_bg.wasm"), &rebuilt).unwrap();
    let (_, body) = decoded(get("br").await.unwrap()).await;
    assert_eq!(
        body, wasm,
        "the copy read at start, not the file changed under it"
    );
    let data2 = tempfile::tempdir().unwrap();
    let again = RelayProc::start(Opts {
        static_dir: Some(&stat),
        ..Opts::demo(data2.path())
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let r = c
            .get(again.url("/app_bg.wasm"))
            .header("accept-encoding", "br")
            .send()
            .await
            .unwrap();
        let (coding, body) = decoded(r).await;
        assert_eq!(body, rebuilt, "the new build after a restart");
        if coding.is_some() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the new file is never compressed"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    // Small files and the SPA fallback are served as they are.
    let r = c
        .get(relay.url("/s/cse_x"))
        .header("accept-encoding", "br")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.headers().get("content-encoding").is_none());
    assert!(r.text().await.unwrap().contains("console"));
}

#[tokio::test]
async fn an_mcp_elicitation_is_pending_until_answered_and_audited_with_its_values() {
    let dir = tempfile::tempdir().unwrap();
    let relay = RelayProc::start(Opts::demo(dir.path()).arg("--demo-scenario").arg("mcp"));
    let sid = relay.create_session().await;
    let mut sse = relay.sse(&sid, None).await;
    relay.post(&sid, TOKEN, user("ship it")).await;
    let ask = sse
        .until("can_use_tool", is_can_use_tool)
        .await
        .pop()
        .unwrap();
    let rid = ask.payload()["request_id"].as_str().unwrap().to_owned();
    let tool_use_id = ask.payload()["request"]["tool_use_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let input = ask.payload()["request"]["input"].clone();
    relay
        .post(&sid, TOKEN, allow(&rid, &tool_use_id, input))
        .await;
    let form = sse
        .until("elicitation", |f| {
            f.payload()["request"]["subtype"] == "elicitation"
        })
        .await
        .pop()
        .unwrap();
    let form_id = form.payload()["request_id"].as_str().unwrap().to_owned();
    // Waiting for a person, named by its MCP server.
    let detail = get_json(&relay.url(&format!("/v1/code/sessions/{sid}")), TOKEN).await;
    let pending = &detail["pending_requests"][0];
    assert_eq!(pending["request_id"], form_id.as_str(), "{detail}");
    assert_eq!(pending["subtype"], "elicitation");
    assert_eq!(pending["tool_name"], "deploy");
    let content = json!({"environment": "staging", "replicas": 2});
    let answer = json!({"type": "control_response", "response": {"subtype": "success",
        "request_id": form_id, "response": {"action": "accept", "content": content}}});
    assert_eq!(relay.post(&sid, TOKEN, answer).await.status(), 200);
    let frames = sse.until("result", is_result).await;
    let result_text = frames
        .iter()
        .find_map(tool_result_text)
        .expect("tool_result");
    assert!(result_text.contains("\"staging\""), "{result_text}");
    let audit = std::fs::read_to_string(dir.path().join("audit.jsonl")).unwrap();
    let entry: Value = serde_json::from_str(audit.lines().last().unwrap()).unwrap();
    assert_eq!(entry["request_id"], form_id.as_str());
    assert_eq!(entry["subtype"], "elicitation");
    assert_eq!(entry["tool_name"], "deploy");
    assert_eq!(entry["decision"], "accept");
    assert_eq!(entry["content"], content);
    assert!(
        entry["input"]["message"]
            .as_str()
            .unwrap()
            .contains("deployment")
    );
    assert_eq!(
        entry["input"]["requested_schema"]["required"][0],
        "environment"
    );
}

#[tokio::test]
async fn archive_stops_the_agent_and_hides_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let relay = RelayProc::start(Opts::demo(dir.path()));
    let sid = relay.create_session().await;
    let mut sse = relay.sse(&sid, None).await;
    let r = http()
        .post(relay.url(&format!("/v1/code/sessions/{sid}/archive")))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let frames = sse
        .until("ended", |f| {
            is_type(f, "system") && f.payload()["state"] == "ended"
        })
        .await;
    assert_eq!(
        frames.last().unwrap().payload()["exit_code"],
        0,
        "closing stdin ends the agent cleanly"
    );
    let list = get_json(&relay.url("/v1/code/sessions"), TOKEN).await;
    assert!(
        list["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["id"] != sid.as_str())
    );
    let all = get_json(&relay.url("/v1/code/sessions?include_archived=1"), TOKEN).await;
    assert!(
        all["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["id"] == sid.as_str())
    );
}

#[tokio::test]
async fn single_session_mode_exits_when_its_session_ends() {
    let dir = tempfile::tempdir().unwrap();
    let mut relay = RelayProc::start(
        Opts::demo(dir.path())
            .arg("--spawn-mode")
            .arg("single-session")
            .env("BRIDGE_DEMO_SCENARIO", "crash"),
    );
    let list = get_json(&relay.url("/v1/code/sessions"), TOKEN).await;
    let sessions = list["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 1);
    let sid = sessions[0]["id"].as_str().unwrap().to_owned();
    let r = http()
        .post(relay.url("/v1/code/sessions"))
        .bearer_auth(TOKEN)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 409);
    relay.post(&sid, TOKEN, user("crash now")).await;
    let status = relay
        .wait_exit(Duration::from_secs(10))
        .expect("relay exits after its session");
    assert!(status.success(), "{status:?}");
}

mod ws {
    use super::*;
    use futures::{SinkExt as _, StreamExt as _};
    use tokio_tungstenite::tungstenite::Message;
    use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;

    type Ws = tokio_tungstenite::WebSocketStream<
        tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
    >;

    async fn connect(relay: &RelayProc, sid: &str, query: &str, token: Option<&str>) -> Ws {
        let url = format!("ws://{}/v1/code/sessions/{sid}/ws{query}", relay.addr);
        let mut req = url.into_client_request().unwrap();
        if let Some(t) = token {
            req.headers_mut()
                .insert("authorization", format!("Bearer {t}").parse().unwrap());
        }
        tokio_tungstenite::connect_async(req)
            .await
            .expect("ws connect")
            .0
    }

    /// Next text frame as JSON lines.
    async fn next_lines(ws: &mut Ws) -> Option<Vec<Value>> {
        loop {
            match tokio::time::timeout(T, ws.next()).await.ok()?? {
                Ok(Message::Text(t)) => {
                    return Some(
                        t.as_str()
                            .lines()
                            .filter(|l| !l.is_empty())
                            .map(|l| serde_json::from_str(l).unwrap())
                            .collect(),
                    );
                }
                Ok(Message::Close(_)) | Err(_) => return None,
                Ok(_) => {}
            }
        }
    }

    async fn until(ws: &mut Ws, what: &str, stop: impl Fn(&Value) -> bool) -> Vec<Value> {
        let mut out = Vec::new();
        loop {
            let lines = next_lines(ws)
                .await
                .unwrap_or_else(|| panic!("ws ended waiting for {what}: {out:#?}"));
            for l in lines {
                let done = stop(&l);
                out.push(l);
                if done {
                    return out;
                }
            }
        }
    }

    fn text(v: &Value) -> Message {
        Message::text(format!("{v}\n"))
    }

    #[tokio::test]
    async fn bare_ndjson_turn_like_the_sdk_websocket_option() {
        let dir = tempfile::tempdir().unwrap();
        let relay = RelayProc::start(Opts::demo(dir.path()));
        let sid = relay.create_session().await;
        // The SDK cannot send headers on a WebSocket: authenticate with the first message.
        let mut ws = connect(&relay, &sid, "", None).await;
        ws.send(Message::text(format!(
            "{}\n",
            json!({"type":"auth","credential":{"type":"oauth","token":TOKEN}})
        )))
        .await
        .unwrap();
        ws.send(text(&json!({"request_id":"sdkinit1","type":"control_request","request":{"subtype":"initialize"}}))).await.unwrap();
        ws.send(text(&json!({"type":"user","message":{"role":"user","content":"hi over ws"},"parent_tool_use_id":null,"session_id":""}))).await.unwrap();
        let got = until(&mut ws, "can_use_tool", |v| {
            v["type"] == "control_request" && v["request"]["subtype"] == "can_use_tool"
        })
        .await;
        assert!(
            got.iter()
                .any(|v| v["type"] == "control_response"
                    && v["response"]["request_id"] == "sdkinit1"),
            "initialize answered"
        );
        assert!(
            got.iter()
                .all(|v| v.get("type").is_some_and(Value::is_string)
                    && v.get("sequence_num").is_none()
                    && v.get("payload").is_none()),
            "bare payloads, no envelope"
        );
        assert!(got.iter().any(|v| v["type"] == "stream_event"));
        let ask = got.last().unwrap();
        let mut late = connect(&relay, &sid, "", Some(TOKEN)).await;
        let first = next_lines(&mut late).await.unwrap();
        assert_eq!(
            first[0]["request_id"], ask["request_id"],
            "a late joiner gets the pending prompt: {first:?}"
        );
        drop(late);
        let answer = json!({"type":"control_response","response":{"subtype":"success","request_id":ask["request_id"],
            "response":{"behavior":"allow","updatedInput":{"command":"echo via-websocket"},"toolUseID":ask["request"]["tool_use_id"]}}});
        ws.send(text(&answer)).await.unwrap();
        let rest = until(&mut ws, "result", |v| v["type"] == "result").await;
        let tool_result = rest
            .iter()
            .find(|v| v["type"] == "user" && v["message"]["content"][0]["type"] == "tool_result")
            .expect("tool_result");
        assert!(tool_result.to_string().contains("via-websocket"));
        // The same traffic is in the durable log, visible to SSE clients.
        let list = relay.events(&sid, 0).await;
        assert!(
            list["events"]
                .as_array()
                .unwrap()
                .iter()
                .any(|e| e["source"] == "client" && e["payload"]["type"] == "user")
        );
    }

    /// Reads until the server closes; returns the close code and reason.
    async fn close_of(ws: &mut Ws) -> (u16, String) {
        let deadline = tokio::time::Instant::now() + T;
        let mut seen = Vec::new();
        loop {
            let next = tokio::time::timeout_at(deadline, ws.next())
                .await
                .unwrap_or_else(|_| panic!("no close within {T:?}; got {seen:#?}"));
            match next {
                Some(Ok(Message::Close(Some(f)))) => return (f.code.into(), f.reason.to_string()),
                Some(Ok(Message::Close(None))) | None => return (1005, String::new()),
                Some(Err(e)) => panic!("socket error before a close frame: {e}"),
                Some(Ok(m)) => seen.push(m),
            }
        }
    }

    #[tokio::test]
    async fn an_ended_session_closes_its_sockets() {
        let dir = tempfile::tempdir().unwrap();
        // The demo agent's "crash" scenario exits mid-turn: the session ends.
        let relay = RelayProc::start(Opts::demo(dir.path()).env("BRIDGE_DEMO_SCENARIO", "crash"));
        let sid = relay.create_session().await;
        let mut live = connect(&relay, &sid, "", Some(TOKEN)).await;
        relay.post(&sid, TOKEN, user("crash now")).await;
        // The bare socket gets the session's last frames, then a normal close (the SDK's iterator ends).
        assert_eq!(close_of(&mut live).await, (1000, "session ended".into()));
        let last = relay.events(&sid, 0).await["events"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|e| e["sequence_num"].as_u64())
            .max()
            .unwrap();
        // Joining afterwards: nothing will come, so it closes at once instead of idling.
        let mut bare = connect(&relay, &sid, "", Some(TOKEN)).await;
        assert_eq!(close_of(&mut bare).await.0, 1000);
        // Envelope mode with the whole log already read: a final close the console does not retry.
        let mut env = connect(
            &relay,
            &sid,
            &format!("?envelope=1&from_sequence_num={last}"),
            Some(TOKEN),
        )
        .await;
        let (code, reason) = close_of(&mut env).await;
        assert_eq!(code, 4404);
        assert!(reason.starts_with("session_ended"), "{reason}");
        // An earlier cursor still replays the log first.
        let mut replay = connect(
            &relay,
            &sid,
            &format!("?envelope=1&from_sequence_num={}", last - 1),
            Some(TOKEN),
        )
        .await;
        let got = next_lines(&mut replay).await.expect("the last event");
        assert_eq!(got[0]["id"].as_u64(), Some(last), "{got:?}");
        assert_eq!(
            close_of(&mut replay).await.0,
            4404,
            "final right after the last event"
        );
    }

    #[tokio::test]
    async fn unauthenticated_socket_is_closed() {
        let dir = tempfile::tempdir().unwrap();
        let relay = RelayProc::start(Opts::demo(dir.path()));
        let sid = relay.create_session().await;
        let mut ws = connect(&relay, &sid, "", None).await;
        ws.send(text(
            &json!({"type":"auth","credential":{"type":"oauth","token":"wrong"}}),
        ))
        .await
        .unwrap();
        match tokio::time::timeout(T, ws.next()).await.unwrap() {
            Some(Ok(Message::Close(Some(f)))) => assert_eq!(u16::from(f.code), 1008),
            other => panic!("expected a policy close, got {other:?}"),
        }
        // A bad bearer header is refused before the upgrade.
        let url = format!("ws://{}/v1/code/sessions/{sid}/ws", relay.addr);
        let mut req = url.into_client_request().unwrap();
        req.headers_mut()
            .insert("authorization", "Bearer wrong".parse().unwrap());
        assert!(tokio_tungstenite::connect_async(req).await.is_err());
    }

    #[tokio::test]
    async fn envelope_mode_sends_readable_keepalives() {
        let dir = tempfile::tempdir().unwrap();
        let relay = RelayProc::start(Opts::demo(dir.path()).arg("--sse-keepalive-secs").arg("1"));
        let sid = relay.create_session().await;
        let mut ws = connect(&relay, &sid, "?envelope=1", Some(TOKEN)).await;
        // A quiet session: within ~2.5 s two keepalive text frames a browser can see (not pings).
        let mut beats = 0;
        let deadline = tokio::time::Instant::now() + Duration::from_millis(2600);
        while let Ok(Some(Ok(m))) = tokio::time::timeout_at(deadline, ws.next()).await {
            if let Message::Text(t) = m {
                let v: Value = serde_json::from_str(t.as_str()).unwrap();
                assert_eq!(
                    v,
                    serde_json::json!({"event": "keepalive", "id": null, "data": {}})
                );
                beats += 1;
            }
        }
        assert!(
            beats >= 2,
            "expected at least two keepalive frames, got {beats}"
        );
    }

    #[tokio::test]
    async fn envelope_mode_resumes_and_refuses_observer_writes() {
        let dir = tempfile::tempdir().unwrap();
        let relay = RelayProc::start(Opts::demo(dir.path()));
        let sid = relay.create_session().await;
        let mut ws = connect(&relay, &sid, "?envelope=1", Some(TOKEN)).await;
        ws.send(Message::text(user("enveloped").to_string()))
            .await
            .unwrap();
        let got = until(&mut ws, "can_use_tool", |v| {
            v["event"] == "client_event"
                && v["data"]["payload"]["request"]["subtype"] == "can_use_tool"
        })
        .await;
        let durable: Vec<&Value> = got
            .iter()
            .filter(|v| v["event"] == "client_event")
            .collect();
        for (i, v) in durable.iter().enumerate() {
            assert_eq!(v["id"], i as u64 + 1);
            assert_eq!(v["id"], v["data"]["sequence_num"]);
        }
        assert!(
            got.iter()
                .any(|v| v["event"] == "ephemeral_event" && v["id"].is_null())
        );
        assert!(got.iter().any(|v| v["event"] == "delivery_update"));
        assert_eq!(durable[0]["data"]["source"], "client");
        drop(ws);

        // Resume from 1: exactly what followed.
        let mut again = connect(&relay, &sid, "?envelope=1&from_sequence_num=1", Some(TOKEN)).await;
        let first = until(&mut again, "first durable", |v| {
            v["event"] == "client_event"
        })
        .await
        .pop()
        .unwrap();
        assert_eq!(first["id"], 2);

        // An observer's write over the socket is refused with an error frame and changes nothing.
        let minted = relay.mint_observer(json!({})).await;
        let before = relay.session(&sid).await["last_sequence_num"].clone();
        let mut obs = connect(
            &relay,
            &sid,
            &format!("?envelope=1&from_sequence_num={before}"),
            Some(minted["token"].as_str().unwrap()),
        )
        .await;
        obs.send(Message::text(user("observer says hi").to_string()))
            .await
            .unwrap();
        let err = until(&mut obs, "error frame", |v| v["event"] == "error")
            .await
            .pop()
            .unwrap();
        assert_eq!(err["data"]["status"], 403);
        assert_eq!(relay.session(&sid).await["last_sequence_num"], before);
    }
}

#[tokio::test]
async fn worktree_mode_gives_each_session_its_own_checkout() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(&repo)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    git(&["init", "-q"]);
    std::fs::write(repo.join("README"), "hi").unwrap();
    git(&["add", "README"]);
    git(&["commit", "-q", "-m", "init"]);
    let data = dir.path().join("data");
    let relay = RelayProc::start(Opts {
        args: vec![
            "--demo".into(),
            "--spawn-mode".into(),
            "worktree".into(),
            "--cwd".into(),
            repo.display().to_string(),
        ],
        env: vec![],
        data_dir: &data,
        static_dir: None,
        token: Some(TOKEN),
        start_dir: None,
    });
    let a = relay.create_session().await;
    let b = relay.create_session().await;
    let cwd_a = relay.session(&a).await["cwd"].as_str().unwrap().to_owned();
    let cwd_b = relay.session(&b).await["cwd"].as_str().unwrap().to_owned();
    assert_ne!(cwd_a, cwd_b);
    assert!(
        std::path::Path::new(&cwd_a).join("README").exists(),
        "checked out: {cwd_a}"
    );
    let r = http()
        .post(relay.url(&format!("/v1/code/sessions/{a}/archive")))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let deadline = Instant::now() + T;
    while std::path::Path::new(&cwd_a).exists() {
        assert!(Instant::now() < deadline, "worktree not removed on archive");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(std::path::Path::new(&cwd_b).exists());
    // Outside a repository, worktree mode refuses with a clear 4xx.
    let r = http()
        .post(relay.url("/v1/code/sessions"))
        .bearer_auth(TOKEN)
        .json(&json!({"cwd": dir.path().display().to_string()}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
}

#[tokio::test]
async fn sigterm_stops_the_agents_cleanly_and_exits() {
    let dir = tempfile::tempdir().unwrap();
    let mut relay = RelayProc::start(Opts::demo(dir.path()));
    let sid = relay.create_session().await;
    let mut sse = relay.sse(&sid, None).await;
    relay.post(&sid, TOKEN, user("hi")).await;
    sse.until("can_use_tool", is_can_use_tool).await;
    let status = std::process::Command::new("kill")
        .arg("-TERM")
        .arg(relay.pid().to_string())
        .status()
        .unwrap();
    assert!(status.success());
    let exit = relay
        .wait_exit(Duration::from_secs(15))
        .expect("relay exits on SIGTERM");
    assert!(exit.success(), "{exit:?}");
    // The agent was stopped by the relay (stdin closed), and that is in the log.
    let relay = RelayProc::start(Opts::demo(dir.path()));
    let events = relay.events(&sid, 0).await;
    let last = events["events"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["payload"]["state"], "ended");
    assert_eq!(last["payload"]["exit_code"], 0, "{last}");
    assert!(
        last["payload"]["reason"].is_null(),
        "ended before the restart, not by it: {last}"
    );
}
