//! Asking Claude Code how full its context window is and how its MCP servers are doing
//! (`get_context_usage`, `mcp_status`). The answers land in the session log like any frame and
//! the model picks them up ([`crate::state::AgentInfo`]).

use bridge_protocol::build;
use leptos::prelude::*;

use super::Store;
use crate::state::{InfoKind, SessionState};

impl Store {
    /// Asks for what is missing or older than the last turn; `force` asks again regardless
    /// (unless an answer is awaited). Controllers only (the relay refuses observers' requests;
    /// they see the last answers in the log), only once the history is in and while the session
    /// lives (not for a terminal session shown from its transcript). Runs when the session becomes
    /// live, after each turn, and on demand.
    pub fn refresh_agent_info(&self, force: bool) {
        self.ask_agent_info(&[InfoKind::ContextUsage, InfoKind::McpStatus], force);
    }

    /// The context breakdown, asked for when the meter's details open (the figures between
    /// reports come from API usage; the categories only from the CLI).
    pub fn refresh_context_usage(&self) {
        self.ask_agent_info(&[InfoKind::ContextUsage], true);
    }

    fn ask_agent_info(&self, kinds: &[InfoKind], force: bool) {
        if !self.can_act() || self.caught_up.try_get_untracked() != Some(true) {
            return;
        }
        // A terminal session shown from its transcript has no CLI to ask (a message resumes it).
        if self
            .session_id
            .try_get_untracked()
            .flatten()
            .is_none_or(|id| super::cli_sessions::is_cli_id(&id))
        {
            return;
        }
        let Some(due) = self.session.try_with_untracked(|s| {
            if s.state() == SessionState::Ended {
                return Vec::new();
            }
            let info = s.agent_info();
            kinds
                .iter()
                .copied()
                .filter(|k| {
                    if force {
                        !info.waiting(*k)
                    } else {
                        info.stale(*k)
                    }
                })
                .collect()
        }) else {
            return;
        };
        for kind in due {
            let rid = build::new_request_id();
            // Registered before sending: the answer may come back before the POST does.
            self.session.update(|s| s.info_asked(&rid, kind));
            let payload = match kind {
                InfoKind::ContextUsage => build::value::get_context_usage(&rid),
                InfoKind::McpStatus => build::value::mcp_status(&rid),
            };
            let store = *self;
            self.post(payload, move |r| {
                if let Err(e) = r {
                    store
                        .session
                        .try_update(|s| s.info_ask_failed(&rid, &e.to_string()));
                }
            });
        }
    }
}
