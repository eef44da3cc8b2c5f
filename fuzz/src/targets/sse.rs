//! The SSE push parser (crates/transport/src/sse.rs) and, for each event it dispatches, the envelope
//! decoder and the typed decoding of durable payloads.
//!
//! Input: one parameter byte (line cap and chunk sizes), then the byte stream. Properties: chunking
//! never changes the items (but for how much of an over-long line had arrived when it was given
//! up); decoding never panics.

use super::super::{chunks, line_cap, split_first};
use bridge_transport::envelope::{Frame, decode_sse};
use bridge_transport::sse::{SseItem, SseParser};

/// What the parser produced, with `TooLong::len` zeroed: it is how much of the line had arrived
/// when it was given up, so it depends on the chunking by design.
fn run(parser: &mut SseParser, parts: &[&[u8]]) -> Vec<SseItem> {
    parts
        .iter()
        .flat_map(|p| parser.feed(p))
        .map(|item| match item {
            SseItem::TooLong { max, .. } => SseItem::TooLong { len: 0, max },
            other => other,
        })
        .collect()
}

/// One input, as libFuzzer gives it (`fuzz_targets/sse.rs`) and as the relay's test replays the
/// committed corpus (`crates/relay/tests/fuzz_corpus.rs`).
pub fn input(data: &[u8]) {
    let (param, stream) = split_first(data);
    let cap = line_cap(param, bridge_transport::sse::DEFAULT_MAX_LINE_BYTES);
    let sizes = [param % 5 + 1, 1, param % 11 + 1];

    let whole = run(&mut SseParser::with_max_line_bytes(cap), &[stream]);
    let split = run(
        &mut SseParser::with_max_line_bytes(cap),
        &chunks(stream, &sizes),
    );
    assert_eq!(whole, split, "chunking changed what the parser produced");

    for item in &whole {
        match item {
            SseItem::Event(event) => {
                assert!(event.data.len() <= stream.len() * 3 + 3);
                if let Ok(Frame::Durable(d)) = decode_sse(event) {
                    assert!(d.seq > 0);
                    let _ = d.decode();
                }
            }
            SseItem::Comment(c) => assert!(c.len() <= cap.max(1) * 3),
            SseItem::Retry(_) | SseItem::TooLong { .. } => {}
        }
    }
}
