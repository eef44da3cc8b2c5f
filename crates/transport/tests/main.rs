//! The integration tests of this crate, one binary (one link; in the browser, one page): each
//! file is a module. Natively with the `native` feature: the transports against the real relay
//! (`relay`, `chaos_scale`; the relay harness in `common`); in the browser: `web`; both: `policy`.

#[cfg(target_arch = "wasm32")]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

#[cfg(all(feature = "native", not(target_arch = "wasm32")))]
mod chaos_scale;
#[cfg(all(feature = "native", not(target_arch = "wasm32")))]
mod common;
mod policy;
#[cfg(all(feature = "native", not(target_arch = "wasm32")))]
mod relay;
#[cfg(target_arch = "wasm32")]
mod web;
