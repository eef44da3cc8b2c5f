//! What durability costs: appends events to a fresh `relay.db` one transaction each, as the relay
//! does, with `synchronous=NORMAL` (survives a relay crash) and `synchronous=FULL` (survives power
//! loss; the default), and prints events/s and the ratio measured in the same run.
//!
//! ```text
//! cargo run --release -p bridge-relay --example durability -- [--events 5000] [--dir DIR] [--bytes 400]
//! ```
//! `--dir` should be on the disk the data dir lives on (a tmpfs makes every sync free).

use std::time::Instant;

use bridge_relay::EventStore as _;
use bridge_relay::core::store::{Durability, Source, SqliteStore, StoredEvent};

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let opt = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let events: u64 = opt("--events").map_or(Ok(5000), |v| v.parse())?;
    let bytes: usize = opt("--bytes").map_or(Ok(400), |v| v.parse())?;
    let dir = opt("--dir").map_or_else(std::env::current_dir, |d| Ok(d.into()))?;
    let payload = format!(
        "{{\"type\":\"assistant\",\"text\":\"{}\"}}",
        "x".repeat(bytes)
    );
    println!(
        "{events} appends of {} bytes each in {}",
        payload.len(),
        dir.display()
    );
    println!();
    println!("| synchronous | events/s | µs/event |");
    println!("|---|---:|---:|");
    let mut rates = Vec::new();
    for (name, d) in [("NORMAL", Durability::Normal), ("FULL", Durability::Full)] {
        let tmp = tempfile::tempdir_in(&dir)?;
        let store = SqliteStore::open_with(&tmp.path().join("relay.db"), d)?;
        let start = Instant::now();
        for seq in 1..=events {
            store.append(&StoredEvent {
                session_id: "cse_bench".into(),
                seq,
                event_id: uuid::Uuid::new_v4().to_string(),
                event_type: "assistant".into(),
                source: Source::Worker,
                created_at: "2026-01-01T00:00:00.000Z".into(),
                payload: payload.clone(),
                client_uuid: None,
            })?;
        }
        let secs = start.elapsed().as_secs_f64();
        let rate = events as f64 / secs;
        rates.push(rate);
        println!("| {name} | {rate:.0} | {:.1} |", secs * 1e6 / events as f64);
    }
    println!();
    println!("FULL / NORMAL throughput: {:.2}", rates[1] / rates[0]);
    Ok(())
}
