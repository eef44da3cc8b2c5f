//! Prompts the person sent that the relay has not accepted yet, kept in the browser's `localStorage`
//! per session, so a reload (or a crashed tab) while offline loses nothing. Each keeps its uuid: when
//! the session is opened again it is shown and sent again with the same uuid, and the relay drops a
//! prompt it already has.
//!
//! The list itself is plain JSON (`[{"uuid","text","attachments"?,"queued"?,"dropped"?}]`), edited by
//! pure functions tested natively; only [`load`], [`load_entries`], [`remember`], [`remember_entry`],
//! [`replace_entry`] and [`forget`] touch the browser.
//!
//! Follow-ups queued behind a running turn are kept here too (`queued: true`) with their uuid, so a
//! reload puts them back in the queue and never sends one twice. Attachments are kept when
//! `localStorage` has room (about 5 MB per origin): when it has not, the entry is kept without them
//! and says how many were dropped, and the console tells the person after the reload.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::state::Attachment;

/// One kept message.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// Its uuid.
    pub uuid: String,
    /// What was typed.
    pub text: String,
    /// Its attachments (those that fitted in storage).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<Attachment>,
    /// Waiting in the queue for the running turn to end (not sent yet).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub queued: bool,
    /// Attachments that did not fit in storage (lost if the page is reloaded).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub dropped: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The entries of a stored list, in order; anything unreadable is skipped.
pub fn parse_entries(stored: &str) -> Vec<Entry> {
    let Ok(Value::Array(items)) = serde_json::from_str::<Value>(stored) else {
        return Vec::new();
    };
    items
        .into_iter()
        .filter_map(|v| serde_json::from_value(v).ok())
        .collect()
}

/// The list with `entry` added at the end, or put in place of the entry with its uuid.
pub fn with_entry(stored: Option<&str>, entry: &Entry) -> String {
    let mut list = stored.map(parse_entries).unwrap_or_default();
    match list.iter_mut().find(|e| e.uuid == entry.uuid) {
        Some(e) => *e = entry.clone(),
        None => list.push(entry.clone()),
    }
    render_entries(&list)
}

fn render_entries(list: &[Entry]) -> String {
    serde_json::to_string(list).unwrap_or_else(|_| "[]".into())
}

/// The storage key of a session's unsent prompts.
pub fn key(session_id: &str) -> String {
    format!("bridge-console.unsent.{session_id}")
}

/// The `(uuid, text)` pairs in a stored list; anything unreadable is skipped.
pub fn parse(stored: &str) -> Vec<(String, String)> {
    let Ok(Value::Array(items)) = serde_json::from_str::<Value>(stored) else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|v| {
            let uuid = v.get("uuid")?.as_str()?;
            let text = v.get("text")?.as_str()?;
            Some((uuid.to_string(), text.to_string()))
        })
        .collect()
}

/// The list with `(uuid, text)` added at the end (once).
pub fn with(stored: Option<&str>, uuid: &str, text: &str) -> String {
    let mut list = stored.map(parse_entries).unwrap_or_default();
    if !list.iter().any(|e| e.uuid == uuid) {
        list.push(Entry {
            uuid: uuid.to_string(),
            text: text.to_string(),
            ..Entry::default()
        });
    }
    render_entries(&list)
}

/// The list without `uuid`; `None` when nothing is left (the key is then removed).
pub fn without(stored: &str, uuid: &str) -> Option<String> {
    let list: Vec<_> = parse_entries(stored)
        .into_iter()
        .filter(|e| e.uuid != uuid)
        .collect();
    (!list.is_empty()).then(|| render_entries(&list))
}

#[cfg(target_arch = "wasm32")]
fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok().flatten()
}

/// The session's stored list, if storage has one.
fn stored(session_id: &str) -> Option<String> {
    #[cfg(target_arch = "wasm32")]
    if let Some(s) = storage() {
        return s.get_item(&key(session_id)).ok().flatten();
    }
    let _ = session_id;
    None
}

/// The session's kept messages, oldest first.
pub fn load_entries(session_id: &str) -> Vec<Entry> {
    stored(session_id)
        .map(|v| parse_entries(&v))
        .unwrap_or_default()
}

/// Keeps a message (adds it, or replaces the one with its uuid). When storage has no room for its
/// attachments it is kept without them (`dropped` says how many). Returns what was kept, or None
/// when storage is unavailable or full even for the text.
pub fn remember_entry(session_id: &str, entry: &Entry) -> Option<Entry> {
    #[cfg(target_arch = "wasm32")]
    if let Some(s) = storage() {
        let k = key(session_id);
        let old = s.get_item(&k).ok().flatten();
        if s.set_item(&k, &with_entry(old.as_deref(), entry)).is_ok() {
            return Some(entry.clone());
        }
        let lean = Entry {
            attachments: Vec::new(),
            dropped: entry.dropped + entry.attachments.len(),
            ..entry.clone()
        };
        return s
            .set_item(&k, &with_entry(old.as_deref(), &lean))
            .ok()
            .map(|()| lean);
    }
    let _ = (session_id, entry);
    None
}

/// The session's unsent prompts, oldest first.
pub fn load(session_id: &str) -> Vec<(String, String)> {
    stored(session_id).map(|v| parse(&v)).unwrap_or_default()
}

/// Keeps a prompt until the relay has it. Storage being full or disabled only loses this safety net.
pub fn remember(session_id: &str, uuid: &str, text: &str) {
    #[cfg(target_arch = "wasm32")]
    if let Some(s) = storage() {
        let k = key(session_id);
        let old = s.get_item(&k).ok().flatten();
        let _ = s.set_item(&k, &with(old.as_deref(), uuid, text));
    }
    let _ = (session_id, uuid, text);
}

/// Drops a prompt the relay accepted (or can never accept).
pub fn forget(session_id: &str, uuid: &str) {
    #[cfg(target_arch = "wasm32")]
    if let Some(s) = storage() {
        let k = key(session_id);
        if let Ok(Some(old)) = s.get_item(&k) {
            let _ = match without(&old, uuid) {
                Some(rest) => s.set_item(&k, &rest),
                None => s.remove_item(&k),
            };
        }
    }
    let _ = (session_id, uuid);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_keeps_order_holds_each_uuid_once_and_empties_to_none() {
        let one = with(None, "u1", "first <b>");
        let two = with(Some(&one), "u2", "second\nline");
        assert_eq!(with(Some(&two), "u1", "again"), two, "a uuid is kept once");
        assert_eq!(
            parse(&two),
            [
                ("u1".to_string(), "first <b>".to_string()),
                ("u2".to_string(), "second\nline".to_string())
            ]
        );
        let rest = without(&two, "u1").unwrap();
        assert_eq!(
            parse(&rest),
            [("u2".to_string(), "second\nline".to_string())]
        );
        assert_eq!(without(&rest, "u2"), None);
        assert_eq!(without(&rest, "nope").as_deref(), Some(rest.as_str()));
    }

    #[test]
    fn queued_messages_and_attachments_are_kept_and_old_lists_still_read() {
        use crate::state::{Attachment, AttachmentBody};
        let img = Attachment {
            id: "a".into(),
            name: "shot.png".into(),
            body: AttachmentBody::Image {
                media_type: "image/png".into(),
                data: "iVBORw0KGgo=".into(),
            },
            original_bytes: 8,
            downscaled: None,
        };
        let queued = Entry {
            uuid: "u2".into(),
            text: "later".into(),
            attachments: vec![img],
            queued: true,
            dropped: 0,
        };
        // A list written by an older console (no new fields) reads, and keeps reading the old way.
        let old = r#"[{"uuid":"u1","text":"first"}]"#;
        let both = with_entry(Some(old), &queued);
        assert_eq!(parse(&both).len(), 2);
        let entries = parse_entries(&both);
        assert_eq!(entries[0].text, "first");
        assert!(!entries[0].queued && entries[0].attachments.is_empty());
        assert_eq!(entries[1], queued);
        // Sending a queued message rewrites its entry in place (same uuid, same position).
        let sent = Entry {
            queued: false,
            ..queued.clone()
        };
        let after = parse_entries(&with_entry(Some(&both), &sent));
        assert_eq!(after.len(), 2);
        assert_eq!(after[1], sent);
        // Plain entries stay plain JSON.
        assert_eq!(with(None, "u", "t"), r#"[{"uuid":"u","text":"t"}]"#);
    }

    #[test]
    fn unreadable_storage_is_an_empty_list() {
        assert!(parse("not json").is_empty());
        assert!(parse(r#"{"uuid":"u"}"#).is_empty());
        assert_eq!(
            parse(r#"[{"uuid":"u","text":"t"},{"uuid":1},"x"]"#),
            [("u".to_string(), "t".to_string())]
        );
        assert_eq!(parse(&with(Some("garbage"), "u", "t")).len(), 1);
        assert_eq!(key("cse_1"), "bridge-console.unsent.cse_1");
    }
}
