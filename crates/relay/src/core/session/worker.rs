//! The agent's side: each line the CLI writes to stdout (the relay's own `initialize` answer,
//! routing, durable frames and their effects on pending prompts, state and deliveries), undecodable
//! output as `relay_error` events, and the agent's exit.

use std::collections::VecDeque;

use bridge_protocol::{CliMessage, CommandState, MessageType, PersonPrompt, SystemMessage, kind};
use bytes::Bytes;
use serde_json::{Value, json};

use crate::core::agent::AgentEvents;
use crate::core::frames::{Delivery, Frame, Route, route_worker};
use crate::core::store::Source;
use crate::core::util::truncate_utf8;

use super::{ExitInfo, Inner, Pending, RELAY_ERROR_RAW_BYTES, Session, SessionState, str_at};

impl Session {
    pub(super) fn handle_worker_line(&self, text: &str) {
        let text = text.trim_end_matches('\r');
        if text.trim().is_empty() {
            return;
        }
        // The typed parse only classifies (the line is forwarded as is either way): skip its cost unless
        // someone reads the debug log.
        if tracing::enabled!(tracing::Level::DEBUG)
            && let Err(e) = crate::core::proto::validate_cli_line(text)
        {
            tracing::debug!(session = %self.id, error = %e, "CLI line does not match the typed model; forwarded as is");
        }
        // Most lines are stream deltas: their tags are read in one pass without building the
        // line (checked to be JSON on the way), and they go out as they came. A stored frame,
        // whose effects the relay reads, is parsed once below.
        let tags = crate::core::frames::peek_line(text);
        // Exact bytes go out only if they keep an SSE data line whole.
        let exact = !(text.starts_with(char::is_whitespace)
            || text.ends_with(char::is_whitespace)
            || text.contains(['\r', '\n']));
        if let Some(tags) = &tags
            && exact
        {
            match crate::core::frames::route_tags(tags) {
                Route::Drop => return,
                Route::Ephemeral => {
                    self.fan_out(Frame::ephemeral(tags.tag(), text));
                    return;
                }
                Route::Durable => {}
            }
        }
        let value: Value = match serde_json::from_str::<Value>(text) {
            Ok(v) if MessageType::of(&v).is_some() => v,
            Ok(_) => {
                return self.relay_error(
                    "agent wrote JSON that is not an object with a string \"type\"",
                    text,
                );
            }
            Err(e) => {
                return self
                    .relay_error(&format!("agent wrote a line that is not JSON: {e}"), text);
            }
        };
        // Forward the exact bytes unless they would break an SSE data line.
        let payload = if exact {
            text.to_owned()
        } else {
            value.to_string()
        };
        let ty = value["type"].as_str().unwrap_or_default().to_owned();

        let mut g = self.lock();
        if MessageType::from_tag(&ty) == MessageType::ControlResponse {
            let rid = str_at(&value, &["response", "request_id"]);
            if rid.is_some() && rid == g.relay_init_id.as_deref() {
                g.relay_init_id = None;
                g.meta.initialize = Some(
                    if str_at(&value, &["response", "subtype"]) == Some("success") {
                        value["response"]
                            .get("response")
                            .cloned()
                            .unwrap_or_else(|| json!({}))
                    } else {
                        tracing::warn!(session = %self.id, "agent rejected the relay's initialize");
                        Value::Null
                    },
                );
                self.save_meta(&g);
                return;
            }
        }
        match route_worker(&value) {
            Route::Drop => return,
            Route::Ephemeral => {
                self.fan_out(Frame::ephemeral(&ty, &payload));
                return;
            }
            Route::Durable => {}
        }
        let seq = match self.append(&mut g, Source::Worker, &ty, payload.clone(), None, false) {
            Ok((seq, _)) => seq,
            Err(e) => {
                tracing::error!(session = %self.id, error = %e, "event store failure; agent frame dropped");
                return;
            }
        };
        self.apply_worker_effects(&mut g, &ty, &value, seq, payload);
        self.recompute_state(&mut g);
    }

    pub(super) fn apply_worker_effects(
        &self,
        g: &mut Inner,
        ty: &str,
        v: &Value,
        seq: u64,
        payload: String,
    ) {
        match MessageType::from_tag(ty) {
            MessageType::ControlRequest => {
                let Some(rid) = v.get("request_id").and_then(Value::as_str) else {
                    return;
                };
                let req = &v["request"];
                let subtype = req
                    .get("subtype")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned();
                // A tag peek (the body is forwarded as it came, and a prompt whose body does not
                // decode is still one the CLI waits on).
                let prompt = PersonPrompt::of_subtype(&subtype);
                let needs_action = prompt.is_some();
                if needs_action {
                    // Asking means the agent is mid-turn; once answered it carries on.
                    g.activity = SessionState::Running;
                }
                g.pending.retain(|p| p.request_id != rid);
                g.pending.push(Pending {
                    request_id: rid.to_owned(),
                    seq,
                    // Who asks: the tool, or the MCP server of an elicitation, or the dialog kind.
                    tool_name: ["tool_name", "mcp_server_name", "dialog_kind"]
                        .iter()
                        .find_map(|k| req.get(*k).and_then(Value::as_str))
                        .map(str::to_owned),
                    tool_use_id: req
                        .get("tool_use_id")
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                    // What is asked: the tool input, the elicitation's message and form, or the
                    // dialog's payload.
                    input: req.get("input").cloned().or_else(|| match prompt {
                        Some(PersonPrompt::Elicitation) => Some(json!({
                            "message": req.get("message"),
                            "requested_schema": req.get("requested_schema"),
                            "url": req.get("url"),
                        })),
                        Some(PersonPrompt::RequestUserDialog) => req.get("payload").cloned(),
                        Some(PersonPrompt::CanUseTool) | None => None,
                    }),
                    subtype,
                    payload: Bytes::from(payload),
                    prompt,
                });
                if needs_action && self.ctx.push.is_some() {
                    let prompt = g.pending.last().map(|p| Self::prompt_of(p, true));
                    if let Some(prompt) = prompt {
                        self.notify(g, crate::core::notice::Event::NeedsYou(prompt));
                    }
                }
                if let Some(timeout) = self.ctx.permission_timeout {
                    let me = self.me.clone();
                    let rid = rid.to_owned();
                    tokio::spawn(async move {
                        tokio::time::sleep(timeout).await;
                        if let Some(s) = me.upgrade() {
                            s.on_prompt_timeout(&rid, timeout);
                        }
                    });
                }
            }
            MessageType::ControlCancelRequest => {
                if let Some(rid) = v.get("request_id").and_then(Value::as_str)
                    && let Some(pos) = g.pending.iter().position(|p| p.request_id == rid)
                {
                    let p = g.pending.remove(pos);
                    Self::remember_settled(g, rid, "it was cancelled by the agent".into());
                    self.notify_resolved(g, &p, crate::core::notice::Resolution::Withdrawn);
                }
            }
            MessageType::Result => {
                g.activity = SessionState::Idle;
                self.set_delivery(g, |_| true, Delivery::Processed);
                let started = g.turn_started.take();
                if self.ctx.push.is_some() {
                    self.notify_turn_done(g, v, started);
                }
            }
            // The state and settings a session shows, from the typed frame (the ephemeral subtypes,
            // thinking_tokens with every thinking delta among them, are not decoded).
            MessageType::System if !kind::is_ephemeral(v) => match CliMessage::from_value_ref(v) {
                Ok(CliMessage::System(SystemMessage::SessionStateChanged(c))) => {
                    if let Some(s) = crate::core::record::state_from_cli(c.state.as_str()) {
                        g.activity = s;
                    }
                }
                Ok(CliMessage::System(SystemMessage::Init(init))) => {
                    let mut changed = g.meta.model.as_deref() != Some(init.model.as_str());
                    g.meta.model = Some(init.model.clone());
                    let mode = init.permission_mode.as_str();
                    changed |= g.meta.permission_mode.as_deref() != Some(mode);
                    g.meta.permission_mode = Some(mode.to_owned());
                    // Its transcript is this session's: the list of CLI sessions leaves it out.
                    let cli = g.meta.cli.get_or_insert_with(Default::default);
                    if cli.session_id.is_none() {
                        cli.session_id = Some(init.session_id.clone());
                        changed = true;
                    }
                    if changed {
                        self.save_meta(g);
                    }
                }
                Ok(_) => {}
                Err(e) => {
                    tracing::debug!(session = %self.id, error = %e, "system frame does not match the typed model; its state is not read");
                }
            },
            MessageType::User => {
                if v.get("isReplay").and_then(Value::as_bool) == Some(true)
                    && let Some(u) = v.get("uuid").and_then(Value::as_str)
                {
                    self.set_delivery(g, |d| d.uuid.as_deref() == Some(u), Delivery::Processing);
                }
            }
            MessageType::CommandLifecycle => {
                if let Ok(CliMessage::CommandLifecycle(l)) = CliMessage::from_value_ref(v) {
                    let status = match l.state {
                        CommandState::Started => Some(Delivery::Processing),
                        CommandState::Completed
                        | CommandState::Cancelled
                        | CommandState::Discarded
                        | CommandState::Refused => Some(Delivery::Processed),
                        CommandState::Queued | CommandState::Other(_) => None,
                    };
                    if let Some(status) = status {
                        let u = l.command_uuid.as_str();
                        self.set_delivery(g, |d| d.uuid.as_deref() == Some(u), status);
                    }
                }
            }
            _ => {}
        }
    }

    /// Surfaces a line the relay could not decode as a durable `relay_error` event. It stands in for
    /// the worker's output, so it goes out as `source:"worker"` (the SDK drops other sources) and
    /// says `relay_generated: true`.
    pub(super) fn relay_error(&self, error: &str, raw: &str) {
        tracing::warn!(session = %self.id, error, "undecodable agent output");
        let payload = json!({
            "type": "relay_error",
            "error": error,
            "raw": truncate_utf8(raw, RELAY_ERROR_RAW_BYTES),
            "uuid": uuid::Uuid::new_v4().to_string(),
            "session_id": self.id,
            "relay_generated": true,
        });
        let mut g = self.lock();
        if let Err(e) = self.append(
            &mut g,
            Source::Worker,
            "relay_error",
            payload.to_string(),
            None,
            false,
        ) {
            tracing::error!(session = %self.id, error = %e, "event store failure");
        }
    }
}

impl AgentEvents for Session {
    fn on_line(&self, text: &str) {
        self.handle_worker_line(text);
    }

    fn backlogged(&self) -> bool {
        self.tx
            .get()
            .is_some_and(|tx| tx.len() > super::BROADCAST_CAPACITY / 2)
    }

    fn on_undecodable(&self, error: &str, raw: &str) {
        self.relay_error(&format!("agent output could not be framed: {error}"), raw);
    }

    fn on_exit(&self, exit: ExitInfo) {
        let mut g = self.lock();
        if g.meta.state == SessionState::Ended {
            return;
        }
        g.stdin = None;
        let pending: Vec<Pending> = g.pending.drain(..).collect();
        for p in &pending {
            Self::remember_settled(&mut g, &p.request_id, "the agent exited".into());
            self.notify_resolved(&g, p, crate::core::notice::Resolution::AgentExited);
        }
        // Died on its own: not stopped by the relay, not a restart or a failed spawn (`reason`).
        let abnormal = !g.stopping
            && exit.reason.is_none()
            && (exit.signal.is_some() || exit.exit_code.is_some_and(|c| c != 0));
        if abnormal {
            self.notify(
                &g,
                crate::core::notice::Event::AgentExited {
                    exit_code: exit.exit_code,
                    signal: exit.signal,
                    stderr_tail: exit.stderr_tail.clone(),
                },
            );
        }
        g.deliveries.clear();
        // An ended session is read rarely (a transcript load): replays come from the store.
        g.recent = VecDeque::new();
        g.recent_bytes = 0;
        g.meta.state = SessionState::Ended;
        let payload = json!({
            "type": "system",
            "subtype": "session_state_changed",
            "state": "ended",
            "exit_code": exit.exit_code,
            "signal": exit.signal,
            "stderr_tail": exit.stderr_tail,
            "reason": exit.reason,
            "uuid": uuid::Uuid::new_v4().to_string(),
            "session_id": self.id,
            "relay_generated": true,
        });
        g.meta.exit = Some(exit);
        // Its process group was stopped before this report (agent::spawn's exit watcher).
        g.meta.agent_process = None;
        // Stands in for the worker (the SDK drops non-worker system events): source "worker",
        // marked `relay_generated`.
        if let Err(e) = self.append(
            &mut g,
            Source::Worker,
            "system",
            payload.to_string(),
            None,
            true,
        ) {
            tracing::error!(session = %self.id, error = %e, "event store failure");
        }
        self.save_meta(&g);
        drop(g);
        if let Some(tx) = &self.ctx.ended_tx {
            let _ = tx.send(self.id.clone());
        }
    }
}
