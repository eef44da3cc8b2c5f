//! Scale-out benchmark (issue 14): real `bridge-relay` processes on a NATS server (started by
//! `scripts/bench-cluster.sh`). Figures:
//!
//! - **a** one session streaming `--rate` events/s to `--observers` SSE observers spread over
//!   `--gateways` gateways: added latency (agent stdout write → observer receive) p50/p99/max and
//!   peak RSS per process, beside one relay (no NATS) serving the same observers alone;
//! - **b** `--sessions` sessions across two agents hosts, each writing `--per-session` events as fast
//!   as it can: events/s until every event is on JetStream (`--nats-sync`: a server with
//!   `sync_interval: always`);
//! - **c** resume after a gateway kill with `--resume-events` events in the log: time from a
//!   reconnect to another (cold) gateway until the client holds the log's last event, with
//!   `Last-Event-ID` near the end and from 0.
//!
//! ```text
//! cargo build --release -p bridge-relay --examples
//! target/release/examples/cluster_bench --nats nats://127.0.0.1:4222 [--nats-sync URL] [--only abc]
//! ```
//!
//! Like `fanout`, the example is also the agent: the relays run it as `--claude <this exe>`; on a
//! user message `go <count> <rate>` it writes `count` assistant messages at `rate`/s (0: as fast
//! as it can), each stamped with its wall-clock write time, then a `result`.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bridge_relay::cluster::wire;
use common::{Args, Relay, TOKEN, http, load, now_ns, observer, percentile, sse, status_kb};
use futures::StreamExt as _;
use serde_json::{Value, json};

fn main() -> anyhow::Result<()> {
    let args = Args::from_env();
    if args.is_agent() {
        return common::generator();
    }
    let nats = args.get("--nats", "");
    anyhow::ensure!(
        !nats.is_empty(),
        "--nats URL is required (scripts/bench-cluster.sh starts a server)"
    );
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(drive(args))
}

// -------------------------------------------------------------------------------------- processes

/// A relay: alone (`nats` None) or a cluster node with `role`.
fn start(name: &str, nats: Option<(&str, &str)>) -> anyhow::Result<Relay> {
    let exe = std::env::current_exe()?.display().to_string();
    let mut args = vec![
        "--claude",
        &exe,
        "--max-streams-per-principal",
        "100000",
        "--max-sessions",
        "500",
    ];
    if let Some((url, role)) = nats {
        args.extend(["--nats", url, "--role", role, "--node-name", name]);
    }
    common::start_relay(name, None, &args)
}

/// `go <count> <rate>` to the agent of session `sid` on `base`.
async fn go(base: &str, sid: &str, count: u64, rate: u64) -> anyhow::Result<()> {
    common::go(base, sid, count, rate, "").await
}

/// A session on `base` (a gateway places it; a host runs it): its id.
async fn create(base: &str) -> anyhow::Result<String> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let r = http()
            .post(format!("{base}/v1/code/sessions"))
            .bearer_auth(TOKEN)
            .json(&json!({}))
            .send()
            .await?;
        let status = r.status();
        let v: Value = r.json().await?;
        if status.as_u16() == 201 {
            return Ok(v["session_id"].as_str().unwrap_or_default().to_owned());
        }
        // A gateway that has not seen a host's heartbeat yet answers 503.
        anyhow::ensure!(
            status.as_u16() == 503 && Instant::now() < deadline,
            "create session on {base}: {status} {v}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

// -------------------------------------------------------------------------------------- figure a

struct Fanout {
    received: u64,
    expected: u64,
    p50: f64,
    p99: f64,
    max: f64,
    /// Peak RSS (MB) of each serving process.
    rss: Vec<(String, f64)>,
}

/// One session on `host` streaming to `observers` spread over `serve`.
async fn fanout(
    host: &Relay,
    serve: &[&Relay],
    observers: usize,
    rate: u64,
    seconds: u64,
) -> anyhow::Result<Fanout> {
    let sid = create(&host.base).await?;
    let expected = rate * seconds;
    let done = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    for i in 0..observers {
        let resp = sse(&serve[i % serve.len()].base, &sid, None).await?;
        tasks.push(tokio::spawn(observer(resp, expected, done.clone())));
    }
    let peaks: Vec<Arc<AtomicU64>> = serve.iter().map(|_| Arc::new(AtomicU64::new(0))).collect();
    let sampler = {
        let pids: Vec<u32> = serve.iter().map(|r| r.pid()).collect();
        let peaks = peaks.clone();
        let done = done.clone();
        tokio::spawn(async move {
            while done.load(Ordering::Relaxed) < observers as u64 {
                for (pid, peak) in pids.iter().zip(&peaks) {
                    peak.fetch_max(status_kb(*pid, "VmRSS:"), Ordering::Relaxed);
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        })
    };
    go(&serve[0].base, &sid, expected, rate).await?;
    let timeout = Duration::from_secs(seconds * 3 + 30);
    let mut all = Vec::new();
    for t in tasks {
        if let Ok(Ok(lat)) = tokio::time::timeout(timeout, t).await {
            all.push(lat);
        }
    }
    done.store(observers as u64, Ordering::Relaxed);
    let _ = sampler.await;
    let received: u64 = all.iter().map(|l| l.len() as u64).sum();
    let mut lat: Vec<u64> = all.into_iter().flatten().collect();
    lat.sort_unstable();
    Ok(Fanout {
        received,
        expected: expected * observers as u64,
        p50: percentile(&lat, 0.5),
        p99: percentile(&lat, 0.99),
        max: percentile(&lat, 1.0),
        rss: serve
            .iter()
            .zip(&peaks)
            .map(|(r, p)| (r.name.clone(), p.load(Ordering::Relaxed) as f64 / 1024.0))
            .collect(),
    })
}

async fn figure_a(args: &Args, nats: &str) -> anyhow::Result<()> {
    let observers = args.num("--observers", 2000) as usize;
    let gateways = args.num("--gateways", 4) as usize;
    let rate = args.num("--rate", 2000);
    let seconds = args.num("--seconds", 5);
    println!(
        "== a. one session, {rate} events/s for {seconds} s, {observers} SSE observers (load before: {})",
        load()
    );
    let alone = {
        let relay = start("alone", None)?;
        fanout(&relay, &[&relay], observers, rate, seconds).await?
    };
    let load_alone = load();
    let host = start("a-host1", Some((nats, "agents")))?;
    let gws: Vec<Relay> = (0..gateways)
        .map(|i| start(&format!("a-gw{}", i + 1), Some((nats, "gateway"))))
        .collect::<anyhow::Result<_>>()?;
    let refs: Vec<&Relay> = gws.iter().collect();
    // Where the time goes: events as they land on JetStream, one observer on the host itself,
    // one on a gateway.
    {
        let sid = create(&host.base).await?;
        let sub = async_nats::connect(nats)
            .await?
            .subscribe(wire::events_subject(&sid))
            .await?;
        let expected = rate * seconds;
        let probe = tokio::spawn(async move {
            let mut sub = sub;
            let mut lat = Vec::new();
            let mut messages = 0u64;
            while (lat.len() as u64) < expected {
                let Ok(Some(m)) = tokio::time::timeout(Duration::from_secs(60), sub.next()).await
                else {
                    break;
                };
                let t = now_ns();
                messages += 1;
                for (ev, _) in
                    wire::decode_events(&sid_of(&m.subject), &m.payload).unwrap_or_default()
                {
                    if let Some(sent) = serde_json::from_str::<Value>(&ev.payload)
                        .ok()
                        .and_then(|v| v["t_ns"].as_u64())
                    {
                        lat.push(t.saturating_sub(sent));
                    }
                }
            }
            (lat, messages)
        });
        go(&host.base, &sid, expected, rate).await?;
        let (mut lat, messages) = probe.await?;
        lat.sort_unstable();
        println!(
            "landing on JetStream: {} events in {messages} messages, p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
            lat.len(),
            percentile(&lat, 0.5),
            percentile(&lat, 0.99),
            percentile(&lat, 1.0)
        );
    }
    let on_host = fanout(&host, &[&host], 1, rate, seconds).await?;
    let on_gw = fanout(&host, &[&gws[0]], 1, rate, seconds).await?;
    let cluster = fanout(&host, &refs, observers, rate, seconds).await?;
    let host_rss = status_kb(host.pid(), "VmHWM:") as f64 / 1024.0;
    println!();
    println!(
        "| setup | delivered | p50 ms | p99 ms | max ms | peak RSS MB per serving process | load after |"
    );
    println!("|---|---:|---:|---:|---:|---|---|");
    let rss = |f: &Fanout| {
        f.rss
            .iter()
            .map(|(n, mb)| format!("{n} {mb:.0}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    println!(
        "| one relay, {observers} observers | {}/{} | {:.2} | {:.2} | {:.2} | {} | {load_alone} |",
        alone.received,
        alone.expected,
        alone.p50,
        alone.p99,
        alone.max,
        rss(&alone)
    );
    for (what, f) in [
        ("1 observer on the agents host", &on_host),
        ("1 observer on a gateway", &on_gw),
    ] {
        println!(
            "| {what} | {}/{} | {:.2} | {:.2} | {:.2} | {} | |",
            f.received,
            f.expected,
            f.p50,
            f.p99,
            f.max,
            rss(f)
        );
    }
    println!(
        "| agents host + {gateways} gateways, {} observers each | {}/{} | {:.2} | {:.2} | {:.2} | {} (host {host_rss:.0}) | {} |",
        observers / gateways.max(1),
        cluster.received,
        cluster.expected,
        cluster.p50,
        cluster.p99,
        cluster.max,
        rss(&cluster),
        load()
    );
    println!("(added latency = observer receive − agent stdout write; goal p99 ≤ 25 ms)");
    Ok(())
}

fn sid_of(subject: &str) -> String {
    subject.rsplit('.').next().unwrap_or_default().to_owned()
}

// -------------------------------------------------------------------------------------- figure b

/// `(host seq of the subject's last event, whether it is a result)`.
async fn published(events: &async_nats::jetstream::stream::Stream, sid: &str) -> (u64, bool) {
    match events
        .get_last_raw_message_by_subject(&wire::events_subject(sid))
        .await
    {
        Ok(m) => match wire::decode_event(sid, &m.payload) {
            Some((ev, _)) => (ev.seq, ev.event_type == "result"),
            None => (0, false),
        },
        Err(_) => (0, false),
    }
}

async fn stream_of(url: &str) -> anyhow::Result<async_nats::jetstream::stream::Stream> {
    let js = async_nats::jetstream::new(async_nats::connect(url).await?);
    Ok(js.get_stream(wire::EVENTS_STREAM).await?)
}

async fn figure_b(args: &Args, nats: &str) -> anyhow::Result<()> {
    let sessions = args.num("--sessions", 100) as usize;
    let per = args.num("--per-session", 2000);
    println!(
        "== b. {sessions} sessions across 2 agents hosts, {per} events each as fast as the agents write (load before: {})",
        load()
    );
    let hosts = [
        start("b-host1", Some((nats, "agents")))?,
        start("b-host2", Some((nats, "agents")))?,
    ];
    let mut sids = Vec::new();
    for i in 0..sessions {
        let h = &hosts[i % 2];
        sids.push((h.base.clone(), create(&h.base).await?));
    }
    let events = stream_of(nats).await?;
    let before = events.clone().info().await?.state.messages;
    let t0 = Instant::now();
    futures::future::try_join_all(sids.iter().map(|(base, sid)| go(base, sid, per, 0))).await?;
    let deadline = t0 + Duration::from_secs(110);
    let mut total = 0;
    loop {
        let tails =
            futures::future::join_all(sids.iter().map(|(_, s)| published(&events, s))).await;
        if tails.iter().all(|(_, done)| *done) {
            total = tails.iter().map(|(seq, _)| seq).sum::<u64>();
            break;
        }
        if Instant::now() > deadline {
            println!("not every session was on JetStream within 110 s");
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let took = t0.elapsed().as_secs_f64();
    let messages = events.clone().info().await?.state.messages - before;
    println!();
    println!(
        "| sessions | events on JetStream | seconds | events/s | JetStream messages | host RSS MB | load after |"
    );
    println!("|---:|---:|---:|---:|---:|---|---|");
    println!(
        "| {sessions} | {total} | {took:.2} | {:.0} | {messages} | {:.0}, {:.0} | {} |",
        total as f64 / took,
        status_kb(hosts[0].pid(), "VmHWM:") as f64 / 1024.0,
        status_kb(hosts[1].pid(), "VmHWM:") as f64 / 1024.0,
        load()
    );
    Ok(())
}

// -------------------------------------------------------------------------------------- figure c

/// Time from the request to holding the event `last` (the log's end), and how many frames came.
async fn to_live(
    base: &str,
    sid: &str,
    from: Option<u64>,
    last: u64,
) -> anyhow::Result<(f64, u64)> {
    let t0 = Instant::now();
    let resp = sse(base, sid, from).await?;
    let mut stream = resp.bytes_stream();
    let mut carry: Vec<u8> = Vec::new();
    let mut frames = 0u64;
    let want = format!("id: {last}\n");
    let deadline = t0 + Duration::from_secs(60);
    loop {
        let chunk = tokio::time::timeout_at(deadline.into(), stream.next())
            .await
            .map_err(|_| anyhow::anyhow!("not live within 60 s"))?
            .ok_or_else(|| anyhow::anyhow!("stream ended"))??;
        carry.extend_from_slice(&chunk);
        frames += chunk.windows(4).filter(|w| w == b"id: ").count() as u64;
        if carry.windows(want.len()).any(|w| w == want.as_bytes()) {
            return Ok((t0.elapsed().as_secs_f64() * 1000.0, frames));
        }
        let keep = carry.len().saturating_sub(want.len());
        carry.drain(..keep);
    }
}

async fn figure_c(args: &Args, nats: &str) -> anyhow::Result<()> {
    let n = args.num("--resume-events", 100_000);
    let rate = args.num("--resume-rate", 0);
    println!(
        "== c. resume after a gateway kill, {n} events in the log (written at {}; load before: {})",
        if rate == 0 {
            "full speed".to_owned()
        } else {
            format!("{rate}/s")
        },
        load()
    );
    let host = start("c-host1", Some((nats, "agents")))?;
    let sid = create(&host.base).await?;
    let events = stream_of(nats).await?;
    let before = events.clone().info().await?.state.messages;
    go(&host.base, &sid, n, rate).await?;
    let t0 = Instant::now();
    let last = loop {
        let (seq, done) = published(&events, &sid).await;
        if done {
            break seq;
        }
        anyhow::ensure!(
            t0.elapsed() < Duration::from_secs(110),
            "the log did not reach JetStream within 110 s"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let messages = events.clone().info().await?.state.messages - before;
    // A client follows the session on gw1 near the end; gw1 is killed; it reconnects elsewhere.
    let mut gw1 = start("c-gw1", Some((nats, "gateway")))?;
    let (warm_ms, _) = to_live(&gw1.base, &sid, Some(last - 10), last).await?;
    gw1.kill();
    let gw2 = start("c-gw2", Some((nats, "gateway")))?;
    let gw3 = start("c-gw3", Some((nats, "gateway")))?;
    let (near_ms, _) = to_live(&gw2.base, &sid, Some(last - 10), last).await?;
    let gw2_rss = status_kb(gw2.pid(), "VmRSS:") as f64 / 1024.0;
    let (zero_ms, frames) = to_live(&gw3.base, &sid, Some(0), last).await?;
    let (again_ms, _) = to_live(&gw2.base, &sid, Some(last - 10), last).await?;
    println!();
    println!("| log | reconnect to | Last-Event-ID | time to live ms | frames | load |");
    println!("|---|---|---|---:|---:|---|");
    let l = load();
    println!(
        "| {last} events in {messages} messages | gw1 (cold, before the kill) | {} | {warm_ms:.0} | 10 | {l} |",
        last - 10
    );
    println!(
        "| | gw2 (cold: first request for the session) | {} | {near_ms:.0} | 10 | {l} |",
        last - 10
    );
    println!("| | gw3 (cold) | 0 | {zero_ms:.0} | {frames} | {l} |");
    println!(
        "| | gw2 (warm) | {} | {again_ms:.0} | 10 | {l} |",
        last - 10
    );
    println!("(goal: ≤ 1000 ms; gw2 RSS after mirroring the log: {gw2_rss:.0} MB)");
    Ok(())
}

/// p50 / p99 (ms) of one JetStream publish's round trip (publish, then its ack), one at a time.
async fn publish_rtt(url: &str) -> anyhow::Result<(f64, f64)> {
    let js = async_nats::jetstream::new(async_nats::connect(url).await?);
    js.get_or_create_stream(async_nats::jetstream::stream::Config {
        name: "BENCH_RTT".into(),
        subjects: vec!["bench.rtt".into()],
        storage: async_nats::jetstream::stream::StorageType::File,
        ..Default::default()
    })
    .await?;
    let mut lat = Vec::new();
    for i in 0..100u64 {
        let t = Instant::now();
        js.publish("bench.rtt", format!("{{\"probe\":{i}}}").into())
            .await?
            .await?;
        lat.push(t.elapsed().as_nanos() as u64);
    }
    lat.sort_unstable();
    Ok((percentile(&lat, 0.5), percentile(&lat, 0.99)))
}

async fn drive(args: Args) -> anyhow::Result<()> {
    let nats = args.get("--nats", "");
    let sync = args.get("--nats-sync", &nats);
    let only = args.get("--only", "abc");
    println!(
        "cluster bench: {} CPUs, load {}",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        load()
    );
    for (what, url) in [("default", &nats), ("sync", &sync)] {
        let (p50, p99) = publish_rtt(url).await?;
        println!(
            "JetStream publish round trip ({what} server, one at a time): p50 {p50:.2} ms, p99 {p99:.2} ms"
        );
    }
    if only.contains('a') {
        figure_a(&args, &nats).await?;
    }
    if only.contains('b') {
        figure_b(&args, &sync).await?;
    }
    if only.contains('c') {
        figure_c(&args, &nats).await?;
    }
    Ok(())
}
