//! `user` frames: prompts, their echoes and command lifecycle.

use bridge_protocol::{ContentBlock, MessageContent, UserMessage};

use super::{Session, Source};
use crate::state::attachment::UserImage;
use crate::state::item::{Item, ItemKind, SendState, UserMsg, UserOrigin};

/// Text of a message `content` (a string, or its text blocks one a line), skipping tool results;
/// and its images.
fn content_text(content: &MessageContent) -> (String, Vec<UserImage>) {
    match content {
        MessageContent::Text(t) => (t.clone(), Vec::new()),
        MessageContent::Blocks(blocks) => {
            let mut text = String::new();
            let mut images = Vec::new();
            for b in blocks {
                match b {
                    ContentBlock::Text(t) => {
                        if !text.is_empty() {
                            text.push('\n');
                        }
                        text.push_str(&t.text);
                    }
                    ContentBlock::Image(i) => images.push(UserImage::from_source(&i.source)),
                    _ => {}
                }
            }
            (text, images)
        }
    }
}

impl Session {
    // ------------------------------------------------------------------ internals: user

    pub(super) fn on_user(&mut self, source: &Source, v: &UserMessage) {
        let content = &v.message.content;
        for b in content.blocks() {
            if let ContentBlock::ToolResult(r) = b {
                self.on_tool_result(r, v);
            }
        }
        let (text, images) = content_text(content);
        if text.is_empty() && images.is_empty() {
            return;
        }
        let parent = v.parent_tool_use_id.clone();
        let is_replay = v.is_replay();
        let synthetic = v.is_synthetic() || text.starts_with("[Request interrupted");
        let origin = if parent.is_some() {
            UserOrigin::SubagentPrompt
        } else if synthetic {
            UserOrigin::Synthetic
        } else if text.contains("<local-command-") || text.starts_with("<command-name>") {
            UserOrigin::LocalCommand
        } else {
            UserOrigin::Prompt
        };
        let key = self.frame_key("u", v.uuid.as_deref());
        let timestamp = v.timestamp.clone();
        let echo = is_replay || *source == Source::Client;
        if let Some(Item {
            kind: ItemKind::User(m),
            ..
        }) = self.items.get_mut(&key)
        {
            if echo || *source == Source::Worker {
                m.send = SendState::Confirmed;
            }
            if timestamp.is_some() {
                m.timestamp = timestamp;
            }
            if text != m.text && text.ends_with(&format!("\n{}", m.text)) {
                m.coalesced = true;
            }
            if m.images.is_empty() && !images.is_empty() {
                m.images = images;
            }
            self.touch(&key);
            return;
        }
        let mut text = text;
        let mut coalesced = false;
        if is_replay
            && origin == UserOrigin::Prompt
            && let Some(prev) = self.last_prompt_text()
            && let Some(rest) = text.strip_prefix(&format!("{prev}\n"))
            && !rest.is_empty()
        {
            text = rest.to_string();
            coalesced = true;
        }
        if origin == UserOrigin::Prompt && parent.is_none() && *source != Source::Client {
            self.turn_running = true;
        }
        self.insert_item(Item {
            key,
            rev: 0,
            parent,
            kind: ItemKind::User(UserMsg {
                uuid: v.uuid.clone().unwrap_or_default(),
                text,
                images,
                origin,
                send: SendState::Confirmed,
                lifecycle: None,
                coalesced,
                timestamp,
            }),
        });
    }

    pub(super) fn last_prompt_text(&self) -> Option<String> {
        self.order
            .iter()
            .rev()
            .find_map(|k| match self.items.get(k) {
                Some(Item {
                    kind: ItemKind::User(m),
                    ..
                }) if m.origin == UserOrigin::Prompt => Some(m.text.clone()),
                _ => None,
            })
    }

    pub(super) fn on_lifecycle(&mut self, cmd: &str, state: &str) {
        let key = format!("u:{cmd}");
        if let Some(Item {
            kind: ItemKind::User(m),
            ..
        }) = self.items.get_mut(&key)
        {
            m.lifecycle = Some(state.to_string());
            if matches!(m.send, SendState::Pending | SendState::Sent) {
                m.send = SendState::Confirmed;
            }
            self.touch(&key);
        }
        if state == "started" {
            self.turn_running = true;
            self.bump();
        }
    }
}
