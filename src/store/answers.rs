//! Answers to the prompts that are not a tool permission: an MCP server's `elicitation` and the
//! CLI's `request_user_dialog`. The payloads come from bridge-protocol's builders.

use bridge_protocol::DialogBehavior;
use bridge_protocol::build::value as build;
use serde_json::{Map, Value};

use super::Store;

impl Store {
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
