//! Fan-out benchmark: one session streaming N events/s to M SSE subscribers through a real
//! `bridge-relay` process. Prints the latency the relay adds (agent stdout write → subscriber
//! receive; p50/p99/max) for a 1-subscriber baseline and for M subscribers, plus the relay's RSS.
//! Then the same M readers of a reference broadcaster (`common/reference.rs`: tokio + hyper, frames
//! serialized once, no auth): deliveries per CPU-second of each process, side by side.
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

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use common::{Args, Relay, cpu_secs, observer, percentile, start_relay, status_kb, write_syscalls};

fn main() -> anyhow::Result<()> {
    let args = Args::from_env();
    if args.is_agent() {
        return common::generator();
    }
    if args.0.iter().any(|a| a == "--reference-server") {
        return common::reference::serve();
    }
    let subscribers = args.num("--subscribers", 200) as usize;
    let rate = args.num("--rate", 2000);
    let seconds = args.num("--seconds", 10);
    let kind = args.get("--kind", "durable");
    // The relay's least time between two writes to one SSE subscriber (0: every batch at once).
    let coalesce = args.get("--sse-coalesce-ms", "");
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(drive(subscribers, rate, seconds, kind, coalesce))
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

async fn phase(
    relay: &Relay,
    subscribers: usize,
    rate: u64,
    seconds: u64,
    kind: &str,
    rss: &AtomicU64,
) -> anyhow::Result<Phase> {
    let sid = common::create_session(&relay.base).await?;
    let expected = rate * seconds;
    let done = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    for _ in 0..subscribers {
        let resp = common::sse(&relay.base, &sid, None).await?;
        tasks.push(tokio::spawn(observer(resp, expected, done.clone())));
    }
    let started = Instant::now();
    let (relay_cpu0, bench_cpu0) = (cpu_secs(&relay.child.id().to_string()), cpu_secs("self"));
    let writes0 = write_syscalls(&relay.child.id().to_string());
    common::go(&relay.base, &sid, expected, rate, kind).await?;
    let pid = relay.child.id();
    let sampler = {
        let done = done.clone();
        let subs = subscribers as u64;
        async move {
            while done.load(Ordering::Relaxed) < subs {
                rss.fetch_max(status_kb(pid, "VmRSS:"), Ordering::Relaxed);
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

/// The same phase against the reference broadcaster (`reference.rs`, a process of its own):
/// `(delivered, expected, its CPU seconds, p50 ms, p99 ms)`.
async fn reference_phase(
    subscribers: usize,
    rate: u64,
    seconds: u64,
) -> anyhow::Result<(u64, u64, f64, f64, f64)> {
    use std::io::BufRead as _;
    let mut child = std::process::Command::new(std::env::current_exe()?)
        .arg("--reference-server")
        .stdout(std::process::Stdio::piped())
        .spawn()?;
    let mut port = String::new();
    std::io::BufReader::new(child.stdout.take().expect("piped")).read_line(&mut port)?;
    let base = format!("http://127.0.0.1:{}", port.trim());
    let pid = child.id().to_string();
    let expected = rate * seconds;
    let done = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    for _ in 0..subscribers {
        let resp = common::http().get(format!("{base}/events")).send().await?;
        tasks.push(tokio::spawn(observer(resp, expected, done.clone())));
    }
    let cpu0 = cpu_secs(&pid);
    common::http()
        .post(format!("{base}/go?count={expected}&rate={rate}"))
        .send()
        .await?;
    let mut all = Vec::new();
    for t in tasks {
        if let Ok(Ok(lat)) = tokio::time::timeout(Duration::from_secs(seconds * 3 + 30), t).await {
            all.push(lat);
        }
    }
    let cpu = cpu_secs(&pid) - cpu0;
    let _ = child.kill();
    let _ = child.wait();
    let received: u64 = all.iter().map(|l| l.len() as u64).sum();
    let mut lat: Vec<u64> = all.into_iter().flatten().collect();
    lat.sort_unstable();
    Ok((
        received,
        expected * subscribers as u64,
        cpu,
        percentile(&lat, 0.50),
        percentile(&lat, 0.99),
    ))
}

async fn drive(
    subscribers: usize,
    rate: u64,
    seconds: u64,
    kind: String,
    coalesce: String,
) -> anyhow::Result<()> {
    let exe = std::env::current_exe()?.display().to_string();
    // Every subscriber uses the one token; the default cap on open streams per credential would
    // turn most of them away with a 429.
    let mut flags = vec!["--claude", &exe, "--max-streams-per-principal", "100000"];
    if !coalesce.is_empty() {
        flags.extend(["--sse-coalesce-ms", &coalesce]);
    }
    let relay = start_relay("fanout", None, &flags)?;
    let pid = relay.child.id();
    let idle_rss = status_kb(pid, "VmRSS:");
    println!(
        "fan-out: {rate} events/s for {seconds} s, kind {kind}, relay pid {pid}, idle RSS {:.1} MB",
        idle_rss as f64 / 1024.0
    );
    let base_rss = AtomicU64::new(0);
    let base = phase(&relay, 1, rate, seconds, &kind, &base_rss).await?;
    let peak_rss = AtomicU64::new(0);
    let fan = phase(&relay, subscribers, rate, seconds, &kind, &peak_rss).await?;
    let hwm = status_kb(pid, "VmHWM:");
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
    drop(relay);
    let (got, want, ref_cpu, ref_p50, ref_p99) =
        reference_phase(subscribers, rate, seconds).await?;
    let relay_rate = fan.received as f64 / (fan.relay_cpu * fan.elapsed.as_secs_f64()).max(1e-9);
    let ref_rate = got as f64 / ref_cpu.max(1e-9);
    println!();
    println!(
        "| {subscribers} observers | delivered | p50 ms | p99 ms | deliveries per CPU-second |"
    );
    println!("|---|---:|---:|---:|---:|");
    println!(
        "| bridge-relay | {}/{} | {:.2} | {:.2} | {:.0} |",
        fan.received, fan.expected, fan.p50, fan.p99, relay_rate
    );
    println!(
        "| reference broadcaster (tokio + hyper, serialized once, no auth) | {got}/{want} | {ref_p50:.2} | {ref_p99:.2} | {ref_rate:.0} |"
    );
    println!(
        "relay / reference: {:.0}% of the reference's deliveries per CPU-second (goal: at least 60%)",
        relay_rate / ref_rate * 100.0
    );
    Ok(())
}
