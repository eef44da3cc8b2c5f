//! The fuzz targets' bodies: each `input(data)` is one input. libFuzzer calls them from
//! `fuzz_targets/`; `crates/relay/tests/fuzz_corpus.rs` replays the committed corpus through them.

pub mod cluster;
pub mod envelope;
pub mod hooks;
pub mod markdown;
pub mod ndjson;
pub mod partial_json;
pub mod relay_http;
pub mod sse;
