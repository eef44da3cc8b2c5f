//! The store's side of Claude Code's own sessions (sessions started in a terminal, listed by the relay
//! with `origin: "cli"`): opening one shows its transcript in the same components as a live session;
//! a message sent there resumes it under the relay (a new relay session whose history is the
//! transcript, opened in its place); a prompt can be forked from, or the files restored to before it
//! (`rewind_files`: a preview first, then the restore). The relay calls are in
//! [`crate::net::cli_sessions`]. [`CliSessions`] owns the state: components take it from context,
//! read its signals and call its methods; what needs the open session (opening one, resuming it
//! with a message, forking, restoring files) is on the [`Store`], which reads and writes that state
//! through its `cli` handle.

use std::collections::HashMap;

use bridge_protocol::MessageType;
use bridge_protocol::api::cli_sessions::{CliSessionDetail, RewindAnswer};
use leptos::prelude::*;
use serde_json::Value;

use super::Store;
use crate::net::cli_sessions as api;
use crate::net::{ConnState, NetError};
use crate::state::Source;

pub use api::is_cli_id;

/// The restore-files flow of one prompt.
#[derive(Clone, Debug, PartialEq)]
pub enum RewindUi {
    /// Asking Claude Code what a restore would change.
    Checking,
    /// What it would change: the person confirms or cancels.
    Preview(RewindAnswer),
    /// Claude Code cannot (no checkpoint, not live, …): why.
    Refused(String),
    /// Restoring.
    Restoring,
    /// Restored.
    Done(RewindAnswer),
}

/// A fork from one prompt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ForkUi {
    Working,
    Failed(String),
}

/// Claude Code's own sessions' handle (cheap to copy; in context beside the [`Store`]).
#[derive(Clone, Copy)]
pub struct CliSessions {
    /// The open session is one of Claude Code's own, shown from its transcript (its id).
    pub open: RwSignal<Option<String>>,
    /// Its list entry (cwd, title, git branch) as JSON, once read.
    pub detail: RwSignal<Option<Value>>,
    /// Why it could not be read or resumed.
    pub error: RwSignal<Option<String>>,
    /// Being resumed (a message was sent).
    pub resuming: RwSignal<bool>,
    /// A session to show instead of the open one (resumed, forked): the view navigates there.
    pub moved_to: RwSignal<Option<String>>,
    /// How many frames of its history to show (the last ones): a long transcript opens on its last
    /// [`HISTORY_PAGE`], and "Show earlier" adds a page.
    pub limit: RwSignal<usize>,
    /// Shown: the last `.0` frames of `.1`, when that is not all of them.
    pub partial: RwSignal<Option<(usize, usize)>>,
    /// Per prompt uuid: restoring files.
    pub rewind: RwSignal<HashMap<String, RewindUi>>,
    /// Per prompt uuid: forking.
    pub fork: RwSignal<HashMap<String, ForkUi>>,
}

impl CliSessions {
    pub(super) fn new() -> Self {
        CliSessions {
            open: RwSignal::new(None),
            detail: RwSignal::new(None),
            error: RwSignal::new(None),
            resuming: RwSignal::new(false),
            moved_to: RwSignal::new(None),
            limit: RwSignal::new(HISTORY_PAGE),
            partial: RwSignal::new(None),
            rewind: RwSignal::new(HashMap::new()),
            fork: RwSignal::new(HashMap::new()),
        }
    }

    /// The handle from context.
    pub fn expect() -> Self {
        expect_context::<CliSessions>()
    }

    /// Forgets the open session's state (another session opens).
    pub(super) fn close(&self) {
        self.open.try_set(None);
        self.detail.try_set(None);
        self.error.try_set(None);
        self.resuming.try_set(false);
        self.limit.try_set(HISTORY_PAGE);
        self.partial.try_set(None);
        self.rewind.try_set(HashMap::new());
        self.fork.try_set(HashMap::new());
    }

    /// Grows the history shown by a page ("Show earlier"): the open session's id, to read again.
    fn page_earlier(&self) -> Option<String> {
        let id = self.open.get_untracked()?;
        self.limit.update(|l| *l += HISTORY_PAGE);
        Some(id)
    }

    /// Closes the restore-files panel of prompt `uuid`.
    pub fn rewind_cancel(&self, uuid: &str) {
        self.rewind.update(|m| _ = m.remove(uuid));
    }
}

fn message(e: &NetError) -> String {
    match e {
        NetError::Status(_, m) => m.clone(),
        other => other.to_string(),
    }
}

/// Frames of a transcript's history shown at first, and added by each "Show earlier".
pub const HISTORY_PAGE: usize = 1000;

impl Store {
    /// Shows a page more of the open CLI session's history (read again with a larger limit: the
    /// history is applied in order, from its first shown frame).
    pub fn show_earlier_cli(&self) {
        if let Some(id) = self.cli.page_earlier() {
            self.open_cli_session(id);
        }
    }

    /// Opens one of Claude Code's own sessions: its history from the transcript, no stream (nothing
    /// runs it). When the relay already runs it, that session opens instead.
    pub(super) fn open_cli_session(&self, id: String) {
        self.start_blank(&id);
        self.cli.open.set(Some(id.clone()));
        self.caught_up.set(false);
        self.truncated.set(false);
        self.conn.set(ConnState::Connecting);
        let store = *self;
        leptos::task::spawn_local(async move {
            let r = api::get_cli_session(&id, store.cli.limit.get_untracked()).await;
            if store.cli.open.get_untracked().as_deref() != Some(id.as_str()) {
                return;
            }
            match r {
                // The page is read and applied by the session part (its decoder, the model's
                // apply): at once when it is in, else as soon as it loads.
                Ok(raw) => crate::lazy::when_loaded(crate::lazy::Part::Session, move || {
                    if store.cli.open.get_untracked().as_deref() != Some(id.as_str()) {
                        return;
                    }
                    super::split_entry::show_cli_page(store, raw);
                }),
                Err(e) => {
                    store.cli.error.set(Some(message(&e)));
                    store.conn.set(ConnState::Offline(message(&e)));
                }
            }
        });
    }

    /// Shows a page of the open CLI session read by [`Self::open_cli_session`]: its history applied
    /// from the transcript, or — when the relay already runs it — that session instead. The session
    /// part's code ([`super::split_entry`]): the session list never runs it.
    pub(crate) fn show_cli_page(&self, raw: Value) {
        let page = match api::cli_session_detail(raw) {
            Ok(page) => page,
            Err(e) => {
                self.cli.error.set(Some(message(&e)));
                self.conn.set(ConnState::Offline(message(&e)));
                return;
            }
        };
        if let Some(live) = page.live_session {
            self.cli.moved_to.set(Some(live));
            return;
        }
        self.cli.partial.set(page.partial());
        let CliSessionDetail {
            summary, frames, ..
        } = page;
        // The list entry as JSON: the form the session's summary is seeded from.
        let detail = serde_json::to_value(&summary).unwrap_or_default();
        self.session.update(|s| {
            crate::lazy::set_summary(s, &detail);
            s.set_replaying(true);
            // The history comes as `Value`s in a JSON list: written back as text, the one form the
            // session part decodes.
            let frames: Vec<crate::net::Payload> = frames.iter().map(Into::into).collect();
            let batch: Vec<_> = frames.iter().map(|f| (Source::Worker, f)).collect();
            crate::lazy::apply_frames(s, &batch);
            s.set_replaying(false);
        });
        self.cli.detail.set(Some(detail));
        self.caught_up.set(true);
        // Ready for a message (which resumes it); nothing streams.
        self.conn.set(ConnState::Live);
    }

    /// A frame for the open CLI session (see `Store::post`): a message resumes it under the relay —
    /// the message goes to the new relay session, which then opens in its place (the history first,
    /// the new turn after it). Anything else is refused: nothing runs this session yet.
    pub(super) fn post_to_cli(
        &self,
        cli_id: String,
        payload: Value,
        done: impl FnOnce(Result<(), NetError>) + 'static,
    ) {
        if MessageType::of(&payload) != Some(MessageType::User) {
            return done(Err(NetError::Network(
                "this session is not running: send a message to resume it first".into(),
            )));
        }
        let store = *self;
        let sender = self.sender.get_value();
        self.cli.resuming.set(true);
        self.cli.error.set(None);
        leptos::task::spawn_local(async move {
            let result = match api::resume(&cli_id).await {
                Ok(sid) => {
                    let r = sender.post_event(&sid, payload).await;
                    if r.is_ok() && store.cli.open.get_untracked().as_deref() == Some(&cli_id) {
                        store.cli.moved_to.set(Some(sid));
                    }
                    r
                }
                Err(e) => Err(e),
            };
            if let Err(e) = &result {
                store.cli.error.try_set(Some(message(e)));
            }
            store.cli.resuming.try_set(false);
            done(result);
        });
    }

    /// "Fork from here": a new session with the conversation up to just before prompt `uuid`, opened
    /// with that prompt back in the composer.
    pub fn fork_from(&self, uuid: &str) {
        let Some(sid) = self.session_id.get_untracked() else {
            return;
        };
        if !self.can_act() {
            return;
        }
        let uuid = uuid.to_string();
        self.cli
            .fork
            .update(|m| _ = m.insert(uuid.clone(), ForkUi::Working));
        let store = *self;
        leptos::task::spawn_local(async move {
            match api::fork(&sid, is_cli_id(&sid), &uuid).await {
                Ok(f) => {
                    store.cli.fork.try_update(|m| _ = m.remove(&uuid));
                    if let Some(p) = f.prompt() {
                        #[cfg(target_arch = "wasm32")]
                        crate::pwa::save_draft(&f.session_id, p);
                        #[cfg(not(target_arch = "wasm32"))]
                        let _ = p;
                    }
                    store.cli.moved_to.try_set(Some(f.session_id));
                    store.list.refresh();
                }
                Err(e) => {
                    store
                        .cli
                        .fork
                        .try_update(|m| _ = m.insert(uuid, ForkUi::Failed(message(&e))));
                }
            }
        });
    }

    /// "Restore files to before this message": asks Claude Code what it would change (`dry_run`).
    pub fn rewind_preview(&self, uuid: &str) {
        self.rewind_call(uuid, true);
    }

    /// Restores the files, after the preview.
    pub fn rewind_confirm(&self, uuid: &str) {
        self.rewind_call(uuid, false);
    }

    fn rewind_call(&self, uuid: &str, dry_run: bool) {
        let Some(sid) = self.session_id.get_untracked() else {
            return;
        };
        if !self.can_act() {
            return;
        }
        let uuid = uuid.to_string();
        let state = if dry_run {
            RewindUi::Checking
        } else {
            RewindUi::Restoring
        };
        self.cli
            .rewind
            .update(|m| _ = m.insert(uuid.clone(), state));
        let store = *self;
        leptos::task::spawn_local(async move {
            let r = api::rewind(&sid, is_cli_id(&sid), &uuid, dry_run).await;
            if store.session_id.get_untracked().as_deref() != Some(sid.as_str()) {
                return;
            }
            let next = match r {
                Ok(r) if !r.can_rewind() => {
                    RewindUi::Refused(r.result.error.unwrap_or_else(|| {
                        "Claude Code cannot restore files to before this message.".into()
                    }))
                }
                Ok(r) if dry_run => RewindUi::Preview(r),
                Ok(r) => RewindUi::Done(r),
                Err(e) => RewindUi::Refused(message(&e)),
            };
            store.cli.rewind.try_update(|m| _ = m.insert(uuid, next));
        });
    }
}
