//! `assistant` frames: the durable blocks of a model response.

use super::*;

impl Session {
    // ------------------------------------------------------------------ internals: assistant

    pub(super) fn ensure_assistant(&mut self, message_id: &str, parent: Option<String>) -> Key {
        let key = format!("a:{message_id}");
        if !self.items.contains_key(&key) {
            // A new API message closes any older one still marked streaming.
            self.close_streaming(parent.as_deref());
            self.insert_item(Item {
                key: key.clone(),
                rev: 0,
                parent,
                kind: ItemKind::Assistant(AssistantMsg {
                    message_id: message_id.to_string(),
                    uuid: None,
                    model: None,
                    blocks: Vec::new(),
                    streaming: false,
                    stop_reason: None,
                    error: None,
                }),
            });
        }
        key
    }

    pub(super) fn assistant_mut(&mut self, key: &str) -> Option<&mut AssistantMsg> {
        match self.items.get_mut(key) {
            Some(Item {
                kind: ItemKind::Assistant(a),
                ..
            }) => Some(a),
            _ => None,
        }
    }

    /// Ends the streaming state of every assistant row (of one parent, or all).
    pub(super) fn close_streaming(&mut self, parent: Option<&str>) {
        let keys: Vec<Key> = self
            .items
            .values()
            .filter(|i| matches!(&i.kind, ItemKind::Assistant(a) if a.streaming))
            .filter(|i| parent.is_none() || i.parent.as_deref() == parent)
            .map(|i| i.key.clone())
            .collect();
        for key in keys {
            if let Some(a) = self.assistant_mut(&key) {
                a.streaming = false;
                for slot in &mut a.blocks {
                    slot.open = false;
                }
            }
            self.touch(&key);
        }
    }

    pub(super) fn on_assistant(&mut self, v: &Value) {
        let Some(msg) = v.get("message") else {
            return self.push_raw(v);
        };
        let uuid = s(v, "uuid").map(str::to_string);
        let message_id = s(msg, "id")
            .map(str::to_string)
            .or_else(|| uuid.clone())
            .unwrap_or_default();
        let parent = s(v, "parent_tool_use_id").map(str::to_string);
        if parent.is_none() {
            self.turn_running = true;
        }
        if parent.is_none()
            && let Some(usage) = msg.get("usage")
        {
            let tokens = [
                "input_tokens",
                "cache_read_input_tokens",
                "cache_creation_input_tokens",
                "output_tokens",
            ]
            .iter()
            .filter_map(|k| u(usage, k))
            .sum();
            self.agent_info.observe_usage(tokens);
        }
        let key = self.ensure_assistant(&message_id, parent);
        let mut new_tools: Vec<(String, String, Value)> = Vec::new();
        {
            let a = self.assistant_mut(&key).expect("ensured");
            if a.uuid.is_none() {
                a.uuid = uuid;
            }
            if let Some(m) = s(msg, "model") {
                a.model = Some(m.to_string());
            }
            if let Some(e) = s(v, "error") {
                a.error = Some(e.to_string());
            }
            if let Some(r) = s(msg, "stop_reason") {
                a.stop_reason = Some(r.to_string());
            }
            let blocks = msg
                .get("content")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            for b in &blocks {
                match s(b, "type").unwrap_or_default() {
                    "tool_use" | "server_tool_use" | "mcp_tool_use" => {
                        let id = s(b, "id").unwrap_or_default().to_string();
                        let name = s(b, "name").unwrap_or("tool").to_string();
                        match a
                            .blocks
                            .iter_mut()
                            .find(|sl| sl.block == Block::ToolUse(id.clone()))
                        {
                            Some(slot) => {
                                slot.durable = true;
                                slot.open = false;
                            }
                            None => a.blocks.push(Slot {
                                index: None,
                                durable: true,
                                open: false,
                                block: Block::ToolUse(id.clone()),
                            }),
                        }
                        new_tools.push((
                            id,
                            name,
                            b.get("input").cloned().unwrap_or(Value::Object(Map::new())),
                        ));
                    }
                    "text" => {
                        let text = s(b, "text").unwrap_or_default().to_string();
                        replace_or_push(&mut a.blocks, Block::Text(text), |bl| {
                            matches!(bl, Block::Text(_))
                        });
                    }
                    "thinking" => {
                        let text = s(b, "thinking").unwrap_or_default().to_string();
                        replace_or_push(&mut a.blocks, Block::Thinking(text), |bl| {
                            matches!(bl, Block::Thinking(_))
                        });
                    }
                    "redacted_thinking" => {
                        replace_or_push(&mut a.blocks, Block::RedactedThinking, |bl| {
                            matches!(bl, Block::RedactedThinking)
                        })
                    }
                    _ => {
                        let other = Block::Other(b.clone());
                        if !a.blocks.iter().any(|sl| sl.block == other) {
                            a.blocks.push(Slot {
                                index: None,
                                durable: true,
                                open: false,
                                block: other,
                            });
                        }
                    }
                }
            }
        }
        for (id, name, input) in new_tools {
            let tool = self.ensure_tool(&id, &name, &key);
            tool.name = name;
            tool.owner = key.clone();
            tool.input = input;
            tool.input_complete = true;
            tool.partial_json.clear();
            if tool.status == ToolStatus::Streaming {
                tool.status = ToolStatus::Running;
            }
        }
        self.touch(&key);
    }

}


/// Puts a durable block in place of the streamed block it completes (the open one of the same kind,
/// else the first unconfirmed one of that kind), or appends it.
fn replace_or_push(blocks: &mut Vec<Slot>, block: Block, same_kind: impl Fn(&Block) -> bool) {
    let pos = blocks
        .iter()
        .position(|sl| !sl.durable && sl.open && same_kind(&sl.block))
        .or_else(|| {
            blocks
                .iter()
                .position(|sl| !sl.durable && same_kind(&sl.block))
        });
    match pos {
        Some(i) => {
            let slot = &mut blocks[i];
            slot.block = block;
            slot.durable = true;
            slot.open = false;
        }
        None => blocks.push(Slot {
            index: None,
            durable: true,
            open: false,
            block,
        }),
    }
}
