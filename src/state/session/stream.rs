//! `stream_event` frames: assembling a response while it streams (the hot path).

use super::*;

impl Session {
    pub(super) fn on_stream_event(&mut self, v: &Value) {
        let Some(ev) = v.get("event") else { return };
        let parent = s(v, "parent_tool_use_id").map(str::to_string);
        let et = s(ev, "type").unwrap_or_default();
        if et == "message_start" {
            let id = ev
                .get("message")
                .and_then(|m| s(m, "id"))
                .or_else(|| s(v, "api_message_id"))
                .map(str::to_string)
                .unwrap_or_else(|| format!("stream-{}", self.counter + 1));
            if parent.is_none() {
                self.turn_running = true;
            }
            let key = self.ensure_assistant(&id, parent);
            let model = ev
                .get("message")
                .and_then(|m| s(m, "model"))
                .map(str::to_string);
            if let Some(a) = self.assistant_mut(&key) {
                a.streaming = true;
                if model.is_some() {
                    a.model = model;
                }
            }
            self.current_stream = Some(id);
            self.touch(&key);
            return;
        }
        let Some(message_id) = s(v, "api_message_id")
            .map(str::to_string)
            .or_else(|| self.current_stream.clone())
        else {
            return;
        };
        let key = format!("a:{message_id}");
        let index = u(ev, "index");
        match et {
            "content_block_start" => {
                let Some(index) = index else { return };
                let key = self.ensure_assistant(&message_id, parent);
                let cb = ev.get("content_block").cloned().unwrap_or(Value::Null);
                let mut tool: Option<(String, String)> = None;
                let a = self.assistant_mut(&key).expect("ensured");
                if a.blocks.iter().any(|sl| sl.index == Some(index)) {
                    return;
                }
                a.streaming = true;
                let block = match s(&cb, "type").unwrap_or_default() {
                    "text" => Block::Text(s(&cb, "text").unwrap_or_default().to_string()),
                    "thinking" => {
                        Block::Thinking(s(&cb, "thinking").unwrap_or_default().to_string())
                    }
                    "redacted_thinking" => Block::RedactedThinking,
                    "tool_use" | "server_tool_use" | "mcp_tool_use" => {
                        let id = s(&cb, "id").unwrap_or_default().to_string();
                        tool = Some((id.clone(), s(&cb, "name").unwrap_or("tool").to_string()));
                        Block::ToolUse(id)
                    }
                    _ => Block::Other(cb.clone()),
                };
                if let Block::ToolUse(id) = &block
                    && a.blocks
                        .iter()
                        .any(|sl| sl.block == Block::ToolUse(id.clone()))
                {
                    return;
                }
                a.blocks.push(Slot {
                    index: Some(index),
                    durable: false,
                    open: true,
                    block,
                });
                if let Some((id, name)) = tool {
                    self.ensure_tool(&id, &name, &key);
                }
                self.touch(&key);
            }
            "content_block_delta" => {
                let Some(index) = index else { return };
                let Some(delta) = ev.get("delta") else { return };
                let Some(a) = self.assistant_mut(&key) else {
                    return;
                };
                let Some(slot) = a
                    .blocks
                    .iter_mut()
                    .find(|sl| sl.index == Some(index) && !sl.durable)
                else {
                    return;
                };
                match (s(delta, "type").unwrap_or_default(), &mut slot.block) {
                    ("text_delta", Block::Text(t)) => {
                        t.push_str(s(delta, "text").unwrap_or_default())
                    }
                    ("thinking_delta", Block::Thinking(t)) => {
                        t.push_str(s(delta, "thinking").unwrap_or_default())
                    }
                    ("input_json_delta", Block::ToolUse(id)) => {
                        let id = id.clone();
                        if let Some(tool) = self.tools.get_mut(&id)
                            && !tool.input_complete
                        {
                            tool.partial_json
                                .push_str(s(delta, "partial_json").unwrap_or_default());
                        }
                    }
                    _ => return,
                }
                self.touch(&key);
            }
            "content_block_stop" => {
                let Some(index) = index else { return };
                let Some(a) = self.assistant_mut(&key) else {
                    return;
                };
                let Some(slot) = a.blocks.iter_mut().find(|sl| sl.index == Some(index)) else {
                    return;
                };
                slot.open = false;
                if let Block::ToolUse(id) = &slot.block {
                    let id = id.clone();
                    if let Some(tool) = self.tools.get_mut(&id)
                        && !tool.input_complete
                    {
                        tool.input = if tool.partial_json.trim().is_empty() {
                            Value::Object(Map::new())
                        } else {
                            serde_json::from_str(&tool.partial_json).unwrap_or_else(|_| {
                                crate::state::partial_json::repair(&tool.partial_json).unwrap_or_default()
                            })
                        };
                        tool.input_complete = true;
                        tool.partial_json.clear();
                        if tool.status == ToolStatus::Streaming {
                            tool.status = ToolStatus::Running;
                        }
                    }
                }
                self.touch(&key);
            }
            "message_delta" => {
                let reason = ev
                    .get("delta")
                    .and_then(|d| s(d, "stop_reason"))
                    .map(str::to_string);
                if let Some(a) = self.assistant_mut(&key)
                    && reason.is_some()
                {
                    a.stop_reason = reason;
                    self.touch(&key);
                }
            }
            "message_stop" => {
                let abandoned = v
                    .get("abandoned_blocks")
                    .or_else(|| ev.get("abandoned_blocks"));
                let mut target = key.clone();
                let mut from: Option<u64> = None;
                if let Some(ab) = abandoned {
                    from = u(ab, "from_block_index");
                    if let Some(id) = s(ab, "api_message_id") {
                        target = format!("a:{id}");
                    }
                }
                if let Some(from) = from {
                    self.abandon(&target, from);
                }
                if target != key {
                    self.finish_stream(&key);
                }
                self.finish_stream(&target);
                if self.current_stream.as_deref() == Some(&message_id) {
                    self.current_stream = None;
                }
            }
            _ => {}
        }
    }

    /// Drops streamed blocks (that no durable frame confirmed) from `from` on.
    pub(super) fn abandon(&mut self, key: &str, from: u64) {
        let mut dropped_tools = Vec::new();
        let Some(a) = self.assistant_mut(key) else {
            return;
        };
        a.blocks.retain(|sl| {
            let drop = !sl.durable && sl.index.is_some_and(|i| i >= from);
            if drop && let Block::ToolUse(id) = &sl.block {
                dropped_tools.push(id.clone());
            }
            !drop
        });
        for id in dropped_tools {
            self.tools.remove(&id);
        }
        self.touch(key);
    }

    pub(super) fn finish_stream(&mut self, key: &str) {
        let Some(a) = self.assistant_mut(key) else {
            return;
        };
        a.streaming = false;
        for slot in &mut a.blocks {
            slot.open = false;
        }
        // A streamed message that kept nothing (e.g. cut off at block 0 by a stream error) leaves no row.
        if a.blocks.is_empty() {
            self.remove_item(key);
        } else {
            self.touch(key);
        }
    }

}
