//! The browser backend against a real relay, in headless Chromium
//! (wasm-bindgen-test). The relay is started by the test command and named at
//! compile time:
//!
//! ```text
//! BRIDGE_TEST_RELAY_URL=http://127.0.0.1:8790 BRIDGE_TEST_RELAY_TOKEN=… \
//!   WASM_BINDGEN_TEST_ADDRESS=127.0.0.1:8791 \
//!   cargo test -p bridge-transport --target wasm32-unknown-unknown --test integration web::
//! ```
//!
//! The page is served from another origin than the relay, so the relay must
//! allow it (`--allowed-origin http://127.0.0.1:8791`) and the token is used
//! (header on fetches, auth frame on the WebSocket). Unset: every test logs
//! why and passes without doing anything.

#[path = "common/answer.rs"]
mod answer;

use std::collections::HashSet;

use answer::allow_if_asked;
use bridge_transport::{
    Config, ConnectionState, Endpoint, Resume, Transport, TransportEvent, TransportKind,
};
use futures::StreamExt as _;
use futures::future::{Either, select};
use gloo_timers::future::TimeoutFuture;
use serde_json::{Value, json};
use wasm_bindgen_test::{console_log, wasm_bindgen_test};

fn relay() -> Option<(&'static str, &'static str)> {
    match (
        option_env!("BRIDGE_TEST_RELAY_URL"),
        option_env!("BRIDGE_TEST_RELAY_TOKEN"),
    ) {
        (Some(url), Some(token)) if !url.is_empty() => Some((url, token)),
        _ => {
            console_log!(
                "SKIPPED: BRIDGE_TEST_RELAY_URL / BRIDGE_TEST_RELAY_TOKEN were not set when this test was \
                 compiled; start a relay (bridge-relay --demo) and set them to run the browser transport tests"
            );
            None
        }
    }
}

async fn create_session(url: &str, token: &str) -> String {
    let resp = gloo_net::http::Request::post(&format!("{url}/v1/code/sessions"))
        .header("Authorization", &format!("Bearer {token}"))
        .json(&json!({}))
        .unwrap()
        .send()
        .await
        .expect("create a session (is the page origin allowed by the relay's --allowed-origin?)");
    assert!(resp.ok(), "create session: HTTP {}", resp.status());
    let v: Value = resp.json().await.unwrap();
    v["session_id"].as_str().unwrap().to_owned()
}

async fn next(t: &mut Transport, ms: u32) -> Option<TransportEvent> {
    match select(t.next(), TimeoutFuture::new(ms)).await {
        Either::Left((e, _)) => e,
        Either::Right(_) => None,
    }
}

async fn wait_open(t: &mut Transport) {
    for _ in 0..200 {
        if t.state() == ConnectionState::Open {
            return;
        }
        let _ = next(t, 100).await;
    }
    panic!("not open after 20 s: {:?}", t.state());
}

/// Sends a prompt and runs its turn to the result, allowing any tool use.
/// Returns the durable sequence numbers delivered meanwhile.
async fn turn(t: &mut Transport, text: &str) -> Vec<u64> {
    let msg = bridge_protocol::build::user_text(text, uuid::Uuid::new_v4());
    let prompt = t.send(serde_json::to_value(msg).unwrap()).unwrap();
    let mut seqs = Vec::new();
    let mut confirmed = false;
    let mut done = false;
    for _ in 0..2_000 {
        if done && confirmed {
            return seqs;
        }
        let Some(e) = next(t, 30_000).await else {
            panic!("no event for 30 s; state {:?}", t.state())
        };
        match e {
            TransportEvent::Message(m) => {
                seqs.extend(m.seq);
                let v = serde_json::to_value(&m.message).unwrap();
                if let Some(allow) = allow_if_asked(&v) {
                    t.send(allow).unwrap();
                }
                if v["type"] == "result" {
                    done = true;
                }
            }
            TransportEvent::Delivered { uuid, .. } if uuid == prompt => confirmed = true,
            TransportEvent::SendFailed { uuid, error } => panic!("send {uuid} failed: {error}"),
            _ => {}
        }
    }
    panic!("turn did not finish");
}

async fn connect_stream_post_reconnect(kind: TransportKind) {
    let Some((url, token)) = relay() else { return };
    let session = create_session(url, token).await;
    let endpoint = Endpoint::new(url, &session, Some(token.to_owned()));
    let mut t =
        bridge_transport::web::connect(endpoint, Config::new(kind, &session), Resume::default());
    wait_open(&mut t).await;
    let mut seqs = turn(&mut t, "hello from the browser").await;
    assert!(!seqs.is_empty(), "{kind:?}: durable messages streamed");
    let before = t.cursor();

    // reconnect: suspend (the page is hidden), resume, and go on
    t.suspend();
    assert_eq!(t.state(), ConnectionState::Suspended);
    t.resume();
    wait_open(&mut t).await;
    seqs.extend(turn(&mut t, "and again after a reconnect").await);
    assert!(t.cursor() > before, "{kind:?}: the cursor moved on");
    let unique: HashSet<u64> = seqs.iter().copied().collect();
    assert_eq!(
        unique.len(),
        seqs.len(),
        "{kind:?}: no duplicates across the reconnect"
    );
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{kind:?}: in order");
    assert!(t.counters().connects >= 2, "{kind:?}: {:?}", t.counters());
    console_log!(
        "{kind:?}: {} durable messages, counters {:?}",
        seqs.len(),
        t.counters()
    );
    t.close();
}

#[wasm_bindgen_test]
async fn sse_post_in_the_browser() {
    connect_stream_post_reconnect(TransportKind::SsePost).await;
}

#[wasm_bindgen_test]
async fn websocket_in_the_browser() {
    connect_stream_post_reconnect(TransportKind::WebSocket).await;
}

#[wasm_bindgen_test]
async fn hybrid_in_the_browser() {
    connect_stream_post_reconnect(TransportKind::Hybrid).await;
}
