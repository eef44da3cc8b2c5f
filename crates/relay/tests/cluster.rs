//! Scale-out through NATS JetStream: a NATS server and three `bridge-relay` processes (`--demo`):
//! one `agents` node that runs the sessions and two `gateway`s that run none. Sessions created,
//! followed and answered through either gateway carry the host's sequence numbers; first answer
//! wins across gateways; a client resumes through another gateway with nothing lost or repeated.
//! (Without `--nats` nothing changes: the rest of the suite runs single relays.)

use crate::common::cluster::*;
use crate::common::nats::NatsServer;
use crate::common::*;
use serde_json::{Value, json};

/// (1) Created through gateway A, answered through gateway B: the turn completes, both gateways
/// stream the same durable events with the same sequence numbers as the host's log, and the list
/// on either gateway shows the session and its host.
#[tokio::test]
async fn a_turn_created_on_one_gateway_is_answered_on_another_with_identical_seqs() {
    let c = cluster();
    let sid = create_on_host1(&c.a).await;
    let mut on_a = c.a.sse(&sid, None).await;
    let mut on_b = c.b.sse(&sid, None).await;
    assert_eq!((on_a.status, on_b.status), (200, 200));

    let r = c.a.post(&sid, TOKEN, user("hello cluster")).await;
    assert_eq!(r.status(), 200);
    let posted: Value = r.json().await.unwrap();
    let my_seq = posted["results"][0]["sequence_num"].as_u64().unwrap();

    let mut seen_b = on_b.until("prompt on B", is_can_use_tool).await;
    let ask = seen_b.last().unwrap().clone();
    let r = c.b.post(&sid, TOKEN, answer_to(&ask, "echo via-b")).await;
    assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());
    seen_b.extend(on_b.until("result on B", is_result).await);
    let seen_a = on_a.until("result on A", is_result).await;

    let (da, db) = (durable(&seen_a), durable(&seen_b));
    assert_eq!(da, db, "both gateways stream the same events, same seqs");
    let ids: Vec<u64> = da.iter().map(|(id, _)| *id).collect();
    assert_dense(&ids, "dense from 1");
    assert!(
        da.iter()
            .any(|(id, v)| *id == my_seq && v["payload"]["type"] == "user")
    );
    let result = seen_a.iter().find_map(tool_result_text).unwrap();
    assert!(result.contains("via-b"), "{result}");
    // Streaming deltas reach gateway subscribers too (core NATS, not stored).
    assert!(
        seen_a
            .iter()
            .any(|f| f.event == "ephemeral_event" && f.data["payload"]["type"] == "stream_event")
    );

    // The host's own log: the same envelopes.
    let host_log = c.agents.events(&sid, 0).await;
    let last = *ids.last().unwrap();
    let host: Vec<(u64, Value)> = host_log["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["sequence_num"].as_u64().unwrap() <= last)
        .map(|e| (e["sequence_num"].as_u64().unwrap(), e.clone()))
        .collect();
    assert_eq!(
        host, da,
        "the gateways' events are the host's, byte for byte"
    );
    // A page read through a gateway matches too.
    let page = c.b.events(&sid, 0).await;
    assert_eq!(
        page["events"].as_array().unwrap()[..da.len()],
        host_log["events"].as_array().unwrap()[..da.len()]
    );

    for gw in [&c.a, &c.b] {
        let list = get_json(&gw.url("/v1/code/sessions"), TOKEN).await;
        let entry = find_session(&list, &sid);
        assert_eq!(entry["host"], "host1");
        assert_eq!(entry["origin"], "relay");
        // Detail comes from the host (pending requests and all).
        let detail = gw.session(&sid).await;
        assert_eq!(detail["id"], sid.as_str());
        assert_eq!(detail["pending_requests"], json!([]));
        let health = get_json(&gw.url("/healthz"), TOKEN).await;
        assert_eq!(health["ok"], true, "{health}");
        assert_eq!(health["nats"]["role"], "gateway");
    }
}

/// (2) Two answers to one prompt race through both gateways: the host decides, exactly one reaches
/// the agent, the other gets the single relay's 409.
#[tokio::test]
async fn answers_racing_through_two_gateways_exactly_one_wins() {
    let c = cluster();
    let sid = create_on_host1(&c.a).await;
    let mut on_a = c.a.sse(&sid, None).await;
    c.b.say(&sid, "race").await;
    let ask = on_a.until_one("prompt", is_can_use_tool).await;
    let rid = ask.payload()["request_id"].as_str().unwrap().to_owned();

    let (ra, rb) = tokio::join!(
        c.a.post(&sid, TOKEN, answer_to(&ask, "echo from-gateway-a")),
        c.b.post(&sid, TOKEN, answer_to(&ask, "echo from-gateway-b")),
    );
    let winner = race_winner(ra, rb, &rid, ("from-gateway-a", "from-gateway-b")).await;

    let frames = on_a.until("result", is_result).await;
    let result = frames.iter().find_map(tool_result_text).unwrap();
    assert!(result.contains(winner), "{result}");
    let log = c.agents.events(&sid, 0).await;
    let answers = client_answers(log["events"].as_array().unwrap(), &rid);
    assert_eq!(answers, 1, "one answer stored and sent to the agent");
}

/// (3) Gateway A dies in the middle of a turn; the client resumes through B with `Last-Event-ID`
/// and gets every later event exactly once, in order, with the host's sequence numbers.
#[tokio::test]
async fn a_client_resumes_through_another_gateway_after_one_is_killed() {
    let mut c = cluster();
    let (sid, mut on_a, before, ask) = prompted_on_host1(&c, "survive a gateway").await;
    let last_seen = ask.id.unwrap();
    c.a.kill();
    // What A wrote after the prompt (in the same batch from the host) may still be read first.
    while on_a.next(T).await.is_some() {}
    assert!(on_a.ended, "A's stream is cut");

    let mut on_b = c.b.sse(&sid, Some(last_seen)).await;
    assert_eq!(on_b.status, 200);
    let after = answer_and_finish(&c.b, &sid, &ask, "echo after-failover", &mut on_b).await;

    let mut got: Vec<(u64, Value)> = durable(&before);
    got.extend(durable(&after));
    let ids: Vec<u64> = got.iter().map(|(id, _)| *id).collect();
    assert_dense(&ids, "nothing lost, nothing repeated");
    assert!(
        durable(&after)[0].0 == last_seen + 1,
        "resumed right after the cursor"
    );
    let host_log = c.agents.events(&sid, 0).await;
    let host: Vec<(u64, Value)> = host_log["events"]
        .as_array()
        .unwrap()
        .iter()
        .take(got.len())
        .map(|e| (e["sequence_num"].as_u64().unwrap(), e.clone()))
        .collect();
    assert_eq!(host, got, "the events are the host's");
    // A cursor past the end is refused through a gateway as by the host.
    let far = c.b.sse(&sid, Some(last_seen + 100_000)).await;
    assert_eq!(far.status, 400);
}

/// NATS goes away in the middle of a turn: the host keeps running its session and says so in
/// `/healthz`; when NATS returns, the events written meanwhile are published and both the gateway's
/// client (its stream ended when the gateway lost NATS; it resumes from the last event it got) and
/// a new reader get every event once, in order.
#[tokio::test]
async fn events_written_while_nats_is_down_arrive_when_it_returns() {
    let mut c = cluster();
    let (sid, mut on_a, before, ask) = prompted_on_host1(&c, "outage").await;

    c.nats.stop();
    let h = health_until(&c.agents, "the host reports NATS down", |s, v| {
        s == 503 && v["nats"]["connected"] == false
    })
    .await;
    assert!(
        h["nats"]["problem"].as_str().unwrap().contains("NATS"),
        "{h}"
    );
    // The host's own API still works: answer there while NATS is away.
    let r = c
        .agents
        .post(&sid, TOKEN, answer_to(&ask, "echo during-outage"))
        .await;
    assert_eq!(r.status(), 200);
    let host_done = {
        let mut direct = c.agents.sse(&sid, Some(ask.id.unwrap())).await;
        direct.until("result on the host", is_result).await
    };
    let last = host_done.last().unwrap().id.unwrap();

    c.nats.restart();
    health_until(&c.agents, "the host reports NATS back", |s, v| {
        s == 200 && v["ok"] == true
    })
    .await;
    health_until(&c.a, "gateway A reports NATS back", |s, v| {
        s == 200 && v["ok"] == true
    })
    .await;
    let mut after_a: Vec<Frame> = Vec::new();
    loop {
        match on_a.next(T).await {
            Some(f) => {
                let done = is_result(&f);
                after_a.push(f);
                if done {
                    break;
                }
            }
            None => {
                assert!(
                    on_a.ended,
                    "A neither ended its stream nor delivered the result"
                );
                // A ended its stream when it lost NATS: resume there from the last event it gave.
                let last = before.iter().chain(&after_a).filter_map(|f| f.id).max();
                on_a = c.a.sse(&sid, last).await;
                assert_eq!(on_a.status, 200);
            }
        }
    }
    let mut on_b = c.b.sse(&sid, Some(ask.id.unwrap())).await;
    let after_b = on_b.until("result on B", is_result).await;

    let mut got = durable(&before);
    got.extend(durable(&after_a));
    let ids: Vec<u64> = got.iter().map(|(id, _)| *id).collect();
    assert_eq!(
        ids,
        (1..=last).collect::<Vec<_>>(),
        "A: nothing lost or repeated"
    );
    assert_eq!(durable(&after_b), durable(&after_a), "B: the same events");
}

/// A second writer on a session's subject (here: the test, pretending to be another host) cannot
/// fork the log: the host's next publish carries the expected last subject sequence, NATS refuses
/// it, and the host stops publishing that log and says so in `/healthz` instead of interleaving.
#[tokio::test]
async fn a_second_writer_cannot_fork_a_log() {
    use bridge_relay::cluster::wire;
    let c = cluster();
    let sid = create_on_host1(&c.a).await;
    let (_on_a, ask) = c.a.ask(&sid, "fork").await;
    let k = ask.id.unwrap();

    let rogue = worker_event(
        &sid,
        k + 1,
        "rogue-writer-event",
        "assistant",
        r#"{"type":"assistant","rogue":true}"#.into(),
    );
    publish_as_writer(&c.nats.url, &rogue, false).await;

    // The host appends k+1… (the answer and the rest of the turn) and cannot publish them.
    assert_eq!(
        c.agents
            .post(&sid, TOKEN, answer_to(&ask, "echo x"))
            .await
            .status(),
        200
    );
    let h = health_until(&c.agents, "the host reports the forked log", |s, v| {
        s == 503 && v["nats"]["forked_logs"] == 1
    })
    .await;
    assert!(has_text(&h["nats"]["problem"], "did not write"), "{h}");
    // On NATS the log holds the rogue event at k+1 and nothing of the host's after it.
    let client = async_nats::connect(c.nats.url.as_str()).await.unwrap();
    let js = async_nats::jetstream::new(client);
    let events = js.get_stream(wire::EVENTS_STREAM).await.unwrap();
    let last = events
        .get_last_raw_message_by_subject(&wire::events_subject(&sid))
        .await
        .unwrap();
    let (tail, _) = wire::decode_event(&sid, &last.payload).unwrap();
    assert_eq!(
        (tail.seq, tail.event_id.as_str()),
        (k + 1, "rogue-writer-event")
    );
    assert!(
        c.agents.session(&sid).await["last_sequence_num"]
            .as_u64()
            .unwrap()
            > k + 1
    );
}

/// A node with role `all` runs agents and serves every session: one created through its own API
/// is served by a gateway at once (it is listed before the creation is answered).
#[tokio::test]
async fn a_session_made_on_an_all_node_is_served_by_a_gateway_at_once() {
    let nats = NatsServer::start();
    let (d1, d2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let all = node(&nats, d1.path(), "all", "both");
    let gw = node(&nats, d2.path(), "gateway", "gw");
    let sid = all.create_session().await;
    let mut on_gw = gw.sse(&sid, None).await;
    assert_eq!(on_gw.status, 200, "the gateway knows the session at once");
    gw.say(&sid, "hi").await;
    let ask = on_gw.until_one("prompt", is_can_use_tool).await;
    answer_and_finish(&all, &sid, &ask, "echo both", &mut on_gw).await;
    let list = get_json(&all.url("/v1/code/sessions"), TOKEN).await;
    assert_eq!(list["sessions"][0]["host"], "both", "{list}");
}

fn is_host_lost(f: &Frame) -> bool {
    is_durable(f)
        && f.ptype() == "system"
        && f.payload()["subtype"] == "session_state_changed"
        && f.payload()["state"] == "ended"
}

/// (4) The agents node is SIGKILLed mid-turn: within 5 s both gateways list its session as ended
/// with the reason, followers get the ended event (as a single relay's crashed agent), the detail
/// says so, input is refused as for any ended session, and its log is still replayed in full.
#[tokio::test]
async fn a_dead_agents_node_ends_its_sessions_on_every_gateway() {
    let mut c = cluster();
    let sid = create_on_host1(&c.a).await;
    let mut on_a = c.a.sse(&sid, None).await;
    let mut on_b = c.b.sse(&sid, None).await;
    c.a.say(&sid, "then the host dies").await;
    let before = on_b.until("prompt", is_can_use_tool).await;
    let last_before = before.last().unwrap().id.unwrap();
    let killed = std::time::Instant::now();
    c.agents.kill();

    let reason = "host host1 stopped answering";
    // Both gateways are polled at once, each every 100 ms: the list must say `ended` in answer to
    // a request sent within 5 s of the kill (the time a request is sent is when it asks; on a
    // loaded machine its answer may take a while longer to arrive).
    let ended_on = |gw: &RelayProc| {
        let url = gw.url("/v1/code/sessions");
        let sid = sid.clone();
        async move {
            loop {
                let asked = killed.elapsed();
                let list = get_json(&url, TOKEN).await;
                let s = find_session(&list, &sid);
                assert!(
                    asked < std::time::Duration::from_secs(5),
                    "not listed as ended within 5 s: {s}"
                );
                if s["state"] == "ended" {
                    assert_eq!(s["exit"]["reason"], reason, "{s}");
                    assert_eq!(s["host"], "host1");
                    return;
                }
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
        }
    };
    tokio::join!(ended_on(&c.a), ended_on(&c.b));
    for (name, sse) in [("A", &mut on_a), ("B", &mut on_b)] {
        let frames = sse
            .until(&format!("the ended event on {name}"), is_host_lost)
            .await;
        let end = frames.last().unwrap();
        assert_eq!(end.payload()["reason"], reason);
        assert_eq!(end.payload()["relay_generated"], true);
        sse.expect_end(T).await;
    }
    for gw in [&c.a, &c.b] {
        let detail = gw.session(&sid).await;
        assert_eq!(detail["state"], "ended", "{detail}");
        assert_eq!(detail["exit"]["reason"], reason, "{detail}");
        let r = gw.post(&sid, TOKEN, user("anyone there?")).await;
        assert_eq!(r.status(), 410);
        let err: Value = r.json().await.unwrap();
        assert!(
            err["error"]["message"].as_str().unwrap().contains(reason),
            "{err}"
        );
        // The log stays readable: every event, dense, the ended one last (exactly one of them).
        let page = gw.events(&sid, 0).await;
        let events = page["events"].as_array().unwrap();
        let seqs: Vec<u64> = seqs_of(events);
        assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>());
        assert!(seqs.len() as u64 > last_before);
        let ended: Vec<&Value> = events
            .iter()
            .filter(|e| {
                e["payload"]["subtype"] == "session_state_changed"
                    && e["payload"]["state"] == "ended"
            })
            .collect();
        assert_eq!(
            ended.len(),
            1,
            "one ended event, whichever gateway wrote it"
        );
        assert_eq!(events.last().unwrap()["payload"]["reason"], reason);
        // Resuming from a cursor replays the rest.
        let mut resumed = gw.sse(&sid, Some(last_before)).await;
        assert_eq!(resumed.status, 200);
        let rest = resumed.until("the ended event again", is_host_lost).await;
        assert_eq!(
            rest.iter().find(|f| is_durable(f)).unwrap().id,
            Some(last_before + 1)
        );
    }
}

/// (5) Input sent over a gateway's WebSocket reaches the host, and a refusal comes back to that
/// socket as the single relay's error frame (here: a second answer to a prompt answered through the
/// other gateway gets 409 `request_not_pending`).
#[tokio::test]
async fn input_over_a_gateways_websocket_gets_the_hosts_verdict() {
    use futures::{SinkExt as _, StreamExt as _};
    use tokio_tungstenite::tungstenite::Message;
    use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;

    let c = cluster();
    let sid = create_on_host1(&c.a).await;
    let (mut on_a, ask) = c.a.ask(&sid, "first").await;
    let answer = answer_to(&ask, "echo through-b");
    assert_eq!(c.b.post(&sid, TOKEN, answer.clone()).await.status(), 200);
    on_a.until("result", is_result).await;

    let url = format!("ws://{}/v1/code/sessions/{sid}/ws?envelope=1", c.a.addr);
    let mut req = url.into_client_request().unwrap();
    req.headers_mut()
        .insert("authorization", format!("Bearer {TOKEN}").parse().unwrap());
    let (mut ws, _) = tokio_tungstenite::connect_async(req).await.unwrap();
    let deadline = tokio::time::Instant::now() + T;
    let gw_log = || {
        let t = c.a.stderr_text();
        t[t.len().saturating_sub(3000)..].to_owned()
    };
    let next_json = async |ws: &mut tokio_tungstenite::WebSocketStream<_>, what: &str| loop {
        match tokio::time::timeout_at(deadline, ws.next()).await {
            Ok(Some(Ok(Message::Text(t)))) => {
                let v: Value = serde_json::from_str(t.as_str()).unwrap();
                if v["event"] != "keepalive" {
                    return v;
                }
            }
            Ok(Some(Ok(_))) => {}
            other => panic!("waiting for {what}: {other:?}; gateway log: {}", gw_log()),
        }
    };

    // A late second answer: the host refuses it, and the socket hears so.
    ws.send(Message::Text(
        answer_to(&ask, "echo too-late").to_string().into(),
    ))
    .await
    .unwrap();
    let err = loop {
        let v = next_json(&mut ws, "the host's verdict").await;
        if v["event"] == "error" {
            break v;
        }
    };
    assert_eq!(err["data"]["status"], 409, "{err}");
    assert_eq!(err["data"]["error"]["type"], "request_not_pending", "{err}");

    // Accepted input raises no error: its echo comes back from the host's log.
    let text = "over the gateway's socket";
    ws.send(Message::Text(user(text).to_string().into()))
        .await
        .unwrap();
    loop {
        let v = next_json(&mut ws, "the echo").await;
        assert_ne!(v["event"], "error", "{v}");
        if v["data"]["source"] == "client" && v.to_string().contains(text) {
            break;
        }
    }
    let log = c.agents.events(&sid, 0).await;
    let answers = log["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["source"] == "client" && e["payload"]["type"] == "control_response")
        .count();
    assert_eq!(answers, 1, "the refused answer never reached the log");
}

/// `GET path` at `relay` with a bearer token: the status.
async fn status_with(relay: &RelayProc, path: &str, token: &str) -> u16 {
    relay.get(path, token).await.status().as_u16()
}

/// (Credentials) An observer token minted through gateway A reads a session at gateway B, and
/// cannot write there (403); a login cookie made at A works at B; revoking the token at B ends the
/// observer's open stream at A within a second, and A then refuses the token.
#[tokio::test]
async fn observer_tokens_and_logins_work_at_every_gateway_and_revocation_reaches_all() {
    let c = cluster();
    let sid = create_on_host1(&c.a).await;
    let minted = c.a.mint_observer(json!({ "session_id": sid })).await;
    let obs = minted["token"].as_str().unwrap().to_owned();
    let obs_id = minted["id"].as_str().unwrap().to_owned();

    // At B: reads, cannot write, cannot see another session.
    let detail = format!("/v1/code/sessions/{sid}");
    assert_eq!(status_with(&c.b, &detail, &obs).await, 200);
    let list = get_json(&c.b.url("/v1/code/sessions"), &obs).await;
    assert!(list.to_string().contains(&sid), "{list}");
    assert_eq!(c.b.post(&sid, &obs, user("not yours")).await.status(), 403);
    let other = create_on_host1(&c.b).await;
    assert_eq!(
        status_with(&c.b, &format!("/v1/code/sessions/{other}"), &obs).await,
        403
    );

    // A login made at A (with the controller token) works at B with its login secret.
    let (status, ctl) = try_login(&c.a, TOKEN).await;
    assert_eq!(status, 200);
    let (cookie, secret, _) = ctl.unwrap();
    let r = with_login(http().get(c.b.url("/v1/me")), &cookie, &secret).await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.json::<Value>().await.unwrap()["role"], "controller");
    // …and the observer's own login made at A too.
    let (_, obs_login) = try_login(&c.a, &obs).await;
    let (obs_cookie, obs_secret, _) = obs_login.unwrap();
    let me_at_b = async || {
        with_login(http().get(c.b.url("/v1/me")), &obs_cookie, &obs_secret)
            .await
            .status()
            .as_u16()
    };
    assert_eq!(me_at_b().await, 200);

    // The observer follows the session at A; the token is revoked at B.
    let mut watching = Sse::connect(
        &c.a.url(&format!("/v1/code/sessions/{sid}/events/stream")),
        &obs,
        None,
    )
    .await;
    assert_eq!(watching.status, 200);
    drain(&mut watching).await;
    let r = http()
        .delete(c.b.url(&format!("/v1/credentials/{obs_id}")))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    let revoked = std::time::Instant::now();
    watching.expect_end(std::time::Duration::from_secs(2)).await;
    let took = revoked.elapsed();
    assert!(
        took < std::time::Duration::from_secs(1),
        "A ended the revoked observer's stream after {took:?}"
    );
    assert_eq!(status_with(&c.a, &detail, &obs).await, 401);
    assert_eq!(status_with(&c.b, &detail, &obs).await, 401);
    assert_eq!(me_at_b().await, 401, "its logins go with it");
    // The controller's login is untouched.
    let r = with_login(http().get(c.a.url("/v1/me")), &cookie, &secret).await;
    assert_eq!(r.status(), 200);

    // Logging out at B ends that login at A as well.
    let r = with_login(http().post(c.b.url("/v1/auth/logout")), &cookie, &secret).await;
    assert_eq!(r.status(), 204);
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let r = with_login(http().get(c.a.url("/v1/me")), &cookie, &secret).await;
    assert_eq!(r.status(), 401);
}

/// (Credentials) A one-time login code minted through gateway A works once in the whole cluster:
/// redeemed at A, refused at B (and at A again); two gateways racing for a fresh code: one wins.
#[tokio::test]
async fn a_login_code_is_redeemed_once_across_gateways() {
    let c = cluster();
    let code = mint_login_code(&c.a).await;
    assert_eq!(try_login(&c.a, &code).await.0, 200);
    assert_eq!(try_login(&c.b, &code).await.0, 401);
    assert_eq!(try_login(&c.a, &code).await.0, 401);

    // Minted at A, first redeemed at B.
    let code = mint_login_code(&c.a).await;
    assert_eq!(try_login(&c.b, &code).await.0, 200);
    assert_eq!(try_login(&c.a, &code).await.0, 401);

    for _ in 0..5 {
        let code = mint_login_code(&c.b).await;
        let (ra, rb) = tokio::join!(try_login(&c.a, &code), try_login(&c.b, &code));
        let mut got = [ra.0, rb.0];
        got.sort();
        assert_eq!(got, [200, 401], "exactly one gateway redeems a code");
    }
}

/// A gateway lists the sessions while the registry is written to all the time (sessions running
/// on busy nodes): every list answers at once, and each session once.
#[tokio::test]
async fn a_gateways_list_answers_while_the_registry_is_written_to() {
    let c = cluster();
    let sid = create_on_host1(&c.a).await;
    let client = async_nats::connect(c.nats.url.as_str()).await.unwrap();
    let js = async_nats::jetstream::new(client);
    let sessions = js
        .get_key_value(bridge_relay::cluster::wire::SESSIONS_BUCKET)
        .await
        .unwrap();
    // Writes without the cluster's seal: read and skipped by the gateways, but written.
    let writer = tokio::spawn(async move {
        for n in 0u64.. {
            let key = format!("cse_busy{:020}", n % 50);
            let _ = sessions.put(key, format!("{n}").into()).await;
        }
    });
    for _ in 0..10 {
        let list = tokio::time::timeout(
            std::time::Duration::from_secs(5),
            get_json(&c.b.url("/v1/code/sessions"), TOKEN),
        )
        .await
        .expect("the list answers while the registry is written to");
        let ids = listed_ids(&list);
        assert_eq!(ids, [sid.as_str()], "{list}");
    }
    writer.abort();
}
