//! The store's entry points into lazily loaded parts (src/lazy.rs says how parts load). The
//! session part: what follows applied frames, the changes panel's loading, a CLI session's history
//! page. The settings part: the Notifications panel's device list. The session list never runs
//! them.

use leptos::wasm_split::SplitLoaderError;

use super::{Changes, Device, Store};
use crate::lazy::{self, Part};

/// Applies the queued frames and what follows them (`Store::apply_inbox`).
#[leptos::wasm_split::wasm_split(session, wasm_split_path = ::leptos::wasm_split, preload(preload_inbox), fallible)]
fn inbox(store: Store) -> Result<(), SplitLoaderError> {
    store.apply_inbox();
    Ok(())
}

/// Reads the open session's changed files again (`Changes::refresh`).
#[leptos::wasm_split::wasm_split(session, wasm_split_path = ::leptos::wasm_split, preload(preload_changes), fallible)]
fn changes(changes: Changes) -> Result<(), SplitLoaderError> {
    changes.refresh();
    Ok(())
}

/// Reads the relay's device list for the Notifications panel (`Device::refresh_devices`).
#[leptos::wasm_split::wasm_split(settings, wasm_split_path = ::leptos::wasm_split, preload(preload_devices), fallible)]
fn devices(device: Device) -> Result<(), SplitLoaderError> {
    device.refresh_devices();
    Ok(())
}

/// [`Device::refresh_devices`] once the settings part is in.
pub fn devices_now(device: Device) -> bool {
    lazy::now(devices(device)).is_some()
}

/// Shows a page of a CLI session's history (`Store::show_cli_page`).
#[leptos::wasm_split::wasm_split(session, wasm_split_path = ::leptos::wasm_split, preload(preload_cli_page), fallible)]
fn cli_page(store: Store, raw: serde_json::Value) -> Result<(), SplitLoaderError> {
    store.show_cli_page(raw);
    Ok(())
}

/// [`Store::show_cli_page`] once the session part is in.
pub fn cli_page_now(store: Store, raw: serde_json::Value) -> bool {
    lazy::now(cli_page(store, raw)).is_some()
}

/// [`Store::apply_inbox`] once the session part is in (`Store::flush` checks first).
pub fn inbox_now(store: Store) -> bool {
    lazy::now(inbox(store)).is_some()
}

/// [`Changes::refresh`] once the session part is in.
pub fn changes_now(c: Changes) -> bool {
    lazy::now(changes(c)).is_some()
}

/// Says how these entry points load (`crate::components::register_lazy_parts`).
pub fn register() {
    lazy::register(Part::Session, || Box::pin(preload_inbox()));
    lazy::register(Part::Session, || Box::pin(preload_changes()));
    lazy::register(Part::Session, || Box::pin(preload_cli_page()));
    lazy::register(Part::Settings, || Box::pin(preload_devices()));
}
