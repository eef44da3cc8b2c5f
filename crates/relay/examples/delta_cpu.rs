//! Relay CPU per streamed delta: one session's agent writes 100,000 `stream_event` text deltas
//! (as the CLI does, a line each, flushed) to a real `bridge-relay` process, one SSE client reads
//! them all; the relay's CPU time (user + system, from `/proc/<pid>/stat`) over the run divided
//! by the deltas is the figure. Also, in this process: the time to classify and route one delta
//! line as the relay does (`bridge_relay::core::frames::peek_line`), beside parsing it into a
//! `serde_json::Value` and routing that (what the relay did before).
//!
//! ```text
//! cargo build --release -p bridge-relay --bin bridge-relay --example delta_cpu
//! target/release/examples/delta_cpu [--deltas 100000] [--rate 20000]
//! ```

mod common;

use std::time::{Duration, Instant};

use common::{Args, cpu_secs, start_relay};
use futures::StreamExt as _;
use serde_json::Value;

fn main() -> anyhow::Result<()> {
    let args = Args::from_env();
    if args.is_agent() {
        return common::generator();
    }
    let deltas = args.num("--deltas", 100_000);
    let rate = args.num("--rate", 20_000);
    route_cost();
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(drive(deltas, rate))
}

/// ns to classify one delta line, the relay's way and the `Value` way, over many runs.
fn route_cost() {
    let line = r#"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}},"parent_tool_use_id":null,"session_id":"bench","uuid":"0b0e6f0e-4a4b-4a9e-9d51-1f1b2c3d4e5f","n":1,"t_ns":1}"#;
    let runs = 200_000u32;
    let t = Instant::now();
    let mut ephemeral = 0u32;
    for _ in 0..runs {
        let tags = bridge_relay::core::frames::peek_line(std::hint::black_box(line)).unwrap();
        ephemeral += u32::from(
            bridge_relay::core::frames::route_tags(&tags)
                == bridge_relay::core::frames::Route::Ephemeral,
        );
    }
    let peek = t.elapsed().as_nanos() as f64 / f64::from(runs);
    assert_eq!(ephemeral, runs);
    let t = Instant::now();
    let mut ephemeral = 0u32;
    for _ in 0..runs {
        let v: Value = serde_json::from_str(std::hint::black_box(line)).unwrap();
        ephemeral += u32::from(
            bridge_relay::core::frames::route_worker(&v)
                == bridge_relay::core::frames::Route::Ephemeral,
        );
    }
    let tree = t.elapsed().as_nanos() as f64 / f64::from(runs);
    assert_eq!(ephemeral, runs);
    println!(
        "classify + route one {}-byte delta line: {peek:.0} ns (tag peek, the relay's path) vs {tree:.0} ns (a serde_json::Value, then route)",
        line.len()
    );
}

/// Reads the stream until the turn's `result`: how many deltas came (a relay that falls behind a
/// client drops live frames; it says so on the stream).
async fn read_until_result(resp: reqwest::Response) -> u64 {
    let mut stream = resp.bytes_stream();
    let mut carry: Vec<u8> = Vec::new();
    let mut delivered = 0u64;
    while let Some(Ok(chunk)) = stream.next().await {
        carry.extend_from_slice(&chunk);
        let cut = carry.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        let text = String::from_utf8_lossy(&carry[..cut]).into_owned();
        carry.drain(..cut);
        delivered += text.matches("\"t_ns\":").count() as u64;
        if text.contains(r#""type":"result""#) {
            break;
        }
    }
    delivered
}

async fn drive(deltas: u64, rate: u64) -> anyhow::Result<()> {
    let exe = std::env::current_exe()?.display().to_string();
    let relay = start_relay("delta-cpu", None, &["--claude", &exe])?;
    let pid = relay.child.id().to_string();
    let sid = common::create_session(&relay.base).await?;
    let resp = common::sse(&relay.base, &sid, None).await?;
    let reader = tokio::spawn(read_until_result(resp));
    // Let the session settle (the agent's start, the relay's initialize) before measuring.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let cpu0 = cpu_secs(&pid);
    let started = Instant::now();
    common::go(&relay.base, &sid, deltas, rate, "ephemeral").await?;
    let timeout = Duration::from_secs(deltas / rate.max(1) * 3 + 60);
    let delivered = tokio::time::timeout(timeout, reader).await??;
    let wall = started.elapsed();
    let cpu = cpu_secs(&pid) - cpu0;
    println!(
        "relay CPU per streamed delta: {:.2} µs ({deltas} deltas at {rate}/s, 1 SSE client, {} delivered, {:.1} s wall, relay CPU {:.2} s = {:.0}% of a core)",
        cpu * 1e6 / deltas as f64,
        delivered,
        wall.as_secs_f64(),
        cpu,
        cpu / wall.as_secs_f64() * 100.0
    );
    Ok(())
}
