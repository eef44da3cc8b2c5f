//! End-to-end tests over real HTTP: the `bridge-relay` binary on 127.0.0.1:0 driving the demo agent
//! (spawned as `<relay> demo-agent …`, i.e. through the real child-process path).

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use crate::common::*;
use serde_json::{Value, json};

#[tokio::test]
async fn full_turn_streams_stores_and_settles() {
    let (_dir, relay, sid) = demo_session().await;
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
    let answer = allow_as_asked(&ask);
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
    let mine = find_session(&list, &sid);
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
    let (dir, relay, sid) = demo_session().await;
    let (mut sse, ask) = relay.ask_bash(&sid).await;
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
    let (_dir, relay, sid) = demo_session().await;
    let mut a = relay.sse(&sid, None).await;
    let mut b = relay.prompt(&sid, "race").await;
    let ask_a = a.until_one("prompt on A", is_can_use_tool).await;
    let ask_b = b.until_one("prompt on B", is_can_use_tool).await;
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
    let winner = race_winner(ra, rb, &rid, ("from-client-a", "from-client-b")).await;

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
    let (_dir, relay, sid) = demo_session().await;
    let other = relay.create_session().await;
    let c = http();
    let minted = relay
        .mint_observer(json!({"session_id": sid, "expires_in_secs": 3600}))
        .await;
    let obs = minted["token"].as_str().unwrap().to_owned();
    assert!(has_text(&minted["console_url"], &format!("#login={obs}")));
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
        post_json(&relay, "/v1/code/sessions", &obs, json!({}))
            .await
            .status(),
        relay
            .post_empty(&format!("/v1/code/sessions/{sid}/archive"), &obs)
            .await
            .status(),
        post_json(&relay, "/v1/observer-tokens", &obs, json!({}))
            .await
            .status(),
    ];
    assert!(checks.iter().all(|s| s.as_u16() == 403), "{checks:?}");
    // Other sessions are out of scope.
    let r = relay
        .get(&format!("/v1/code/sessions/{other}/events/stream"), &obs)
        .await;
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
    let r = relay.get("/v1/code/sessions", &obs).await;
    assert_eq!(r.status(), 401);
}

#[tokio::test]
async fn resume_after_a_dropped_stream_loses_and_repeats_nothing() {
    let (_dir, relay, sid) = demo_session().await;
    let mut sse = relay.prompt(&sid, "first").await;
    let first = sse.until("can_use_tool", is_can_use_tool).await;
    let ask = first.last().unwrap().clone();
    // Keep only part of what arrived: drop the stream after the second durable frame.
    let seen: Vec<u64> = first.iter().filter_map(|f| f.id).take(2).collect();
    let cursor = *seen.last().unwrap();
    drop(sse);

    // While nobody listens: answer, let the turn finish, start another turn.
    relay.post(&sid, TOKEN, allow_as_asked(&ask)).await;
    relay.wait_state(&sid, "idle").await;
    let last = relay.last_seq(&sid).await;

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
    let f = q.until_one("first durable", |f| f.id.is_some()).await;
    assert_eq!(f.id, Some(last + 1));
}

#[tokio::test]
async fn retention_reports_catch_up_truncated() {
    let (_dir, relay, sid) = demo_session_with(&["--retention-events", "5"]).await;
    let mut sse = relay.ask_allowed(&sid, "x").await;
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
    let (dir, mut relay, sid) = demo_session().await;
    let (_sse, _ask) = relay.ask(&sid, "remember me").await;
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
    let f = sse.until_one("ended", |f| f.id.is_some()).await;
    assert_eq!(f.data, *ended);
    sse.expect_end(Duration::from_secs(5)).await;
    // Reconnecting at the end of an ended session's log is final for the SDK: 404 session_ended.
    let last = ended["sequence_num"].as_u64().unwrap();
    let r = send(
        http()
            .get(relay.url(&format!("/v1/code/sessions/{sid}/events/stream")))
            .bearer_auth(TOKEN)
            .header("last-event-id", last.to_string()),
    )
    .await;
    assert_eq!(r.status(), 404);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["type"], "error");
    assert_eq!(body["error"]["type"], "session_ended");
    let r = relay
        .get(
            &format!(
                "/v1/code/sessions/{sid}/events/stream?from_sequence_num={}",
                last + 5
            ),
            TOKEN,
        )
        .await;
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
    let relay = RelayProc::start(
        Opts::bare(dir.path())
            .arg("--claude")
            .arg(&script.display().to_string()),
    );
    let started = Instant::now();
    let sid = relay.create_session().await;
    let mut sse = relay.sse(&sid, None).await;
    let frames = sse.until("ended", is_ended).await;
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
    assert!(has_text(
        &ended.payload()["stderr_tail"],
        "fatal: the fake claude gave up"
    ));
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
    let mut sse = relay.prompt(&sid, "go").await;
    let frames = sse.until("ended", is_ended).await;
    let ended = frames.last().unwrap();
    assert_eq!(ended.payload()["exit_code"], 3);
    assert!(has_text(&ended.payload()["stderr_tail"], "simulated crash"));
}

#[tokio::test]
async fn permission_timeout_makes_the_relay_deny() {
    let (dir, relay, sid) = demo_session_with(&["--permission-timeout-secs", "1"]).await;
    let mut sse = relay.prompt(&sid, "nobody answers").await;
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
    let (_dir, relay, sid) = demo_session_with(&["--sse-keepalive-secs", "1"]).await;
    let mut sse = relay.sse(&sid, None).await;
    assert!(sse.next(Duration::from_millis(2500)).await.is_none());
    assert!(
        sse.comments.iter().filter(|c| *c == "keepalive").count() >= 2,
        "{:?}",
        sse.comments
    );
}

#[tokio::test]
async fn an_mcp_elicitation_is_pending_until_answered_and_audited_with_its_values() {
    let (dir, relay, sid) = demo_session_with(&["--demo-scenario", "mcp"]).await;
    let mut sse = relay.ask_allowed(&sid, "ship it").await;
    let form = sse
        .until_one("elicitation", |f| {
            f.payload()["request"]["subtype"] == "elicitation"
        })
        .await;
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
    let entry = last_audit_entry(dir.path());
    assert_eq!(entry["request_id"], form_id.as_str());
    assert_eq!(entry["subtype"], "elicitation");
    assert_eq!(entry["tool_name"], "deploy");
    assert_eq!(entry["decision"], "accept");
    assert_eq!(entry["content"], content);
    assert!(has_text(&entry["input"]["message"], "deployment"));
    assert_eq!(
        entry["input"]["requested_schema"]["required"][0],
        "environment"
    );
}

#[tokio::test]
async fn archive_stops_the_agent_and_hides_the_session() {
    let (_dir, relay, sid) = demo_session().await;
    let mut sse = relay.sse(&sid, None).await;
    assert_eq!(relay.archive(&sid).await, 200);
    let frames = sse.until("ended", is_ended).await;
    assert_eq!(
        frames.last().unwrap().payload()["exit_code"],
        0,
        "closing stdin ends the agent cleanly"
    );
    let listed = relay.sessions(TOKEN).await;
    assert!(listed.iter().all(|s| s["id"] != sid.as_str()));
    let all = get_json(&relay.url("/v1/code/sessions?include_archived=1"), TOKEN).await;
    assert!(listed_ids(&all).contains(&sid.as_str()));
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
    let sessions = relay.sessions(TOKEN).await;
    assert_eq!(sessions.len(), 1);
    let sid = sessions[0]["id"].as_str().unwrap().to_owned();
    let r = post_json(&relay, "/v1/code/sessions", TOKEN, json!({})).await;
    assert_eq!(r.status(), 409);
    relay.post(&sid, TOKEN, user("crash now")).await;
    let status = relay
        .wait_exit(Duration::from_secs(10))
        .expect("relay exits after its session");
    assert!(status.success(), "{status:?}");
}

#[tokio::test]
async fn worktree_mode_gives_each_session_its_own_checkout() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q"]);
    std::fs::write(repo.join("README"), "hi").unwrap();
    git(&repo, &["add", "README"]);
    git(&repo, &["commit", "-q", "-m", "init"]);
    let data = dir.path().join("data");
    let relay = RelayProc::start(
        Opts::demo(&data)
            .arg("--spawn-mode")
            .arg("worktree")
            .arg("--cwd")
            .arg(&repo.display().to_string()),
    );
    let a = relay.create_session().await;
    let b = relay.create_session().await;
    let cwd_a = relay.session(&a).await["cwd"].as_str().unwrap().to_owned();
    let cwd_b = relay.session(&b).await["cwd"].as_str().unwrap().to_owned();
    assert_ne!(cwd_a, cwd_b);
    assert!(
        std::path::Path::new(&cwd_a).join("README").exists(),
        "checked out: {cwd_a}"
    );
    assert_eq!(relay.archive(&a).await, 200);
    let deadline = Instant::now() + T;
    while std::path::Path::new(&cwd_a).exists() {
        assert!(Instant::now() < deadline, "worktree not removed on archive");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(std::path::Path::new(&cwd_b).exists());
    // Outside a repository, worktree mode refuses with a clear 4xx.
    let r = post_json(
        &relay,
        "/v1/code/sessions",
        TOKEN,
        json!({"cwd": dir.path().display().to_string()}),
    )
    .await;
    assert_eq!(r.status(), 400);
}

#[tokio::test]
async fn sigterm_stops_the_agents_cleanly_and_exits() {
    let (dir, mut relay, sid) = demo_session().await;
    let (_sse, _ask) = relay.ask(&sid, "hi").await;
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
