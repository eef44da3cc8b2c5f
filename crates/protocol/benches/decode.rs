//! Decode throughput over the golden corpus (CLI → client lines): NDJSON framing alone, framing
//! plus `parse_cli_line`, framing plus a `Value` and `CliMessage::from_value_ref` (the console's
//! typed step: its transport hands it a `Value`), and framing plus a bare `serde_json::Value` parse
//! as the baseline. Two corpora: the captures and handmade lines (`corpus`), and the browser
//! bench's mix (`mix`: the real captures' lines plus four times as many streamed text deltas, as in
//! tests/bench.rs).
//!
//! `cargo bench -p bridge-protocol --bench decode` — criterion reports MB/s (`bytes`) and
//! messages/s (`messages`); a summary table with ratios against the baseline is printed at the end.

#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    native::main();
}

#[cfg(not(target_arch = "wasm32"))]
mod native {
    use std::hint::black_box;
    use std::time::{Duration, Instant};

    use bridge_protocol::framing::{DEFAULT_MAX_LINE_BYTES, NdjsonDecoder};
    use bridge_protocol::{CliMessage, bench_corpus, parse_cli_line};
    use criterion::{Criterion, Throughput};
    use serde_json::Value;

    /// The CLI-direction lines of the corpus, repeated to about 1 MiB of NDJSON.
    fn corpus() -> (Vec<u8>, u64) {
        repeat(&bench_corpus::corpus())
    }

    /// tests/bench.rs's decode corpus (the same `bench_corpus::mix`): the real captures' stdout
    /// lines and four times as many `text_delta` stream events, repeated to about 1 MiB.
    fn mix() -> (Vec<u8>, u64) {
        repeat(&bench_corpus::mix())
    }

    fn repeat(lines: &[String]) -> (Vec<u8>, u64) {
        let mut bytes = Vec::new();
        let mut count = 0;
        while bytes.len() < 1 << 20 {
            for line in lines {
                bytes.extend_from_slice(line.as_bytes());
                bytes.push(b'\n');
                count += 1;
            }
        }
        (bytes, count)
    }

    /// Feeds `bytes` in 16 KiB chunks (like a pipe) and applies `each` to every line.
    fn decode(bytes: &[u8], mut each: impl FnMut(&str)) -> usize {
        let mut decoder = NdjsonDecoder::new(DEFAULT_MAX_LINE_BYTES);
        let mut lines = 0;
        for chunk in bytes.chunks(16 * 1024) {
            for item in decoder.feed(chunk) {
                each(&item.expect("corpus frames cleanly").text);
                lines += 1;
            }
        }
        lines
    }

    fn framing_only(bytes: &[u8]) -> usize {
        decode(bytes, |line| {
            black_box(line);
        })
    }

    fn value_baseline(bytes: &[u8]) -> usize {
        decode(bytes, |line| {
            black_box(serde_json::from_str::<Value>(line).expect("JSON"));
        })
    }

    fn typed(bytes: &[u8]) -> usize {
        decode(bytes, |line| {
            black_box(parse_cli_line(line).expect("corpus parses"));
        })
    }

    fn value_then_typed(bytes: &[u8]) -> usize {
        decode(bytes, |line| {
            let value = serde_json::from_str::<Value>(line).expect("JSON");
            black_box(CliMessage::from_value_ref(&value).expect("corpus decodes"));
            black_box(value);
        })
    }

    type Case = (&'static str, fn(&[u8]) -> usize);
    const CASES: &[Case] = &[
        ("framing", framing_only),
        ("framing+Value (baseline)", value_baseline),
        ("framing+parse_cli_line", typed),
        ("framing+Value+from_value_ref", value_then_typed),
    ];

    pub fn main() {
        let corpora = [("corpus", corpus()), ("mix", mix())];
        // `DECODE_ONLY=<corpus>/<case> DECODE_PASSES=n`: only run that case n times (for
        // `perf stat -e instructions:u,cycles:u`, steadier than wall time on a busy machine).
        if let Ok(only) = std::env::var("DECODE_ONLY") {
            let passes: u32 = std::env::var("DECODE_PASSES")
                .ok()
                .and_then(|n| n.parse().ok())
                .unwrap_or(100);
            let (corpus, case) = only.split_once('/').expect("DECODE_ONLY=<corpus>/<case>");
            let (_, (bytes, _)) = corpora.iter().find(|(c, _)| *c == corpus).expect("corpus");
            let (_, run) = CASES.iter().find(|(c, _)| *c == case).expect("case");
            for _ in 0..passes {
                black_box(run(black_box(bytes)));
            }
            return;
        }
        let mut criterion = Criterion::default().configure_from_args();
        for (corpus, (bytes, messages)) in &corpora {
            assert_eq!(typed(bytes) as u64, *messages);
            for (unit, throughput) in [
                ("bytes", Throughput::Bytes(bytes.len() as u64)),
                ("messages", Throughput::Elements(*messages)),
            ] {
                let mut group = criterion.benchmark_group(format!("decode/{corpus}/{unit}"));
                group.throughput(throughput);
                for (name, run) in CASES {
                    group.bench_function(*name, |bencher| bencher.iter(|| run(black_box(bytes))));
                }
                group.finish();
            }
        }
        criterion.final_summary();
        for (corpus, (bytes, messages)) in &corpora {
            println!("\n{corpus}:");
            summary(bytes, *messages);
        }
    }

    /// A plain table measured in this run: MB/s, messages/s, and time relative to the baseline.
    fn summary(bytes: &[u8], messages: u64) {
        let mut rows = Vec::new();
        for (name, run) in CASES {
            let mut iterations = 0u32;
            let start = Instant::now();
            while start.elapsed() < Duration::from_millis(700) {
                black_box(run(black_box(bytes)));
                iterations += 1;
            }
            let per_pass = start.elapsed().as_secs_f64() / f64::from(iterations);
            rows.push((*name, per_pass));
        }
        let baseline = rows[1].1;
        println!(
            "{:.2} MiB, {messages} messages ({} bytes/message on average)",
            bytes.len() as f64 / f64::from(1 << 20),
            bytes.len() as u64 / messages
        );
        println!(
            "{:<28} {:>10} {:>14} {:>12}",
            "case", "MB/s", "messages/s", "vs baseline"
        );
        for (name, per_pass) in rows {
            println!(
                "{:<28} {:>10.1} {:>14.0} {:>11.2}x",
                name,
                bytes.len() as f64 / per_pass / 1e6,
                messages as f64 / per_pass,
                per_pass / baseline
            );
        }
    }
}
