//! The client's side: a batch of posted events validated all-or-nothing (uuids seen before,
//! ended sessions, malformed control messages, answers to requests no longer pending, a full stdin
//! queue, an audit log that cannot be written), then stored, echoed and forwarded to the agent.

use std::collections::HashSet;
use std::time::Instant;

use bridge_protocol::{ClientMessage, MessageType};
use serde_json::Value;

use crate::core::auth::Principal;
use crate::core::error::{Error, Fault};
use crate::core::frames::Delivery;
use crate::core::notice::Device;
use crate::core::store::Source;

use super::prompts::answer_decision;
use super::{DELIVERY_MEMORY, DeliveryTrack, IngestResult, Session, SessionState};

impl Session {
    /// Stores, echoes and forwards client payloads. All-or-nothing validation first: a bad event
    /// anywhere in the batch changes nothing.
    pub fn ingest(
        &self,
        who: &Principal,
        payloads: Vec<Value>,
    ) -> Result<Vec<IngestResult>, Error> {
        self.ingest_from(who, None, payloads)
    }

    /// [`Self::ingest`] for answers given on a device (a push notification): audit records and the
    /// 409 of later answers name it.
    pub fn ingest_from(
        &self,
        who: &Principal,
        device: Option<&Device>,
        payloads: Vec<Value>,
    ) -> Result<Vec<IngestResult>, Error> {
        let mut payloads = Some(payloads);
        if let Some(verdict) = self.hook_forward(who, &mut payloads) {
            return verdict;
        }
        let payloads = payloads.unwrap_or_default();
        if !who.can_write() {
            return Err(Error::forbidden(
                "observer tokens are read-only: sending events needs the controller token",
            ));
        }
        enum Plan {
            Known(IngestResult),
            Apply {
                ty: String,
                text: String,
                uuid: Option<String>,
                value: Value,
                /// The payload decoded (every applied payload is a valid client message).
                msg: Box<ClientMessage>,
            },
        }
        let mut g = self.lock();
        let mut plans = Vec::with_capacity(payloads.len());
        let mut batch_uuids = HashSet::new();
        let mut batch_answers = HashSet::new();
        for (i, payload) in payloads.into_iter().enumerate() {
            let Some(obj) = payload.as_object() else {
                return Err(Error::invalid(format!(
                    "events[{i}].payload must be a JSON object"
                )));
            };
            let Some(ty) = obj.get("type").and_then(Value::as_str).map(str::to_owned) else {
                return Err(Error::invalid(format!(
                    "events[{i}].payload.type must be a string"
                )));
            };
            let uuid = obj
                .get("uuid")
                .and_then(Value::as_str)
                .filter(|u| !u.is_empty())
                .map(str::to_owned);
            if let Some(u) = &uuid {
                if let Some((event_id, seq)) = self.lookup_uuid(&g, u)? {
                    plans.push(Plan::Known(IngestResult {
                        event_id: Some(event_id),
                        sequence_num: Some(seq),
                    }));
                    continue;
                }
                if !batch_uuids.insert(u.clone()) {
                    return Err(Error::invalid(format!(
                        "events[{i}].payload.uuid {u:?} appears twice in one request"
                    )));
                }
            }
            if MessageType::from_tag(&ty) == MessageType::KeepAlive {
                plans.push(Plan::Known(IngestResult {
                    event_id: None,
                    sequence_num: None,
                }));
                continue;
            }
            if g.meta.state == SessionState::Ended {
                return Err(Error::gone(format!(
                    "session {} has ended (its agent exited); start a new session to continue",
                    self.id
                )));
            }
            let text = payload.to_string();
            let msg = match bridge_protocol::parse_client_line(&text) {
                Ok(msg) => msg,
                Err(e) => {
                    return Err(Error::invalid(format!(
                        "events[{i}].payload is not a valid {ty} message: {e}"
                    )));
                }
            };
            match &msg {
                ClientMessage::ControlRequest(r) => {
                    crate::core::validate::control_request(
                        &r.request,
                        self.ctx.allow_bypass_permissions,
                    )
                    .map_err(|mut e| {
                        e.message = format!("events[{i}]: {}", e.message);
                        e
                    })?;
                }
                ClientMessage::ControlResponse(r) => {
                    let Some(rid) = r.request_id() else {
                        return Err(Error::invalid(format!(
                            "events[{i}].payload.response.request_id must be a string"
                        )));
                    };
                    let pending = g.pending.iter().any(|p| p.request_id == rid);
                    if !pending || !batch_answers.insert(rid.to_owned()) {
                        return Err(Self::not_pending(&g, rid, pending));
                    }
                }
                _ => {}
            }
            plans.push(Plan::Apply {
                ty,
                text,
                uuid,
                value: payload,
                msg: Box::new(msg),
            });
        }

        // Every applied event is one line for the agent: refuse the whole batch when its stdin queue
        // cannot take them all (nothing stored, nothing sent).
        let writes = plans
            .iter()
            .filter(|p| matches!(p, Plan::Apply { .. }))
            .count();
        if writes > 0
            && let Some(tx) = &g.stdin
            && tx.capacity() < writes
        {
            return Err(Error::new(
                Fault::Unavailable,
                "agent_busy",
                format!(
                    "the agent is not reading its input: {} of its {} queued messages are waiting \
                     (--max-stdin-queue); nothing from this request was stored or sent. Retry later, or \
                     start the relay with a larger --max-stdin-queue",
                    tx.max_capacity() - tx.capacity(),
                    tx.max_capacity()
                ),
            ));
        }
        // Every answer's audit record is written and synced before anything of the batch is
        // stored or reaches the agent; one that cannot be written refuses the whole batch.
        for plan in &plans {
            if let Plan::Apply { msg, .. } = plan
                && let ClientMessage::ControlResponse(answer) = &**msg
            {
                let rid = answer.request_id().unwrap_or_default();
                if let Some(p) = g.pending.iter().find(|p| p.request_id == rid) {
                    self.audit_answer(p, who, device, answer).map_err(|e| {
                        Error::internal(format!(
                            "cannot write the audit log ({e}); the answer was not forwarded to the agent: \
                             free disk space or fix the data dir's permissions, then answer again"
                        ))
                    })?;
                }
            }
        }
        let mut results = Vec::with_capacity(plans.len());
        for plan in plans {
            let (ty, text, uuid, value, msg) = match plan {
                Plan::Known(r) => {
                    results.push(r);
                    continue;
                }
                Plan::Apply {
                    ty,
                    text,
                    uuid,
                    value,
                    msg,
                } => (ty, text, uuid, value, msg),
            };
            // Environment variable values never reach the log in clear (the agent gets them).
            let stored = crate::core::redact::stored_client_line(&ty, &value)
                .unwrap_or_else(|| text.clone());
            let (seq, event_id) =
                self.append(&mut g, Source::Client, &ty, stored, uuid.clone(), false)?;
            // What the CLI gets: control_* payloads without the SDK's added `uuid`.
            let line = if ty.starts_with("control_") && value.get("uuid").is_some() {
                let mut stripped = value.clone();
                if let Some(o) = stripped.as_object_mut() {
                    o.remove("uuid");
                }
                stripped.to_string()
            } else {
                text
            };
            if !self.write_stdin(&g, line) {
                tracing::warn!(session = %self.id, "agent stdin is closed; event stored but not delivered");
            }
            match &*msg {
                ClientMessage::User(_) => {
                    g.activity = SessionState::Running;
                    if g.turn_started.is_none() {
                        g.turn_started = Some(Instant::now());
                    }
                    g.deliveries.push_back(DeliveryTrack {
                        uuid: uuid.clone(),
                        event_id: event_id.clone(),
                        status: Delivery::Received,
                    });
                    while g.deliveries.len() > DELIVERY_MEMORY {
                        g.deliveries.pop_front();
                    }
                    self.broadcast_delivery(&event_id, Delivery::Received);
                }
                ClientMessage::ControlResponse(answer) => {
                    let rid = answer.request_id().unwrap_or_default().to_owned();
                    if let Some(pos) = g.pending.iter().position(|p| p.request_id == rid) {
                        let p = g.pending.remove(pos);
                        let resolution = crate::core::notice::Resolution::Answered {
                            decision: answer_decision(answer),
                            device: device.map(|d| {
                                d.label.clone().unwrap_or_else(|| "a notification".into())
                            }),
                        };
                        self.notify_resolved(&g, &p, resolution);
                    }
                    let by = match device {
                        Some(d) => format!(
                            "the {} from the device {:?}",
                            who.role.as_str(),
                            d.label.as_deref().unwrap_or(&d.id)
                        ),
                        None => format!("the {}", who.role.as_str()),
                    };
                    Self::remember_settled(
                        &mut g,
                        &rid,
                        format!("it was answered first by {by} (event {seq})"),
                    );
                    self.broadcast_delivery(&event_id, Delivery::Processed);
                }
                _ => self.broadcast_delivery(&event_id, Delivery::Received),
            }
            results.push(IngestResult {
                event_id: Some(event_id),
                sequence_num: Some(seq),
            });
        }
        self.recompute_state(&mut g);
        Ok(results)
    }
}
