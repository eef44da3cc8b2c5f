//! Scale-out under load: a burst of thousands of events from one agent reaches gateways complete,
//! in order and once (the host keeps one JetStream message in flight per session, carrying what
//! queued up meanwhile).

use std::path::{Path, PathBuf};

use crate::common::cluster::*;
use crate::common::nats::NatsServer;
use crate::common::*;

const BURST: u64 = 5000;

/// An agent that answers `initialize` and, on any user message, writes `BURST` assistant messages
/// as fast as it can (each numbered `n`), then a result.
fn burst_agent(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt as _;
    let path = dir.join("burst-agent.sh");
    let body = format!(
        r#"#!/bin/sh
while IFS= read -r line; do
  case "$line" in
    *'"type":"control_request"'*)
      rid=$(printf '%s' "$line" | sed -n 's/.*"request_id":"\([^"]*\)".*/\1/p')
      printf '{{"type":"control_response","response":{{"subtype":"success","request_id":"%s","response":{{"commands":[],"models":[]}}}}}}\n' "$rid";;
    *'"type":"user"'*)
      seq 1 {BURST} | awk '{{printf "{{\"type\":\"assistant\",\"message\":{{\"id\":\"msg_burst\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"burst\",\"content\":[{{\"type\":\"text\",\"text\":\"burst %d\"}}],\"stop_reason\":null}},\"parent_tool_use_id\":null,\"session_id\":\"burst\",\"uuid\":\"00000000-0000-4000-8000-%012d\",\"n\":%d}}\n", $1, $1, $1}}'
      printf '{{"type":"result","subtype":"success","is_error":false,"session_id":"burst","uuid":"00000000-0000-4000-9000-000000000000"}}\n';;
  esac
done
"#
    );
    std::fs::write(&path, body).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// The burst's numbers in the order a stream delivered them, and the durable ids.
fn burst_of(frames: &[Frame]) -> (Vec<u64>, Vec<u64>) {
    let durable: Vec<&Frame> = frames.iter().filter(|f| is_durable(f)).collect();
    let ns = durable
        .iter()
        .filter_map(|f| f.payload()["n"].as_u64())
        .collect();
    (ns, durable.iter().map(|f| f.id.unwrap()).collect())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_5000_events_reaches_gateways_complete_in_order_and_once() {
    let nats = NatsServer::start();
    let dirs = tempdirs(3);
    let agent = burst_agent(dirs[0].path());
    let mut o = node_opts(&nats.url, dirs[0].path(), "agents", "host1");
    o.args[0] = "--claude".into();
    o.args.insert(1, agent.display().to_string());
    let host = RelayProc::start(o);
    let a = RelayProc::start(node_opts(&nats.url, dirs[1].path(), "gateway", "gwa"));
    let b = RelayProc::start(node_opts(&nats.url, dirs[2].path(), "gateway", "gwb"));

    let sid = create_through(&a).await;
    let mut on_a = a.sse(&sid, None).await;
    assert_eq!(on_a.status, 200);
    let started = std::time::Instant::now();
    a.say(&sid, "go").await;
    let frames = on_a.until("the burst's result on A", is_result).await;
    let took = started.elapsed();

    let (ns, ids) = burst_of(&frames);
    assert_eq!(
        ns,
        (1..=BURST).collect::<Vec<_>>(),
        "A: every event once, in order"
    );
    let first = ids[0];
    assert_eq!(
        ids,
        (first..first + ids.len() as u64).collect::<Vec<_>>(),
        "A: dense sequence numbers"
    );
    // The host's log and a gateway that mirrors the session afresh agree with A.
    let host_log = host.events(&sid, 0).await;
    let host_ids: Vec<u64> = seqs_of(host_log["events"].as_array().unwrap());
    assert_eq!(
        host_ids.last(),
        ids.last(),
        "the host's log ends where A's stream does"
    );
    let mut on_b = b.sse(&sid, Some(0)).await;
    let frames_b = on_b.until("the burst's result on B", is_result).await;
    assert_eq!(
        burst_of(&frames_b),
        (ns.clone(), ids.clone()),
        "B: the same events"
    );

    // Each JetStream message holds one or more whole events (how many depends on how fast the
    // host ingests versus NATS acks; printed below).
    let js = async_nats::jetstream::new(async_nats::connect(nats.url.as_str()).await.unwrap());
    let mut stream = js
        .get_stream(bridge_relay::cluster::wire::EVENTS_STREAM)
        .await
        .unwrap();
    let messages = stream.info().await.unwrap().state.messages;
    let events = *ids.last().unwrap();
    assert!(
        messages <= events,
        "{messages} messages for {events} events"
    );
    eprintln!("{BURST} events through a gateway in {took:?}: {messages} JetStream messages");
}
