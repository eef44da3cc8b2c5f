//! What a session reports for a person to be told of it — a prompt waiting for them, one that
//! stopped waiting, a turn that ended, an agent that died — and the queue it hands them to
//! without waiting ([`PushHandle`]). The session core speaks this; the push feature
//! (`crate::features::push`) renders and sends it.

use std::time::Duration;

use serde::Serialize;
use serde_json::Value;
use tokio::sync::mpsc;

/// The device a permission was answered from (audit records name it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Device {
    pub id: String,
    pub label: Option<String>,
}

/// Something a session reports to the notifier.
#[derive(Debug, Clone, PartialEq)]
pub struct PushEvent {
    pub session_id: String,
    /// The session's title, else the last component of its working directory.
    pub session_label: String,
    pub event: Event,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A prompt started waiting for a person.
    NeedsYou(Prompt),
    /// A prompt stopped waiting. `others_pending`: the session still waits for another prompt (this
    /// message then carries no `Topic`, so it cannot replace that prompt's undelivered notification).
    Resolved {
        prompt: Prompt,
        resolution: Resolution,
        others_pending: bool,
    },
    /// A turn ended (`result`).
    TurnDone {
        duration: Duration,
        cost_usd: Option<f64>,
        /// The result's subtype when the turn ended in an error.
        error: Option<String>,
    },
    /// The agent died on its own (non-zero exit code or a signal).
    AgentExited {
        exit_code: Option<i32>,
        signal: Option<i32>,
        stderr_tail: String,
    },
}

impl Event {
    /// Its name in logs (`needs_you`, `resolved`, `turn_done`, `agent_exited`).
    pub fn name(&self) -> &'static str {
        match self {
            Event::NeedsYou(_) => "needs_you",
            Event::Resolved { .. } => "resolved",
            Event::TurnDone { .. } => "turn_done",
            Event::AgentExited { .. } => "agent_exited",
        }
    }
}

/// A control request waiting for a person.
#[derive(Debug, Clone, PartialEq)]
pub struct Prompt {
    pub request_id: String,
    /// `can_use_tool`, `elicitation` or `request_user_dialog`.
    pub subtype: String,
    /// The tool; for an elicitation its MCP server, for a dialog its kind.
    pub tool_name: Option<String>,
    /// The tool input; an elicitation's `{message, …}`; a dialog's payload.
    pub input: Option<Value>,
}

/// How a prompt stopped waiting.
#[derive(Debug, Clone, PartialEq)]
pub enum Resolution {
    /// `decision`: allow, deny, accept, … `device`: the label of the device that answered from a
    /// notification.
    Answered {
        decision: String,
        device: Option<String>,
    },
    Withdrawn,
    TimedOut,
    AgentExited,
}

/// Hands events to the dispatcher without ever waiting.
#[derive(Clone)]
pub struct PushHandle {
    tx: mpsc::Sender<PushEvent>,
}

impl PushHandle {
    /// A handle and the receiving end of its queue (the dispatcher's, or a test's).
    pub fn channel(capacity: usize) -> (PushHandle, mpsc::Receiver<PushEvent>) {
        let (tx, rx) = mpsc::channel(capacity);
        (PushHandle { tx }, rx)
    }

    /// Queues `ev`; when the queue is full the event is dropped (and logged).
    pub fn notify(&self, ev: PushEvent) {
        match self.tx.try_send(ev) {
            Ok(()) => {}
            Err(mpsc::error::TrySendError::Full(ev)) => tracing::warn!(
                session = %ev.session_id,
                what = ev.event.name(),
                "push notification queue is full; notification dropped"
            ),
            Err(mpsc::error::TrySendError::Closed(_)) => {}
        }
    }
}

impl std::fmt::Debug for PushHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PushHandle").finish_non_exhaustive()
    }
}
