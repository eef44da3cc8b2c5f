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

crate::lazy::lazy_entries! {
    /// [`Store::apply_inbox`] (`Store::flush` checks that the session part is in first).
    pub fn apply_inbox(store: Store), part session / Session,
        entry inbox, preload preload_inbox { store.apply_inbox() }

    /// [`Changes::refresh`], once the session part is in.
    pub fn refresh_changes(changes: Changes), part session / Session,
        entry changes, preload preload_changes { changes.refresh() }

    /// [`Store::show_cli_page`], once the session part is in.
    pub fn show_cli_page(store: Store, raw: Value), part session / Session,
        entry cli_page, preload preload_cli_page { store.show_cli_page(raw) }

    /// [`Store::load_unsent`] for session `sid` (nothing when another session is open now), once
    /// the session part is in.
    pub fn load_unsent(store: Store, sid: String), part session / Session,
        entry unsent, preload preload_unsent { load_unsent_of(store, &sid) }

    /// [`Store::restore_unsent_after`] for session `sid` (nothing when another session is open
    /// now), once the session part is in.
    pub fn restore_unsent_after(store: Store, sid: String, last_seq: u64),
        part session / Session,
        entry restore, preload preload_restore { restore_unsent_of(store, &sid, last_seq) }

    /// [`Store::refresh_agent_info`] (not forced), once the session part is in.
    pub fn refresh_agent_info(store: Store), part session / Session,
        entry agent_info, preload preload_agent_info { store.refresh_agent_info(false) }

    /// [`Store::follow_detail`], once the live part is in.
    pub fn follow_detail(store: Store, sid: String, answer: Result<Value, NetError>),
        part live / Live,
        entry follow, preload preload_follow { store.follow_detail(sid, answer) }

    /// [`SessionList::archive_now`], once the settings part is in.
    pub fn archive_session(list: SessionList, id: String, name: String, done: Box<dyn FnOnce()>),
        part settings / Settings,
        entry archive, preload preload_archive { list.archive_now(id, name, done) }

    /// [`SessionList::discard_now`], once the settings part is in.
    pub fn discard_worktree(list: SessionList, kept: KeptWorktree, done: Box<dyn FnOnce()>),
        part settings / Settings,
        entry discard, preload preload_discard { list.discard_now(kept, done) }

    /// [`Device::refresh_devices`], once the settings part is in.
    pub fn refresh_devices(device: Device), part settings / Settings,
        entry devices, preload preload_devices { device.refresh_devices() }

    /// Shows `note` ([`InPageNote`]), once the settings part is in.
    pub fn show_in_page(note: InPageNote), part settings / Settings,
        entry in_page, preload preload_in_page { note.show() }
}

/// Says how these entry points load (`crate::components::register_lazy_parts`).
#[cfg(all(feature = "split", target_family = "wasm"))]
pub use split_entry::register;

fn load_unsent_of(store: Store, sid: &str) {
    if store.session_id.try_get_untracked().flatten().as_deref() == Some(sid) {
        store.load_unsent();
        // Frames applied before this (they waited for the part too) found the queue empty.
        store.pump_queue();
    }
}

fn restore_unsent_of(store: Store, sid: &str, last_seq: u64) {
    if store.session_id.try_get_untracked().flatten().as_deref() == Some(sid) {
        store.restore_unsent_after(last_seq);
    }
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
