//! Scale-out harness: a NATS server ([`super::nats`]) and `bridge-relay` processes with `--nats`
//! (`agents` / `gateway` / `all` nodes), and the helpers the cluster tests share.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use super::nats::NatsServer;
use super::*;

/// A node's options: `--demo --nats URL --role ROLE --node-name NAME` (add more before starting).
pub fn node_opts<'a>(nats_url: &str, dir: &'a Path, role: &str, name: &str) -> Opts<'a> {
    Opts::demo(dir)
        .arg("--nats")
        .arg(nats_url)
        .arg("--role")
        .arg(role)
        .arg("--node-name")
        .arg(name)
}

/// A node started at once.
pub fn node(nats: &NatsServer, dir: &Path, role: &str, name: &str) -> RelayProc {
    node_with(nats, dir, role, name, &[], &[])
}

/// A node started at once with the environment `env` and the arguments `args` added.
pub fn node_with<'a>(
    nats: &NatsServer,
    dir: &'a Path,
    role: &str,
    name: &str,
    env: &[(&'a str, &str)],
    args: &[&str],
) -> RelayProc {
    let mut o = node_opts(&nats.url, dir, role, name).args(args);
    for (k, v) in env {
        o = o.env(k, v);
    }
    RelayProc::start(o)
}

/// NATS, one `agents` node (`host1`) and two gateways (`gwa`, `gwb`).
pub struct Cluster {
    pub nats: NatsServer,
    pub agents: RelayProc,
    pub a: RelayProc,
    pub b: RelayProc,
    pub dirs: Vec<tempfile::TempDir>,
}

/// A NATS server, `n` data directories and an `agents` node (`host1`) on the first of them.
pub fn with_agents(n: usize) -> (NatsServer, Vec<tempfile::TempDir>, RelayProc) {
    let nats = NatsServer::start();
    let dirs = tempdirs(n);
    let agents = node(&nats, dirs[0].path(), "agents", "host1");
    (nats, dirs, agents)
}

pub fn cluster() -> Cluster {
    let (nats, dirs, agents) = with_agents(3);
    let a = node(&nats, dirs[1].path(), "gateway", "gwa");
    let b = node(&nats, dirs[2].path(), "gateway", "gwb");
    Cluster {
        nats,
        agents,
        a,
        b,
        dirs,
    }
}

/// `POST /v1/code/sessions` with `body` through a gateway, retried for up to [`T`] while it
/// answers 503 (a gateway places a session only on a node whose heartbeat it has seen): the
/// session id and the answer.
pub async fn create_through_with(gw: &RelayProc, body: Value) -> (String, Value) {
    let deadline = tokio::time::Instant::now() + T;
    loop {
        let r = http()
            .post(gw.url("/v1/code/sessions"))
            .bearer_auth(TOKEN)
            .json(&body)
            .send()
            .await;
        let (status, v) = match r {
            Ok(r) => (r.status().as_u16(), r.json().await.unwrap_or(Value::Null)),
            Err(e) => (0, Value::String(e.to_string())),
        };
        if status == 201 {
            return (v["session_id"].as_str().unwrap().to_owned(), v);
        }
        assert!(
            status == 503 || status == 0,
            "creating a session: {status} {v}"
        );
        assert!(
            tokio::time::Instant::now() < deadline,
            "no agents node became available: {status} {v}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// [`create_through_with`] an empty body: the session id.
pub async fn create_through(gw: &RelayProc) -> String {
    create_through_with(gw, json!({})).await.0
}

/// `/healthz` of `relay` until `want` holds (its status and body), or panics after [`T`].
pub async fn health_until(
    relay: &RelayProc,
    what: &str,
    want: impl Fn(u16, &Value) -> bool,
) -> Value {
    let deadline = tokio::time::Instant::now() + T;
    loop {
        let (status, v) = match http().get(relay.url("/healthz")).send().await {
            Ok(r) => (r.status().as_u16(), r.json().await.unwrap_or(Value::Null)),
            Err(e) => (0, Value::String(e.to_string())),
        };
        if want(status, &v) {
            return v;
        }
        if tokio::time::Instant::now() >= deadline {
            let log = relay.stderr_text();
            let tail: Vec<&str> = log.lines().rev().take(30).collect();
            panic!(
                "{what}: {status} {v}\nthe relay's last log lines:\n{}",
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The durable frames' `(id, data)`.
pub fn durable(frames: &[Frame]) -> Vec<(u64, Value)> {
    frames
        .iter()
        .filter(|f| is_durable(f))
        .map(|f| (f.id.unwrap(), f.data.clone()))
        .collect()
}

/// An answer allowing the tool a prompt asks for, with `command` as its input.
pub fn answer_to(ask: &Frame, command: &str) -> Value {
    allow(
        ask.payload()["request_id"].as_str().unwrap(),
        ask.payload()["request"]["tool_use_id"].as_str().unwrap(),
        json!({ "command": command }),
    )
}

/// A session placed on `host1` through gateway A, followed there and sent `text`, up to the
/// permission prompt: the session id, A's stream, its frames up to the prompt, and the prompt.
pub async fn prompted_on_host1(c: &Cluster, text: &str) -> (String, Sse, Vec<Frame>, Frame) {
    let sid = create_on_host1(&c.a).await;
    let mut on_a = c.a.prompt(&sid, text).await;
    let before = on_a.until("prompt", is_can_use_tool).await;
    let ask = before.last().unwrap().clone();
    (sid, on_a, before, ask)
}

/// Answers `ask` on `sid` through `relay`, allowing `command` (200 expected), and reads `sse` to
/// the turn's result: the frames up to it.
pub async fn answer_and_finish(
    relay: &RelayProc,
    sid: &str,
    ask: &Frame,
    command: &str,
    sse: &mut Sse,
) -> Vec<Frame> {
    let r = relay.post(sid, TOKEN, answer_to(ask, command)).await;
    assert_eq!(r.status(), 200);
    sse.until("result", is_result).await
}

/// A session's entry in a relay's list (`None`: not listed).
pub async fn listed(relay: &RelayProc, sid: &str) -> Option<Value> {
    let list = get_json(&relay.url("/v1/code/sessions"), TOKEN).await;
    list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == sid)
        .cloned()
}

/// One full demo turn on `sid` through `gw` (a prompt, answered, then the result): the frames.
pub async fn demo_turn(gw: &RelayProc, sid: &str, text: &str) -> Vec<Frame> {
    let mut sse = gw.sse(sid, None).await;
    assert_eq!(sse.status, 200);
    let r = gw.post(sid, TOKEN, user(text)).await;
    assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());
    let mut frames = sse.until("the prompt", is_can_use_tool).await;
    let ask = frames.last().unwrap().clone();
    let r = gw
        .post(sid, TOKEN, answer_to(&ask, &format!("echo {text}")))
        .await;
    assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());
    frames.extend(sse.until("the result", is_result).await);
    frames
}

/// The sequence numbers of a relay's event page of `sid` from the start (dense from 1 asserted).
pub async fn dense_log(relay: &RelayProc, sid: &str) -> Vec<Value> {
    let page = relay.events(sid, 0).await;
    let events = page["events"].as_array().unwrap().clone();
    let seqs: Vec<u64> = seqs_of(&events);
    assert_dense(&seqs, "dense from 1");
    events
}

/// Sends a signal to a process this test started (`STOP`, `CONT`, `KILL`).
pub fn signal(pid: u32, sig: &str) {
    let ok = std::process::Command::new("kill")
        .args([&format!("-{sig}"), &pid.to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill -{sig} {pid}");
}

/// Created through a gateway: placed on `host1`, answered with the gateway's own URLs.
pub async fn create_on_host1(gw: &RelayProc) -> String {
    let (sid, v) = create_through_with(gw, json!({})).await;
    assert_eq!(v["host"], "host1", "{v}");
    assert!(
        v["stream_url"]
            .as_str()
            .unwrap()
            .contains(&gw.addr.port().to_string()),
        "the gateway's own URLs: {v}"
    );
    sid
}

/// Reads frames until none comes for 300 ms (what a fresh stream replays).
pub async fn drain(sse: &mut Sse) {
    while sse
        .next(std::time::Duration::from_millis(300))
        .await
        .is_some()
    {}
    assert!(!sse.ended, "the stream ended early");
}

/// A worker event of `sid` at `seq` as a host would store it (`payload` is its JSON text).
pub fn worker_event(
    sid: &str,
    seq: u64,
    event_id: &str,
    event_type: &str,
    payload: String,
) -> bridge_relay::core::store::StoredEvent {
    bridge_relay::core::store::StoredEvent {
        session_id: sid.to_owned(),
        seq,
        event_id: event_id.into(),
        event_type: event_type.into(),
        source: bridge_relay::core::store::Source::Worker,
        created_at: "2026-01-01T00:00:00Z".into(),
        payload,
        client_uuid: None,
    }
}

/// Publishes `event` on its session's events subject straight to JetStream at `nats_url` (the
/// test pretending to be another writer), with its sequence number in the header as a host sends
/// it and `ends` as encoded; waits for the ack.
pub async fn publish_as_writer(
    nats_url: &str,
    event: &bridge_relay::core::store::StoredEvent,
    ends: bool,
) {
    use bridge_relay::cluster::wire;
    let client = async_nats::connect(nats_url).await.unwrap();
    let js = async_nats::jetstream::new(client);
    let mut headers = async_nats::HeaderMap::new();
    headers.insert(wire::SEQ_HEADER, event.seq.to_string().as_str());
    js.publish_with_headers(
        wire::events_subject(&event.session_id),
        headers,
        wire::encode_event(event, ends),
    )
    .await
    .unwrap()
    .await
    .unwrap();
}
