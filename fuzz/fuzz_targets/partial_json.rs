//! The console's partial-JSON repair (src/state/partial_json.rs). Properties: never panics; a
//! complete JSON document is returned as itself; prefixes cut at 32 char boundaries spread over the
//! input repair without panicking, and a repaired value is valid JSON.
//! (The body is `bridge_fuzz::targets::partial_json::input`, shared with the corpus replay in CI.)
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| bridge_fuzz::targets::partial_json::input(data));
