//! Prompts the person sent that the relay has not accepted yet, kept in the browser's `localStorage`
//! per session, so a reload (or a crashed tab) while offline loses nothing. Each keeps its uuid: when
//! the session is opened again it is shown and sent again with the same uuid, and the relay drops a
//! prompt it already has.
//!
//! The list itself is plain JSON (`[{"uuid","text"}]`), edited by pure functions tested natively;
//! only [`load`], [`remember`] and [`forget`] touch the browser.

use serde_json::{Value, json};

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
    let mut list = stored.map(parse).unwrap_or_default();
    if !list.iter().any(|(u, _)| u == uuid) {
        list.push((uuid.to_string(), text.to_string()));
    }
    render(&list)
}

/// The list without `uuid`; `None` when nothing is left (the key is then removed).
pub fn without(stored: &str, uuid: &str) -> Option<String> {
    let list: Vec<_> = parse(stored)
        .into_iter()
        .filter(|(u, _)| u != uuid)
        .collect();
    (!list.is_empty()).then(|| render(&list))
}

fn render(list: &[(String, String)]) -> String {
    Value::Array(
        list.iter()
            .map(|(u, t)| json!({"uuid": u, "text": t}))
            .collect(),
    )
    .to_string()
}

#[cfg(target_arch = "wasm32")]
fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok().flatten()
}

/// The session's unsent prompts, oldest first.
pub fn load(session_id: &str) -> Vec<(String, String)> {
    #[cfg(target_arch = "wasm32")]
    if let Some(s) = storage() {
        return s
            .get_item(&key(session_id))
            .ok()
            .flatten()
            .map(|v| parse(&v))
            .unwrap_or_default();
    }
    let _ = session_id;
    Vec::new()
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
