//! The integration tests of the console crate, one binary (one link; in the browser, one page):
//! each file is a module. The transcript model's tests run natively and in the browser; those
//! that read the capture files from disk are native only; the mounted components' (`web`,
//! `web_pwa`) run in the browser. `tests/bench.rs` (the browser benchmarks, run by
//! `scripts/bench.sh`) is a target of its own that `cargo test` leaves out.

#[cfg(target_arch = "wasm32")]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

mod model;
#[cfg(not(target_arch = "wasm32"))]
mod model_fixtures;
#[cfg(not(target_arch = "wasm32"))]
mod model_terminal_info;
mod model_transcript_replay;
mod model_typed_fields;
#[cfg(target_arch = "wasm32")]
mod web;
#[cfg(target_arch = "wasm32")]
mod web_pwa;
