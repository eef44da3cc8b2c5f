//! Opening a session and following it: the model reset, where its stream starts (a long session
//! on its latest events, see [`TAIL_EVENTS`]), the detail poll, catching up with its history,
//! suspending the stream while the page is hidden, closing.

use std::rc::Rc;

use bridge_protocol::api::SessionDetail;
use leptos::prelude::*;

use super::inbox::Inbox;
use super::{HIDDEN_SUSPEND_MS, Store, TAIL_EVENTS, cli_sessions, split_entry};
use crate::lazy::{self, Part};
use crate::net::{self, ConnState, NetError, StreamEvent};
use crate::state::Session;

impl Store {
    // ------------------------------------------------------------------ sessions

    /// Opens a session: resets the model, loads its summary and follows its event stream.
    pub fn open_session(&self, id: String) {
        if self.session_id.get_untracked().as_deref() == Some(id.as_str()) {
            return;
        }
        self.close_session();
        self.early.keep_only(Some(&id));
        if cli_sessions::is_cli_id(&id) {
            return self.open_cli_session(id);
        }
        self.start_blank(&id);
        self.max_seq.set_value(0);
        self.history_end.set_value(None);
        self.caught_up.set(false);
        // Prompts an earlier page left unsent: read (the session part's code) once that part is
        // in — before the detail says where they go (below, in the order asked).
        let store = *self;
        let sid = id.clone();
        lazy::when_loaded(Part::Session, move || split_entry::load_unsent(store, sid));
        self.truncated.set(false);
        self.conn.set(ConnState::Connecting);
        self.history_from.set(None);
        // A long history — or one the list does not know yet (a notification opens the session
        // before the list is read): the stream starts where the detail says the latest events and
        // the waiting prompts are. A short one the list knows connects at once from its start.
        let whole = self
            .whole_history
            .with_value(|w| w.as_deref() == Some(id.as_str()));
        let events = self.list.sessions.with_untracked(|l| {
            l.iter()
                .find(|s| s.id == id)
                .and_then(|s| s.last_sequence_num)
        });
        let tail = !whole && events.is_none_or(|n| n > TAIL_EVENTS);
        self.connect_after_detail
            .set_value(tail.then(|| id.clone()));
        self.poll_detail(id.clone());
        if !tail {
            self.connect(id, 0);
        }
    }

    /// Follows session `id`'s event stream after sequence number `from`. The live connection
    /// (bridge-transport) is a lazily loaded part: it connects once the part is in (at once when
    /// it is); its frames wait in the inbox for the session part.
    /// A blank session for `id`, an observer's when this person only observes.
    pub(super) fn start_blank(&self, id: &str) {
        let observer = self.me.get_untracked().is_some_and(|m| m.is_observer());
        self.session.set(if observer {
            Session::observer()
        } else {
            Session::new()
        });
        self.session_id.set(Some(id.to_owned()));
    }

    fn connect(&self, id: String, from: u64) {
        let store = *self;
        let sink: Rc<dyn Fn(StreamEvent)> = Rc::new(move |ev| store.on_stream(ev));
        lazy::when_loaded(Part::Live, move || {
            let current =
                store.session_id.try_get_untracked().flatten().as_deref() == Some(id.as_str());
            if current && store.subscription.try_with_value(Option::is_none) == Some(true) {
                store
                    .subscription
                    .set_value(lazy::subscribe(&id, from, sink));
            }
        });
    }

    /// Where a long session's stream starts: after the latest [`TAIL_EVENTS`], or before its
    /// oldest prompt still waiting for an answer.
    fn tail_start(detail: &SessionDetail) -> u64 {
        let last = detail.summary.last_sequence_num.unwrap_or(0);
        let oldest_waiting = detail
            .pending_requests
            .iter()
            .map(|p| p.sequence_num.saturating_sub(1))
            .min();
        last.saturating_sub(TAIL_EVENTS)
            .min(oldest_waiting.unwrap_or(u64::MAX))
    }

    /// Opens the open session again with its whole history ("Show all").
    pub fn show_whole_history(&self) {
        let Some(id) = self.session_id.get_untracked() else {
            return;
        };
        self.whole_history.set_value(Some(id.clone()));
        self.close_session();
        self.open_session(id);
    }

    /// Reads the session detail (`GET /v1/code/sessions/{id}`) and, while its `initialize` answer
    /// is still null (the CLI answers about a second after it starts), reads it again with backoff
    /// (0.5 s doubling to 4 s, for at most a minute). One poll per session at a time.
    pub(super) fn poll_detail(&self, sid: String) {
        let already = self
            .detail_poll
            .try_update_value(|p| {
                let same = p.as_deref() == Some(sid.as_str());
                *p = Some(sid.clone());
                same
            })
            .unwrap_or(true);
        if already {
            return;
        }
        let store = *self;
        leptos::task::spawn_local(async move {
            // The first read goes out at once, while the live part (which reads the answer and
            // polls on) loads.
            let answer = net::get_session(&sid).await;
            lazy::when_loaded(Part::Live, move || {
                split_entry::follow_detail(store, sid, answer)
            });
        });
    }

    /// [`Self::poll_detail`] once the first read of the detail has answered (`answer`): the live
    /// part's code ([`split_entry`]).
    pub(crate) fn follow_detail(&self, sid: String, answer: Result<serde_json::Value, NetError>) {
        let store = *self;
        leptos::task::spawn_local(async move {
            let current = |store: &Store| {
                store.session_id.get_untracked().as_deref() == Some(sid.as_str())
                    && store
                        .detail_poll
                        .try_with_value(|p| p.as_deref() == Some(sid.as_str()))
                        .unwrap_or(false)
            };
            let mut delays = net::detail_retry_delays();
            let mut first = true;
            let mut answer = Some(answer);
            while current(&store) {
                let read = match answer.take() {
                    Some(a) => a,
                    None => net::get_session(&sid).await,
                };
                match read {
                    Ok(raw) if current(&store) => {
                        // The decoder is in the live part (what connects next).
                        let detail = lazy::session_detail(&raw).await;
                        if !current(&store) {
                            break;
                        }
                        let Some(detail) = detail else {
                            // Not a session object: nothing to seed from; the frames still come.
                            if first {
                                store.history_end.try_set_value(Some(0));
                                store.check_caught_up();
                            }
                            break;
                        };
                        let has_init = detail.initialize.is_object();
                        if first {
                            let last = detail.summary.last_sequence_num;
                            store.history_end.try_set_value(Some(last.unwrap_or(0)));
                            store.check_caught_up();
                            let open = sid.clone();
                            lazy::when_loaded(Part::Session, move || {
                                split_entry::restore_unsent_after(store, open, last.unwrap_or(0))
                            });
                            if store.take_connect_after_detail(&sid) {
                                let from = Self::tail_start(&detail);
                                store.history_from.try_set((from > 0).then_some(from));
                                store.connect(sid.clone(), from);
                            }
                        }
                        store.session.try_update(|s| {
                            if first {
                                s.set_detail(&detail);
                            } else {
                                s.set_initialize(&detail.initialize);
                            }
                        });
                        first = false;
                        if has_init {
                            break;
                        }
                    }
                    Err(NetError::Status(401 | 403 | 404, _)) => break,
                    _ => {}
                }
                let Some(ms) = delays.next() else { break };
                gloo_timers::future::TimeoutFuture::new(ms).await;
            }
            if current(&store) {
                store.detail_poll.try_set_value(None);
                // No detail came: the stream starts from the beginning.
                if store.take_connect_after_detail(&sid) {
                    store.connect(sid, 0);
                }
            }
        });
    }

    /// Whether session `sid`'s stream waited for its detail (once: it connects now).
    fn take_connect_after_detail(&self, sid: &str) -> bool {
        self.connect_after_detail
            .try_update_value(|c| {
                let waited = c.as_deref() == Some(sid);
                if waited {
                    *c = None;
                }
                waited
            })
            .unwrap_or(false)
    }

    /// Marks the open session caught up once the history up to its opening is applied.
    pub(super) fn check_caught_up(&self) {
        let end = self.history_end.try_get_value().flatten();
        if end.is_some_and(|end| self.max_seq.get_value() >= end)
            && self.caught_up.try_get_untracked() == Some(false)
        {
            self.caught_up.set(true);
            // Live now: ask what the header shows (if the log does not hold it already). The
            // session part's code: the history is applied, so it is in — unless the history was
            // empty; then it runs once the part is in (the session view needs it anyway).
            let store = *self;
            lazy::when_loaded(Part::Session, move || {
                split_entry::refresh_agent_info(store)
            });
        }
    }

    /// Suspends the stream after the page has been hidden for [`HIDDEN_SUSPEND_MS`] and resumes
    /// it (from the cursor: nothing is lost) as soon as the page is visible again.
    pub fn watch_visibility(&self) {
        let store = *self;
        let handle = window_event_listener_untyped("visibilitychange", move |_| {
            let hidden = crate::dom::page_hidden();
            let generation = store
                .visibility_gen
                .try_update_value(|g| {
                    *g += 1;
                    *g
                })
                .unwrap_or(0);
            if hidden {
                set_timeout(
                    move || {
                        let still = store.visibility_gen.try_get_value() == Some(generation);
                        if still
                            && crate::dom::page_hidden()
                            && let Some(Some(sub)) = store.subscription.try_get_value()
                        {
                            sub.suspend();
                        }
                    },
                    std::time::Duration::from_millis(HIDDEN_SUSPEND_MS),
                );
            } else if let Some(Some(sub)) = store.subscription.try_get_value() {
                sub.resume();
            }
        });
        on_cleanup(move || handle.remove());
    }

    /// Leaves the open session.
    pub fn close_session(&self) {
        self.cli.close();
        if let Some(sub) = self.subscription.try_update_value(Option::take).flatten() {
            sub.close();
        }
        self.inbox.update_value(Inbox::clear);
        // Prompts left unsent stay stored; they come back when the session is opened again.
        self.compose.clear();
        self.session_id.set(None);
    }

    /// The open session's id and live state, once its history is in: its list entry takes that
    /// state ([`SessionList`]), fresher than any list read (a scale-out gateway's list comes from a
    /// registry the host updates a moment after the event), so the list never disagrees with the
    /// header.
    pub(super) fn open_live(&self) -> Option<(String, crate::state::SessionState)> {
        if self.caught_up.try_get_untracked() != Some(true) {
            return None;
        }
        let open = self.session_id.try_get_untracked().flatten()?;
        let live = self.session.try_with_untracked(|s| s.state())?;
        Some((open, live))
    }
}

#[cfg(test)]
mod tests {
    use bridge_protocol::api::{PendingRequest, SessionDetail};
    use serde_json::json;

    use super::super::{Store, TAIL_EVENTS};

    fn detail(last: u64, waiting: &[u64]) -> SessionDetail {
        let pending: Vec<PendingRequest> = waiting
            .iter()
            .map(|&n| {
                serde_json::from_value(json!({"request_id": format!("r{n}"), "sequence_num": n}))
                    .unwrap()
            })
            .collect();
        serde_json::from_value(json!({
            "id": "s", "state": "requires_action", "last_sequence_num": last,
            "pending_requests": pending,
        }))
        .unwrap()
    }

    #[test]
    fn a_long_session_starts_at_its_latest_events_or_its_oldest_waiting_prompt() {
        // Short: from the start.
        assert_eq!(Store::tail_start(&detail(TAIL_EVENTS, &[])), 0);
        // Long: the latest TAIL_EVENTS.
        assert_eq!(
            Store::tail_start(&detail(10_000, &[])),
            10_000 - TAIL_EVENTS
        );
        // A prompt waiting since before them: from just before it.
        assert_eq!(Store::tail_start(&detail(10_000, &[9_990, 4_000])), 3_999);
        // A recent one changes nothing.
        assert_eq!(
            Store::tail_start(&detail(10_000, &[9_990])),
            10_000 - TAIL_EVENTS
        );
    }
}
