//! How the parsers the fuzz targets exercise scale on adversarial input: each shape is timed at n
//! and 4n bytes; a ratio near 4 is linear, near 16 quadratic. Not instrumented (a plain release
//! build): `cd fuzz && cargo run --release --example scaling` (the fuzz workspace's own target dir).
//!
//! Shapes are what model output or a hostile agent can produce: deep nesting, long runs of one
//! delimiter, one huge line fed a byte at a time.

use std::time::{Duration, Instant};

use bridge_fuzz::{markdown, partial_json};
use bridge_protocol::framing::NdjsonDecoder;

fn time(f: &dyn Fn()) -> Duration {
    // Best of three, at least 20 ms of work each.
    (0..3)
        .map(|_| {
            let start = Instant::now();
            let mut runs = 0u32;
            while runs == 0 || start.elapsed() < Duration::from_millis(20) {
                f();
                runs += 1;
            }
            start.elapsed() / runs
        })
        .min()
        .unwrap()
}

fn row(name: &str, n: usize, make: &dyn Fn(usize) -> String, run: &dyn Fn(&str)) {
    let (a, b) = (make(n), make(4 * n));
    let (ta, tb) = (time(&|| run(&a)), time(&|| run(&b)));
    println!(
        "{name:<34} {:>9} {:>12.3} {:>12.3} {:>7.1}",
        a.len(),
        ta.as_secs_f64() * 1e3,
        tb.as_secs_f64() * 1e3,
        tb.as_secs_f64() / ta.as_secs_f64()
    );
}

fn main() {
    let n = 25_000;
    println!(
        "{:<34} {:>9} {:>12} {:>12} {:>7}",
        "shape", "n bytes", "ms at n", "ms at 4n", "ratio"
    );
    let repair = |s: &str| {
        std::hint::black_box(partial_json::repair(s));
    };
    row("partial_json: [[[[…", n, &|n| "[".repeat(n), &repair);
    row(
        "partial_json: {\"a\":[{\"a\":[… cut",
        n,
        &|n| "{\"a\":[".repeat(n / 6),
        &repair,
    );
    row(
        "partial_json: [1,[1,[1,… tr",
        n,
        &|n| format!("{}tr", "[1,".repeat(n / 3)),
        &repair,
    );
    row(
        "partial_json: long string",
        n,
        &|n| format!("{{\"c\": \"{}", "x\\\"".repeat(n / 3)),
        &repair,
    );
    let md = |s: &str| {
        let tree = markdown::parse(s);
        std::hint::black_box(markdown::plain_text(&tree));
        std::hint::black_box(markdown::split_blocks(s));
    };
    row("markdown: > > > > …", n, &|n| "> ".repeat(n / 2), &md);
    row("markdown: [[[[…", n, &|n| "[".repeat(n), &md);
    row(
        "markdown: [a](b [a](b …",
        n,
        &|n| "[a](b ".repeat(n / 6),
        &md,
    );
    row(
        "markdown: *a _a *a _a …",
        n,
        &|n| "*a _a ".repeat(n / 6),
        &md,
    );
    row("markdown: ``` ` `` ` …", n, &|n| "` `` ".repeat(n / 5), &md);
    row(
        "markdown: - - - - … (nested list)",
        n,
        &|n| "- ".repeat(n / 2),
        &md,
    );
    row("markdown: <a <a <a …", n, &|n| "<a ".repeat(n / 3), &md);
    row(
        "markdown: | table rows",
        n,
        &|n| {
            let mut s = String::from("|a|b|\n|-|-|\n");
            while s.len() < n {
                s.push_str("|x|y|\n");
            }
            s
        },
        &md,
    );
    row(
        "markdown: text + **bold** …",
        n,
        &|n| "word **bold** ".repeat(n / 14),
        &md,
    );
    let framer = |s: &str| {
        let mut d = NdjsonDecoder::default();
        let mut lines = 0;
        for b in s.as_bytes().chunks(1) {
            lines += d.feed(b).len();
        }
        lines += usize::from(d.finish().is_some());
        std::hint::black_box(lines);
    };
    row(
        "ndjson: one line, 1-byte chunks",
        n,
        &|n| "x".repeat(n),
        &framer,
    );
    row(
        "ndjson: short lines, 1-byte chunks",
        n,
        &|n| "{}\n".repeat(n / 3),
        &framer,
    );
}
