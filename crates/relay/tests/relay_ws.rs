//! The WebSocket route end to end (`/v1/code/sessions/{id}/ws`): the `bridge-relay` binary on
//! 127.0.0.1:0 with the demo agent, as in `relay.rs`.

use std::time::Duration;

use serde_json::{Value, json};

use crate::common::*;
use futures::{SinkExt as _, StreamExt as _};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

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
    let (_dir, relay, sid) = demo_session().await;
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
            .any(|v| v["type"] == "control_response" && v["response"]["request_id"] == "sdkinit1"),
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
    let (_dir, relay, sid) = demo_session().await;
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
    let (_dir, relay) = demo_relay(&["--sse-keepalive-secs", "1"]);
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
    let (_dir, relay, sid) = demo_session().await;
    let mut ws = connect(&relay, &sid, "?envelope=1", Some(TOKEN)).await;
    ws.send(Message::text(user("enveloped").to_string()))
        .await
        .unwrap();
    let got = until(&mut ws, "can_use_tool", |v| {
        v["event"] == "client_event" && v["data"]["payload"]["request"]["subtype"] == "can_use_tool"
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
