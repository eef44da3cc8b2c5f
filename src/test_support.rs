//! Builders the unit tests share.

use crate::net::SessionSummary;

/// A session as the list reports it: `id` in `state`, with `pending` permission prompts.
pub fn summary(id: &str, state: &str, pending: u64) -> SessionSummary {
    serde_json::from_value(serde_json::json!({
        "id": id, "state": state, "pending_permissions": pending
    }))
    .unwrap()
}
