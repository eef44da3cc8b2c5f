//! The relay harness shared by the tests that run the transports against the real relay: the
//! relay process, its REST helpers, the fault-injecting TCP proxy, and a fast-retry config.
//!
//! Needs the relay binary: `cargo build -p bridge-relay` first (the tests look for `bridge-relay`
//! next to the test executable's `deps/` folder).

use std::collections::{HashMap, HashSet};
use std::io::{BufRead as _, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bridge_transport::{
    BackoffConfig, Config, Endpoint, Resume, Transport, TransportEvent, TransportKind,
};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

pub mod answer;

pub const TOKEN: &str = "transport-test-token-0123456789";

// ---------------------------------------------------------------- the relay

pub struct Relay {
    child: Child,
    pub addr: SocketAddr,
    pub dir: PathBuf,
}

impl Drop for Relay {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

pub fn relay_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let dir = exe
        .parent()
        .and_then(|d| d.parent())
        .expect("target/<profile>");
    let bin = dir.join(format!("bridge-relay{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.exists(),
        "{} not found: build the relay first with `cargo build -p bridge-relay`",
        bin.display()
    );
    bin
}

/// Starts the relay with its data and the agent's working directory in a fresh temporary directory
/// (`<prefix>-<pid>-<uuid>`, removed on drop); `configure` adds the test's own flags and environment
/// (it gets the directory, to put files there). No console build is needed: `--static-dir` names a
/// directory that does not exist, so the relay serves a placeholder page.
pub fn start_relay(prefix: &str, configure: impl FnOnce(&Path, &mut Command)) -> Relay {
    let dir = std::env::temp_dir().join(format!(
        "{prefix}-{}-{}",
        std::process::id(),
        uuid::Uuid::new_v4().simple()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let mut cmd = Command::new(relay_binary());
    cmd.args(["--bind", "127.0.0.1:0"])
        .arg("--data-dir")
        .arg(dir.join("data"))
        .arg("--cwd")
        .arg(&dir)
        .arg("--static-dir")
        .arg(dir.join("no-static"))
        .env("BRIDGE_RELAY_TOKEN", TOKEN)
        .env("BRIDGE_DEMO_SPEED", "0")
        .env("BRIDGE_RELAY_LOG", "error")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    configure(&dir, &mut cmd);
    let mut child = cmd.spawn().expect("spawn bridge-relay");
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    let addr = loop {
        let line = lines
            .next()
            .expect("relay exited before listening")
            .expect("relay stdout");
        if let Some(a) = line.strip_prefix("listening on ") {
            break a.trim().parse().expect("listen address");
        }
    };
    // keep draining stdout so the relay never blocks on it
    std::thread::spawn(move || for _ in lines {});
    Relay { child, addr, dir }
}

impl Relay {
    pub fn base(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub async fn create_session(&self) -> String {
        let v: Value = reqwest::Client::new()
            .post(format!("{}/v1/code/sessions", self.base()))
            .bearer_auth(TOKEN)
            .json(&json!({}))
            .send()
            .await
            .unwrap()
            .error_for_status()
            .unwrap()
            .json()
            .await
            .unwrap();
        v["session_id"].as_str().unwrap().to_owned()
    }

    /// `GET path` with the token: the answer's JSON.
    pub async fn get_json(&self, path: &str) -> Value {
        reqwest::Client::new()
            .get(format!("{}{path}", self.base()))
            .bearer_auth(TOKEN)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// The session's state and the relay's newest sequence number.
    pub async fn session_state(&self, session: &str) -> (String, u64) {
        let s = self.get_json(&format!("/v1/code/sessions/{session}")).await;
        let page = self
            .get_json(&format!(
                "/v1/code/sessions/{session}/events?after=0&limit=1"
            ))
            .await;
        (
            s["state"].as_str().unwrap_or_default().to_owned(),
            page["last_sequence_num"].as_u64().unwrap_or_default(),
        )
    }

    /// The whole REST log of a session.
    pub async fn log(&self, session: &str) -> Vec<Value> {
        let mut out: Vec<Value> = Vec::new();
        loop {
            let after = out
                .last()
                .map_or(0, |e| e["sequence_num"].as_u64().unwrap());
            let page = self
                .get_json(&format!(
                    "/v1/code/sessions/{session}/events?after={after}&limit=1000"
                ))
                .await;
            let events = page["events"].as_array().unwrap().clone();
            if events.is_empty() {
                return out;
            }
            out.extend(events);
        }
    }
}

// ---------------------------------------------------------------- the chaos proxy

/// xorshift64*: deterministic per seed, no dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

pub struct Proxy {
    pub addr: SocketAddr,
    pub cuts: Arc<AtomicU64>,
    pub connections: Arc<AtomicU64>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Forwards to `target`; every connection is cut (FIN or RST) once it has
/// carried a random number of bytes in `1..=max_bytes`, possibly in the
/// middle of a frame or of an HTTP request.
pub async fn start_proxy(
    listener: TcpListener,
    target: SocketAddr,
    seed: u64,
    max_bytes: u64,
) -> Proxy {
    let addr = listener.local_addr().unwrap();
    let cuts = Arc::new(AtomicU64::new(0));
    let connections = Arc::new(AtomicU64::new(0));
    let (c2, n2) = (cuts.clone(), connections.clone());
    let task = tokio::spawn(async move {
        let mut rng = Rng(seed | 1);
        loop {
            let Ok((inbound, _)) = listener.accept().await else {
                return;
            };
            n2.fetch_add(1, Ordering::Relaxed);
            let budget = 1 + rng.below(max_bytes);
            let rst = rng.below(2) == 0;
            tokio::spawn(pipe(inbound, target, budget, rst, c2.clone()));
        }
    });
    Proxy {
        addr,
        cuts,
        connections,
        task,
    }
}

async fn pipe(
    inbound: TcpStream,
    target: SocketAddr,
    budget: u64,
    rst: bool,
    cuts: Arc<AtomicU64>,
) {
    let Ok(outbound) = TcpStream::connect(target).await else {
        return;
    };
    let _ = inbound.set_nodelay(true);
    let _ = outbound.set_nodelay(true);
    if rst {
        // closing then sends RST instead of FIN: the client sees a reset
        let _ = inbound.set_zero_linger();
    }
    let remaining = Arc::new(AtomicU64::new(budget));
    let (ri, wi) = inbound.into_split();
    let (ro, wo) = outbound.into_split();
    // Whichever direction ends first ends the connection (both halves drop).
    let cut = tokio::select! {
        c = forward(ri, wo, &remaining) => c,
        c = forward(ro, wi, &remaining) => c,
    };
    if cut {
        cuts.fetch_add(1, Ordering::Relaxed);
    }
}

/// Copies `from` to `to` out of the shared byte budget: whether the budget ran out (a cut), rather
/// than the connection ending first.
async fn forward(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    remaining: &AtomicU64,
) -> bool {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => return false,
            Ok(n) => n,
        };
        let (take, cut) = take(remaining, n);
        if to.write_all(&buf[..take]).await.is_err() {
            return false;
        }
        if cut {
            return true;
        }
    }
}

/// Takes up to `n` bytes from the budget: (bytes to forward, budget exhausted).
fn take(remaining: &AtomicU64, n: usize) -> (usize, bool) {
    let mut cur = remaining.load(Ordering::Relaxed);
    loop {
        let t = cur.min(n as u64);
        match remaining.compare_exchange(cur, cur - t, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return (t as usize, cur - t == 0),
            Err(actual) => cur = actual,
        }
    }
}

// ---------------------------------------------------------------- helpers

pub fn fast_config(kind: TransportKind, session: &str) -> Config {
    let mut c = Config::new(kind, session);
    c.backoff = BackoffConfig {
        base_ms: 5,
        max_ms: 100,
        healthy_after_ms: 2_000,
        ..BackoffConfig::default()
    };
    c.outbox.retry_base_ms = 5;
    c.outbox.retry_max_ms = 100;
    c.outbox.max_attempts = 1_000;
    c
}

pub fn user_message(text: &str) -> Value {
    serde_json::to_value(bridge_protocol::build::user_text(
        text,
        uuid::Uuid::new_v4(),
    ))
    .unwrap()
}

/// The sequence numbers a client that posted `mine` must deliver: every durable event except
/// echoes of its own posts and repeats of a uuid already seen (the CLI's replay of user messages).
pub fn expected_seqs(log: &[Value], mine: &HashSet<String>) -> Vec<u64> {
    let mut seen = HashSet::new();
    log.iter()
        .filter(|e| match e["payload"]["uuid"].as_str() {
            Some(u) => seen.insert(u.to_owned()) && !mine.contains(u),
            None => true,
        })
        .map(|e| e["sequence_num"].as_u64().unwrap())
        .collect()
}

/// A transport of `kind` to `session` through the chaos proxy at `proxy` (fast retries).
pub fn connect_through(proxy: &Proxy, kind: TransportKind, session: &str) -> Transport {
    let endpoint = Endpoint::new(
        format!("http://{}", proxy.addr),
        session,
        Some(TOKEN.to_owned()),
    );
    bridge_transport::native::connect(endpoint, fast_config(kind, session), Resume::default())
}

/// The chaos tests' handling of every event but a message: records a confirmation in `delivered`
/// (each uuid confirmed once); a failed send, a gap or a malformed frame fails the test.
pub fn check_event(
    kind: TransportKind,
    e: TransportEvent,
    delivered: &mut HashMap<String, Option<u64>>,
) {
    match e {
        TransportEvent::Delivered { uuid, seq, .. } => {
            assert!(
                delivered.insert(uuid.clone(), seq).is_none(),
                "{kind:?}: {uuid} confirmed twice"
            );
        }
        TransportEvent::SendFailed { uuid, error } => {
            panic!("{kind:?}: send {uuid} failed: {error}")
        }
        TransportEvent::Gap { after, next } => panic!("{kind:?}: gap {after}..{next}"),
        TransportEvent::Malformed { seq, error } => {
            panic!("{kind:?}: malformed {seq:?}: {error}")
        }
        _ => {}
    }
}

/// What a client received (`(seq, payload)`, in order) against the relay's `log`, for a client
/// that posted `mine`.
pub struct Transcript {
    /// The sequence numbers received, in order.
    pub got: Vec<u64>,
    /// The ones [`expected_seqs`] names.
    pub expected: Vec<u64>,
    /// Expected, never received.
    pub lost: usize,
    /// Received twice, or received and not expected.
    pub shown_twice: usize,
    /// Received with a payload other than the log's.
    pub mismatched: usize,
}

impl Transcript {
    pub fn compare(log: &[Value], received: &[(u64, Value)], mine: &HashSet<String>) -> Self {
        let expected = expected_seqs(log, mine);
        let by_seq: HashMap<u64, &Value> = log
            .iter()
            .map(|e| (e["sequence_num"].as_u64().unwrap(), &e["payload"]))
            .collect();
        let got: Vec<u64> = received.iter().map(|(s, _)| *s).collect();
        let got_set: HashSet<u64> = got.iter().copied().collect();
        let expected_set: HashSet<u64> = expected.iter().copied().collect();
        let lost = expected.iter().filter(|s| !got_set.contains(s)).count();
        let shown_twice = got.len() - got_set.len() + got_set.difference(&expected_set).count();
        let mismatched = received
            .iter()
            .filter(|(s, v)| by_seq.get(s).is_none_or(|p| *p != v))
            .count();
        Transcript {
            got,
            expected,
            lost,
            shown_twice,
            mismatched,
        }
    }

    /// Asserts that the client received exactly the log: nothing lost, shown twice or changed.
    pub fn assert_exact(&self, kind: TransportKind) {
        assert_eq!(
            self.got, self.expected,
            "{kind:?}: transcript differs from the relay's log"
        );
        assert_eq!(
            (self.lost, self.shown_twice, self.mismatched),
            (0, 0, 0),
            "{kind:?}"
        );
    }
}

/// How the posts `sent` were applied, by the client events in the relay's `log`: (never applied,
/// applied more than once).
pub fn posts_applied<'a>(log: &[Value], sent: impl Iterator<Item = &'a String>) -> (usize, usize) {
    let mut applied: HashMap<&str, usize> = HashMap::new();
    for e in log {
        if e["source"] == "client"
            && let Some(u) = e["payload"]["uuid"].as_str()
        {
            *applied.entry(u).or_default() += 1;
        }
    }
    let lost = sent.filter(|u| !applied.contains_key(u.as_str())).count();
    let twice = applied.values().filter(|n| **n > 1).count();
    (lost, twice)
}

/// The pace of a chaos loop: its deadline, and a progress line every 15 s.
pub struct Pacer {
    pub started: std::time::Instant,
    deadline: std::time::Instant,
    last_progress: std::time::Instant,
    /// Settled moments in a row (an event starts the count again).
    settled: u32,
}

impl Pacer {
    pub fn new(started: std::time::Instant, deadline: std::time::Instant) -> Self {
        Pacer {
            started,
            deadline,
            last_progress: std::time::Instant::now(),
            settled: 0,
        }
    }

    /// Counts a [`Quiet::Settled`] moment: whether it is the second in a row (the run is done).
    pub fn settled(&mut self) -> bool {
        self.settled += 1;
        self.settled >= 2
    }

    /// The transport's next event within 300 ms (`None`: a quiet moment), after failing the test
    /// past the deadline (saying how many of `sent` were `confirmed`) and printing, every 15 s,
    /// the cursor, `progress` (what this loop counts) and the cuts so far. An ended transport
    /// fails the test.
    pub async fn next(
        &mut self,
        t: &mut Transport,
        kind: TransportKind,
        proxy: &Proxy,
        (sent, confirmed): (usize, usize),
        progress: impl FnOnce() -> String,
    ) -> Option<TransportEvent> {
        use futures::StreamExt as _;
        use std::time::{Duration, Instant};
        assert!(
            Instant::now() < self.deadline,
            "{kind:?}: not done in time: cursor {}, sent {sent}, confirmed {confirmed}, cuts {}, state {:?}",
            t.cursor(),
            proxy.cuts.load(Ordering::Relaxed),
            t.state()
        );
        if self.last_progress.elapsed() > Duration::from_secs(15) {
            self.last_progress = Instant::now();
            println!(
                "  … {kind:?} {:.0} s: cursor {}, {}, cuts {}, {:?}",
                self.started.elapsed().as_secs_f64(),
                t.cursor(),
                progress(),
                proxy.cuts.load(Ordering::Relaxed),
                t.state()
            );
        }
        match tokio::time::timeout(Duration::from_millis(300), t.next()).await {
            Ok(Some(e)) => {
                self.settled = 0;
                Some(e)
            }
            Ok(None) => panic!("{kind:?}: transport ended: {:?}", t.state()),
            Err(_) => None,
        }
    }
}

/// What a quiet moment of a chaos loop means.
pub enum Quiet {
    /// Everything sent is confirmed, the agent is idle and the transport has applied the relay's
    /// whole log (once traffic is `enough`).
    Settled,
    /// Everything is confirmed and the agent idle, but more traffic is wanted: time for a turn.
    WantsTurn,
    /// Neither: wait.
    Wait,
}

/// Reads a quiet moment of `session` (the transport at `cursor`; `confirmed`: every send is).
pub async fn quiet(
    relay: &Relay,
    session: &str,
    cursor: u64,
    enough: bool,
    confirmed: bool,
) -> Quiet {
    if !confirmed {
        return Quiet::Wait;
    }
    let (state, last) = relay.session_state(session).await;
    match (enough, state == "idle") {
        (true, true) if cursor == last => Quiet::Settled,
        (false, true) => Quiet::WantsTurn,
        _ => Quiet::Wait,
    }
}

/// Sends the prompt `chaos N` (`N`: how many `sent` holds) and records its uuid there.
pub fn send_turn(t: &mut Transport, sent: &mut Vec<String>) {
    sent.push(
        t.send(user_message(&format!("chaos {}", sent.len())))
            .unwrap(),
    );
}

/// A chaos run: the relay (started by the test), a session on it, the chaos proxy in front of it
/// and a transport of `kind` through the proxy.
pub struct Chaos {
    pub kind: TransportKind,
    pub relay: Relay,
    pub session: String,
    pub proxy: Proxy,
    pub t: Transport,
}

/// What the client of a chaos run sent and received.
#[derive(Default)]
pub struct ChaosClient {
    /// The prompts sent (their uuids).
    pub prompts: Vec<String>,
    /// The permission prompts answered: request_id → the answer's uuid.
    pub answers: HashMap<String, String>,
    /// Permission prompts delivered again after they were answered.
    pub prompts_shown_twice: usize,
    /// The confirmed sends: uuid → seq.
    pub delivered: HashMap<String, Option<u64>>,
    /// The messages received: `(seq, payload)`, in order.
    pub received: Vec<(u64, Value)>,
}

impl ChaosClient {
    /// How many posts were sent: prompts and answers.
    pub fn sent(&self) -> usize {
        self.prompts.len() + self.answers.len()
    }

    /// The uuids of every post sent.
    pub fn mine(&self) -> HashSet<String> {
        self.prompts
            .iter()
            .chain(self.answers.values())
            .cloned()
            .collect()
    }
}

impl Chaos {
    /// Starts a chaos run: `start_relay` starts the relay with the extra flags it gets (they let
    /// the relay accept the proxy's address in the Host header); the proxy cuts each connection
    /// after a random number of bytes up to 48 KiB, drawn from `seed`.
    pub async fn start(
        kind: TransportKind,
        seed: u64,
        start_relay: impl FnOnce(&[String]) -> Relay,
    ) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let proxy_addr = listener.local_addr().unwrap();
        let relay = start_relay(&["--allowed-host".into(), proxy_addr.to_string()]);
        let session = relay.create_session().await;
        let proxy = start_proxy(listener, relay.addr, seed, 48 * 1024).await;
        let t = connect_through(&proxy, kind, &session);
        Chaos {
            kind,
            relay,
            session,
            proxy,
            t,
        }
    }

    /// Runs the client: two turns queued at once, then one more per finished turn until the
    /// session has `events` durable events and the proxy has cut `cuts` times, answering every
    /// permission prompt (once); then until everything sent is confirmed, the agent is idle and
    /// the transport has applied the relay's whole log.
    pub async fn run(&mut self, mut pacer: Pacer, (events, cuts): (u64, u64)) -> ChaosClient {
        let Chaos {
            kind,
            relay,
            session,
            proxy,
            t,
        } = self;
        let kind = *kind;
        let mut c = ChaosClient::default();
        for _ in 0..2 {
            send_turn(t, &mut c.prompts);
        }
        loop {
            let enough = t.cursor() >= events && proxy.cuts.load(Ordering::Relaxed) >= cuts;
            let counts = (c.sent(), c.delivered.len());
            let progress = || {
                format!(
                    "turns {}, prompts answered {}, confirmed {}",
                    c.prompts.len(),
                    c.answers.len(),
                    c.delivered.len()
                )
            };
            let Some(e) = pacer.next(t, kind, proxy, counts, progress).await else {
                let confirmed = c.delivered.len() == c.sent();
                match quiet(relay, session, t.cursor(), enough, confirmed).await {
                    Quiet::Settled => {
                        if pacer.settled() {
                            return c;
                        }
                    }
                    // idle but not done: another turn makes traffic to cut
                    Quiet::WantsTurn => send_turn(t, &mut c.prompts),
                    Quiet::Wait => {}
                }
                continue;
            };
            match e {
                TransportEvent::Message(m) => {
                    let Some(seq) = m.seq else { continue };
                    let v = serde_json::to_value(&m.message).unwrap();
                    if let Some(allow) = answer::allow_if_asked(&v) {
                        let rid = v["request_id"].as_str().unwrap().to_owned();
                        match c.answers.entry(rid) {
                            std::collections::hash_map::Entry::Occupied(_) => {
                                c.prompts_shown_twice += 1
                            }
                            std::collections::hash_map::Entry::Vacant(slot) => {
                                slot.insert(t.send(allow).unwrap());
                            }
                        }
                    }
                    if v["type"] == "result" && !enough {
                        send_turn(t, &mut c.prompts);
                    }
                    c.received.push((seq, v));
                }
                other => check_event(kind, other, &mut c.delivered),
            }
        }
    }

    /// Closes the transport and reads the figures, the transcript of what `client` received
    /// among them.
    pub async fn end(self, client: &ChaosClient) -> (ChaosEnd, Relay) {
        let Chaos {
            relay,
            session,
            proxy,
            t,
            ..
        } = self;
        let end = ChaosEnd::close(t, &proxy, &relay, &session, client).await;
        (end, relay)
    }
}

/// What a chaos run ends with, once its transport is closed: the proxy's cuts and connections,
/// the transport's counters, the relay's log read directly (not through the proxy), and what the
/// client received against it.
pub struct ChaosEnd {
    pub cuts: u64,
    pub connections: u64,
    pub counters: bridge_transport::Counters,
    pub log: Vec<Value>,
    pub transcript: Transcript,
}

impl ChaosEnd {
    /// Closes `t` and reads the figures.
    async fn close(
        t: Transport,
        proxy: &Proxy,
        relay: &Relay,
        session: &str,
        client: &ChaosClient,
    ) -> Self {
        let cuts = proxy.cuts.load(Ordering::Relaxed);
        let connections = proxy.connections.load(Ordering::Relaxed);
        let counters = t.counters();
        t.close();
        let log = relay.log(session).await;
        let transcript = Transcript::compare(&log, &client.received, &client.mine());
        ChaosEnd {
            cuts,
            connections,
            counters,
            log,
            transcript,
        }
    }

    /// The figures every chaos run prints: the proxy's, the transcript's and the transport's.
    pub fn figures(&self) -> String {
        let ChaosEnd {
            cuts,
            connections,
            counters,
            log,
            transcript,
        } = self;
        format!(
            "cuts {cuts}, connections {connections}, durable events {}, delivered {}, lost {}, \
             shown twice {}, mismatched {}, reconnects {}, gap fetches {}, duplicates dropped {}, \
             echoes dropped {}",
            log.len(),
            transcript.got.len(),
            transcript.lost,
            transcript.shown_twice,
            transcript.mismatched,
            counters.reconnects,
            counters.gap_fetches,
            counters.duplicates,
            counters.echoes,
        )
    }

    /// Asserts that the run made its traffic: at least `events` durable events and `cuts` cuts.
    pub fn assert_enough(&self, kind: TransportKind, events: u64, cuts: u64) {
        assert!(
            self.log.len() as u64 >= events,
            "{kind:?}: only {} durable events",
            self.log.len()
        );
        assert!(self.cuts >= cuts, "{kind:?}: only {} cuts", self.cuts);
    }
}
