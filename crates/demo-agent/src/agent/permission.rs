//! Permission handling: the decision for a tool call (rules, mode, the scenario's own), the
//! `can_use_tool` prompt and its answer, and the permission updates an answer carries.

use std::io::{self, Write};
use std::time::Instant;

use serde_json::{Value, json};

use super::models::{new_uuid, normalize_mode};
use super::tool_run::REJECTED_TEXT;
use super::{Abort, Agent, Flow, ToRun, Turn};
use crate::tools::{self, Decision, Rule};

impl<W: Write> Agent<W> {
    pub(super) fn tool_decision(
        &mut self,
        turn: &mut Turn,
        step: ToolStep,
        decision: Decision,
    ) -> Flow<()> {
        match decision {
            Decision::Allow {
                source,
                reason_type,
            } => {
                let input = step.input.clone();
                self.schedule(turn, step, input, source, reason_type);
                Ok(())
            }
            Decision::Deny { message } => {
                turn.denials.push(denial(&step.name, &step.id, &step.input));
                self.reject_result(turn, &step.id, &message, "config")?;
                Ok(())
            }
            Decision::Ask => self.ask(turn, step),
        }
    }

    pub(super) fn schedule(
        &mut self,
        turn: &mut Turn,
        step: ToolStep,
        input: Value,
        source: &'static str,
        reason_type: Option<&'static str>,
    ) {
        if let Some(m) = turn.msg.as_mut() {
            m.to_run.push(ToRun {
                id: step.id,
                name: step.name,
                input,
                output: step.output,
                is_error: step.is_error,
                run_ms: step.run_ms,
                elicit: step.elicit,
                source,
                reason_type,
            });
        }
    }

    pub(super) fn ask(&mut self, turn: &mut Turn, step: ToolStep) -> Flow<()> {
        let cwd = self.opts.cwd.clone();
        let blocked = step
            .blocked_path
            .clone()
            .or_else(|| tools::default_blocked_path(&step.name, &step.input, &cwd));
        let (suggestions, reason_type) =
            tools::suggestions(&step.name, &step.input, &cwd, blocked.as_deref());
        let request_id = new_uuid();
        // The real CLI asks about ExitPlanMode with an empty input (the plan is in the tool_use block).
        let asked_input = if step.name == "ExitPlanMode" {
            json!({})
        } else {
            step.input.clone()
        };
        let mut req = json!({
            "subtype": "can_use_tool",
            "tool_name": step.name,
            "display_name": step.name,
            "input": asked_input,
        });
        // An MCP tool is named and attributed as the CLI does: `mcp__asker__ask_user` is "Ask User"
        // from the server "asker".
        if let Some((server, tool)) = step
            .name
            .strip_prefix("mcp__")
            .and_then(|rest| rest.split_once("__"))
        {
            req["display_name"] = json!(tools::title_case(tool));
            req["mcp_server"] = json!({"name": server, "source": "dynamic"});
        }
        let description = step.description.clone().or_else(|| {
            if step.name == "AskUserQuestion" {
                step.input
                    .pointer("/questions/0/question")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            } else {
                step.input
                    .get("description")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            }
        });
        if let Some(d) = description {
            req["description"] = json!(d);
        }
        if suggestions.as_array().is_some_and(|a| !a.is_empty()) {
            req["permission_suggestions"] = suggestions;
        }
        if let Some(b) = &blocked {
            req["blocked_path"] = json!(b);
        }
        let reason_type = reason_type.or((self.mode == "plan").then_some("mode"));
        if let Some(rt) = reason_type {
            req["decision_reason_type"] = json!(rt);
        }
        if matches!(step.name.as_str(), "AskUserQuestion" | "ExitPlanMode") {
            req["requires_user_interaction"] = json!(true);
        }
        req["tool_use_id"] = json!(step.id);
        let frame = json!({"type": "control_request", "request_id": request_id, "request": req});
        self.emit(&frame)?;
        self.pending_permission = Some(frame);
        let t0 = Instant::now();
        let answer = self.await_answer(&request_id);
        turn.waited += t0.elapsed();
        self.pending_permission = None;
        let response = match answer {
            Ok(r) => r,
            Err(Abort::Interrupted | Abort::StdinClosed) => {
                if !self.stdin_closed {
                    self.emit(
                        &json!({"type": "control_cancel_request", "request_id": request_id}),
                    )?;
                }
                self.reject_result(turn, &step.id, REJECTED_TEXT, "user_abort")?;
                return Err(Abort::InterruptedTools);
            }
            Err(e) => return Err(e),
        };
        let (behavior, body) = if response.get("subtype").and_then(Value::as_str) == Some("error") {
            let err = response
                .get("error")
                .and_then(Value::as_str)
                .unwrap_or("permission request failed");
            (
                "deny".to_owned(),
                json!({"behavior": "deny", "message": err}),
            )
        } else {
            let body = response.get("response").cloned().unwrap_or(json!({}));
            (
                body.get("behavior")
                    .and_then(Value::as_str)
                    .unwrap_or("deny")
                    .to_owned(),
                body,
            )
        };
        if behavior == "allow" {
            let input = body
                .get("updatedInput")
                .filter(|v| v.is_object() && step.name != "ExitPlanMode")
                .cloned()
                .unwrap_or_else(|| step.input.clone());
            if step.name == "ExitPlanMode" {
                // An approved plan leaves plan mode, announced as the real CLI does.
                self.mode = "default".to_owned();
                self.status(Value::Null, None)?;
            }
            let permanent = self.apply_updates(body.get("updatedPermissions"))?;
            let source = match body.get("decisionClassification").and_then(Value::as_str) {
                Some("user_permanent") => "user_permanent",
                Some(_) => "user_temporary",
                None if permanent => "user_permanent",
                None => "user_temporary",
            };
            self.schedule(turn, step, input, source, None);
            Ok(())
        } else {
            let message = body
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("Permission denied")
                .to_owned();
            turn.denials.push(denial(&step.name, &step.id, &step.input));
            self.reject_result(turn, &step.id, &message, "user_reject")?;
            if body.get("interrupt").and_then(Value::as_bool) == Some(true) {
                return Err(Abort::InterruptedTools);
            }
            Ok(())
        }
    }

    /// Applies `updatedPermissions`; returns whether any rule or mode change was recorded.
    pub(super) fn apply_updates(&mut self, updates: Option<&Value>) -> io::Result<bool> {
        let Some(list) = updates.and_then(Value::as_array) else {
            return Ok(false);
        };
        let mut new_rules = Vec::new();
        let mut new_mode = None;
        for u in list {
            match u.get("type").and_then(Value::as_str) {
                Some("addRules") => {
                    let behavior = u.get("behavior").and_then(Value::as_str).unwrap_or("allow");
                    for r in u
                        .get("rules")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        let Some(tool) = r.get("toolName").and_then(Value::as_str) else {
                            // One malformed update makes the CLI ignore them all.
                            return Ok(false);
                        };
                        new_rules.push(Rule {
                            tool_name: tool.to_owned(),
                            rule_content: r
                                .get("ruleContent")
                                .and_then(Value::as_str)
                                .map(str::to_owned),
                            behavior: behavior.to_owned(),
                        });
                    }
                }
                Some("setMode") => {
                    let Some(mode) = u
                        .get("mode")
                        .and_then(Value::as_str)
                        .and_then(normalize_mode)
                    else {
                        return Ok(false);
                    };
                    new_mode = Some(mode);
                }
                Some(_) => {}
                None => return Ok(false),
            }
        }
        let changed = !new_rules.is_empty() || new_mode.is_some();
        self.rules.extend(new_rules);
        if let Some(mode) = new_mode
            && mode != self.mode
        {
            self.mode = mode.to_owned();
            self.status(Value::Null, None)?;
        }
        Ok(changed)
    }
}

pub(super) struct ToolStep {
    pub(super) id: String,
    pub(super) name: String,
    pub(super) input: Value,
    pub(super) output: Option<String>,
    pub(super) is_error: bool,
    pub(super) description: Option<String>,
    pub(super) blocked_path: Option<String>,
    pub(super) run_ms: u64,
    pub(super) elicit: Option<Value>,
}

pub(super) fn denial(name: &str, id: &str, input: &Value) -> Value {
    json!({"tool_name": name, "tool_use_id": id, "tool_input": input})
}
