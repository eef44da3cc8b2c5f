//! Writing frames: one JSON record per line, control responses, lifecycle and status frames, and
//! the `initialize` answer and `system/init` frame that describe the session.

use std::io::{self, Write};

use serde_json::{Value, json};

use super::Agent;
use super::models::{DEMO_VERSION, MODELS, new_uuid, now_iso};

impl<W: Write> Agent<W> {
    pub(super) fn emit(&mut self, v: &Value) -> io::Result<()> {
        if matches!(v["type"].as_str(), Some("assistant" | "user"))
            && let Some(u) = v["uuid"].as_str()
        {
            // What a compact boundary names as its logical parent.
            self.last_message_uuid = Some(u.to_owned());
        }
        let mut s = serde_json::to_string(v)?;
        // Like the CLI: keep every record on one physical line for every reader.
        if s.contains(['\u{2028}', '\u{2029}']) {
            s = s
                .replace('\u{2028}', "\\u2028")
                .replace('\u{2029}', "\\u2029");
        }
        s.push('\n');
        self.out.write_all(s.as_bytes())?;
        self.out.flush()
    }

    pub(super) fn control_success(&mut self, request_id: &str, response: Value) -> io::Result<()> {
        self.emit(&json!({
            "type": "control_response",
            "response": {"subtype": "success", "request_id": request_id, "response": response}
        }))
    }

    pub(super) fn control_error(
        &mut self,
        request_id: &str,
        error: &str,
        code: Option<&str>,
    ) -> io::Result<()> {
        let mut r = json!({"subtype": "error", "request_id": request_id, "error": error});
        if let Some(code) = code {
            r["error_code"] = json!(code);
        }
        self.emit(&json!({"type": "control_response", "response": r}))
    }

    pub(super) fn lifecycle(&mut self, command_uuid: &str, state: &str) -> io::Result<()> {
        let v = json!({
            "type": "command_lifecycle",
            "command_uuid": command_uuid,
            "state": state,
            "uuid": new_uuid(),
            "session_id": self.session_id,
        });
        self.emit(&v)
    }

    pub(super) fn status(&mut self, status: Value, uuids: Option<&[String]>) -> io::Result<()> {
        let mut v = json!({"type": "system", "subtype": "status", "status": status});
        if status.is_null() {
            v["permissionMode"] = json!(self.mode);
            v["uuid"] = json!(new_uuid());
            v["session_id"] = json!(self.session_id);
        } else {
            v["session_id"] = json!(self.session_id);
            v["uuid"] = json!(new_uuid());
        }
        if let Some(u) = uuids.filter(|u| !u.is_empty()) {
            v["user_message_uuids"] = json!(u);
        }
        self.emit(&v)
    }

    pub(super) fn user_text_frame(&mut self, text: &str) -> io::Result<()> {
        let v = json!({
            "type": "user",
            "message": {"role": "user", "content": [{"type": "text", "text": text}]},
            "parent_tool_use_id": null,
            "session_id": self.session_id,
            "uuid": new_uuid(),
            "timestamp": now_iso(),
        });
        self.emit(&v)
    }

    pub(super) fn initialize_response(&self) -> Value {
        let models: Vec<Value> = MODELS
            .iter()
            .map(|m| {
                json!({
                    "value": m.value,
                    "resolvedModel": m.resolved,
                    "displayName": m.display_name,
                    "description": m.description,
                    "supportsEffort": true,
                    "supportedEffortLevels": ["low", "medium", "high"],
                    "supportsAdaptiveThinking": true,
                    "supportsFastMode": false,
                    "supportsAutoMode": true,
                    "supportsThinkingOff": true
                })
            })
            .collect();
        json!({
            "commands": [
                {"name": "clear", "description": "Clear conversation history and free up context", "argumentHint": "", "builtin": true},
                {"name": "compact", "description": "Clear conversation history but keep a summary in context", "argumentHint": "<optional custom summarization instructions>", "builtin": true},
                {"name": "context", "description": "Visualize current context usage", "argumentHint": "", "builtin": true},
                {"name": "model", "description": "Set the AI model for Claude Code", "argumentHint": "[model]", "builtin": true},
                {"name": "usage", "description": "Show plan usage limits", "argumentHint": "", "aliases": ["cost"], "builtin": true},
                {"name": "review", "description": "Review a pull request (demo)", "argumentHint": "[pr]", "builtin": false}
            ],
            "agents": [
                {"name": "general-purpose", "description": "General-purpose agent for researching complex questions (demo)"},
                {"name": "Explore", "description": "Fast read-only search agent for locating code (demo)", "model": "inherit"}
            ],
            "output_style": "default",
            "available_output_styles": ["default", "Explanatory", "Learning"],
            "models": models,
            "account": {"tokenSource": "none", "apiKeySource": "none", "apiProvider": "firstParty"},
            "pid": std::process::id(),
            "claude_code_version": DEMO_VERSION,
            "current_permission_mode": self.mode,
            "hook_on_failure_supported": true,
            "analytics_disabled": true,
            "sandbox_enabled": false,
            "fast_mode_state": "off",
            "fast_mode_disabled_reason": "sdk_opt_in_required",
            "session_state": if self.pending_permission.is_some() { "requires_action" } else if self.in_turn { "running" } else { "idle" },
            "capabilities": ["ui_surface_v1"]
        })
    }

    pub(super) fn init_frame(&mut self, uuids: &[String]) -> io::Result<()> {
        let mut v = json!({
            "type": "system",
            "subtype": "init",
            "cwd": self.opts.cwd,
            "session_id": self.session_id,
            "tools": ["Task", "AskUserQuestion", "Bash", "Edit", "Read", "Write", "WebFetch", "WebSearch", "NotebookEdit"],
            "mcp_servers": [],
            "model": self.model,
            "permissionMode": self.mode,
            "slash_commands": ["clear", "compact", "context", "model", "usage", "review"],
            "apiKeySource": "none",
            "claude_code_version": DEMO_VERSION,
            "output_style": "default",
            "agents": ["general-purpose", "Explore"],
            "skills": [],
            "plugins": [],
            "terminal_slash_commands": [],
            "capabilities": ["interrupt_receipt_v1", "msg_lifecycle_v1"],
            "analytics_disabled": true,
            "served_by_anthropic": false,
            "uuid": new_uuid(),
            "sandbox_enabled": false,
            "original_cwd": self.opts.cwd,
            "additional_directories": [],
            "fast_mode_state": "off",
            "fast_mode_disabled_reason": "sdk_opt_in_required",
            "view_mode": "default",
        });
        if !uuids.is_empty() {
            v["user_message_uuids"] = json!(uuids);
        }
        self.emit(&v)
    }
}
