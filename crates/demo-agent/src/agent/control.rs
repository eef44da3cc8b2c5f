//! Reading client frames: queued `user` messages, `control_response` answers, and the control
//! requests the agent answers itself (`initialize`, `interrupt`, `set_model`, `set_permission_mode`, ...).

use std::io::{self, Write};

use serde_json::{Value, json};

use crate::tools::str_field;

use super::models::{PERMISSION_MODES, new_uuid, normalize_mode, now_iso, resolve_model};
use super::{Agent, Event, Flow, Inbound, UserMsg};

impl<W: Write> Agent<W> {
    /// Handles one inbound frame. Control requests are answered here; what a running turn must react
    /// to is returned.
    pub(super) fn handle(&mut self, msg: Inbound) -> Flow<Option<Event>> {
        let v = match msg {
            Inbound::Eof => {
                self.stdin_closed = true;
                return Ok(Some(Event::Eof));
            }
            Inbound::Malformed(err) => {
                eprintln!("bridge-demo-agent: ignoring a malformed input line: {err}");
                return Ok(None);
            }
            Inbound::Frame(v) => v,
        };
        let ty = str_field(&v, "type").to_owned();
        match ty.as_str() {
            "user" => {
                self.enqueue_user(&v)?;
                Ok(None)
            }
            "control_request" => self.handle_control_request(&v),
            "control_response" => {
                if self.opts.replay_user_messages {
                    self.emit(&v)?;
                }
                let resp = v.get("response").cloned().unwrap_or(Value::Null);
                let request_id = str_field(&resp, "request_id").to_owned();
                Ok(Some(Event::Response {
                    request_id,
                    response: resp,
                }))
            }
            "update_environment_variables" => {
                if let Some(rid) = v.get("request_id").and_then(Value::as_str) {
                    const APPLIED: &[&str] = &[
                        "CLAUDE_CODE_SESSION_ACCESS_TOKEN",
                        "CLAUDE_CODE_OAUTH_TOKEN",
                        "CLAUDE_CODE_SESSIONS_OAUTH_TOKEN",
                    ];
                    let applied: Vec<&str> = v
                        .get("variables")
                        .and_then(Value::as_object)
                        .map(|o| {
                            APPLIED
                                .iter()
                                .copied()
                                .filter(|k| o.contains_key(*k))
                                .collect()
                        })
                        .unwrap_or_default();
                    let rid = rid.to_owned();
                    self.control_success(&rid, json!({ "applied": applied }))?;
                }
                Ok(None)
            }
            // We never have client-originated work in flight that could be withdrawn.
            "control_cancel_request" | "keep_alive" => Ok(None),
            other => {
                eprintln!("bridge-demo-agent: Ignoring unknown message type: {other}");
                Ok(None)
            }
        }
    }

    pub(super) fn enqueue_user(&mut self, v: &Value) -> io::Result<()> {
        let uuid = v.get("uuid").and_then(Value::as_str).map(str::to_owned);
        let message = v
            .get("message")
            .cloned()
            .unwrap_or_else(|| json!({"role": "user", "content": ""}));
        let text = match message.get("content") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(blocks)) => blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
            _ => String::new(),
        };
        let images = message
            .get("content")
            .map(describe_images)
            .unwrap_or_default();
        if let Some(u) = &uuid {
            let u = u.clone();
            self.lifecycle(&u, "queued")?;
        }
        self.queue.push_back(UserMsg {
            uuid,
            message,
            parent_tool_use_id: v.get("parent_tool_use_id").cloned().unwrap_or(Value::Null),
            text,
            images,
        });
        Ok(())
    }

    pub(super) fn handle_control_request(&mut self, v: &Value) -> Flow<Option<Event>> {
        let rid = str_field(v, "request_id").to_owned();
        let req = v.get("request").cloned().unwrap_or(Value::Null);
        let subtype = str_field(&req, "subtype").to_owned();
        match subtype.as_str() {
            "initialize" => {
                let body = self.initialize_response();
                let pending: Vec<Value> = self.pending_permission.iter().cloned().collect();
                self.emit(&json!({
                    "type": "control_response",
                    "response": {
                        "subtype": "success",
                        "request_id": rid,
                        "response": body,
                        "pending_permission_requests": pending,
                        "pending_user_dialog_requests": []
                    }
                }))?;
                Ok(None)
            }
            "interrupt" => {
                let queued: Vec<String> =
                    self.queue.iter().filter_map(|m| m.uuid.clone()).collect();
                if req.get("cancel_queued").and_then(Value::as_bool) == Some(true) {
                    self.queue.clear();
                    for u in &queued {
                        self.lifecycle(u, "cancelled")?;
                    }
                    self.control_success(&rid, json!({"still_queued": [], "cancelled": queued}))?;
                } else {
                    self.control_success(&rid, json!({ "still_queued": queued }))?;
                }
                Ok(self.in_turn.then_some(Event::Interrupt))
            }
            "set_model" => {
                let requested = req.get("model").and_then(Value::as_str);
                self.model = resolve_model(requested);
                self.control_success(&rid, json!({}))?;
                if self.opts.replay_user_messages {
                    let text = format!(
                        "<local-command-stdout>Set model to {}</local-command-stdout>",
                        self.model
                    );
                    let frame = json!({
                        "type": "user",
                        "message": {"role": "user", "content": text},
                        "session_id": self.session_id,
                        "parent_tool_use_id": null,
                        "uuid": new_uuid(),
                        "timestamp": now_iso(),
                        "isReplay": true
                    });
                    self.emit(&frame)?;
                }
                Ok(None)
            }
            "set_permission_mode" => {
                let asked = req.get("mode").and_then(Value::as_str).unwrap_or_default();
                match normalize_mode(asked) {
                    Some(mode) => {
                        self.mode = mode.to_owned();
                        self.control_success(&rid, json!({ "mode": mode }))?;
                        self.status(Value::Null, None)?;
                    }
                    None => {
                        let msg = format!(
                            "Invalid permission mode: {asked:?} (expected one of {})",
                            PERMISSION_MODES.join(", ")
                        );
                        self.control_error(&rid, &msg, None)?;
                    }
                }
                Ok(None)
            }
            "set_max_thinking_tokens" => {
                self.control_success(&rid, json!({}))?;
                Ok(None)
            }
            "mcp_status" => {
                self.control_success(&rid, crate::info::Info::mcp_status())?;
                Ok(None)
            }
            "get_context_usage" => {
                let body = self.info.context_usage(&self.model);
                self.control_success(&rid, body)?;
                Ok(None)
            }
            other => {
                let msg = format!("Unsupported control request subtype: {other}");
                self.control_error(&rid, &msg, Some("unsupported_request"))?;
                Ok(None)
            }
        }
    }
}

/// "image/png, 12 KB" for each `image` block of a user message's content (the size decoded from its
/// base64 data; a non-base64 source says which kind it is).
pub fn describe_images(content: &Value) -> Vec<String> {
    let Some(blocks) = content.as_array() else {
        return Vec::new();
    };
    blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("image"))
        .map(|b| {
            let source = b.get("source").unwrap_or(&Value::Null);
            let get = |k: &str| source.get(k).and_then(Value::as_str).unwrap_or_default();
            let media_type = match get("media_type") {
                "" => "unknown type",
                t => t,
            };
            match get("type") {
                "base64" => {
                    let data = get("data").trim_end_matches('=');
                    let bytes = data.len() * 3 / 4;
                    let size = if bytes < 1024 {
                        format!("{bytes} B")
                    } else if bytes < 1024 * 1024 {
                        format!("{} KB", (bytes + 512) / 1024)
                    } else {
                        format!("{:.1} MB", bytes as f64 / (1024.0 * 1024.0))
                    };
                    format!("{media_type}, {size}")
                }
                other => format!("{media_type}, {other} source"),
            }
        })
        .collect()
}
