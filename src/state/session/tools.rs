//! Tool calls: their results and progress.

use super::*;

impl Session {
    // ------------------------------------------------------------------ internals: tools

    pub(super) fn ensure_tool(&mut self, id: &str, name: &str, owner: &str) -> &mut ToolCall {
        self.tools
            .entry(id.to_string())
            .or_insert_with(|| ToolCall {
                id: id.to_string(),
                name: name.to_string(),
                owner: owner.to_string(),
                input: Value::Object(Map::new()),
                partial_json: String::new(),
                input_complete: false,
                ran_input: None,
                status: ToolStatus::Streaming,
                progress_secs: None,
                output: None,
                permission_request: None,
                deny_message: None,
                children: Vec::new(),
                task: None,
            })
    }

    pub(super) fn on_tool_result(&mut self, block: &Value, frame: &Value) {
        let Some(id) = s(block, "tool_use_id") else {
            return;
        };
        let text = tool_result_text(block.get("content").unwrap_or(&Value::Null));
        let is_error = block
            .get("is_error")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let rejected = frame
            .get("tool_result_meta")
            .and_then(Value::as_array)
            .is_some_and(|metas| {
                metas.iter().any(|m| {
                    s(m, "id") == Some(id)
                        && m.get("permission_decision").and_then(|d| s(d, "decision"))
                            == Some("reject")
                })
            });
        if !self.tools.contains_key(id) {
            // A result whose call we never saw (history cut short): give it a row of its own.
            let key = format!("a:orphan:{id}");
            let parent = s(frame, "parent_tool_use_id").map(str::to_string);
            self.ensure_tool(id, "tool", &key);
            self.insert_item(Item {
                key,
                rev: 0,
                parent,
                kind: ItemKind::Assistant(AssistantMsg {
                    message_id: String::new(),
                    uuid: None,
                    model: None,
                    blocks: vec![Slot {
                        index: None,
                        durable: true,
                        open: false,
                        block: Block::ToolUse(id.into()),
                    }],
                    streaming: false,
                    stop_reason: None,
                    error: None,
                }),
            });
        }
        let structured = frame.get("tool_use_result").cloned();
        let tool = self.tools.get_mut(id).expect("ensured above");
        tool.status = if !is_error {
            ToolStatus::Done
        } else if rejected || tool.status == ToolStatus::Denied || tool.deny_message.is_some() {
            if tool.deny_message.is_none() {
                tool.deny_message = Some(text.clone());
            }
            ToolStatus::Denied
        } else {
            ToolStatus::Error
        };
        tool.input_complete = true;
        tool.output = Some(ToolOutput {
            text,
            is_error,
            structured,
        });
        if tasks::is_task_tool(&tool.name)
            && let Some(o) = &tool.output
            && self.tasks.apply(
                &tool.name,
                &tool.display_input(),
                &o.text,
                o.structured.as_ref(),
                o.is_error,
            )
        {
            self.rev += 1;
        }
        let request = tool.permission_request.clone();
        // The tool ran (or was refused): whatever prompt it had is settled.
        if let Some(rid) = request
            && let Some(p) = self.prompts.iter().find(|p| p.request_id == rid)
        {
            let by = if p.answered_locally {
                SettledBy::Me
            } else {
                SettledBy::Other
            };
            self.settle(&rid, by, None);
        }
        self.touch_tool(id);
    }

    pub(super) fn on_tool_progress(&mut self, v: &Value) {
        let Some(id) = s(v, "tool_use_id") else {
            return;
        };
        if let Some(tool) = self.tools.get_mut(id) {
            tool.progress_secs = f(v, "elapsed_time_seconds");
            if tool.status == ToolStatus::Streaming {
                tool.status = ToolStatus::Running;
            }
            self.touch_tool(id);
        }
    }

}
