//! The store's entry points into lazily loaded parts (src/lazy.rs says how parts load). The
//! session part: what follows applied frames, the changes panel's loading, a CLI session's history
//! page. The settings part: the Notifications panel's device list. The session list never runs
//! them. Callers call these as they are once the part is in (`lazy::loaded` / `lazy::when_loaded`);
//! without the split build (`trunk serve`, tests) they call the code directly.

use serde_json::Value;

use super::{Changes, Device, Store};

/// [`Store::apply_inbox`] (`Store::flush` checks that the session part is in first).
pub fn apply_inbox(store: Store) {
    #[cfg(all(feature = "split", target_family = "wasm"))]
    crate::lazy::now(split::inbox(store));
    #[cfg(not(all(feature = "split", target_family = "wasm")))]
    store.apply_inbox();
}

/// [`Changes::refresh`], once the session part is in.
pub fn refresh_changes(changes: Changes) {
    #[cfg(all(feature = "split", target_family = "wasm"))]
    crate::lazy::now(split::changes(changes));
    #[cfg(not(all(feature = "split", target_family = "wasm")))]
    changes.refresh();
}

/// [`Store::show_cli_page`], once the session part is in.
pub fn show_cli_page(store: Store, raw: Value) {
    #[cfg(all(feature = "split", target_family = "wasm"))]
    crate::lazy::now(split::cli_page(store, raw));
    #[cfg(not(all(feature = "split", target_family = "wasm")))]
    store.show_cli_page(raw);
}

/// [`Device::refresh_devices`], once the settings part is in.
pub fn refresh_devices(device: Device) {
    #[cfg(all(feature = "split", target_family = "wasm"))]
    crate::lazy::now(split::devices(device));
    #[cfg(not(all(feature = "split", target_family = "wasm")))]
    device.refresh_devices();
}

/// Says how these entry points load (`crate::components::register_lazy_parts`).
#[cfg(all(feature = "split", target_family = "wasm"))]
pub fn register() {
    use crate::lazy::{Part, register};
    register(Part::Session, || Box::pin(split::preload_inbox()));
    register(Part::Session, || Box::pin(split::preload_changes()));
    register(Part::Session, || Box::pin(split::preload_cli_page()));
    register(Part::Settings, || Box::pin(split::preload_devices()));
}

#[cfg(all(feature = "split", target_family = "wasm"))]
#[allow(unsafe_code)]
mod split {
    //! The `#[wasm_split]` entry points (the macro's generated code is the only `unsafe_code`).
    use leptos::wasm_split::SplitLoaderError;
    use serde_json::Value;

    use super::{Changes, Device, Store};

    #[leptos::wasm_split::wasm_split(session, wasm_split_path = ::leptos::wasm_split, preload(preload_inbox), fallible)]
    pub(super) fn inbox(store: Store) -> Result<(), SplitLoaderError> {
        store.apply_inbox();
        Ok(())
    }

    #[leptos::wasm_split::wasm_split(session, wasm_split_path = ::leptos::wasm_split, preload(preload_changes), fallible)]
    pub(super) fn changes(changes: Changes) -> Result<(), SplitLoaderError> {
        changes.refresh();
        Ok(())
    }

    #[leptos::wasm_split::wasm_split(session, wasm_split_path = ::leptos::wasm_split, preload(preload_cli_page), fallible)]
    pub(super) fn cli_page(store: Store, raw: Value) -> Result<(), SplitLoaderError> {
        store.show_cli_page(raw);
        Ok(())
    }

    #[leptos::wasm_split::wasm_split(settings, wasm_split_path = ::leptos::wasm_split, preload(preload_devices), fallible)]
    pub(super) fn devices(device: Device) -> Result<(), SplitLoaderError> {
        device.refresh_devices();
        Ok(())
    }
}
