//! Changes this console makes before the CLI confirms them: prompts typed here, control requests and answers sent from here.

use super::*;

impl Session {
    // ------------------------------------------------------------------ local actions

    /// Shows a prompt typed here at once, as pending.
    pub fn add_local_prompt(&mut self, uuid: &str, text: &str) {
        let key = format!("u:{uuid}");
        if self.items.contains_key(&key) {
            return;
        }
        let item = Item {
            key: key.clone(),
            rev: 0,
            parent: None,
            kind: ItemKind::User(UserMsg {
                uuid: uuid.to_string(),
                text: text.to_string(),
                images: Vec::new(),
                origin: UserOrigin::Prompt,
                send: SendState::Pending,
                lifecycle: None,
                coalesced: false,
                timestamp: None,
            }),
        };
        self.insert_item(item);
    }

    /// Records the outcome of sending a prompt (never downgrades a confirmed one).
    pub fn set_send_state(&mut self, uuid: &str, state: SendState) {
        let key = format!("u:{uuid}");
        if let Some(Item {
            kind: ItemKind::User(m),
            ..
        }) = self.items.get_mut(&key)
        {
            if m.send == SendState::Confirmed {
                return;
            }
            m.send = state;
            self.touch(&key);
        }
    }

    /// Shows the images of a prompt typed here (added with [`Self::add_local_prompt`]).
    pub fn set_local_images(
        &mut self,
        uuid: &str,
        images: Vec<crate::state::attachment::UserImage>,
    ) {
        let key = format!("u:{uuid}");
        if let Some(Item {
            kind: ItemKind::User(m),
            ..
        }) = self.items.get_mut(&key)
        {
            m.images = images;
            self.touch(&key);
        }
    }

    /// The text of a prompt typed here (for a retry).
    pub fn local_prompt_text(&self, uuid: &str) -> Option<&str> {
        match self.items.get(&format!("u:{uuid}")) {
            Some(Item {
                kind: ItemKind::User(m),
                ..
            }) => Some(&m.text),
            _ => None,
        }
    }

    /// Remembers that this console sent a control request (interrupt, set_model …).
    pub fn local_request(&mut self, request_id: &str, req: LocalRequest) {
        if req == LocalRequest::Interrupt {
            self.interrupt = Some(InterruptState::Requested);
        }
        self.local_requests.insert(request_id.to_string(), req);
        self.bump();
    }

    /// Records that a local control request could not be sent.
    pub fn local_request_failed(&mut self, request_id: &str, error: &str) {
        if let Some(req) = self.local_requests.remove(request_id) {
            if req == LocalRequest::Interrupt {
                self.interrupt = Some(InterruptState::Failed(error.to_string()));
            }
            self.notice(format!("Request failed: {error}"));
        }
        self.bump();
    }

    /// This console sent an answer to a prompt (it leaves the open queue until confirmed).
    pub fn answer_locally(&mut self, request_id: &str) {
        if let Some(p) = self.prompts.iter_mut().find(|p| p.request_id == request_id) {
            p.answered_locally = true;
        }
        self.bump();
    }

    /// Sending an answer failed: the prompt is open again.
    pub fn answer_failed(&mut self, request_id: &str, error: &str) {
        if let Some(p) = self.prompts.iter_mut().find(|p| p.request_id == request_id) {
            p.answered_locally = false;
        }
        self.notice(format!("Your answer was not delivered: {error}"));
    }

    /// The relay refused an answer to a prompt this model has not seen (shown before the session
    /// loaded) because it was already settled (HTTP 409): said, and remembered as settled.
    pub fn answer_conflict_unseen(&mut self, request_id: &str) {
        if self.prompts.iter().any(|p| p.request_id == request_id) {
            return self.answer_conflict(request_id);
        }
        self.settled
            .entry(request_id.to_string())
            .or_insert(SettledBy::Other);
        self.notice(
            "This request was already answered elsewhere; your answer was not used.".into(),
        );
    }

    /// The relay refused an answer because the prompt was already settled (HTTP 409).
    pub fn answer_conflict(&mut self, request_id: &str) {
        if self.prompts.iter().any(|p| p.request_id == request_id) {
            self.settle(request_id, SettledBy::Other, None);
            self.notice(
                "This request was already answered elsewhere; your answer was not used.".into(),
            );
        }
    }
}
