//! The SSE push parser (crates/transport/src/sse.rs) and, for each event it dispatches, the envelope
//! decoder and the typed decoding of durable payloads.
//!
//! Input: one parameter byte (line cap and chunk sizes), then the byte stream. Properties: chunking
//! never changes the items (but for how much of an over-long line had arrived when it was given
//! up); decoding never panics.
//! (The body is `bridge_fuzz::targets::sse::input`, shared with the corpus replay in CI.)
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| bridge_fuzz::targets::sse::input(data));
