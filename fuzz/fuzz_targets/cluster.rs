//! What a relay reads from NATS: log messages, live frames, seals and sealed values (the body is
//! `bridge_fuzz::targets::cluster::input`, shared with the corpus replay in CI).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| bridge_fuzz::targets::cluster::input(data));
