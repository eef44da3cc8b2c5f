//! The store's entry points into lazily loaded parts (src/lazy.rs says how parts load). The
//! session part: what follows applied frames, the changes panel's loading, a CLI session's history
//! page, the prompts an earlier page left unsent (read and restored), asking the agent's info once
//! the session is live. The live part: following the open session's detail after its first read.
//! The settings part: archiving a session, discarding a kept worktree, the Notifications panel's
//! device list, notifications the page shows itself. The session list never runs them. Callers
//! call these once the part is in (`lazy::loaded` / `lazy::when_loaded`); without the split
//! build (`trunk serve`, tests) they call the code directly.

use std::rc::Rc;

use leptos::prelude::GetUntracked as _;
use serde_json::Value;

use super::{Changes, Device, KeptWorktree, SessionList, Store};
use crate::net::NetError;

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

/// [`Store::load_unsent`] for session `sid` (nothing when another session is open now), once the
/// session part is in.
pub fn load_unsent(store: Store, sid: String) {
    #[cfg(all(feature = "split", target_family = "wasm"))]
    crate::lazy::now(split::unsent(store, sid));
    #[cfg(not(all(feature = "split", target_family = "wasm")))]
    load_unsent_of(store, &sid);
}

fn load_unsent_of(store: Store, sid: &str) {
    if store.session_id.try_get_untracked().flatten().as_deref() == Some(sid) {
        store.load_unsent();
        // Frames applied before this (they waited for the part too) found the queue empty.
        store.pump_queue();
    }
}

/// [`Store::restore_unsent_after`] for session `sid` (nothing when another session is open now),
/// once the session part is in.
pub fn restore_unsent_after(store: Store, sid: String, last_seq: u64) {
    #[cfg(all(feature = "split", target_family = "wasm"))]
    crate::lazy::now(split::restore(store, sid, last_seq));
    #[cfg(not(all(feature = "split", target_family = "wasm")))]
    restore_unsent_of(store, &sid, last_seq);
}

fn restore_unsent_of(store: Store, sid: &str, last_seq: u64) {
    if store.session_id.try_get_untracked().flatten().as_deref() == Some(sid) {
        store.restore_unsent_after(last_seq);
    }
}

/// [`Store::refresh_agent_info`] (not forced), once the session part is in.
pub fn refresh_agent_info(store: Store) {
    #[cfg(all(feature = "split", target_family = "wasm"))]
    crate::lazy::now(split::agent_info(store));
    #[cfg(not(all(feature = "split", target_family = "wasm")))]
    store.refresh_agent_info(false);
}

/// [`Store::follow_detail`], once the live part is in.
pub fn follow_detail(store: Store, sid: String, answer: Result<Value, NetError>) {
    #[cfg(all(feature = "split", target_family = "wasm"))]
    crate::lazy::now(split::follow(store, sid, answer));
    #[cfg(not(all(feature = "split", target_family = "wasm")))]
    store.follow_detail(sid, answer);
}

/// [`SessionList::archive_now`], once the settings part is in.
pub fn archive_session(list: SessionList, id: String, name: String, done: Box<dyn FnOnce()>) {
    #[cfg(all(feature = "split", target_family = "wasm"))]
    crate::lazy::now(split::archive(list, id, name, done));
    #[cfg(not(all(feature = "split", target_family = "wasm")))]
    list.archive_now(id, name, done);
}

/// [`SessionList::discard_now`], once the settings part is in.
pub fn discard_worktree(list: SessionList, kept: KeptWorktree, done: Box<dyn FnOnce()>) {
    #[cfg(all(feature = "split", target_family = "wasm"))]
    crate::lazy::now(split::discard(list, kept, done));
    #[cfg(not(all(feature = "split", target_family = "wasm")))]
    list.discard_now(kept, done);
}

/// [`Device::refresh_devices`], once the settings part is in.
pub fn refresh_devices(device: Device) {
    #[cfg(all(feature = "split", target_family = "wasm"))]
    crate::lazy::now(split::devices(device));
    #[cfg(not(all(feature = "split", target_family = "wasm")))]
    device.refresh_devices();
}

/// A notification the page shows itself ([`crate::pwa::show_local_notification`]).
pub struct InPageNote {
    pub title: String,
    pub body: String,
    /// A newer notification with the same tag replaces it.
    pub tag: String,
    /// The page a click opens.
    pub url: String,
    /// Called with `url` when a notification shown without the service worker is clicked.
    pub on_click: Rc<dyn Fn(String)>,
}

impl InPageNote {
    fn show(self) {
        crate::pwa::show_local_notification(
            &self.title,
            &self.body,
            &self.tag,
            &self.url,
            self.on_click,
        );
    }
}

/// Shows `note`, once the settings part is in.
pub fn show_in_page(note: InPageNote) {
    #[cfg(all(feature = "split", target_family = "wasm"))]
    crate::lazy::now(split::in_page(note));
    #[cfg(not(all(feature = "split", target_family = "wasm")))]
    note.show();
}

/// Says how these entry points load (`crate::components::register_lazy_parts`).
#[cfg(all(feature = "split", target_family = "wasm"))]
pub fn register() {
    use crate::lazy::{Part, register};
    register(Part::Session, || Box::pin(split::preload_inbox()));
    register(Part::Session, || Box::pin(split::preload_changes()));
    register(Part::Session, || Box::pin(split::preload_cli_page()));
    register(Part::Session, || Box::pin(split::preload_unsent()));
    register(Part::Session, || Box::pin(split::preload_restore()));
    register(Part::Session, || Box::pin(split::preload_agent_info()));
    register(Part::Live, || Box::pin(split::preload_follow()));
    register(Part::Settings, || Box::pin(split::preload_devices()));
    register(Part::Settings, || Box::pin(split::preload_archive()));
    register(Part::Settings, || Box::pin(split::preload_discard()));
    register(Part::Settings, || Box::pin(split::preload_in_page()));
}

#[cfg(all(feature = "split", target_family = "wasm"))]
#[allow(unsafe_code)]
mod split {
    //! The `#[wasm_split]` entry points (the macro's generated code is the only `unsafe_code`).
    use leptos::wasm_split::SplitLoaderError;
    use serde_json::Value;

    use super::{Changes, Device, KeptWorktree, SessionList, Store};
    use crate::net::NetError;

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

    #[leptos::wasm_split::wasm_split(session, wasm_split_path = ::leptos::wasm_split, preload(preload_unsent), fallible)]
    pub(super) fn unsent(store: Store, sid: String) -> Result<(), SplitLoaderError> {
        super::load_unsent_of(store, &sid);
        Ok(())
    }

    #[leptos::wasm_split::wasm_split(session, wasm_split_path = ::leptos::wasm_split, preload(preload_restore), fallible)]
    pub(super) fn restore(
        store: Store,
        sid: String,
        last_seq: u64,
    ) -> Result<(), SplitLoaderError> {
        super::restore_unsent_of(store, &sid, last_seq);
        Ok(())
    }

    #[leptos::wasm_split::wasm_split(session, wasm_split_path = ::leptos::wasm_split, preload(preload_agent_info), fallible)]
    pub(super) fn agent_info(store: Store) -> Result<(), SplitLoaderError> {
        store.refresh_agent_info(false);
        Ok(())
    }

    #[leptos::wasm_split::wasm_split(live, wasm_split_path = ::leptos::wasm_split, preload(preload_follow), fallible)]
    pub(super) fn follow(
        store: Store,
        sid: String,
        answer: Result<Value, NetError>,
    ) -> Result<(), SplitLoaderError> {
        store.follow_detail(sid, answer);
        Ok(())
    }

    #[leptos::wasm_split::wasm_split(settings, wasm_split_path = ::leptos::wasm_split, preload(preload_archive), fallible)]
    pub(super) fn archive(
        list: SessionList,
        id: String,
        name: String,
        done: Box<dyn FnOnce()>,
    ) -> Result<(), SplitLoaderError> {
        list.archive_now(id, name, done);
        Ok(())
    }

    #[leptos::wasm_split::wasm_split(settings, wasm_split_path = ::leptos::wasm_split, preload(preload_discard), fallible)]
    pub(super) fn discard(
        list: SessionList,
        kept: KeptWorktree,
        done: Box<dyn FnOnce()>,
    ) -> Result<(), SplitLoaderError> {
        list.discard_now(kept, done);
        Ok(())
    }

    #[leptos::wasm_split::wasm_split(settings, wasm_split_path = ::leptos::wasm_split, preload(preload_devices), fallible)]
    pub(super) fn devices(device: Device) -> Result<(), SplitLoaderError> {
        device.refresh_devices();
        Ok(())
    }

    #[leptos::wasm_split::wasm_split(settings, wasm_split_path = ::leptos::wasm_split, preload(preload_in_page), fallible)]
    pub(super) fn in_page(note: super::InPageNote) -> Result<(), SplitLoaderError> {
        note.show();
        Ok(())
    }
}
