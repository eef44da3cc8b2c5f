//! Answers to the CLI's prompts: tool permissions (allow, with edited input and permission rules;
//! deny), an MCP server's `elicitation` and the CLI's `request_user_dialog`. The payloads come from
//! bridge-protocol's builders; the first answer wins at the relay (409 for a later one).

use bridge_protocol::build::value as build;
use bridge_protocol::{DialogBehavior, PermissionUpdate};
use leptos::prelude::*;
use serde_json::{Map, Value};

use super::Store;
use crate::net::NetError;
use crate::state::Prompt;

impl Store {
    fn post_answer(&self, request_id: &str, payload: Value) {
        if !self.can_act() {
            return;
        }
        let rid = request_id.to_string();
        self.session.update(|s| s.answer_locally(&rid));
        // A prompt shown before the session loaded (`EarlyPrompts`) leaves its dialog now; it is
        // back if the answer is not delivered.
        let early = self.early.take(&rid);
        let sid = self.session_id.get_untracked().unwrap_or_default();
        let store = *self;
        self.post(payload, move |r| match r {
            Ok(()) => {}
            Err(NetError::Status(409, _)) => {
                store.session.try_update(|s| {
                    if early.is_some() {
                        s.answer_conflict_unseen(&rid);
                    } else {
                        s.answer_conflict(&rid);
                    }
                });
            }
            Err(e) => {
                if let Some(p) = early {
                    store.early.put_back(&sid, p);
                }
                store
                    .session
                    .try_update(|s| s.answer_failed(&rid, &e.to_string()));
            }
        });
    }

    /// Allows a permission prompt with `updated_input` (edited or the original) and the checked
    /// `permission_suggestions` (as edited) as `updatedPermissions`.
    pub fn allow(
        &self,
        prompt: &Prompt,
        updated_input: Value,
        updated_permissions: Vec<PermissionUpdate>,
    ) {
        let msg = build::allow(
            &prompt.request_id,
            prompt.tool_use_id.as_deref(),
            updated_input,
            updated_permissions,
        );
        self.post_answer(&prompt.request_id, msg);
    }

    /// Denies a permission prompt, optionally interrupting the turn ("deny and stop").
    pub fn deny(&self, prompt: &Prompt, message: &str, interrupt: bool) {
        let message = if message.trim().is_empty() {
            "The user denied this tool call."
        } else {
            message
        };
        let msg = build::deny(
            &prompt.request_id,
            prompt.tool_use_id.as_deref(),
            message,
            interrupt,
        );
        self.post_answer(&prompt.request_id, msg);
    }

    /// Accepts an elicitation with the form's content (`{"action":"accept","content":{…}}`).
    pub fn accept_elicitation(&self, request_id: &str, content: Map<String, Value>) {
        self.post_answer(request_id, build::elicitation_accept(request_id, content));
    }

    /// Declines an elicitation (`{"action":"decline"}`).
    pub fn decline_elicitation(&self, request_id: &str) {
        self.post_answer(request_id, build::elicitation_decline(request_id));
    }

    /// Cancels an elicitation (`{"action":"cancel"}`).
    pub fn cancel_elicitation(&self, request_id: &str) {
        self.post_answer(request_id, build::elicitation_cancel(request_id));
    }

    /// Answers a `request_user_dialog`: done (`completed`) or not (`cancelled`).
    pub fn answer_dialog(&self, request_id: &str, completed: bool) {
        let behavior = if completed {
            DialogBehavior::Completed
        } else {
            DialogBehavior::Cancelled
        };
        self.post_answer(request_id, build::user_dialog(request_id, behavior));
    }
}
