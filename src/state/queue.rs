//! Follow-ups typed while Claude is working: held here, in order, and sent one at a time when the
//! running turn's `result` arrives — so each is answered in its own turn, and until then it can be
//! edited or cancelled exactly (the CLI would otherwise coalesce prompts sent mid-turn into one turn).
//! Pure: the store persists it with the unsent prompts and sends what [`Queue::take_due`] gives.

use crate::state::{ItemKind, SendState, Session, UserOrigin};

use super::attachment::Attachment;

/// A follow-up waiting for the turn to end.
#[derive(Clone, Debug, PartialEq)]
pub struct Queued {
    /// The uuid it will be sent with (chosen when queued, so a reload never sends it twice).
    pub uuid: String,
    /// What was typed.
    pub text: String,
    /// Its attachments.
    pub attachments: Vec<Attachment>,
}

/// The queue of one session.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Queue {
    items: Vec<Queued>,
    /// Held after an interrupt: nothing goes out until the person says so.
    held: bool,
    /// The message being edited (nothing goes out while its text may change).
    editing: Option<String>,
}

impl Queue {
    /// The queued messages, in the order they will be sent.
    pub fn items(&self) -> &[Queued] {
        &self.items
    }

    /// Nothing queued.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Held after an interrupt.
    pub fn is_held(&self) -> bool {
        self.held && !self.items.is_empty()
    }

    /// The uuid being edited.
    pub fn editing(&self) -> Option<&str> {
        self.editing.as_deref()
    }

    /// Adds a message at the end (once per uuid). A person sending another message also means
    /// "go on": a hold ends.
    pub fn push(&mut self, q: Queued) {
        if !self.items.iter().any(|i| i.uuid == q.uuid) {
            self.items.push(q);
        }
        self.held = false;
    }

    /// Removes a message; it will never be sent. Returns it.
    pub fn cancel(&mut self, uuid: &str) -> Option<Queued> {
        let i = self.items.iter().position(|q| q.uuid == uuid)?;
        if self.editing.as_deref() == Some(uuid) {
            self.editing = None;
        }
        Some(self.items.remove(i))
    }

    /// Starts editing a message (it is not sent meanwhile).
    pub fn begin_edit(&mut self, uuid: &str) -> bool {
        let found = self.items.iter().any(|q| q.uuid == uuid);
        if found {
            self.editing = Some(uuid.to_string());
        }
        found
    }

    /// Ends editing with `text` (None: unchanged). An edit to nothing at all (no text, no
    /// attachments) cancels the message. Returns the message as it now is, or None when it is gone.
    pub fn finish_edit(&mut self, uuid: &str, text: Option<&str>) -> Option<Queued> {
        if self.editing.as_deref() == Some(uuid) {
            self.editing = None;
        }
        let i = self.items.iter().position(|q| q.uuid == uuid)?;
        if let Some(t) = text {
            if t.trim().is_empty() && self.items[i].attachments.is_empty() {
                self.items.remove(i);
                return None;
            }
            self.items[i].text = t.to_string();
        }
        Some(self.items[i].clone())
    }

    /// Holds the queue (after an interrupt): nothing is sent until [`Queue::release`].
    pub fn hold(&mut self) {
        if !self.items.is_empty() {
            self.held = true;
        }
    }

    /// Ends a hold.
    pub fn release(&mut self) {
        self.held = false;
    }

    /// Moves a message to the front and ends a hold ("send now": it goes as soon as the turn ends).
    pub fn send_next(&mut self, uuid: &str) -> bool {
        let Some(i) = self.items.iter().position(|q| q.uuid == uuid) else {
            return false;
        };
        let q = self.items.remove(i);
        self.items.insert(0, q);
        self.held = false;
        true
    }

    /// Whether [`Queue::take_due`] would give a message (checked first, so that nothing watching
    /// the queue is woken when nothing changes).
    pub fn has_due(&self, busy: bool) -> bool {
        !busy
            && !self.held
            && self
                .items
                .first()
                .is_some_and(|q| self.editing.as_deref() != Some(q.uuid.as_str()))
    }

    /// The message to send now, taken out of the queue: the first one, when the session is not
    /// `busy`, the queue is not held and that message is not being edited.
    pub fn take_due(&mut self, busy: bool) -> Option<Queued> {
        self.has_due(busy).then(|| self.items.remove(0))
    }
}

/// Whether a message sent now would arrive while Claude is working: a turn is running, or the last
/// prompt (from anyone) has no `result` after it yet — it was just sent, or the CLI is starting.
/// A prompt that failed to send does not count.
pub fn busy(session: &Session) -> bool {
    if session.turn_running() {
        return true;
    }
    for key in session.order().iter().rev() {
        let Some(item) = session.item(key) else {
            continue;
        };
        match &item.kind {
            ItemKind::Result(_) if item.parent.is_none() => return false,
            ItemKind::User(m)
                if item.parent.is_none()
                    && m.origin == UserOrigin::Prompt
                    && !matches!(m.send, SendState::Failed(_)) =>
            {
                return true;
            }
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn q(uuid: &str, text: &str) -> Queued {
        Queued {
            uuid: uuid.into(),
            text: text.into(),
            attachments: vec![],
        }
    }

    /// A queue of `(uuid, text)` messages, pushed in order.
    fn queue_of(messages: &[(&str, &str)]) -> Queue {
        let mut queue = Queue::default();
        for (uuid, text) in messages {
            queue.push(q(uuid, text));
        }
        queue
    }

    fn texts(queue: &Queue) -> Vec<&str> {
        queue.items().iter().map(|q| q.text.as_str()).collect()
    }

    #[test]
    fn messages_go_out_in_order_one_per_idle_moment() {
        let mut queue = queue_of(&[("1", "first"), ("2", "second")]);
        queue.push(q("1", "first again"));
        assert_eq!(texts(&queue), ["first", "second"], "a uuid is queued once");
        assert!(!queue.has_due(true) && queue.has_due(false));
        assert_eq!(queue.take_due(true), None, "nothing while busy");
        assert_eq!(queue.take_due(false).map(|q| q.text), Some("first".into()));
        assert_eq!(queue.take_due(false).map(|q| q.text), Some("second".into()));
        assert_eq!(queue.take_due(false), None);
    }

    #[test]
    fn an_edited_message_waits_for_its_edit_and_goes_out_as_edited() {
        let mut queue = queue_of(&[("1", "frist"), ("2", "second")]);
        assert!(queue.begin_edit("1"));
        assert!(!queue.has_due(false));
        assert_eq!(queue.take_due(false), None, "the first is being edited");
        assert_eq!(
            texts(&queue),
            ["frist", "second"],
            "order is kept: the second waits too"
        );
        assert_eq!(
            queue.finish_edit("1", Some("first")).map(|q| q.text),
            Some("first".into())
        );
        assert_eq!(queue.take_due(false).map(|q| q.text), Some("first".into()));
        // Emptying a message cancels it.
        assert!(queue.begin_edit("2"));
        assert_eq!(queue.finish_edit("2", Some("  ")), None);
        assert!(queue.is_empty());
        assert!(!queue.begin_edit("nope"));
    }

    #[test]
    fn a_cancelled_message_is_never_sent() {
        let mut queue = queue_of(&[("1", "keep"), ("2", "drop")]);
        assert!(queue.begin_edit("2"));
        assert_eq!(queue.cancel("2").map(|q| q.text), Some("drop".into()));
        assert_eq!(queue.editing(), None);
        assert_eq!(queue.cancel("2"), None);
        let mut sent = vec![];
        while let Some(m) = queue.take_due(false) {
            sent.push(m.text);
        }
        assert_eq!(sent, ["keep"]);
    }

    #[test]
    fn an_interrupt_holds_the_queue_until_send_now_or_a_new_message() {
        let mut queue = Queue::default();
        queue.hold();
        assert!(!queue.is_held(), "nothing to hold");
        queue.push(q("1", "a"));
        queue.push(q("2", "b"));
        queue.hold();
        assert!(queue.is_held());
        assert_eq!(queue.take_due(false), None);
        assert!(queue.send_next("2"));
        assert!(!queue.is_held());
        assert_eq!(texts(&queue), ["b", "a"]);
        assert_eq!(queue.take_due(false).map(|q| q.text), Some("b".into()));
        queue.hold();
        queue.push(q("3", "c"));
        assert!(!queue.is_held(), "sending another message means go on");
        queue.hold();
        queue.release();
        assert_eq!(texts(&queue), ["a", "c"]);
        assert_eq!(queue.take_due(false).map(|q| q.text), Some("a".into()));
    }

    fn user(uuid: &str, text: &str) -> serde_json::Value {
        json!({"type": "user", "uuid": uuid, "session_id": "s", "parent_tool_use_id": null,
               "message": {"role": "user", "content": text}})
    }

    fn result() -> serde_json::Value {
        json!({"type": "result", "subtype": "success", "is_error": false, "uuid": uuid::Uuid::new_v4().to_string(),
               "session_id": "s", "duration_ms": 1, "duration_api_ms": 1, "num_turns": 1, "result": "ok",
               "total_cost_usd": 0.0, "stop_reason": "end_turn", "usage": {"input_tokens": 1, "output_tokens": 1},
               "modelUsage": {}, "permission_denials": []})
    }

    #[test]
    fn busy_from_the_send_until_the_result() {
        let mut s = Session::new();
        assert!(!busy(&s), "a new session is idle");
        s.add_local_prompt("00000000-0000-4000-8000-000000000001", "hi");
        assert!(
            busy(&s),
            "sent, not answered yet (the CLI may still be starting)"
        );
        s.set_send_state(
            "00000000-0000-4000-8000-000000000001",
            SendState::Failed("offline".into()),
        );
        assert!(
            !busy(&s),
            "a prompt that was not sent keeps nothing waiting"
        );
        s.apply_value(&user(
            "00000000-0000-4000-8000-000000000002",
            "from elsewhere",
        ));
        assert!(busy(&s), "another controller's prompt is being answered");
        s.apply_value(&result());
        assert!(!busy(&s), "the turn's result came");
        s.apply_value(&json!({"type": "system", "subtype": "status", "status": "requesting", "session_id": "s", "uuid": "st1"}));
        assert!(busy(&s), "a turn the CLI started on its own");
    }
}
