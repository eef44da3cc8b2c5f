//! The envelope decoder (crates/transport/src/envelope.rs): `/ws?envelope=1` text frames and the
//! REST event list's envelopes, then the typed decoding of durable payloads. Nothing may panic; a
//! durable frame always has a sequence number above 0.
//! (The body is `bridge_fuzz::targets::envelope::input`, shared with the corpus replay in CI.)
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| bridge_fuzz::targets::envelope::input(data));
