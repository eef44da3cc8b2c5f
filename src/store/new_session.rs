//! Starting a session from the console (`POST /v1/code/sessions`).

use super::SessionList;
use bridge_protocol::api::NewSession;

use crate::net::{self, NetError};

impl SessionList {
    /// Asks the relay to start a session; once it has, the session list is reloaded. `done` gets
    /// the new session's id (to open it) or why it could not start.
    pub fn create_session(
        &self,
        req: NewSession,
        done: impl FnOnce(Result<String, NetError>) + 'static,
    ) {
        let list = *self;
        leptos::task::spawn_local(async move {
            let result = net::create_session(&req).await;
            if result.is_ok() {
                list.refresh();
            }
            done(result);
        });
    }
}
