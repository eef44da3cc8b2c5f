//! NDJSON framing + the typed decoders (crates/protocol).
//!
//! Input: one parameter byte (line cap and chunk sizes), then the byte stream. Properties:
//! * feeding the stream in fuzzer-chosen chunks yields exactly what feeding it whole yields;
//! * no line is longer than the cap, line numbers strictly increase;
//! * every line is decoded as a CLI message and as a client message without panicking; a message
//!   that decodes re-serializes to a line that decodes again to the same JSON (round trip).
//! (The body is `bridge_fuzz::targets::ndjson::input`, shared with the corpus replay in CI.)
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| bridge_fuzz::targets::ndjson::input(data));
