//! Control requests waiting for a person (permission prompts, elicitations, dialogs): what is
//! pending, why a late answer is refused (first answer wins), the relay's deny after
//! `--permission-timeout-secs`, and the audit record of every answer.

use std::time::Duration;

use bridge_protocol::{ControlResponse, ControlResponseBody, PersonPrompt, build};
use bytes::Bytes;
use serde_json::{Value, json};

use crate::core::auth::Principal;
use crate::core::error::Error;
use crate::core::notice::Device;
use crate::core::store::Source;
use crate::core::util::now_rfc3339;

use super::{Inner, Pending, PendingRequest, SETTLED_MEMORY, Session};

impl Session {
    /// Raw payloads of the control requests still waiting for an answer, oldest first.
    pub fn pending_payloads(&self) -> Vec<Bytes> {
        self.lock()
            .pending
            .iter()
            .map(|p| p.payload.clone())
            .collect()
    }

    /// Raw payloads of the control requests a person answers (`can_use_tool`, `elicitation`,
    /// `request_user_dialog`) still waiting for an answer, oldest first.
    pub fn waiting_prompt_payloads(&self) -> Vec<Bytes> {
        self.lock()
            .pending
            .iter()
            .filter(|p| p.needs_action())
            .map(|p| p.payload.clone())
            .collect()
    }

    /// A control request still waiting for an answer.
    pub fn pending_request(&self, request_id: &str) -> Option<PendingRequest> {
        self.lock()
            .pending
            .iter()
            .find(|p| p.request_id == request_id)
            .map(|p| PendingRequest {
                request_id: p.request_id.clone(),
                subtype: p.subtype.clone(),
                tool_name: p.tool_name.clone(),
                tool_use_id: p.tool_use_id.clone(),
                input: p.input.clone(),
            })
    }

    /// The 409 an answer to `request_id` gets when that request is not pending (what `ingest` says).
    pub fn not_pending_error(&self, request_id: &str) -> Error {
        Self::not_pending(&self.lock(), request_id, false)
    }

    pub(super) fn not_pending(g: &Inner, rid: &str, pending: bool) -> Error {
        let why = g
            .settled
            .iter()
            .rev()
            .find(|(r, _)| r == rid)
            .map(|(_, w)| w.clone())
            .unwrap_or_else(|| {
                if pending {
                    "it is answered earlier in this request".into()
                } else {
                    "no such request is pending".into()
                }
            });
        Error::conflict(
            "request_not_pending",
            format!(
                "control_request {rid:?} is already settled: {why}; this answer was not forwarded"
            ),
        )
    }

    pub(super) fn remember_settled(g: &mut Inner, request_id: &str, why: String) {
        g.settled.push_back((request_id.to_owned(), why));
        while g.settled.len() > SETTLED_MEMORY {
            g.settled.pop_front();
        }
    }

    pub(super) fn on_prompt_timeout(&self, request_id: &str, timeout: Duration) {
        let mut g = self.lock();
        let Some(pos) = g.pending.iter().position(|p| p.request_id == request_id) else {
            return;
        };
        let p = g.pending.remove(pos);
        let message = format!(
            "No controller answered within {} s, so the relay denied this request (--permission-timeout-secs).",
            timeout.as_secs()
        );
        // A permission is denied (the model reads the message); any other request gets an error.
        let response = if p.prompt == Some(PersonPrompt::CanUseTool) {
            build::deny(request_id, p.tool_use_id.as_deref(), &message, false)
        } else {
            build::error(request_id, &message)
        };
        // On record (and on disk) before the agent hears it; the deny goes out even if the
        // audit log cannot be written (nobody is waiting to be told no).
        let _ = self.ctx.audit.record(&json!({
            "at": now_rfc3339(),
            "session_id": self.id,
            "request_id": request_id,
            "subtype": p.subtype,
            "tool_name": p.tool_name,
            "tool_use_id": p.tool_use_id,
            "input": p.input,
            "who": {"role": "relay", "token_id": null},
            "decision": "deny",
            "reason": "timeout",
            "message": message,
        }));
        let payload = bridge_protocol::to_line(&response).trim_end().to_owned();
        self.write_stdin(&g, payload.clone());
        if let Err(e) = self.append(
            &mut g,
            Source::Relay,
            "control_response",
            payload,
            None,
            false,
        ) {
            tracing::error!(session = %self.id, error = %e, "event store failure");
        }
        Self::remember_settled(
            &mut g,
            request_id,
            format!(
                "the relay denied it after {} s without an answer",
                timeout.as_secs()
            ),
        );
        self.notify_resolved(&g, &p, crate::core::notice::Resolution::TimedOut);
        self.recompute_state(&mut g);
    }

    pub(super) fn audit_answer(
        &self,
        p: &Pending,
        who: &Principal,
        device: Option<&Device>,
        answer: &ControlResponse,
    ) -> std::io::Result<()> {
        let null = Value::Null;
        let body = answer_payload(answer).unwrap_or(&null);
        let error = match &answer.response {
            ControlResponseBody::Error(e) => Some(Value::from(e.error.as_str())),
            ControlResponseBody::Success(s) => s.extra.get("error").cloned(),
            ControlResponseBody::Other(raw) => raw.get("error").cloned(),
        };
        let mut record = json!({
            "at": now_rfc3339(),
            "session_id": self.id,
            "request_id": p.request_id,
            "subtype": p.subtype,
            "tool_name": p.tool_name,
            "tool_use_id": p.tool_use_id,
            "input": p.input,
            "who": who.audit_json(),
            "decision": answer_decision(answer),
            "updated_input": body.get("updatedInput"),
            "updated_permissions": body.get("updatedPermissions"),
            "message": body.get("message").cloned().or(error),
            "interrupt": body.get("interrupt"),
            // An elicitation's form values, a dialog's result.
            "content": body.get("content"),
            "result": body.get("result"),
        });
        // Answered on a device (a notification's Allow / Deny): who acted, and where.
        if let Some(d) = device {
            record["who"]["device"] = json!(d);
        }
        self.ctx.audit.record(&record)
    }
}

/// The request-specific payload of an answer (`response.response`): a permission result, an
/// elicitation's action and form, a dialog's result.
fn answer_payload(answer: &ControlResponse) -> Option<&Value> {
    match &answer.response {
        ControlResponseBody::Success(s) => s.response.as_ref(),
        ControlResponseBody::Error(e) => e.extra.get("response"),
        ControlResponseBody::Other(raw) => raw.get("response"),
    }
}

/// What an answer decided: allow / deny, an elicitation's action, `error`, or `answered`.
pub(super) fn answer_decision(answer: &ControlResponse) -> String {
    if matches!(answer.response, ControlResponseBody::Error(_)) {
        return "error".to_owned();
    }
    let field = |k: &str| {
        answer_payload(answer)
            .and_then(|b| b.get(k))
            .and_then(Value::as_str)
    };
    if let Some(b) = field("behavior") {
        b.to_owned()
    } else if let Some(a) = field("action") {
        a.to_owned()
    } else {
        "answered".to_owned()
    }
}
