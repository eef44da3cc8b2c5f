//! Tool calls: their results and progress.

use bridge_protocol::{
    ContentBlock, MessageContent, ToolProgressMessage, ToolResultBlock, UserMessage,
};
use serde_json::{Map, Value};

use super::Session;
use crate::state::item::{
    AssistantMsg, Block, Item, ItemKind, Slot, ToolCall, ToolOutput, ToolStatus,
};
use crate::state::prompt::SettledBy;
use crate::state::tasks;

/// Text of a `tool_result.content`: its text; images and tool references named in brackets; other
/// blocks as JSON.
fn result_text(content: Option<&MessageContent>) -> String {
    let Some(content) = content else {
        return String::new();
    };
    match content {
        MessageContent::Text(t) => t.clone(),
        MessageContent::Blocks(blocks) => blocks
            .iter()
            .map(|b| match b {
                ContentBlock::Text(t) => t.text.clone(),
                ContentBlock::Image(_) => "[image]".to_string(),
                ContentBlock::ToolReference(r) => format!("[tool: {}]", r.tool_name),
                other => serde_json::to_string(other).unwrap_or_default(),
            })
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

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

    pub(super) fn on_tool_result(&mut self, block: &ToolResultBlock, frame: &UserMessage) {
        let id = block.tool_use_id.as_str();
        let text = result_text(block.content.as_ref());
        let is_error = block.is_error();
        let rejected = frame.tool_result_meta.as_ref().is_some_and(|metas| {
            metas.iter().any(|m| {
                m.id == id
                    && m.permission_decision
                        .as_ref()
                        .is_some_and(|d| d.decision == "reject")
            })
        });
        if !self.tools.contains_key(id) {
            // A result whose call we never saw (history cut short): give it a row of its own.
            let key = format!("a:orphan:{id}");
            let parent = frame.parent_tool_use_id.clone();
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
        let structured = frame.tool_use_result.clone();
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

    pub(super) fn on_tool_progress(&mut self, v: &ToolProgressMessage) {
        let id = v.tool_use_id.as_str();
        if let Some(tool) = self.tools.get_mut(id) {
            tool.progress_secs = v.elapsed_time_seconds.as_f64();
            if tool.status == ToolStatus::Streaming {
                tool.status = ToolStatus::Running;
            }
            self.touch_tool(id);
        }
    }
}
