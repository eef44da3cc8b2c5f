//! `stream_event` frames: assembling a response while it streams (the hot path).

use bridge_protocol::{
    AbandonedBlocks, ContentBlock, ContentDelta, MessageStartEvent, StopReason, StreamEvent,
    StreamEventMessage,
};
use serde_json::{Map, Value};

use super::Session;
use super::assistant::block_of;
use crate::state::item::{Block, Slot, ToolStatus};

/// The parts of a stream event this model reads.
enum Ev<'a> {
    Start(&'a ContentBlock),
    Delta(&'a ContentDelta),
    Stop,
    MessageDelta(Option<&'a StopReason>),
    MessageStop(Option<&'a AbandonedBlocks>),
}

impl Session {
    pub(super) fn on_stream_event(&mut self, m: &StreamEventMessage) {
        let parent = m.parent_tool_use_id.clone();
        let (ev, index) = match &m.event {
            StreamEvent::MessageStart(start) => return self.on_message_start(m, start),
            StreamEvent::ContentBlockStart(e) => (Ev::Start(&e.content_block), e.index),
            StreamEvent::ContentBlockDelta(e) => (Ev::Delta(&e.delta), e.index),
            StreamEvent::ContentBlockStop(e) => (Ev::Stop, e.index),
            StreamEvent::MessageDelta(e) => (Ev::MessageDelta(e.delta.stop_reason.as_ref()), 0),
            StreamEvent::MessageStop(e) => (Ev::MessageStop(e.abandoned_blocks.as_ref()), 0),
            // Keep-alive pings and stream errors change nothing here: an error is followed by the
            // CLI's synthesized message_stop (abandoned blocks) or a retry.
            StreamEvent::Ping(_) | StreamEvent::Error(_) | StreamEvent::Unknown(_) => return,
        };
        let Some(message_id) = m
            .api_message_id
            .clone()
            .or_else(|| self.current_stream.clone())
        else {
            return;
        };
        let key = format!("a:{message_id}");
        match ev {
            Ev::Start(cb) => {
                let key = self.ensure_assistant(&message_id, parent);
                let (block, tool) = block_of(cb);
                let a = self.assistant_mut(&key).expect("ensured");
                if a.blocks.iter().any(|sl| sl.index == Some(index)) {
                    return;
                }
                // Its durable frame came first (a scale-out gateway relays live frames and the
                // log on separate paths, so deltas can arrive after the message they built): the
                // block is that durable one, and the late stream must not show it a second time.
                if !matches!(block, Block::ToolUse(_))
                    && let Some(sl) = a.blocks.iter_mut().find(|sl| {
                        sl.durable
                            && sl.index.is_none()
                            && std::mem::discriminant(&sl.block) == std::mem::discriminant(&block)
                    })
                {
                    sl.index = Some(index);
                    return;
                }
                self.mark_streaming(&key);
                let a = self.assistant_mut(&key).expect("ensured");
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
                if let Some(t) = tool {
                    self.ensure_tool(t.id, t.name, &key);
                }
                self.touch(&key);
            }
            Ev::Delta(delta) => {
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
                match (delta, &mut slot.block) {
                    (ContentDelta::Text(d), Block::Text(t)) => t.push_str(&d.text),
                    (ContentDelta::Thinking(d), Block::Thinking(t)) => t.push_str(&d.thinking),
                    (ContentDelta::InputJson(d), Block::ToolUse(id)) => {
                        let id = id.clone();
                        if let Some(tool) = self.tools.get_mut(&id)
                            && !tool.input_complete
                        {
                            tool.partial_json.push_str(&d.partial_json);
                        }
                    }
                    // Signatures, citations and compaction deltas are not shown while streaming
                    // (the durable block carries them); a delta for another kind of block is stale.
                    (
                        ContentDelta::Text(_)
                        | ContentDelta::Thinking(_)
                        | ContentDelta::InputJson(_)
                        | ContentDelta::Signature(_)
                        | ContentDelta::Citations(_)
                        | ContentDelta::Compaction(_)
                        | ContentDelta::Unknown(_),
                        _,
                    ) => return,
                }
                self.touch(&key);
            }
            Ev::Stop => {
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
                                crate::state::partial_json::repair(&tool.partial_json)
                                    .unwrap_or_default()
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
            Ev::MessageDelta(reason) => {
                if let Some(reason) = reason
                    && let Some(a) = self.assistant_mut(&key)
                {
                    a.stop_reason = Some(reason.as_str().to_string());
                    self.touch(&key);
                }
            }
            Ev::MessageStop(on_event) => {
                let abandoned = m.abandoned_blocks.as_ref().or(on_event);
                let mut target = key.clone();
                if let Some(ab) = abandoned {
                    target = format!("a:{}", ab.api_message_id);
                    self.abandon(&target, ab.from_block_index);
                }
                if target != key {
                    self.finish_stream(&key);
                }
                self.finish_stream(&target);
                if self.current_stream.as_deref() == Some(&message_id) {
                    self.current_stream = None;
                }
            }
        }
    }

    fn on_message_start(&mut self, m: &StreamEventMessage, start: &MessageStartEvent) {
        let parent = m.parent_tool_use_id.clone();
        let id = if start.message.id.is_empty() {
            m.api_message_id
                .clone()
                .unwrap_or_else(|| format!("stream-{}", self.counter + 1))
        } else {
            start.message.id.clone()
        };
        if parent.is_none() {
            self.turn_running = true;
        }
        let key = self.ensure_assistant(&id, parent);
        self.mark_streaming(&key);
        if let Some(a) = self.assistant_mut(&key) {
            a.model = Some(start.message.model.clone());
        }
        self.current_stream = Some(id);
        self.touch(&key);
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
