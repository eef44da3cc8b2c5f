//! The session's controls: interrupt, model and permission mode — control requests shown at once as
//! pending and confirmed (or failed) by the CLI's answer.

use bridge_protocol::build;
use leptos::prelude::*;
use serde_json::Value;

use super::Store;
use crate::state::LocalRequest;

impl Store {
    fn control(&self, req: LocalRequest, msg: impl FnOnce(&str) -> Value) {
        if !self.can_act() {
            return;
        }
        let rid = build::new_request_id();
        self.session.update(|s| s.local_request(&rid, req));
        let store = *self;
        let rid2 = rid.clone();
        self.post(msg(&rid), move |r| {
            if let Err(e) = r {
                store
                    .session
                    .try_update(|s| s.local_request_failed(&rid2, &e.to_string()));
            }
        });
    }

    /// Interrupts the running turn.
    pub fn interrupt(&self) {
        // Follow-ups queued behind this turn wait for the person: send now, edit, or cancel.
        self.compose.queue.update(crate::state::Queue::hold);
        self.control(LocalRequest::Interrupt, build::value::interrupt);
    }

    /// Switches the model (`None`: the default).
    pub fn set_model(&self, model: Option<String>) {
        let m = model.clone();
        self.control(LocalRequest::SetModel(model), move |rid| {
            build::value::set_model(rid, m.as_deref())
        });
    }

    /// Switches the permission mode.
    pub fn set_permission_mode(&self, mode: &str) {
        let parsed = bridge_protocol::PermissionMode::from(mode);
        self.control(
            LocalRequest::SetPermissionMode(mode.to_string()),
            move |rid| build::value::set_permission_mode(rid, parsed),
        );
    }
}
