//! The relay harness shared by the tests that run the transports against the real relay: the
//! relay process, its REST helpers, the fault-injecting TCP proxy, and a fast-retry config.
//!
//! Needs the relay binary: `cargo build -p bridge-relay` first (the tests look for `bridge-relay`
//! next to the test executable's `deps/` folder).

use std::collections::HashSet;
use std::io::{BufRead as _, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bridge_transport::{BackoffConfig, Config, TransportKind};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

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

    /// The session's state and the relay's newest sequence number.
    pub async fn session_state(&self, session: &str) -> (String, u64) {
        let client = reqwest::Client::new();
        let s: Value = client
            .get(format!("{}/v1/code/sessions/{session}", self.base()))
            .bearer_auth(TOKEN)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let page: Value = client
            .get(format!(
                "{}/v1/code/sessions/{session}/events?after=0&limit=1",
                self.base()
            ))
            .bearer_auth(TOKEN)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        (
            s["state"].as_str().unwrap_or_default().to_owned(),
            page["last_sequence_num"].as_u64().unwrap_or_default(),
        )
    }

    /// The whole REST log of a session.
    pub async fn log(&self, session: &str) -> Vec<Value> {
        let client = reqwest::Client::new();
        let mut out: Vec<Value> = Vec::new();
        loop {
            let after = out
                .last()
                .map_or(0, |e| e["sequence_num"].as_u64().unwrap());
            let page: Value = client
                .get(format!(
                    "{}/v1/code/sessions/{session}/events?after={after}&limit=1000",
                    self.base()
                ))
                .bearer_auth(TOKEN)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
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
    let (mut ri, mut wi) = inbound.into_split();
    let (mut ro, mut wo) = outbound.into_split();
    let r1 = remaining.clone();
    let up = async move {
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            let n = match ri.read(&mut buf).await {
                Ok(0) | Err(_) => return false,
                Ok(n) => n,
            };
            let (take, cut) = take(&r1, n);
            if wo.write_all(&buf[..take]).await.is_err() {
                return false;
            }
            if cut {
                return true;
            }
        }
    };
    let r2 = remaining.clone();
    let down = async move {
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            let n = match ro.read(&mut buf).await {
                Ok(0) | Err(_) => return false,
                Ok(n) => n,
            };
            let (take, cut) = take(&r2, n);
            if wi.write_all(&buf[..take]).await.is_err() {
                return false;
            }
            if cut {
                return true;
            }
        }
    };
    // Whichever direction ends first ends the connection (both halves drop).
    let cut = tokio::select! {
        c = up => c,
        c = down => c,
    };
    if cut {
        cuts.fetch_add(1, Ordering::Relaxed);
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
