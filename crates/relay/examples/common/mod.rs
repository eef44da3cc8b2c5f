//! What the relay's benchmark examples (`fanout`, `cluster_bench`, `replay_rss`) share: options,
//! the stamped agent they run as (`--claude <the example>`), starting a release `bridge-relay`,
//! an SSE reader that measures latency, percentiles, and what `/proc` says of a process (RSS,
//! CPU, write syscalls, load). Each example uses part of it.
#![allow(dead_code)]

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use futures::StreamExt as _;
use serde_json::{Value, json};

pub mod reference;

/// The controller token every benchmark relay runs with.
pub const TOKEN: &str = "bench-token-0123456789abcdef";

pub fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

/// `--name value` options.
pub struct Args(pub Vec<String>);

impl Args {
    pub fn from_env() -> Args {
        Args(std::env::args().collect())
    }
    pub fn get(&self, name: &str, default: &str) -> String {
        self.0
            .iter()
            .position(|a| a == name)
            .and_then(|i| self.0.get(i + 1))
            .cloned()
            .unwrap_or_else(|| default.to_owned())
    }
    pub fn num(&self, name: &str, default: u64) -> u64 {
        self.get(name, &default.to_string())
            .parse()
            .unwrap_or(default)
    }
    /// Started by a relay as its agent (with the claude stream-json flags).
    pub fn is_agent(&self) -> bool {
        self.0.iter().any(|a| a == "--output-format")
    }
}

// ------------------------------------------------------------------------------------------ agent

/// The agent: answers `initialize`; on a user message `go <count> <rate> [ephemeral]` writes `count`
/// assistant messages (or `stream_event` deltas) at `rate`/s (0: as fast as it can), each stamped
/// with its wall-clock write time (`"t_ns"`), then a `result`.
pub fn generator() -> anyhow::Result<()> {
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    let text = "x".repeat(120);
    for line in stdin.lock().lines() {
        let line = line?;
        let Ok(v) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        match v["type"].as_str() {
            Some("control_request") => {
                let resp = json!({"type":"control_response","response":{"subtype":"success","request_id":v["request_id"],"response":{"commands":[],"models":[]}}});
                writeln!(out, "{resp}")?;
                out.flush()?;
            }
            Some("user") => {
                let cmd = v["message"]["content"].as_str().unwrap_or("");
                let parts: Vec<&str> = cmd.split_whitespace().collect();
                if parts.first() != Some(&"go") {
                    continue;
                }
                let count: u64 = parts.get(1).and_then(|s| s.parse().ok()).unwrap_or(1000);
                let rate: u64 = parts.get(2).and_then(|s| s.parse().ok()).unwrap_or(2000);
                let ephemeral = parts.get(3) == Some(&"ephemeral");
                let start = Instant::now();
                for n in 0..count {
                    if let Some(at) = (n * 1_000_000_000).checked_div(rate) {
                        let due = start + Duration::from_nanos(at);
                        let now = Instant::now();
                        if due > now {
                            std::thread::sleep(due - now);
                        }
                    }
                    let (uuid, t) = (uuid::Uuid::new_v4(), now_ns());
                    if ephemeral {
                        write!(
                            out,
                            r#"{{"type":"stream_event","event":{{"type":"content_block_delta","index":0,"delta":{{"type":"text_delta","text":"{text}"}}}},"parent_tool_use_id":null,"session_id":"bench","uuid":"{uuid}","n":{n},"t_ns":{t}}}"#
                        )?;
                    } else {
                        write!(
                            out,
                            r#"{{"type":"assistant","message":{{"id":"msg_bench","type":"message","role":"assistant","model":"bench","content":[{{"type":"text","text":"{text}"}}],"stop_reason":null}},"parent_tool_use_id":null,"session_id":"bench","uuid":"{uuid}","n":{n},"t_ns":{t}}}"#
                        )?;
                    }
                    out.write_all(b"\n")?;
                    if rate > 0 {
                        out.flush()?;
                    }
                }
                writeln!(
                    out,
                    r#"{{"type":"result","subtype":"success","is_error":false,"session_id":"bench","uuid":"{}"}}"#,
                    uuid::Uuid::new_v4()
                )?;
                out.flush()?;
            }
            _ => {}
        }
    }
    Ok(())
}

// -------------------------------------------------------------------------------------- processes

/// A `bridge-relay` process, killed when dropped.
pub struct Relay {
    pub child: Child,
    pub base: String,
    pub name: String,
    _dir: Option<tempfile::TempDir>,
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.kill();
    }
}

impl Relay {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `bridge-relay` beside this example (`target/<profile>/examples/..`).
pub fn relay_binary() -> anyhow::Result<PathBuf> {
    // Another build of the relay (a before/after comparison).
    if let Some(bin) = std::env::var_os("BRIDGE_RELAY_BIN") {
        return Ok(PathBuf::from(bin));
    }
    let exe = std::env::current_exe()?;
    let bin = exe
        .parent()
        .and_then(|p| p.parent())
        .ok_or_else(|| anyhow::anyhow!("cannot locate target dir"))?
        .join("bridge-relay");
    anyhow::ensure!(
        bin.exists(),
        "{} not found: cargo build --release -p bridge-relay --bin bridge-relay --examples",
        bin.display()
    );
    Ok(bin)
}

/// Starts a relay on a free loopback port with `args`, its data in `data` (a temp dir when
/// `None`); returns once it listens.
pub fn start_relay(name: &str, data: Option<&Path>, args: &[&str]) -> anyhow::Result<Relay> {
    let dir = match data {
        Some(_) => None,
        None => Some(tempfile::tempdir()?),
    };
    let data = data.map_or_else(
        || dir.as_ref().expect("made").path().to_owned(),
        Path::to_owned,
    );
    let mut child = Command::new(relay_binary()?)
        .args(["--bind", "127.0.0.1:0", "--data-dir"])
        .arg(&data)
        .arg("--static-dir")
        .arg(data.join("none"))
        .arg("--claude-config-dir")
        .arg(data.join("claude"))
        .args(args)
        .env("BRIDGE_RELAY_TOKEN", TOKEN)
        .env("BRIDGE_RELAY_LOG", "error")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .stdin(Stdio::null())
        .spawn()?;
    let stdout = child.stdout.take().expect("piped");
    let mut lines = std::io::BufReader::new(stdout).lines();
    for line in lines.by_ref() {
        let line = line?;
        if let Some(a) = line.strip_prefix("listening on ") {
            let base = format!("http://{}", a.trim());
            std::thread::spawn(move || for _ in lines {});
            return Ok(Relay {
                child,
                base,
                name: name.to_owned(),
                _dir: dir,
            });
        }
    }
    anyhow::bail!("relay {name} exited before listening")
}

/// A field of `/proc/<pid>/status` in kB (`VmRSS:`, `VmHWM:`).
pub fn status_kb(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

/// Write syscalls (write, writev, …) a process (`pid` or `self`) made so far.
pub fn write_syscalls(pid: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/io"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("syscw:"))
                .and_then(|n| n.trim().parse().ok())
        })
        .unwrap_or(0)
}

/// utime + stime of a process (`pid` or `self`), in seconds.
pub fn cpu_secs(pid: &str) -> f64 {
    let ticks = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            let rest = s.rsplit_once(')')?.1;
            let f: Vec<&str> = rest.split_whitespace().collect();
            Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
        })
        .unwrap_or(0);
    ticks as f64 / 100.0
}

/// The machine's load averages (1, 5, 15 min).
pub fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// Polls a process's VmRSS every 10 ms; [`Sampler::stop`] returns the largest value seen (kB).
pub struct Sampler {
    stop: Arc<AtomicBool>,
    peak: Arc<AtomicU64>,
    thread: std::thread::JoinHandle<()>,
}

impl Sampler {
    pub fn start(pid: u32) -> Sampler {
        let stop = Arc::new(AtomicBool::new(false));
        let peak = Arc::new(AtomicU64::new(0));
        let (s, p) = (stop.clone(), peak.clone());
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                p.fetch_max(status_kb(pid, "VmRSS:"), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(10));
            }
        });
        Sampler { stop, peak, thread }
    }

    pub fn stop(self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.thread.join();
        self.peak.load(Ordering::Relaxed)
    }
}

// ------------------------------------------------------------------------------------ measurement

/// The value at `p` (0..=1) of sorted nanoseconds, in milliseconds.
pub fn percentile(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize] as f64 / 1e6
}

/// A client without idle connections kept (each request its own).
pub fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .expect("client")
}

/// Opens session `sid`'s SSE stream on `base` (from `last` when given).
pub async fn sse(base: &str, sid: &str, last: Option<u64>) -> anyhow::Result<reqwest::Response> {
    let mut req = reqwest::Client::new()
        .get(format!("{base}/v1/code/sessions/{sid}/events/stream"))
        .bearer_auth(TOKEN);
    if let Some(id) = last {
        req = req.header("Last-Event-ID", id.to_string());
    }
    let resp = req.send().await?;
    anyhow::ensure!(resp.status().is_success(), "subscribe: {}", resp.status());
    Ok(resp)
}

/// Creates a session on the relay at `base`: its id.
pub async fn create_session(base: &str) -> anyhow::Result<String> {
    let created: Value = http()
        .post(format!("{base}/v1/code/sessions"))
        .bearer_auth(TOKEN)
        .json(&json!({}))
        .send()
        .await?
        .json()
        .await?;
    created["session_id"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| anyhow::anyhow!("create failed: {created}"))
}

/// Sends the agent `go <count> <rate> [kind]` as a user message of session `sid` on `base`.
pub async fn go(base: &str, sid: &str, count: u64, rate: u64, kind: &str) -> anyhow::Result<()> {
    let payload = json!({"type":"user","message":{"role":"user","content":format!("go {count} {rate} {kind}")},"parent_tool_use_id":null,"session_id":""});
    http()
        .post(format!("{base}/v1/code/sessions/{sid}/events"))
        .bearer_auth(TOKEN)
        .json(&json!({"events":[{"payload": payload}]}))
        .send()
        .await?
        .error_for_status()?;
    Ok(())
}

/// Reads one SSE stream until `expected` stamped frames came, recording `now - t_ns` for each;
/// bumps `done` at the end.
pub async fn observer(resp: reqwest::Response, expected: u64, done: Arc<AtomicU64>) -> Vec<u64> {
    let mut lat = Vec::with_capacity(expected as usize);
    let mut stream = resp.bytes_stream();
    let mut carry: Vec<u8> = Vec::new();
    while (lat.len() as u64) < expected {
        let Some(Ok(chunk)) = stream.next().await else {
            break;
        };
        let t = now_ns();
        carry.extend_from_slice(&chunk);
        let cut = carry.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        let mut rest = &carry[..cut];
        const KEY: &[u8] = b"\"t_ns\":";
        while let Some(pos) = rest.windows(KEY.len()).position(|w| w == KEY) {
            let digits = &rest[pos + KEY.len()..];
            let end = digits
                .iter()
                .position(|b| !b.is_ascii_digit())
                .unwrap_or(digits.len());
            if let Some(sent) = std::str::from_utf8(&digits[..end])
                .ok()
                .and_then(|s| s.parse::<u64>().ok())
            {
                lat.push(t.saturating_sub(sent));
            }
            rest = &digits[end..];
        }
        carry.drain(..cut);
    }
    done.fetch_add(1, Ordering::Relaxed);
    lat
}
