//! A comparable description of what the transcript shows (for tests).

use super::*;

impl Session {
    // ------------------------------------------------------------------ snapshot

    /// A comparable description of everything the transcript shows (rows in order, nested rows,
    /// tool cards, pending prompts, state). Two sessions that show the same thing have equal snapshots,
    /// whatever their history (e.g. with or without the streamed deltas).
    pub fn snapshot(&self) -> Value {
        let rows: Vec<Value> = self
            .order
            .iter()
            .filter_map(|k| self.snapshot_item(k, 0))
            .collect();
        serde_json::json!({
            "rows": rows,
            "state": self.state().as_str(),
            "prompts": self.prompts.iter().map(|p| p.request_id.clone()).collect::<Vec<_>>(),
            "cost_total": self.cost.total,
            "model": self.info.model,
            "permission_mode": self.info.permission_mode,
        })
    }

    pub(super) fn snapshot_item(&self, key: &str, depth: usize) -> Option<Value> {
        let item = self.items.get(key)?;
        if depth > 32 {
            return None;
        }
        Some(match &item.kind {
            ItemKind::User(m) => serde_json::json!({
                "role": "user", "uuid": m.uuid, "text": m.text, "origin": format!("{:?}", m.origin),
                "send": m.send.as_str(), "coalesced": m.coalesced,
            }),
            ItemKind::Assistant(a) => {
                let blocks: Vec<Value> = a
                    .blocks
                    .iter()
                    .map(|sl| match &sl.block {
                        Block::Text(t) => serde_json::json!({"text": t}),
                        Block::Thinking(t) => serde_json::json!({"thinking": t}),
                        Block::RedactedThinking => serde_json::json!({"redacted_thinking": true}),
                        Block::Other(v) => serde_json::json!({"other": v}),
                        Block::ToolUse(id) => match self.tools.get(id) {
                            Some(t) => serde_json::json!({
                                "tool": t.name, "id": t.id, "status": t.status.as_str(),
                                "input": t.display_input(), "edited": t.edited(),
                                "output": t.output.as_ref().map(|o| (&o.text, o.is_error)),
                                "deny_message": t.deny_message,
                                "children": t.children.iter().filter_map(|c| self.snapshot_item(c, depth + 1)).collect::<Vec<_>>(),
                            }),
                            None => serde_json::json!({"tool_missing": id}),
                        },
                    })
                    .collect();
                serde_json::json!({
                    "role": "assistant", "uuid": a.uuid, "message_id": a.message_id, "streaming": a.streaming,
                    "error": a.error, "blocks": blocks,
                })
            }
            ItemKind::System(sr) => {
                serde_json::json!({"role": "system", "uuid": sr.uuid, "kind": format!("{:?}", sr.kind)})
            }
            ItemKind::Result(r) => serde_json::json!({
                "role": "result", "uuid": r.uuid, "subtype": r.subtype, "is_error": r.is_error,
                "turn_cost": r.turn_cost, "session_cost": r.session_cost, "errors": r.errors,
            }),
            ItemKind::Raw(r) => {
                serde_json::json!({"role": "raw", "uuid": r.uuid, "label": r.label})
            }
        })
    }
}
