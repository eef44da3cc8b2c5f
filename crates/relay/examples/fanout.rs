//! Fan-out benchmark: one session streaming N events/s to M SSE subscribers through a real
//! `bridge-relay` process. Prints the latency the relay adds (agent stdout write → subscriber
//! receive; p50/p99/max) for a 1-subscriber baseline and for M subscribers, plus the relay's RSS.
//!
//! ```text
//! cargo build --release -p bridge-relay --bin bridge-relay --example fanout
//! target/release/examples/fanout [--subscribers 200] [--rate 2000] [--seconds 10] [--kind durable|ephemeral]
//! ```
//!
//! The example is also the agent: the relay runs it as `--claude <this exe>`; started with the claude
//! stream-json flags it acts as a generator that answers `initialize` and, on a user message
//! `go <count> <rate> <kind>`, writes `count` frames at `rate`/s, each stamped with its wall-clock write
//! time, then a `result`.

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use futures::StreamExt as _;
use serde_json::{Value, json};

const TOKEN: &str = "fanout-bench-token-0123456789";

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--output-format") {
        return generator();
    }
    let opt = |name: &str, default: &str| -> String {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
            .unwrap_or_else(|| default.to_owned())
    };
    let subscribers: usize = opt("--subscribers", "200").parse()?;
    let rate: u64 = opt("--rate", "2000").parse()?;
    let seconds: u64 = opt("--seconds", "10").parse()?;
    let kind = opt("--kind", "durable");
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(drive(subscribers, rate, seconds, kind))
}

// ------------------------------------------------------------------------------------------ agent

fn generator() -> anyhow::Result<()> {
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
                    let due = start + Duration::from_nanos(n * 1_000_000_000 / rate);
                    let now = Instant::now();
                    if due > now {
                        std::thread::sleep(due - now);
                    }
                    let frame = if ephemeral {
                        format!(
                            r#"{{"type":"stream_event","event":{{"type":"content_block_delta","index":0,"delta":{{"type":"text_delta","text":"{text}"}}}},"parent_tool_use_id":null,"session_id":"bench","uuid":"{}","n":{n},"t_ns":{}}}"#,
                            uuid::Uuid::new_v4(),
                            now_ns()
                        )
                    } else {
                        format!(
                            r#"{{"type":"assistant","message":{{"id":"msg_bench","type":"message","role":"assistant","model":"bench","content":[{{"type":"text","text":"{text}"}}],"stop_reason":null}},"parent_tool_use_id":null,"session_id":"bench","uuid":"{}","n":{n},"t_ns":{}}}"#,
                            uuid::Uuid::new_v4(),
                            now_ns()
                        )
                    };
                    out.write_all(frame.as_bytes())?;
                    out.write_all(b"\n")?;
                    out.flush()?;
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

// ------------------------------------------------------------------------------------------ driver

struct Relay {
    child: Child,
    base: String,
    _dir: tempfile::TempDir,
}

impl Drop for Relay {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn relay_binary() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe()?;
    let dir = exe
        .parent()
        .and_then(|p| p.parent())
        .ok_or_else(|| anyhow::anyhow!("cannot locate target dir"))?;
    let bin = dir.join("bridge-relay");
    if !bin.exists() {
        anyhow::bail!(
            "{} not found: build it first (cargo build --release -p bridge-relay --bin bridge-relay --example fanout)",
            bin.display()
        );
    }
    Ok(bin)
}

fn start_relay() -> anyhow::Result<Relay> {
    let dir = tempfile::tempdir()?;
    let mut child = Command::new(relay_binary()?)
        .args(["--bind", "127.0.0.1:0", "--claude"])
        .arg(std::env::current_exe()?)
        // Every subscriber uses the one token; the default cap on open streams per credential
        // would turn most of them away with a 429.
        .args(["--max-streams-per-principal", "100000"])
        .arg("--data-dir")
        .arg(dir.path())
        .arg("--static-dir")
        .arg(dir.path().join("none"))
        .env("BRIDGE_RELAY_TOKEN", TOKEN)
        .env("BRIDGE_RELAY_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
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
                _dir: dir,
            });
        }
    }
    anyhow::bail!("relay exited before listening")
}

fn rss_kb(pid: u32, field: &str) -> u64 {
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

/// Write syscalls (write, writev, …) made so far by a process.
fn write_syscalls(pid: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/io"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("syscw:"))
                .and_then(|n| n.trim().parse().ok())
        })
        .unwrap_or(0)
}

/// utime + stime of a process, in seconds.
fn cpu_secs(pid: &str) -> f64 {
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

fn percentile(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx] as f64 / 1e6
}

struct Phase {
    subscribers: usize,
    received: u64,
    expected: u64,
    p50: f64,
    p99: f64,
    max: f64,
    elapsed: Duration,
    relay_cpu: f64,
    bench_cpu: f64,
    /// Relay write syscalls per frame delivered (1.0: one write per frame per subscriber).
    writes_per_frame: f64,
}

/// Reads one SSE stream, recording `now - t_ns` for every frame stamped by the generator.
async fn subscriber(resp: reqwest::Response, expected: u64, done: Arc<AtomicU64>) -> Vec<u64> {
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

async fn phase(
    relay: &Relay,
    subscribers: usize,
    rate: u64,
    seconds: u64,
    kind: &str,
    rss: &AtomicU64,
) -> anyhow::Result<Phase> {
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()?;
    let created: Value = http
        .post(format!("{}/v1/code/sessions", relay.base))
        .bearer_auth(TOKEN)
        .json(&json!({}))
        .send()
        .await?
        .json()
        .await?;
    let sid = created["session_id"]
        .as_str()
        .ok_or_else(|| anyhow::anyhow!("create failed: {created}"))?
        .to_owned();
    let expected = rate * seconds;
    let done = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    for _ in 0..subscribers {
        let client = reqwest::Client::builder().build()?;
        let resp = client
            .get(format!(
                "{}/v1/code/sessions/{sid}/events/stream",
                relay.base
            ))
            .bearer_auth(TOKEN)
            .send()
            .await?;
        anyhow::ensure!(resp.status().is_success(), "subscribe: {}", resp.status());
        tasks.push(tokio::spawn(subscriber(resp, expected, done.clone())));
    }
    let started = Instant::now();
    let (relay_cpu0, bench_cpu0) = (cpu_secs(&relay.child.id().to_string()), cpu_secs("self"));
    let writes0 = write_syscalls(&relay.child.id().to_string());
    let payload = json!({"type":"user","message":{"role":"user","content":format!("go {expected} {rate} {kind}")},"parent_tool_use_id":null,"session_id":""});
    http.post(format!("{}/v1/code/sessions/{sid}/events", relay.base))
        .bearer_auth(TOKEN)
        .json(&json!({"events":[{"payload": payload}]}))
        .send()
        .await?
        .error_for_status()?;
    let pid = relay.child.id();
    let sampler = {
        let done = done.clone();
        let subs = subscribers as u64;
        async move {
            while done.load(Ordering::Relaxed) < subs {
                rss.fetch_max(rss_kb(pid, "VmRSS:"), Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    };
    let timeout = Duration::from_secs(seconds * 3 + 30);
    let (all, ()) = tokio::join!(
        async {
            let mut all = Vec::new();
            for t in tasks {
                if let Ok(Ok(lat)) = tokio::time::timeout(timeout, t).await {
                    all.push(lat);
                }
            }
            all
        },
        sampler
    );
    let elapsed = started.elapsed();
    let relay_cpu = (cpu_secs(&relay.child.id().to_string()) - relay_cpu0) / elapsed.as_secs_f64();
    let bench_cpu = (cpu_secs("self") - bench_cpu0) / elapsed.as_secs_f64();
    let writes = write_syscalls(&relay.child.id().to_string()).saturating_sub(writes0);
    let received: u64 = all.iter().map(|l| l.len() as u64).sum();
    let mut lat: Vec<u64> = all.into_iter().flatten().collect();
    lat.sort_unstable();
    Ok(Phase {
        subscribers,
        received,
        expected: expected * subscribers as u64,
        p50: percentile(&lat, 0.50),
        p99: percentile(&lat, 0.99),
        max: percentile(&lat, 1.0),
        elapsed,
        relay_cpu,
        bench_cpu,
        writes_per_frame: writes as f64 / received.max(1) as f64,
    })
}

async fn drive(subscribers: usize, rate: u64, seconds: u64, kind: String) -> anyhow::Result<()> {
    let relay = start_relay()?;
    let pid = relay.child.id();
    let idle_rss = rss_kb(pid, "VmRSS:");
    println!(
        "fan-out: {rate} events/s for {seconds} s, kind {kind}, relay pid {pid}, idle RSS {:.1} MB",
        idle_rss as f64 / 1024.0
    );
    let base_rss = AtomicU64::new(0);
    let base = phase(&relay, 1, rate, seconds, &kind, &base_rss).await?;
    let peak_rss = AtomicU64::new(0);
    let fan = phase(&relay, subscribers, rate, seconds, &kind, &peak_rss).await?;
    let hwm = rss_kb(pid, "VmHWM:");
    println!();
    println!(
        "| subscribers | delivered | p50 ms | p99 ms | max ms | wall s | peak RSS MB | relay CPU | bench CPU | relay writes/frame |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (p, rss) in [(&base, &base_rss), (&fan, &peak_rss)] {
        println!(
            "| {} | {}/{} | {:.2} | {:.2} | {:.2} | {:.1} | {:.1} | {:.0}% | {:.0}% | {:.2} |",
            p.subscribers,
            p.received,
            p.expected,
            p.p50,
            p.p99,
            p.max,
            p.elapsed.as_secs_f64(),
            rss.load(Ordering::Relaxed) as f64 / 1024.0,
            p.relay_cpu * 100.0,
            p.bench_cpu * 100.0,
            p.writes_per_frame
        );
    }
    println!();
    println!(
        "added by fan-out vs baseline: p50 ×{:.2}, p99 ×{:.2}; relay VmHWM {:.1} MB (targets: p99 ≤ 10 ms, RSS ≤ 100 MB; \
         CPU: 100% = one core; relay writes/frame: write syscalls per frame delivered)",
        fan.p50 / base.p50,
        fan.p99 / base.p99,
        hwm as f64 / 1024.0
    );
    Ok(())
}
