//! Scale-out through a NATS outage: a gateway reports it and recovers, its WebSocket closes and
//! resumes, its list agrees with its stream as the state changes (a NATS server, an `agents`
//! node and two gateways, as in `cluster.rs`).

use crate::common::cluster::*;
use crate::common::*;
use serde_json::Value;

/// (NATS outage) NATS stops under a running gateway and agents node: the gateway's `/healthz` says
/// so (503, `nats.connected: false`); NATS restarts on the same store: `/healthz` is ok again, and
/// a new turn created and followed through the gateway streams to its result.
#[tokio::test]
async fn a_gateway_reports_a_nats_outage_and_recovers_when_it_returns() {
    let mut c = cluster();
    let before = create_on_host1(&c.a).await;
    let mut watching = c.a.sse(&before, None).await;
    assert_eq!(watching.status, 200);
    drain(&mut watching).await;

    c.nats.stop();
    let h = health_until(&c.a, "the gateway reports NATS down", |s, v| {
        s == 503 && v["nats"]["connected"] == false
    })
    .await;
    assert_eq!(h["nats"]["role"], "gateway", "{h}");
    assert!(
        h["nats"]["problem"].as_str().unwrap().contains("NATS"),
        "{h}"
    );
    // The open stream ends (a console shows it is reconnecting) and a new one is refused, as is
    // input: a clear 503, nothing queued for later.
    watching.expect_end(std::time::Duration::from_secs(3)).await;
    let again = c.a.sse(&before, None).await;
    assert_eq!(again.status, 503);
    let r = c.a.post(&before, TOKEN, user("while NATS is down")).await;
    assert_eq!(r.status(), 503, "{}", r.text().await.unwrap());

    c.nats.restart();
    for gw in [&c.a, &c.b] {
        health_until(gw, "the gateway reports NATS back", |s, v| {
            s == 200 && v["ok"] == true && v["nats"]["connected"] == true
        })
        .await;
    }
    let sid = create_on_host1(&c.a).await;
    let mut on_a = c.a.sse(&sid, None).await;
    assert_eq!(on_a.status, 200);
    c.a.say(&sid, "after the outage").await;
    let ask = on_a.until_one("prompt", is_can_use_tool).await;
    let seen = answer_and_finish(&c.a, &sid, &ask, "echo after-outage", &mut on_a).await;
    let text = seen.iter().find_map(tool_result_text).unwrap();
    assert!(text.contains("after-outage"), "{text}");
    // The session from before the outage streams and takes input again too.
    let mut resumed = c.a.sse(&before, None).await;
    assert_eq!(resumed.status, 200);
    drain(&mut resumed).await;
    c.a.say(&before, "NATS is back").await;
    resumed
        .until("its echo", |f| f.data.to_string().contains("NATS is back"))
        .await;
}

/// (NATS outage, WebSocket) A gateway's WebSocket served from a mirror closes when NATS becomes
/// unreachable, with 1013 "try again later" (the console's transport reconnects on it), as its SSE
/// streams end; once NATS is back a socket resumed from the last event id it got gets what came
/// after, nothing repeated.
#[tokio::test]
async fn a_gateways_websocket_closes_on_a_nats_outage_and_resumes_after_it() {
    use futures::StreamExt as _;
    use tokio_tungstenite::tungstenite::Message;
    use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
    use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

    let mut c = cluster();
    let sid = create_on_host1(&c.a).await;
    c.a.say(&sid, "before").await;
    let mut on_a = c.a.sse(&sid, None).await;
    on_a.until("the echo", |f| f.data.to_string().contains("before"))
        .await;

    let request = |query: &str| {
        let url = format!(
            "ws://{}/v1/code/sessions/{sid}/ws?envelope=1{query}",
            c.a.addr
        );
        let mut req = url.into_client_request().unwrap();
        req.headers_mut()
            .insert("authorization", format!("Bearer {TOKEN}").parse().unwrap());
        req
    };
    // The durable events' ids a socket gets until `stop` holds for one, or until it is quiet.
    let read = async |ws: &mut tokio_tungstenite::WebSocketStream<_>,
                      stop: &dyn Fn(&Value) -> bool|
           -> Vec<u64> {
        let mut ids = Vec::new();
        let deadline = tokio::time::Instant::now() + T;
        loop {
            let quiet = tokio::time::Instant::now() + std::time::Duration::from_millis(700);
            match tokio::time::timeout_at(quiet.min(deadline), ws.next()).await {
                Ok(Some(Ok(Message::Text(t)))) => {
                    let v: Value = serde_json::from_str(t.as_str()).unwrap();
                    if let Some(id) = v["id"].as_u64() {
                        ids.push(id);
                    }
                    if stop(&v) {
                        return ids;
                    }
                }
                Ok(Some(Ok(_))) => {}
                Err(_) => return ids,
                other => panic!("the socket ended early: {other:?}"),
            }
        }
    };
    let mut ws = tokio_tungstenite::connect_async(request(""))
        .await
        .unwrap()
        .0;
    let seen = read(&mut ws, &|_| false).await;
    assert!(
        seen.len() >= 2,
        "the socket replays the log from its start: {seen:?}"
    );
    let last = *seen.last().unwrap();

    c.nats.stop();
    let started = std::time::Instant::now();
    let close = loop {
        match tokio::time::timeout(std::time::Duration::from_secs(3), ws.next()).await {
            Ok(Some(Ok(Message::Close(f)))) => break f,
            Ok(Some(Ok(Message::Text(t)))) => {
                let v: Value = serde_json::from_str(t.as_str()).unwrap();
                assert!(
                    v["id"].is_null(),
                    "no durable event while NATS is down: {v}"
                );
            }
            Ok(Some(Ok(_))) => {}
            other => panic!("the socket did not close within 3 s of NATS stopping: {other:?}"),
        }
    };
    let close = close.expect("a close frame with a code");
    assert_eq!(close.code, CloseCode::Again, "{close:?}");
    assert!(close.reason.contains("NATS"), "{close:?}");
    assert!(started.elapsed() < std::time::Duration::from_secs(3));

    c.nats.restart();
    health_until(&c.a, "the gateway reports NATS back", |s, v| {
        s == 200 && v["ok"] == true && v["nats"]["connected"] == true
    })
    .await;
    // Resumed from the last event it got: what follows, nothing repeated.
    let mut ws = loop {
        match tokio_tungstenite::connect_async(request(&format!("&from_sequence_num={last}"))).await
        {
            Ok((ws, _)) => break ws,
            // 503 while the gateway's registry read catches up.
            Err(e) => {
                assert!(
                    started.elapsed() < T * 2,
                    "no socket after NATS returned: {e}"
                );
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            }
        }
    };
    c.a.say(&sid, "after").await;
    let after = read(&mut ws, &|v| {
        v["data"]["source"] == "client" && v.to_string().contains("after")
    })
    .await;
    assert!(!after.is_empty(), "the resumed socket got the new input");
    assert!(
        after.iter().all(|id| *id > last),
        "nothing repeated after {last}: {after:?}"
    );
    assert!(
        after.windows(2).all(|w| w[1] == w[0] + 1) && after[0] == last + 1,
        "nothing lost after {last}: {after:?}"
    );
}

/// The state a gateway's list says for a session, read at once.
async fn listed_state(gw: &RelayProc, sid: &str) -> String {
    let v: Value = gw
        .get("/v1/code/sessions", TOKEN)
        .await
        .json()
        .await
        .unwrap();
    let s = v["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == sid);
    s.map(|s| s["state"].as_str().unwrap_or("").to_owned())
        .unwrap_or_default()
}

/// A gateway's list read as soon as its stream brings the event that changed a session's state
/// (the console reads its list when its header's state changes) already says that state: the host
/// writes the registry entry before it publishes those events. (It said the state from before
/// until the host's next registry round, and the console showed it until its next list poll.)
#[tokio::test]
async fn a_gateways_list_agrees_with_its_stream_when_the_state_changes() {
    let c = cluster();
    let sid = create_on_host1(&c.a).await;
    let mut on_a = c.a.sse(&sid, None).await;
    for turn in 0..3 {
        assert_eq!(
            c.a.post(&sid, TOKEN, user(&format!("turn {turn}")))
                .await
                .status(),
            200
        );
        let ask = on_a.until_one("prompt", is_can_use_tool).await;
        assert_eq!(
            listed_state(&c.a, &sid).await,
            "requires_action",
            "turn {turn}: the list when the prompt arrived"
        );
        answer_and_finish(&c.a, &sid, &ask, &format!("echo {turn}"), &mut on_a).await;
        assert_eq!(
            listed_state(&c.a, &sid).await,
            "idle",
            "turn {turn}: the list when the result arrived"
        );
    }
}
