//! The one reactive store, provided by context: it wraps the pure [`Session`] model in a signal,
//! applies incoming frames as they come (once per animation frame under load, see [`inbox`]), and turns the person's actions into
//! protocol messages sent through the [`Sender`] (the real HTTP one, or a fake in tests).
//! [`device`] adds this device's side: updates, the relay being unreachable, push, notifications.

mod answers;
mod archive;
mod auth;
mod changes;
mod cli_sessions;
mod compose;
mod controls;
mod device;
mod early;
mod files;
mod inbox;
mod info;
mod list;
mod new_session;
pub(crate) mod split_entry;
mod stream;

use std::rc::Rc;

use bridge_protocol::MessageType;
use leptos::prelude::*;
use serde_json::Value;
use uuid::Uuid;

use crate::lazy::{self, Part};
use crate::net::{
    ConnState, HttpSender, Incoming, Me, NetError, Payload, Sender, StreamEvent, Subscription,
};
use crate::state::{SendState, Session, Source};
use inbox::{Inbox, Pace};

pub use archive::{ArchiveNotice, KeptWorktree, split_sessions};
pub use changes::{Changes, writes_files};
pub use cli_sessions::{CliSessions, ForkUi, RewindUi};
pub use compose::{Compose, Submitted};
pub use device::{Device, PushState, RelayOffline, test_summary};
pub use early::{EarlyPrompts, Waiting};
pub use files::files_of;
pub use list::{OpenLive, SessionList};

/// How long the page stays hidden before the stream is suspended.
pub const HIDDEN_SUSPEND_MS: u64 = 30_000;

/// A session with more events than this opens on its latest ones (and every prompt still waiting
/// for an answer): a phone opening a long session from a notification does not download and apply
/// its whole history first. "Show all" opens it whole.
pub const TAIL_EVENTS: u64 = 200;

fn is_system_init(payload: &Payload) -> bool {
    payload.kind() == MessageType::System && payload.subtype().as_deref() == Some("init")
}

/// The store handle (cheap to copy). Get it with [`Store::expect`].
#[derive(Clone, Copy)]
pub struct Store {
    /// The transcript model of the open session.
    pub session: RwSignal<Session>,
    /// Id of the open session.
    pub session_id: RwSignal<Option<String>>,
    /// Connection state of the event stream.
    pub conn: RwSignal<ConnState>,
    /// Who is signed in (None until known).
    pub me: RwSignal<Option<Me>>,
    /// History before the stream's first frame was cut (relay retention).
    pub truncated: RwSignal<bool>,
    /// Ids of collapsed things the person expanded ("show all"), kept across re-renders.
    pub expanded: RwSignal<std::collections::HashSet<String>>,
    /// Bumped when the transcript must scroll to its end (the person sent a message).
    pub scroll_to_end: RwSignal<u64>,
    /// Claude Code's own sessions: the open one shown from its transcript, forks, restoring files
    /// ([`CliSessions`]).
    pub cli: CliSessions,
    /// The session whose detail (`initialize`) is being polled, if any.
    detail_poll: StoredValue<Option<String>>,
    /// Bumped on each visibility change (cancels a pending suspend).
    visibility_gen: StoredValue<u64>,
    inbox: StoredValue<Inbox, LocalStorage>,
    /// The injected sender (HTTP, or a fake in tests), used when no session connection exists.
    sender: StoredValue<Rc<dyn Sender>, LocalStorage>,
    /// The open session's connection (bridge-transport): its stream and its outbox.
    subscription: StoredValue<Option<Rc<Subscription>>, LocalStorage>,
    /// Highest durable sequence number applied for the open session.
    max_seq: StoredValue<u64>,
    /// The open session's last sequence number when it was opened (from its detail).
    history_end: StoredValue<Option<u64>>,
    /// The open session's history up to when it was opened is applied: what comes now is live.
    pub caught_up: RwSignal<bool>,
    /// The open session was opened on its latest events (a long history): the sequence number
    /// after which its stream started (`None`: from its start). See [`TAIL_EVENTS`].
    pub history_from: RwSignal<Option<u64>>,
    /// The session (id) whose stream waits for its detail to know where its latest events start.
    connect_after_detail: StoredValue<Option<String>>,
    /// The session (id) the person asked to see whole ("Show all").
    whole_history: StoredValue<Option<String>>,
    /// The composer's state: follow-ups queued while Claude works, prompts kept across a reload
    /// ([`Compose`]).
    pub compose: Compose,
    /// The changes panel: the open session's changed files and the diff shown.
    pub changes: Changes,
    /// This device: the installed app, the relay's reachability, push ([`Device`]).
    pub device: Device,
    /// The session list ([`SessionList`]).
    pub list: SessionList,
    /// Prompts the page came with, shown before the session has loaded ([`EarlyPrompts`]).
    pub early: EarlyPrompts,
}

impl Store {
    /// A store sending through `sender`.
    pub fn new(sender: Rc<dyn Sender>) -> Self {
        let me = RwSignal::new(None);
        let session_id = RwSignal::new(None);
        let device = Device::new(me, session_id);
        let store = Store {
            session: RwSignal::new(Session::new()),
            session_id,
            conn: RwSignal::new(ConnState::Connecting),
            me,
            truncated: RwSignal::new(false),
            expanded: RwSignal::new(Default::default()),
            scroll_to_end: RwSignal::new(0),
            cli: CliSessions::new(),
            detail_poll: StoredValue::new(None),
            visibility_gen: StoredValue::new(0),
            inbox: StoredValue::new_local(Inbox::default()),
            sender: StoredValue::new_local(sender),
            subscription: StoredValue::new_local(None),
            max_seq: StoredValue::new(0),
            history_end: StoredValue::new(None),
            caught_up: RwSignal::new(false),
            history_from: RwSignal::new(None),
            connect_after_detail: StoredValue::new(None),
            whole_history: StoredValue::new(None),
            compose: Compose::new(),
            changes: Changes::new(),
            device,
            list: SessionList::new(device),
            early: EarlyPrompts::new(),
        };
        store.list.set_open_live(Rc::new(move || store.open_live()));
        store
    }

    /// A store talking HTTP to the relay that served the page.
    pub fn http() -> Self {
        Self::new(Rc::new(HttpSender))
    }

    /// Provides it (and its handles) to the component tree.
    pub fn provide(self) -> Self {
        provide_context(self);
        provide_context(self.device);
        provide_context(self.changes);
        provide_context(self.compose);
        provide_context(self.list);
        provide_context(self.early);
        provide_context(self.cli);
        self
    }

    /// The store from context.
    pub fn expect() -> Self {
        expect_context::<Store>()
    }

    /// True when this console may act (a controller, not an observer).
    pub fn can_act(&self) -> bool {
        !self.session.with_untracked(Session::is_observer)
    }

    // ------------------------------------------------------------------ incoming

    /// Queues a frame. It is applied in a microtask (with any frame that arrives in the same task)
    /// unless frames arrive faster than they can be applied at once; then they are applied together
    /// on the next animation frame (see [`inbox`]).
    pub fn ingest(&self, frame: Incoming) {
        let store = *self;
        match self.inbox.try_update_value(|inbox| inbox.push(frame)) {
            None | Some(Pace::Joined) => {}
            Some(Pace::Now) => self.flush(),
            Some(Pace::Microtask) => queue_microtask(move || {
                let start = crate::dom::now_ms();
                store.flush();
                // Measured after the render effects the flush woke (they run in microtasks too).
                queue_microtask(move || {
                    let ms = crate::dom::now_ms() - start;
                    if store.inbox.try_update_value(|i| i.spent(ms)) == Some(true) {
                        request_animation_frame(move || {
                            store.inbox.try_update_value(Inbox::new_frame);
                        });
                    }
                });
            }),
            Some(Pace::Frame) => {
                request_animation_frame(move || store.flush());
                // rAF does not run in a hidden tab: a timer keeps the title's "needs you" marker honest.
                set_timeout(move || store.flush(), std::time::Duration::from_millis(250));
            }
        }
    }

    /// Applies every queued frame now — or, in the split build while the session part (the decoder
    /// and the model's apply) is not loaded yet, starts loading it and leaves the frames queued, in
    /// order, until it is in ([`crate::lazy`]).
    pub fn flush(&self) {
        if !lazy::loaded(Part::Session) {
            if self.inbox.try_update_value(Inbox::wait_for_part) == Some(true) {
                let store = *self;
                lazy::when_loaded(Part::Session, move || store.flush());
            }
            return;
        }
        split_entry::apply_inbox(*self);
    }

    /// [`Self::flush`] once the session part is in: applies the queued frames and does what follows
    /// them (the changes list, the caught-up state, the agent's info, unsent prompts, the queue).
    /// The session part's code ([`split_entry`]): the session list never runs it.
    pub(crate) fn apply_inbox(&self) {
        let frames = self.inbox.try_update_value(Inbox::take).unwrap_or_default();
        if frames.is_empty() {
            return;
        }
        // `try_update`: a frame scheduled before the view was unmounted must not panic.
        let replaying = self.caught_up.try_get_untracked() == Some(false);
        self.session.try_update(|s| {
            s.set_replaying(replaying);
            let batch: Vec<_> = frames
                .iter()
                .map(|f| (f.source.clone(), &f.payload))
                .collect();
            lazy::apply_frames(s, &batch);
            s.set_replaying(false);
        });
        self.note_changes(&frames);
        if let Some(seq) = frames.iter().filter_map(|f| f.seq).max() {
            self.max_seq.try_update_value(|m| *m = (*m).max(seq));
            self.check_caught_up();
        }
        // The CLI is up: if its `initialize` answer (the models) was not known yet, ask again.
        if frames.iter().any(|f| is_system_init(&f.payload))
            && self
                .session
                .try_with_untracked(|s| s.info().models.is_empty())
                .unwrap_or(false)
            && let Some(sid) = self.session_id.get_untracked()
        {
            self.poll_detail(sid);
        }
        // The CLI started or a turn ended: ask what is still unknown (a session opened before its
        // CLI ran; an MCP server that was still starting). Not what is known: between reports the
        // meter follows each API call's usage and the breakdown is asked for on demand — a
        // context request makes the CLI count tokens alongside the turn's own API calls.
        if frames.iter().any(|f| {
            f.source == Source::Worker
                && (is_system_init(&f.payload) || f.payload.kind() == MessageType::Result)
        }) {
            self.refresh_agent_info(false);
        }
        self.try_restore();
        self.pump_queue();
    }

    /// Benchmark switch: apply each frame as it arrives (the naive baseline) instead of coalescing.
    pub fn set_naive(&self, naive: bool) {
        self.inbox.update_value(|i| i.naive = naive);
    }

    /// Applies a stream report.
    pub fn on_stream(&self, ev: StreamEvent) {
        match ev {
            StreamEvent::Frame(f) => self.ingest(f),
            StreamEvent::State(s) => {
                if s == ConnState::Ended {
                    // Apply what is queued first, then mark the session ended (once the session
                    // part is in: the frames wait for it).
                    let store = *self;
                    lazy::when_loaded(Part::Session, move || {
                        store.flush();
                        store.session.try_update(|m| {
                            lazy::set_summary(m, &serde_json::json!({"state": "ended"}))
                        });
                    });
                }
                if self.conn.get_untracked() != s {
                    self.conn.set(s);
                }
            }
            StreamEvent::Truncated => self.truncated.set(true),
        }
    }

    // ------------------------------------------------------------------ actions

    fn post(&self, payload: Value, done: impl FnOnce(Result<(), NetError>) + 'static) {
        let Some(sid) = self.session_id.get_untracked() else {
            return done(Err(NetError::Network("no session is open".into())));
        };
        if cli_sessions::is_cli_id(&sid) {
            return self.post_to_cli(sid, payload, done);
        }
        let sender: Rc<dyn Sender> = match self.subscription.get_value() {
            Some(sub) => sub,
            None => self.sender.get_value(),
        };
        let store = *self;
        leptos::task::spawn_local(async move {
            let result = sender.post_event(&sid, payload.clone()).await;
            if result.is_ok() && store.session_id.get_untracked().as_deref() == Some(sid.as_str()) {
                // Delivered: apply it as its echo would be (the transport drops our own echoes);
                // queued behind what waits for the session part, if it is not in yet.
                let payload = Payload::from(payload);
                let applied = lazy::loaded(Part::Session)
                    && store.inbox.try_with_value(|i| i.frames.is_empty()) == Some(true)
                    && store
                        .session
                        .try_update(|s| lazy::apply_frames(s, &[(Source::Client, &payload)]))
                        .unwrap_or(true);
                if !applied {
                    store.ingest(Incoming {
                        source: Source::Client,
                        seq: None,
                        payload,
                    });
                }
            }
            done(result);
        });
    }

    /// Sends a prompt: shown at once as pending, confirmed by its echo. Returns its uuid.
    pub fn send_prompt(&self, text: &str) -> Option<String> {
        if !self.can_act() || text.trim().is_empty() {
            return None;
        }
        let uuid = Uuid::new_v4();
        let id = uuid.to_string();
        self.session.update(|s| s.add_local_prompt(&id, text));
        self.scroll_to_end.update(|n| *n += 1);
        if let Some(sid) = self.session_id.get_untracked() {
            crate::unsent::remember(&sid, &id, text);
        }
        self.post_prompt(uuid, text);
        Some(id)
    }

    fn post_prompt(&self, uuid: Uuid, text: &str) {
        self.post_message(uuid, text, &[]);
    }

    /// Sends a failed prompt again (same uuid: the relay drops duplicates).
    pub fn retry_prompt(&self, id: &str) {
        let Ok(uuid) = Uuid::parse_str(id) else {
            return;
        };
        let Some(text) = self
            .session
            .with_untracked(|s| s.local_prompt_text(id).map(str::to_string))
        else {
            return;
        };
        self.session
            .update(|s| s.set_send_state(id, SendState::Pending));
        self.resend(uuid, &text);
    }

    /// Whether `id` was expanded.
    pub fn is_expanded(&self, id: &str) -> bool {
        self.expanded.with(|e| e.contains(id))
    }

    /// Expands or collapses `id`.
    pub fn toggle_expanded(&self, id: &str) {
        self.expanded.update(|e| {
            if !e.remove(id) {
                e.insert(id.to_string());
            }
        });
    }

    /// Dismisses a notice.
    pub fn dismiss_notice(&self, id: u64) {
        self.session.update(|s| s.dismiss_notice(id));
    }

    /// Test/benchmark helper: applies a CLI frame (as from the worker) right now.
    pub fn apply_now(&self, payload: Value) {
        let payload = Payload::from(payload);
        self.session.update(|s| {
            lazy::apply_frames(s, &[(Source::Worker, &payload)]);
        });
    }
}
