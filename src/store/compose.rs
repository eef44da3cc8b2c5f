//! The composer's side of the store: prompts with attachments, and follow-ups queued while Claude
//! works ([`crate::state::queue`]), sent one per turn when the running turn's `result` arrives. Both
//! are kept in [`crate::unsent`] with their uuid until the relay has them, so a reload neither loses
//! nor doubles one.

use bridge_protocol::build;
use leptos::prelude::*;
use uuid::Uuid;

use super::Store;
use crate::net::NetError;
use crate::state::attachment::{content_blocks, shown_text};
use crate::state::{Attachment, AttachmentBody, Queue, Queued, SendState, UserImage, queue};
use crate::unsent::{self, Entry};

/// Unsent prompts of the open session waiting to be shown and sent again once its history is in
/// (so they land after it, not above it).
struct Restore {
    session_id: String,
    /// The log's last sequence number when the session was opened (None until the detail is read).
    after_seq: Option<u64>,
    prompts: Vec<Entry>,
}

/// The composer's state (cheap to copy): follow-ups queued while Claude works and prompts an
/// earlier page left unsent. Components read it from context; sending goes through the [`Store`]
/// (it needs the open session and its connection).
#[derive(Clone, Copy)]
pub struct Compose {
    /// Follow-ups typed while Claude works, sent one per turn.
    pub queue: RwSignal<Queue>,
    /// How many prompts kept from an earlier page wait for the history before they are shown and
    /// sent (the composer says so).
    pub restoring: RwSignal<usize>,
    /// Something the composer must tell the person about attachments kept across a reload.
    pub note: RwSignal<Option<String>>,
    /// Those prompts, see [`crate::unsent`].
    restore: StoredValue<Option<Restore>, LocalStorage>,
}

impl Compose {
    pub(super) fn new() -> Self {
        Compose {
            queue: RwSignal::new(Queue::default()),
            restoring: RwSignal::new(0),
            note: RwSignal::new(None),
            restore: StoredValue::new_local(None),
        }
    }

    /// The handle from context.
    pub fn expect() -> Self {
        expect_context::<Compose>()
    }

    /// Forgets everything of the session left (another one opens).
    pub(super) fn clear(&self) {
        self.restore.set_value(None);
        self.restoring.set(0);
        self.queue.set(Queue::default());
        self.note.set(None);
    }
}

/// What became of a message the person sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Submitted {
    /// Sent now (its uuid).
    Sent(String),
    /// Queued behind the running turn (its uuid).
    Queued(String),
}

fn images_of(attachments: &[Attachment]) -> Vec<UserImage> {
    attachments
        .iter()
        .filter_map(|a| match &a.body {
            AttachmentBody::Image { media_type, data } => Some(UserImage {
                media_type: media_type.clone(),
                data: data.clone(),
            }),
            AttachmentBody::Text { .. } => None,
        })
        .collect()
}

fn dropped_note(n: usize) -> String {
    format!(
        "{n} attachment(s) did not fit in this browser's storage: they are sent, but would be lost if the page were reloaded before that."
    )
}

impl Store {
    /// The composer's send: now when Claude is idle; behind the running turn (and anything queued
    /// before) otherwise. None when there is nothing to send or this console may not act.
    pub fn submit(&self, text: &str, attachments: Vec<Attachment>) -> Option<Submitted> {
        if !self.can_act() || (text.trim().is_empty() && attachments.is_empty()) {
            return None;
        }
        let sid = self.session_id.get_untracked()?;
        let uuid = Uuid::new_v4().to_string();
        // A session running in a terminal takes a message at any time: the relay keeps it for the
        // end of the running turn (the Stop hook), where the console's queue would send it too late.
        let terminal = self.session.with_untracked(|s| s.info().terminal);
        let wait = !terminal
            && (self.session.with_untracked(queue::busy)
                || !self.compose.queue.with_untracked(Queue::is_empty)
                || self.compose.restoring.get_untracked() > 0);
        let entry = Entry {
            uuid: uuid.clone(),
            text: text.to_string(),
            attachments,
            queued: wait,
            dropped: 0,
        };
        let kept = unsent::remember_entry(&sid, &entry);
        self.note_dropped(kept.as_ref());
        if wait {
            self.compose.queue.update(|q| {
                q.push(Queued {
                    uuid: uuid.clone(),
                    text: entry.text.clone(),
                    attachments: entry.attachments.clone(),
                })
            });
            self.scroll_to_end.update(|n| *n += 1);
            self.pump_queue();
            Some(Submitted::Queued(uuid))
        } else {
            self.show_and_post(&entry);
            Some(Submitted::Sent(uuid))
        }
    }

    fn note_dropped(&self, kept: Option<&Entry>) {
        if let Some(e) = kept.filter(|e| e.dropped > 0) {
            self.compose.note.set(Some(dropped_note(e.dropped)));
        }
    }

    /// Shows a prompt as pending and posts it (its entry is already kept).
    pub(super) fn show_and_post(&self, entry: &Entry) {
        let Ok(uuid) = Uuid::parse_str(&entry.uuid) else {
            return;
        };
        self.session.update(|s| {
            s.add_local_prompt(&entry.uuid, &shown_text(&entry.text, &entry.attachments));
            if !entry.attachments.is_empty() {
                s.set_local_images(&entry.uuid, images_of(&entry.attachments));
            }
        });
        self.scroll_to_end.update(|n| *n += 1);
        self.post_message(uuid, &entry.text, &entry.attachments);
    }

    /// Posts a prompt (a plain text `user` message, or content blocks when it has attachments).
    pub(super) fn post_message(&self, uuid: Uuid, text: &str, attachments: &[Attachment]) {
        let store = *self;
        let id = uuid.to_string();
        let sid = self.session_id.get_untracked();
        let payload = if attachments.is_empty() {
            build::value::user_text(text, uuid)
        } else {
            build::value::user_blocks(content_blocks(text, attachments), uuid)
        };
        self.post(payload, move |r| {
            // Accepted, or never acceptable (ended, gone, forbidden, too large): no longer worth keeping.
            if matches!(r, Ok(()) | Err(NetError::Status(403 | 404 | 409 | 410 | 413, _)))
                && let Some(sid) = &sid
            {
                unsent::forget(sid, &id);
            }
            let state = match r {
                Ok(()) => SendState::Confirmed,
                Err(NetError::Status(409 | 410, _)) => {
                    SendState::Failed("the session has ended".into())
                }
                Err(NetError::Status(413, why)) => SendState::Failed(format!(
                    "the relay refused it as too large ({why}). Remove an attachment, or start the relay with a larger --max-body-bytes"
                )),
                Err(e) => SendState::Failed(e.to_string()),
            };
            store.session.try_update(|s| s.set_send_state(&id, state));
        });
    }

    /// Sends a failed prompt again, as it was kept (text and attachments), else as `shown` (the
    /// transcript's text). Same uuid: the relay drops a copy it already has.
    pub(super) fn resend(&self, uuid: Uuid, shown: &str) {
        let id = uuid.to_string();
        let kept = self
            .session_id
            .get_untracked()
            .map(|sid| unsent::load_entries(&sid))
            .unwrap_or_default()
            .into_iter()
            .find(|e| e.uuid == id);
        match kept {
            Some(e) => self.post_message(uuid, &e.text, &e.attachments),
            None => self.post_message(uuid, shown, &[]),
        }
    }

    /// Puts messages an earlier page kept back where they were: queued ones in the queue (shown at
    /// once, sent in turn), the others returned for [`Store::try_restore`] to show and send after
    /// the history.
    pub(super) fn split_restored(&self, entries: Vec<Entry>) -> Vec<Entry> {
        let (queued, unsent): (Vec<_>, Vec<_>) = entries.into_iter().partition(|e| e.queued);
        let dropped: usize = queued.iter().chain(&unsent).map(|e| e.dropped).sum();
        if dropped > 0 {
            self.compose.note.set(Some(format!(
                "{dropped} attachment(s) of messages kept across the reload did not fit in this browser's storage and are lost; the text is kept."
            )));
        }
        self.compose.queue.update(|q| {
            for e in queued {
                q.push(Queued {
                    uuid: e.uuid,
                    text: e.text,
                    attachments: e.attachments,
                });
            }
        });
        unsent
    }

    /// Reads the prompts an earlier page left unsent for the open session (controllers only); they are
    /// shown and sent once the history is in ([`Self::restore_unsent_after`]).
    pub fn load_unsent(&self) {
        let sid = self.session_id.get_untracked();
        let prompts = match &sid {
            Some(id) if self.can_act() => unsent::load_entries(id),
            _ => Vec::new(),
        };
        self.compose.queue.set(Default::default());
        let prompts = self.split_restored(prompts);
        self.compose.restoring.set(prompts.len());
        self.compose
            .restore
            .set_value(
                sid.filter(|_| !prompts.is_empty())
                    .map(|session_id| Restore {
                        session_id,
                        after_seq: None,
                        prompts,
                    }),
            );
    }

    /// The open session's log ended at `last_seq` when it was opened: once the history up to there is
    /// applied, prompts left unsent by an earlier page are shown and sent again (same uuids).
    pub fn restore_unsent_after(&self, last_seq: u64) {
        self.compose.restore.update_value(|r| {
            if let Some(r) = r {
                r.after_seq.get_or_insert(last_seq);
            }
        });
        self.try_restore();
    }

    pub(super) fn try_restore(&self) {
        // Runs after every applied batch: nothing to do in the common case.
        if self
            .compose
            .restore
            .try_with_value(Option::is_none)
            .unwrap_or(true)
        {
            return;
        }
        let sid = self.session_id.get_untracked();
        let seen = self.max_seq.get_value();
        let due = self
            .compose
            .restore
            .try_update_value(|r| {
                let ready = r.as_ref().is_some_and(|r| {
                    Some(&r.session_id) == sid.as_ref() && r.after_seq.is_some_and(|l| seen >= l)
                });
                if ready { r.take() } else { None }
            })
            .flatten();
        let Some(due) = due else { return };
        self.compose.restoring.set(0);
        if !self.can_act() {
            return;
        }
        for e in due.prompts {
            if Uuid::parse_str(&e.uuid).is_err() {
                unsent::forget(&due.session_id, &e.uuid);
                continue;
            }
            self.show_and_post(&e);
        }
        self.pump_queue();
    }

    /// Sends the next queued message when Claude is free: the open session's history is in, nothing
    /// restored waits, no turn runs and the last prompt has its `result`. Called after every applied
    /// batch of frames and after each change to the queue.
    pub fn pump_queue(&self) {
        if self
            .compose
            .queue
            .try_with_untracked(Queue::is_empty)
            .unwrap_or(true)
            || !self.can_act()
            || self.caught_up.try_get_untracked() != Some(true)
            || self.compose.restoring.get_untracked() > 0
            || self
                .compose
                .restore
                .try_with_value(Option::is_some)
                .unwrap_or(true)
            || self
                .session
                .with_untracked(|s| s.state() == crate::state::SessionState::Ended)
        {
            return;
        }
        let Some(sid) = self.session_id.get_untracked() else {
            return;
        };
        let busy = self.session.with_untracked(queue::busy);
        // Runs after every batch of frames: the queue is only touched (and its views woken) when a
        // message goes.
        if !self.compose.queue.with_untracked(|q| q.has_due(busy)) {
            return;
        }
        let Some(next) = self
            .compose
            .queue
            .try_update(|q| q.take_due(busy))
            .flatten()
        else {
            return;
        };
        let entry = Entry {
            uuid: next.uuid,
            text: next.text,
            attachments: next.attachments,
            queued: false,
            dropped: 0,
        };
        // Rewritten in place before it goes: after a reload it is resent (same uuid), not requeued.
        unsent::remember_entry(&sid, &entry);
        self.show_and_post(&entry);
    }

    /// Starts editing a queued message (it waits meanwhile).
    pub fn queue_begin_edit(&self, uuid: &str) -> bool {
        self.compose
            .queue
            .try_update(|q| q.begin_edit(uuid))
            .unwrap_or(false)
    }

    /// Ends editing a queued message with `text` (None: unchanged; empty: cancelled).
    pub fn queue_finish_edit(&self, uuid: &str, text: Option<&str>) {
        let Some(sid) = self.session_id.get_untracked() else {
            return;
        };
        match self
            .compose
            .queue
            .try_update(|q| q.finish_edit(uuid, text))
            .flatten()
        {
            Some(q) => {
                let kept = unsent::remember_entry(
                    &sid,
                    &Entry {
                        uuid: q.uuid,
                        text: q.text,
                        attachments: q.attachments,
                        queued: true,
                        dropped: 0,
                    },
                );
                self.note_dropped(kept.as_ref());
            }
            None => unsent::forget(&sid, uuid),
        }
        self.pump_queue();
    }

    /// Cancels a queued message: it is never sent.
    pub fn queue_cancel(&self, uuid: &str) {
        self.compose.queue.update(|q| {
            q.cancel(uuid);
        });
        if let Some(sid) = self.session_id.get_untracked() {
            unsent::forget(&sid, uuid);
        }
        self.pump_queue();
    }

    /// "Send now": the message goes first, as soon as Claude is free — interrupting the running
    /// turn for it when one runs.
    pub fn queue_send_now(&self, uuid: &str) {
        if self.session.with_untracked(|s| s.turn_running())
            && self
                .session
                .with_untracked(|s| s.interrupt_state() == crate::state::InterruptState::None)
        {
            self.interrupt();
        }
        self.compose.queue.update(|q| {
            q.send_next(uuid);
        });
        self.pump_queue();
    }
}
