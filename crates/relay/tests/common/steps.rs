//! Steps the tests share: a control request's payload, a session on a relay started with flags,
//! a prompt answered as asked, and the text of a JSON string.

use serde_json::{Value, json};

use super::{RelayProc, Sse, TOKEN, allow_as_asked, demo_relay};

/// The `control_request` payload `request_id` asking `subtype` (with no more fields).
pub fn control_request(request_id: &str, subtype: &str) -> Value {
    json!({"type": "control_request", "request_id": request_id, "request": {"subtype": subtype}})
}

/// Whether the JSON string `v` holds `needle` (panics when `v` is not a string).
pub fn has_text(v: &Value, needle: &str) -> bool {
    v.as_str().unwrap().contains(needle)
}

/// A demo relay started with the extra arguments `args` in a fresh data directory, with one
/// session: the directory (kept while the relay runs), the relay and the session id.
pub async fn demo_session_with(args: &[&str]) -> (tempfile::TempDir, RelayProc, String) {
    let (dir, relay) = demo_relay(args);
    let sid = relay.create_session().await;
    (dir, relay, sid)
}

impl RelayProc {
    /// Follows `sid`, sends the prompt `text` and answers the permission the agent asks as it was
    /// asked: the stream, from before the prompt.
    pub async fn ask_allowed(&self, sid: &str, text: &str) -> Sse {
        let (sse, ask) = self.ask(sid, text).await;
        self.post(sid, TOKEN, allow_as_asked(&ask)).await;
        sse
    }
}
