//! `assistant` frames: the durable blocks of a model response.

use bridge_protocol::{AssistantMessage, ContentBlock};
use serde_json::Value;

use super::Session;
use crate::state::item::{AssistantMsg, Block, Item, ItemKind, Key, Slot, ToolStatus};

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

    /// Marks the assistant row `key` streaming.
    pub(super) fn mark_streaming(&mut self, key: &Key) {
        if let Some(a) = self.assistant_mut(key) {
            a.streaming = true;
            if !self.streaming_rows.contains(key) {
                self.streaming_rows.push(key.clone());
            }
        }
    }

    /// Ends the streaming state of every assistant row (of one parent, or all).
    pub(super) fn close_streaming(&mut self, parent: Option<&str>) {
        let rows = std::mem::take(&mut self.streaming_rows);
        for key in rows {
            let Some(item) = self.items.get_mut(&key) else {
                continue;
            };
            let ItemKind::Assistant(a) = &mut item.kind else {
                continue;
            };
            if !a.streaming {
                continue;
            }
            if parent.is_some() && item.parent.as_deref() != parent {
                self.streaming_rows.push(key);
                continue;
            }
            a.streaming = false;
            for slot in &mut a.blocks {
                slot.open = false;
            }
            self.touch(&key);
        }
    }

    pub(super) fn on_assistant(&mut self, m: &AssistantMessage) {
        let msg = &m.message;
        let uuid = Some(m.uuid.clone());
        let message_id = if msg.id.is_empty() {
            m.uuid.clone()
        } else {
            msg.id.clone()
        };
        let parent = m.parent_tool_use_id.clone();
        if parent.is_none() {
            self.turn_running = true;
            let u = &msg.usage;
            self.agent_info.observe_usage(
                u.input_tokens + u.cache_read() + u.cache_creation() + u.output_tokens,
            );
        }
        let key = self.ensure_assistant(&message_id, parent);
        let mut new_tools: Vec<(String, String, Value)> = Vec::new();
        {
            let a = self.assistant_mut(&key).expect("ensured");
            if a.uuid.is_none() {
                a.uuid = uuid;
            }
            a.model = Some(msg.model.clone());
            if let Some(e) = &m.error {
                a.error = Some(e.as_str().to_string());
            }
            if let Some(r) = &msg.stop_reason {
                a.stop_reason = Some(r.as_str().to_string());
            }
            for b in &msg.content {
                let (block, tool) = block_of(b);
                match block {
                    Block::ToolUse(id) => {
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
                        if let Some(t) = tool {
                            new_tools.push((id, t.name.to_string(), t.input.clone()));
                        }
                    }
                    Block::Text(_) => {
                        replace_or_push(&mut a.blocks, block, |bl| matches!(bl, Block::Text(_)))
                    }
                    Block::Thinking(_) => {
                        replace_or_push(&mut a.blocks, block, |bl| matches!(bl, Block::Thinking(_)))
                    }
                    Block::RedactedThinking => replace_or_push(&mut a.blocks, block, |bl| {
                        matches!(bl, Block::RedactedThinking)
                    }),
                    Block::Other(_) => {
                        if !a.blocks.iter().any(|sl| sl.block == block) {
                            a.blocks.push(Slot {
                                index: None,
                                durable: true,
                                open: false,
                                block,
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

/// A tool call a content block starts.
pub(super) struct ToolStart<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub input: &'a Value,
}

/// What the transcript shows for a content block; and the tool call, for the tool-use kinds.
pub(super) fn block_of(cb: &ContentBlock) -> (Block, Option<ToolStart<'_>>) {
    fn tool<'a>(id: &'a str, name: &'a str, input: &'a Value) -> (Block, Option<ToolStart<'a>>) {
        (
            Block::ToolUse(id.to_string()),
            Some(ToolStart { id, name, input }),
        )
    }
    match cb {
        ContentBlock::Text(t) => (Block::Text(t.text.clone()), None),
        ContentBlock::Thinking(t) => (Block::Thinking(t.thinking.clone()), None),
        ContentBlock::RedactedThinking(_) => (Block::RedactedThinking, None),
        ContentBlock::ToolUse(b) => tool(&b.id, &b.name, &b.input),
        ContentBlock::ServerToolUse(b) => tool(&b.id, &b.name, &b.input),
        ContentBlock::McpToolUse(b) => tool(&b.id, &b.name, &b.input),
        // Results, documents and blocks this console does not draw are shown as their JSON.
        ContentBlock::ToolResult(_)
        | ContentBlock::WebSearchToolResult(_)
        | ContentBlock::WebFetchToolResult(_)
        | ContentBlock::AdvisorToolResult(_)
        | ContentBlock::CodeExecutionToolResult(_)
        | ContentBlock::BashCodeExecutionToolResult(_)
        | ContentBlock::TextEditorCodeExecutionToolResult(_)
        | ContentBlock::ToolSearchToolResult(_)
        | ContentBlock::McpToolResult(_)
        | ContentBlock::ContainerUpload(_)
        | ContentBlock::Compaction(_)
        | ContentBlock::Fallback(_)
        | ContentBlock::McpToolListing(_)
        | ContentBlock::Image(_)
        | ContentBlock::Document(_)
        | ContentBlock::SearchResult(_)
        | ContentBlock::ToolReference(_)
        | ContentBlock::Unknown(_) => (
            Block::Other(serde_json::to_value(cb).unwrap_or(Value::Null)),
            None,
        ),
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
