//! The session list: read from the relay (`GET /v1/code/sessions`), or seeded from the boot data
//! the relay put in a signed-in browser's page ([`crate::boot`]). [`SessionList`] owns it (and the
//! worktrees archiving kept, [`super::archive`]); components that show the list take it from context.

use std::cell::Cell;
use std::rc::Rc;

use crate::state::SessionState;
use leptos::prelude::*;

use super::{ArchiveNotice, Device, KeptWorktree, Store, split_sessions};
use crate::net::{self, Me, SessionSummary};

/// The open session's id and state as its own stream says them (fresher than a list read), if
/// one is open and caught up.
pub type OpenLive = Rc<dyn Fn() -> Option<(String, SessionState)>>;

/// The session list's handle (cheap to copy; in context beside the [`Store`]).
#[derive(Clone, Copy)]
pub struct SessionList {
    /// The session list.
    pub sessions: RwSignal<Vec<SessionSummary>>,
    /// Archived sessions whose worktree the relay kept (see [`super::archive`]).
    pub kept_worktrees: RwSignal<Vec<KeptWorktree>>,
    /// What the last archive or discard did (shown until dismissed).
    pub archive_notice: RwSignal<Option<ArchiveNotice>>,
    /// Asks the store for the open session's live state (set once, by the store).
    open_live: StoredValue<Option<OpenLive>, LocalStorage>,
    /// In-page notifications for sessions that newly wait.
    device: Device,
}

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
        self.list.apply(sessions);
    }
}

impl SessionList {
    /// A list whose in-page notifications go through `device`.
    pub fn new(device: Device) -> Self {
        Self {
            sessions: RwSignal::new(Vec::new()),
            kept_worktrees: RwSignal::new(Vec::new()),
            archive_notice: RwSignal::new(None),
            open_live: StoredValue::new_local(None),
            device,
        }
    }

    /// The list from context.
    pub fn expect() -> Self {
        expect_context::<SessionList>()
    }

    /// Whether the signed-in person is a controller: who may archive sessions and discard kept
    /// worktrees (observers see the list only).
    pub fn is_controller(&self) -> bool {
        self.device.is_controller()
    }

    /// Where the list learns the open session's live state (the store, once).
    pub fn set_open_live(&self, open_live: OpenLive) {
        self.open_live.set_value(Some(open_live));
    }

    /// Reloads the session list.
    pub fn refresh(&self) {
        // Reads overlap (the list is read again when the open session's state changes, which can
        // be twice within a few ms) and may answer out of order — slower on a scale-out gateway,
        // which reads its registry: only the latest read's answer is applied, so an older one
        // cannot put back a state the header has left (flow 27: "requires action" beside Idle).
        let read = READS.with(|r| {
            r.set(r.get() + 1);
            r.get()
        });
        let list = *self;
        leptos::task::spawn_local(async move {
            let answer = net::list_sessions().await;
            ANSWERED.with(|a| a.set(a.get().max(read)));
            if READS.with(Cell::get) != read {
                return;
            }
            if let Ok(answer) = answer {
                list.apply(answer);
                // The list is up: load the lazily loaded parts when the browser is next idle.
                crate::lazy::prefetch_when_idle();
            }
        });
    }

    /// Reads the list unless a read is on its way already (the list's first read: the console
    /// asks for the list beside `GET /v1/me` at start, before the list is shown).
    pub fn refresh_unless_pending(&self) {
        if READS.with(Cell::get) == ANSWERED.with(Cell::get) {
            self.refresh();
        }
    }

    /// The open session's state changed on its stream: its list entry says so at once, and the
    /// list is read again for everything else.
    pub fn open_state_changed(&self) {
        if let Some(mut list) = self.sessions.try_get_untracked() {
            self.live_state_into(&mut list);
            if self.sessions.try_with_untracked(|l| *l != list) == Some(true) {
                self.sessions.try_set(list);
            }
        }
        self.refresh();
    }

    fn live_state_into(&self, list: &mut [SessionSummary]) {
        let Some((open, live)) = self
            .open_live
            .try_with_value(|f| f.as_ref().and_then(|f| f()))
            .flatten()
        else {
            return;
        };
        if let Some(entry) = list.iter_mut().find(|e| e.id == open) {
            entry.state = live;
        }
    }

    pub(super) fn apply(&self, list: Vec<SessionSummary>) {
        let (mut list, kept) = split_sessions(list);
        if self.kept_worktrees.try_get_untracked().as_ref() != Some(&kept) {
            self.kept_worktrees.try_set(kept);
        }
        self.live_state_into(&mut list);
        if let Some(old) = self.sessions.try_get_untracked() {
            self.device.notify_newly_waiting(&old, &list);
        }
        self.sessions.try_set(list);
    }
}
