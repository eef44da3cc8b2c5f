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

/// Shapes of input: a name, and how to make one of about `n` bytes.
type Shapes<'a> = &'a [(&'a str, &'a dyn Fn(usize) -> String)];

/// A [`row`] for each of `shapes`, run through `run`.
fn rows(n: usize, shapes: Shapes, run: &dyn Fn(&str)) {
    for (name, make) in shapes {
        row(name, n, make, run);
    }
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
    rows(
        n,
        &[
            ("partial_json: [[[[…", &|n| "[".repeat(n)),
            ("partial_json: {\"a\":[{\"a\":[… cut", &|n| {
                "{\"a\":[".repeat(n / 6)
            }),
            ("partial_json: [1,[1,[1,… tr", &|n| {
                format!("{}tr", "[1,".repeat(n / 3))
            }),
            ("partial_json: long string", &|n| {
                format!("{{\"c\": \"{}", "x\\\"".repeat(n / 3))
            }),
        ],
        &repair,
    );
    let md = |s: &str| {
        let tree = markdown::parse(s);
        std::hint::black_box(markdown::plain_text(&tree));
        std::hint::black_box(markdown::split_blocks(s));
    };
    rows(
        n,
        &[
            ("markdown: > > > > …", &|n| "> ".repeat(n / 2)),
            ("markdown: [[[[…", &|n| "[".repeat(n)),
            ("markdown: [a](b [a](b …", &|n| "[a](b ".repeat(n / 6)),
            ("markdown: *a _a *a _a …", &|n| "*a _a ".repeat(n / 6)),
            ("markdown: ``` ` `` ` …", &|n| "` `` ".repeat(n / 5)),
            ("markdown: - - - - … (nested list)", &|n| {
                "- ".repeat(n / 2)
            }),
            ("markdown: <a <a <a …", &|n| "<a ".repeat(n / 3)),
            ("markdown: | table rows", &|n| {
                let mut s = String::from("|a|b|\n|-|-|\n");
                while s.len() < n {
                    s.push_str("|x|y|\n");
                }
                s
            }),
            ("markdown: text + **bold** …", &|n| {
                "word **bold** ".repeat(n / 14)
            }),
        ],
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
    rows(
        n,
        &[
            ("ndjson: one line, 1-byte chunks", &|n| "x".repeat(n)),
            ("ndjson: short lines, 1-byte chunks", &|n| {
                "{}\n".repeat(n / 3)
            }),
        ],
        &framer,
    );
}
