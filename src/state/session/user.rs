//! `user` frames: prompts, their echoes and command lifecycle.

use super::*;

impl Session {
    // ------------------------------------------------------------------ internals: user

    pub(super) fn on_user(&mut self, source: Source, v: &Value) {
        let content = v
            .get("message")
            .and_then(|m| m.get("content"))
            .unwrap_or(&Value::Null);
        if let Some(blocks) = content.as_array() {
            for b in blocks
                .iter()
                .filter(|b| s(b, "type") == Some("tool_result"))
            {
                self.on_tool_result(b, v);
            }
        }
        let (text, images) = content_text(content);
        if text.is_empty() && images.is_empty() {
            return;
        }
        let parent = s(v, "parent_tool_use_id").map(str::to_string);
        let is_replay = v.get("isReplay").and_then(Value::as_bool).unwrap_or(false);
        let synthetic = v
            .get("isSynthetic")
            .and_then(Value::as_bool)
            .unwrap_or(false)
            || text.starts_with("[Request interrupted");
        let origin = if parent.is_some() {
            UserOrigin::SubagentPrompt
        } else if synthetic {
            UserOrigin::Synthetic
        } else if text.contains("<local-command-") || text.starts_with("<command-name>") {
            UserOrigin::LocalCommand
        } else {
            UserOrigin::Prompt
        };
        let key = self.frame_key("u", v);
        let timestamp = s(v, "timestamp").map(str::to_string);
        let echo = is_replay || source == Source::Client;
        if let Some(Item {
            kind: ItemKind::User(m),
            ..
        }) = self.items.get_mut(&key)
        {
            if echo || source == Source::Worker {
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
        if origin == UserOrigin::Prompt && parent.is_none() && source != Source::Client {
            self.turn_running = true;
        }
        self.insert_item(Item {
            key,
            rev: 0,
            parent,
            kind: ItemKind::User(UserMsg {
                uuid: s(v, "uuid").unwrap_or_default().to_string(),
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

    pub(super) fn on_lifecycle(&mut self, v: &Value) {
        let (Some(cmd), Some(state)) = (s(v, "command_uuid"), s(v, "state")) else {
            return;
        };
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
