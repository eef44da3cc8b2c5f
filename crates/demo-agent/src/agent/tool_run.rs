//! Running an allowed tool: its simulated result (or an MCP elicitation it asks first), and the
//! error result of a rejected one.

use std::io::{self, Write};

use serde_json::{Value, json};

use super::models::{new_uuid, now_iso};
use super::{Abort, Agent, Flow, ToRun, Turn};
use crate::scenario::Condition;
use crate::tools;

impl<W: Write> Agent<W> {
    /// Asks the person through an `elicitation` control request, as the CLI does when an MCP server
    /// sends `elicitation/create` while its tool runs; returns the tool's result text. The CLI's own
    /// default when no answer can come (stdin closed) is `decline`.
    pub(super) fn elicit(&mut self, tool: &str, form: Value) -> Flow<String> {
        let mut req = match form {
            Value::Object(m) => m,
            _ => serde_json::Map::new(),
        };
        req.insert("subtype".into(), json!("elicitation"));
        if !req.contains_key("mcp_server_name") {
            let server = tool
                .strip_prefix("mcp__")
                .and_then(|r| r.split("__").next())
                .unwrap_or("demo");
            req.insert("mcp_server_name".into(), json!(server));
        }
        req.entry("mode").or_insert(json!("form"));
        req.entry("message")
            .or_insert(json!("The tool needs an answer."));
        let request_id = new_uuid();
        self.emit(&json!({"type": "control_request", "request_id": request_id, "request": req}))?;
        let answer = match self.await_answer(&request_id) {
            Ok(r) => r,
            Err(Abort::StdinClosed) => json!({"response": {"action": "decline"}}),
            Err(Abort::Interrupted) => {
                self.emit(&json!({"type": "control_cancel_request", "request_id": request_id}))?;
                return Err(Abort::Interrupted);
            }
            Err(e) => return Err(e),
        };
        let body = answer.get("response").cloned().unwrap_or(json!({}));
        let action = body
            .get("action")
            .and_then(Value::as_str)
            .unwrap_or("decline");
        let content = body.get("content").cloned().unwrap_or(json!({}));
        Ok(format!("Elicitation {action}: {content}"))
    }

    pub(super) fn run_tool(&mut self, turn: &mut Turn, t: ToRun) -> io::Result<()> {
        let run = if crate::info::is_task_tool(&t.name) && t.output.is_none() && !t.is_error {
            self.info.run_task_tool(&t.name, &t.input)
        } else {
            tools::simulate(
                &t.name,
                &t.input,
                t.output.as_deref(),
                t.is_error,
                &self.opts.cwd,
            )
        };
        let mut decision = json!({"decision": "accept", "source": t.source});
        if let Some(rt) = t.reason_type {
            decision["reason_type"] = json!(rt);
        }
        let v = json!({
            "type": "user",
            "message": {"role": "user", "content": [{
                "tool_use_id": t.id, "type": "tool_result", "content": run.content, "is_error": run.is_error
            }]},
            "parent_tool_use_id": null,
            "session_id": self.session_id,
            "uuid": new_uuid(),
            "timestamp": now_iso(),
            "tool_use_result": run.tool_use_result,
            "tool_result_meta": [{"id": t.id, "permission_decision": decision}]
        });
        turn.context_chars += run.content.chars().count();
        turn.last_tool_result = run.content;
        turn.last_outcome = Some(Condition::Allowed);
        self.emit(&v)
    }

    pub(super) fn reject_result(
        &mut self,
        turn: &mut Turn,
        tool_id: &str,
        message: &str,
        source: &str,
    ) -> io::Result<()> {
        let v = json!({
            "type": "user",
            "message": {"role": "user", "content": [{
                "type": "tool_result", "content": message, "is_error": true, "tool_use_id": tool_id
            }]},
            "parent_tool_use_id": null,
            "session_id": self.session_id,
            "uuid": new_uuid(),
            "timestamp": now_iso(),
            "tool_use_result": format!("Error: {message}"),
            "tool_result_meta": [{"id": tool_id, "non_execution_kind": "permission-rule",
                                  "permission_decision": {"decision": "reject", "source": source}}]
        });
        turn.context_chars += message.chars().count();
        turn.last_tool_result = message.to_owned();
        turn.last_outcome = Some(Condition::Denied);
        self.emit(&v)
    }
}

pub(super) const REJECTED_TEXT: &str = "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.";
