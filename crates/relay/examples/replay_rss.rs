//! Replay memory benchmark: the relay's RSS while many clients replay a large log at once. Builds
//! an ended session whose log is made of multi-megabyte tool results, starts a real `bridge-relay`
//! on it, and measures the relay's resident memory during N concurrent full SSE replays, then during
//! N concurrent `GET …/events?limit=10000` replays. Prints the idle RSS (the baseline, same run), the
//! peak of each phase and the ratio to the log size.
//!
//! ```text
//! cargo build --release -p bridge-relay --bin bridge-relay --example replay_rss
//! target/release/examples/replay_rss [--log-mb 200] [--event-mb 4] [--replays 10] [--dir /tmp]
//! ```
//!
//! `--log-mb 2048` gives the issue's figure (2 GB log; needs that much free disk in `--dir`).

mod common;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use bridge_relay::EventStore as _;
use bridge_relay::core::session::{SessionMeta, SessionState};
use bridge_relay::core::store::{Source, SqliteStore, StoredEvent};
use common::{Args, Sampler, TOKEN, status_kb};
use futures::StreamExt as _;
use serde_json::json;
const SESSION: &str = "cse_replay_bench";

fn main() -> anyhow::Result<()> {
    let args = Args::from_env();
    let log_mb = args.num("--log-mb", 200);
    let event_mb = args.num("--event-mb", 4);
    let replays = args.num("--replays", 10) as usize;
    let dir = PathBuf::from(args.get("--dir", &std::env::temp_dir().display().to_string()));
    let data = tempfile::tempdir_in(&dir)?;
    let events = (log_mb / event_mb.max(1)).max(1);
    let t = Instant::now();
    let log_bytes = build_log(
        &data.path().join("relay.db"),
        events,
        (event_mb << 20) as usize,
    )?;
    println!(
        "log: {events} events of {event_mb} MB = {:.0} MB, written in {:.1} s",
        mb(log_bytes),
        t.elapsed().as_secs_f64()
    );
    let relay = common::start_relay("replay", Some(data.path()), &["--demo"])?;
    let pid = relay.child.id();
    std::thread::sleep(Duration::from_millis(300));
    let idle = status_kb(pid, "VmRSS:") * 1024;
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(async {
            println!("relay idle RSS: {:.1} MB", mb(idle));
            println!(
                "{:<28} {:>8} {:>12} {:>12} {:>14} {:>10}",
                "phase", "secs", "received MB", "peak RSS MB", "peak-idle MB", "x log"
            );
            for kind in ["sse", "rest"] {
                let sampler = Sampler::start(pid);
                let t = Instant::now();
                let got = futures::future::join_all(
                    (0..replays).map(|_| replay(&relay.base, kind, events)),
                )
                .await;
                let secs = t.elapsed().as_secs_f64();
                let peak = sampler.stop() * 1024;
                let mut received = 0u64;
                for r in got {
                    received += r?;
                }
                println!(
                    "{:<28} {:>8.1} {:>12.0} {:>12.1} {:>14.1} {:>10.3}",
                    format!("{replays} x full {kind} replay"),
                    secs,
                    mb(received),
                    mb(peak),
                    mb(peak.saturating_sub(idle)),
                    peak as f64 / log_bytes as f64
                );
            }
            anyhow::Ok(())
        })?;
    println!(
        "relay VmHWM (lifetime peak): {:.1} MB",
        mb(status_kb(pid, "VmHWM:") * 1024)
    );
    Ok(())
}

fn mb(b: u64) -> f64 {
    b as f64 / f64::from(1 << 20)
}

/// An ended session of `events` tool results of `event_bytes` each; returns the payload bytes.
fn build_log(db: &std::path::Path, events: u64, event_bytes: usize) -> anyhow::Result<u64> {
    let store = SqliteStore::open(db)?;
    let mut meta = SessionMeta::new(SESSION.into(), "/tmp".into(), None, None, None);
    meta.state = SessionState::Ended;
    store.save_session(&meta)?;
    let filler = "x".repeat(event_bytes);
    let mut total = 0u64;
    for seq in 1..=events {
        let payload = json!({"type":"user","message":{"role":"user","content":[
            {"type":"tool_result","tool_use_id":format!("toolu_{seq}"),"content":filler}]},
            "parent_tool_use_id":null,"session_id":SESSION,"uuid":format!("u{seq}")})
        .to_string();
        total += payload.len() as u64;
        store.append(&StoredEvent {
            session_id: SESSION.into(),
            seq,
            event_id: format!("e{seq}"),
            event_type: "user".into(),
            source: Source::Worker,
            created_at: "2026-01-01T00:00:00.000Z".into(),
            payload,
            client_uuid: None,
        })?;
    }
    Ok(total)
}

/// One full replay; returns the bytes received. Checks that the last event arrived.
async fn replay(base: &str, kind: &str, events: u64) -> anyhow::Result<u64> {
    let client = reqwest::Client::new();
    let url = match kind {
        "sse" => format!("{base}/v1/code/sessions/{SESSION}/events/stream"),
        _ => format!("{base}/v1/code/sessions/{SESSION}/events?after=0&limit=10000"),
    };
    let resp = client.get(url).bearer_auth(TOKEN).send().await?;
    anyhow::ensure!(resp.status().is_success(), "{kind}: {}", resp.status());
    let mut body = resp.bytes_stream();
    let mut n = 0u64;
    let mut tail: Vec<u8> = Vec::new();
    while let Some(chunk) = body.next().await {
        let chunk = chunk?;
        n += chunk.len() as u64;
        tail.extend_from_slice(&chunk[chunk.len().saturating_sub(256)..]);
        let keep = tail.len().saturating_sub(256);
        tail.drain(..keep);
    }
    let tail = String::from_utf8_lossy(&tail);
    // Both end with the last event's payload, whose last field is its uuid.
    let marker = format!("\"uuid\":\"u{events}\"}}");
    anyhow::ensure!(
        tail.contains(&marker),
        "{kind}: the replay did not end with event {events}"
    );
    Ok(n)
}
