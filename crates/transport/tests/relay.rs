//! The three transports against the real relay over 127.0.0.1.
//!
//! Needs the relay binary: `cargo build -p bridge-relay` first (the tests look
//! for `bridge-relay` next to the test executable's `deps/` folder).
//!
//! * `demo_turn_*`: each transport completes a turn of the demo agent's
//!   default scenario, answering its permission prompt.
//! * `chaos_*`: a fault-injecting TCP proxy between the transport and the
//!   relay cuts connections at random byte offsets; over 200 cuts in a session
//!   of 10,000 durable events the received transcript must equal the relay's
//!   REST log exactly (0 lost, 0 duplicated) and every posted message must be
//!   applied exactly once. Run with `--nocapture` to see the figures.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use bridge_transport::{
    Config, ConnectionState, Endpoint, Resume, Transport, TransportEvent, TransportKind,
};
use futures::StreamExt as _;
use serde_json::Value;

use crate::common::answer::allow_if_asked;
use crate::common::{Chaos, Pacer, Relay, TOKEN, expected_seqs, posts_applied, user_message};

// ---------------------------------------------------------------- the relay

fn start_relay(scenario: &str) -> Relay {
    start_relay_with(scenario, &[])
}

fn start_relay_with(scenario: &str, extra: &[String]) -> Relay {
    crate::common::start_relay("bridge-transport-test", |_, cmd| {
        cmd.args(["--demo", "--demo-scenario", scenario])
            .args(extra);
    })
}

// ---------------------------------------------------------------- helpers

fn payload(m: &bridge_transport::Inbound) -> Value {
    serde_json::to_value(&m.message).unwrap()
}

async fn wait_open(t: &mut Transport, deadline: Instant) -> Vec<TransportEvent> {
    let mut seen = Vec::new();
    while t.state() != ConnectionState::Open {
        assert!(
            Instant::now() < deadline,
            "not open in time: {:?}",
            t.state()
        );
        match tokio::time::timeout(Duration::from_millis(200), t.next()).await {
            Ok(Some(e)) => seen.push(e),
            Ok(None) => panic!("transport ended: {:?}", t.state()),
            Err(_) => {}
        }
    }
    seen
}

// ---------------------------------------------------------------- demo turn

async fn demo_turn(kind: TransportKind) {
    let relay = start_relay("default");
    let session = relay.create_session().await;
    let endpoint = Endpoint::new(relay.base(), &session, Some(TOKEN.to_owned()));
    let mut t =
        bridge_transport::native::connect(endpoint, Config::new(kind, &session), Resume::default());
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut events = wait_open(&mut t, deadline).await;
    let prompt = t
        .send(user_message("hello from the transport test"))
        .unwrap();
    let mut answer = None;
    let mut kinds: Vec<String> = Vec::new();
    let mut delivered = HashSet::new();
    loop {
        let e = tokio::time::timeout_at(deadline.into(), t.next())
            .await
            .unwrap_or_else(|_| panic!("{kind:?}: no result in time; kinds so far: {kinds:?}"))
            .expect("transport ended");
        match &e {
            TransportEvent::Message(m) => {
                kinds.push(m.decode().expect("typed decode").kind());
                let v = payload(m);
                if let Some(allow) = allow_if_asked(&v) {
                    answer = Some(t.send(allow).unwrap());
                }
                if v["type"] == "result" {
                    assert_eq!(v["subtype"], "success", "{v}");
                    events.push(e);
                    break;
                }
            }
            TransportEvent::Delivered { uuid, seq, .. } => {
                assert!(seq.is_some(), "stored events have a seq");
                delivered.insert(uuid.clone());
            }
            TransportEvent::SendFailed { uuid, error } => {
                panic!("{kind:?}: send {uuid} failed: {error}")
            }
            _ => {}
        }
        events.push(e);
    }
    let answer = answer.expect("the default scenario asks permission");
    // the confirmations may trail the result by a moment
    let until = Instant::now() + Duration::from_secs(5);
    while !(delivered.contains(&prompt) && delivered.contains(&answer)) && Instant::now() < until {
        if let Ok(Some(TransportEvent::Delivered { uuid, .. })) =
            tokio::time::timeout(Duration::from_millis(100), t.next()).await
        {
            delivered.insert(uuid);
        }
    }
    assert!(
        delivered.contains(&prompt) && delivered.contains(&answer),
        "{kind:?}: both sends confirmed"
    );
    for k in [
        "system/init",
        "stream_event",
        "assistant",
        "control_request/can_use_tool",
        "result/success",
    ] {
        assert!(
            kinds.iter().any(|x| x == k),
            "{kind:?}: no {k} in {kinds:?}"
        );
    }
    // own echoes are not delivered; the tool result (worker user message) is
    let c = t.counters();
    assert!(c.echoes >= 2, "{kind:?}: {c:?}");
    assert_eq!(c.malformed, 0, "{kind:?}: {c:?}");
    // the transcript equals the relay's log minus own echoes and repeated uuids
    let log = relay.log(&session).await;
    let got: Vec<u64> = events
        .iter()
        .filter_map(|e| match e {
            TransportEvent::Message(m) => m.seq,
            _ => None,
        })
        .collect();
    let expected = expected_seqs(&log, &HashSet::from([prompt, answer]));
    assert_eq!(got, expected[..got.len()].to_vec(), "{kind:?}");
    t.close();
    println!(
        "demo turn over {kind:?}: {} messages, counters {c:?}",
        kinds.len()
    );
}

/// The sequence numbers a client that posted `mine` must deliver: every
/// durable event except echoes of its own posts and repeats of a uuid already
/// seen (the CLI's replay of user messages).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn demo_turn_sse_post() {
    demo_turn(TransportKind::SsePost).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn demo_turn_websocket() {
    demo_turn(TransportKind::WebSocket).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn demo_turn_hybrid() {
    demo_turn(TransportKind::Hybrid).await;
}

// ---------------------------------------------------------------- chaos

const TARGET_EVENTS: u64 = 10_000;
const MIN_CUTS: u64 = 200;

async fn chaos(kind: TransportKind, seed: u64) {
    let started = Instant::now();
    let mut run = Chaos::start(kind, seed, |extra| start_relay_with("many", extra)).await;
    let deadline = started + Duration::from_secs(600);
    // The scenario asks no permission: every post is a prompt.
    let client = run
        .run(Pacer::new(started, deadline), (TARGET_EVENTS, MIN_CUTS))
        .await;
    let (end, _relay) = run.end(&client).await;
    let (sent, log, mine) = (&client.prompts, &end.log, client.mine());
    // every posted message was applied exactly once (once in the log as a
    // client event) and was answered by exactly one turn
    let (posts_lost, posts_twice) = posts_applied(log, sent.iter());
    // the agent read each posted message once (its --replay-user-messages echo)
    let mut consumed: HashMap<&str, usize> = HashMap::new();
    for e in log {
        if e["source"] == "worker"
            && e["payload"]["type"] == "user"
            && let Some(u) = e["payload"]["uuid"].as_str()
            && mine.contains(u)
        {
            *consumed.entry(u).or_default() += 1;
        }
    }
    let results_in_log = log
        .iter()
        .filter(|e| e["payload"]["type"] == "result")
        .count();

    println!(
        "chaos {kind:?} (seed {seed}): {}, posted {}, posts lost {posts_lost}, posts applied twice \
         {posts_twice}, turns {results_in_log}, {:.1} s",
        end.figures(),
        sent.len(),
        started.elapsed().as_secs_f64()
    );
    end.assert_enough(kind, TARGET_EVENTS, MIN_CUTS);
    end.transcript.assert_exact(kind);
    assert_eq!((posts_lost, posts_twice), (0, 0), "{kind:?}");
    assert!(
        sent.iter().all(|u| consumed.get(u.as_str()) == Some(&1)),
        "{kind:?}: every posted message reached the agent exactly once"
    );
    assert_eq!(
        client.delivered.len(),
        sent.len(),
        "{kind:?}: every send confirmed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_sse_post() {
    chaos(TransportKind::SsePost, 0x5EED_0001).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_websocket() {
    chaos(TransportKind::WebSocket, 0x5EED_0002).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_hybrid() {
    chaos(TransportKind::Hybrid, 0x5EED_0003).await;
}
