//! The session list: read from the relay (`GET /v1/code/sessions`), or seeded from the boot data
//! the relay put in a signed-in browser's page ([`crate::boot`]).

use std::cell::Cell;

use leptos::prelude::*;

use super::{Store, split_sessions};
use crate::net::{self, Me, SessionSummary};

thread_local! {
    /// Reads started, and the last read whose answer came (applied or not).
    static READS: Cell<u64> = const { Cell::new(0) };
    static ANSWERED: Cell<u64> = const { Cell::new(0) };
}

impl Store {
    /// Starts from what the relay put in the page: who is signed in and the session list, as
    /// `GET /v1/me` and `GET /v1/code/sessions` answered when it was rendered (both are read again
    /// right after).
    pub fn seed(&self, me: Me, sessions: Vec<SessionSummary>) {
        self.me.set(Some(me));
        self.apply_list(sessions);
    }

    /// Reloads the session list.
    pub fn refresh_sessions(&self) {
        // Reads overlap (the list is read again when the open session's state changes, which can
        // be twice within a few ms) and may answer out of order — slower on a scale-out gateway,
        // which reads its registry: only the latest read's answer is applied, so an older one
        // cannot put back a state the header has left (flow 27: "requires action" beside Idle).
        let read = READS.with(|r| {
            r.set(r.get() + 1);
            r.get()
        });
        let store = *self;
        leptos::task::spawn_local(async move {
            let list = net::list_sessions().await;
            ANSWERED.with(|a| a.set(a.get().max(read)));
            if READS.with(Cell::get) != read {
                return;
            }
            if let Ok(list) = list {
                store.apply_list(list);
                // The list is up: load the lazily loaded parts when the browser is next idle.
                crate::lazy::prefetch_when_idle();
            }
        });
    }

    /// Reads the list unless a read is on its way already (the list's first read: the console
    /// asks for the list beside `GET /v1/me` at start, before the list is shown).
    pub fn refresh_sessions_unless_pending(&self) {
        if READS.with(Cell::get) == ANSWERED.with(Cell::get) {
            self.refresh_sessions();
        }
    }

    fn apply_list(&self, list: Vec<SessionSummary>) {
        let (mut list, kept) = split_sessions(list);
        if self.kept_worktrees.try_get_untracked().as_ref() != Some(&kept) {
            self.kept_worktrees.try_set(kept);
        }
        self.live_state_into(&mut list);
        if let Some(old) = self.sessions.try_get_untracked() {
            self.notify_newly_waiting(&old, &list);
        }
        self.sessions.try_set(list);
    }
}
