//! The integration tests of this crate, one binary (one link; in the browser, one page): each
//! file is a module. `framing_prop` and `usage` are native only (proptest; captured answers).

#[cfg(target_arch = "wasm32")]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

mod api;
mod builders;
mod corpus;
mod decode_paths;
mod framing;
#[cfg(not(target_arch = "wasm32"))]
mod framing_prop;
mod messages;
#[cfg(not(target_arch = "wasm32"))]
mod usage;
