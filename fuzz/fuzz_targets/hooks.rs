//! What a terminal session sends the relay: hook inputs, transcript lines, answers turned into hook
//! decisions (the body is `bridge_fuzz::targets::hooks::input`, shared with the corpus replay in CI).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| bridge_fuzz::targets::hooks::input(data));
