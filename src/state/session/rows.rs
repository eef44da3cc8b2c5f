//! The rows of the transcript: inserting, touching (revisions), removing, raw and system rows.

use super::*;

impl Session {
    // ------------------------------------------------------------------ internals: rows

    pub(super) fn bump(&mut self) {
        self.rev += 1;
    }

    pub(super) fn next_id(&mut self) -> u64 {
        self.counter += 1;
        self.counter
    }

    pub(super) fn notice(&mut self, text: String) {
        let id = self.next_id();
        self.notices.push(Notice { id, text });
        if self.notices.len() > 20 {
            self.notices.remove(0);
        }
        self.bump();
    }

    /// Marks a row (and the rows it is nested in) changed.
    pub(super) fn touch(&mut self, key: &str) {
        self.rev += 1;
        let rev = self.rev;
        let mut key = key.to_string();
        for _ in 0..64 {
            let Some(item) = self.items.get_mut(&key) else {
                return;
            };
            item.rev = rev;
            match item.parent.as_ref().and_then(|p| self.tools.get(p)) {
                Some(tool) if tool.owner != key && tool.children.contains(&key) => {
                    key = tool.owner.clone()
                }
                _ => return,
            }
        }
    }

    pub(super) fn touch_tool(&mut self, id: &str) {
        if let Some(owner) = self.tools.get(id).map(|t| t.owner.clone()) {
            self.touch(&owner);
        }
    }

    /// Inserts a new row at the end of its parent (a subagent tool call) or of the transcript.
    pub(super) fn insert_item(&mut self, item: Item) {
        let key = item.key.clone();
        let parent = item.parent.clone();
        self.items.insert(key.clone(), item);
        let nested = match parent.as_ref().and_then(|p| self.tools.get_mut(p)) {
            Some(tool) if tool.owner != key => {
                tool.children.push(key.clone());
                true
            }
            _ => false,
        };
        if !nested {
            self.order.push(key.clone());
            self.order_rev += 1;
        }
        self.touch(&key);
    }

    pub(super) fn remove_item(&mut self, key: &str) {
        let Some(item) = self.items.remove(key) else {
            return;
        };
        if let Some(tool) = item.parent.as_ref().and_then(|p| self.tools.get_mut(p))
            && let Some(pos) = tool.children.iter().position(|k| k == key)
        {
            tool.children.remove(pos);
            let owner = tool.owner.clone();
            self.touch(&owner);
            return;
        }
        if let Some(pos) = self.order.iter().position(|k| k == key) {
            self.order.remove(pos);
            self.order_rev += 1;
        }
        self.bump();
    }

    pub(super) fn frame_key(&mut self, prefix: &str, uuid: Option<&str>) -> Key {
        match uuid {
            Some(id) => format!("{prefix}:{id}"),
            None => format!("{prefix}:#{}", self.next_id()),
        }
    }

    /// Adds a system row for the frame with `uuid` (once), nested under `parent` if set.
    pub(super) fn push_system(
        &mut self,
        uuid: Option<&str>,
        parent: Option<&str>,
        kind: SystemKind,
    ) {
        let key = self.frame_key("s", uuid);
        if self.items.contains_key(&key) {
            return;
        }
        self.insert_item(Item {
            key,
            rev: 0,
            parent: parent.map(str::to_string),
            kind: ItemKind::System(SystemRow {
                uuid: uuid.map(str::to_string),
                kind,
            }),
        });
    }

    /// Shows a frame as it came: one this console does not know, or (with `error`) a known type
    /// whose body did not decode.
    pub(super) fn push_raw(&mut self, v: &Value, error: Option<&str>) {
        let uuid = v.get("uuid").and_then(Value::as_str);
        let key = self.frame_key("r", uuid);
        if self.items.contains_key(&key) {
            return;
        }
        let str_at = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        let ty = str_at(v, "type").unwrap_or_else(|| "(no type)".into());
        let sub =
            str_at(v, "subtype").or_else(|| v.get("request").and_then(|r| str_at(r, "subtype")));
        let mut label = match sub {
            Some(sub) => format!("{ty}/{sub}"),
            None => ty,
        };
        if let Some(e) = error {
            label.push_str(&format!(" (could not read: {e})"));
        }
        let json = serde_json::to_string_pretty(v).unwrap_or_default();
        self.insert_item(Item {
            key,
            rev: 0,
            parent: None,
            kind: ItemKind::Raw(RawRow {
                uuid: uuid.map(str::to_string),
                label,
                json,
            }),
        });
    }
}
