//! Applying one frame: the dispatch on the frame's type.

use super::*;

impl Session {
    // ------------------------------------------------------------------ applying frames

    /// Applies one frame written by the CLI.
    pub fn apply_value(&mut self, frame: &Value) {
        self.apply_from(Source::Worker, frame);
    }

    /// Applies a parsed CLI message (`bridge_protocol::CliMessage`, or anything that serializes to a
    /// frame).
    pub fn apply<M: serde::Serialize>(&mut self, msg: &M) {
        match serde_json::to_value(msg) {
            Ok(v) => self.apply_from(Source::Worker, &v),
            Err(e) => self.notice(format!("could not read a frame: {e}")),
        }
    }

    /// Applies one frame (a relay envelope's `payload`) with its `source`.
    pub fn apply_from(&mut self, source: Source, v: &Value) {
        self.applied += 1;
        let ty = s(v, "type").unwrap_or_default();
        match ty {
            "stream_event" => return self.on_stream_event(v),
            "keep_alive" => return,
            "control_request" => return self.on_control_request(source, v),
            "control_response" => return self.on_control_response(source, v),
            "control_cancel_request" => return self.on_cancel(v),
            "user" => return self.on_user(source, v),
            // Other things a client writes (env updates, keep-alives) show nothing.
            _ if source == Source::Client => return,
            _ => {}
        }
        if let Some(id) = s(v, "uuid")
            && !self.seen.insert(id.to_string())
        {
            return; // a redelivered durable frame
        }
        match ty {
            "assistant" => self.on_assistant(v),
            "result" => self.on_result(v),
            "system" => self.on_system(source, v),
            "tool_progress" => self.on_tool_progress(v),
            "tool_use_summary" => {
                let text = s(v, "summary").unwrap_or_default().to_string();
                self.push_system(
                    v,
                    SystemKind::Notice {
                        title: "summary".into(),
                        text,
                        level: "info".into(),
                    },
                );
            }
            "rate_limit_event" => self.on_rate_limit(v),
            "prompt_suggestion" => {
                self.suggestion = s(v, "suggestion").map(str::to_string);
                self.bump();
            }
            "conversation_reset" => {
                let trigger = s(v, "trigger").unwrap_or("reset");
                self.push_system(
                    v,
                    SystemKind::Notice {
                        title: "conversation reset".into(),
                        text: format!("The conversation was reset ({trigger})."),
                        level: "notice".into(),
                    },
                );
            }
            "active_goal" => {
                let text = v
                    .get("value")
                    .and_then(|g| s(g, "condition"))
                    .map_or_else(|| "Goal cleared.".to_string(), |c| format!("Goal: {c}"));
                self.push_system(
                    v,
                    SystemKind::Notice {
                        title: "goal".into(),
                        text,
                        level: "info".into(),
                    },
                );
            }
            "auth_status" => {
                let mut text: Vec<String> = v
                    .get("output")
                    .and_then(Value::as_array)
                    .map(|o| {
                        o.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_string)
                            .collect()
                    })
                    .unwrap_or_default();
                if let Some(e) = s(v, "error") {
                    text.push(e.to_string());
                }
                let level = if v.get("error").is_some() {
                    "error"
                } else {
                    "info"
                };
                self.push_system(
                    v,
                    SystemKind::Notice {
                        title: "authentication".into(),
                        text: text.join("\n"),
                        level: level.into(),
                    },
                );
            }
            "command_lifecycle" => self.on_lifecycle(v),
            "relay_error" => {
                let mut text = s(v, "error").unwrap_or("relay error").to_string();
                if let Some(raw) = s(v, "raw") {
                    text.push_str("\n\n");
                    text.extend(raw.chars().take(400));
                }
                self.push_system(
                    v,
                    SystemKind::Notice {
                        title: "relay error".into(),
                        text,
                        level: "error".into(),
                    },
                );
            }
            _ => self.push_raw(v),
        }
    }

}
