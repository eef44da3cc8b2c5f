//! Web Push: this device's subscription at the relay (controller only; observers get 403).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{NetError, enc, request_json};

/// One device in `GET /v1/push/subscriptions` (keys are never echoed).
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
pub struct PushDevice {
    /// The relay's id of the subscription.
    pub id: String,
    /// The device name given when it was enabled.
    #[serde(default)]
    pub label: Option<String>,
    /// The events it receives.
    #[serde(default)]
    pub events: Vec<String>,
    /// Only these sessions (empty: all).
    #[serde(default)]
    pub session_ids: Vec<String>,
    /// When it was enabled.
    #[serde(default)]
    pub created_at: Option<Value>,
    /// When a push last reached its push service.
    #[serde(default)]
    pub last_success_at: Option<Value>,
    /// The last delivery failure, if any.
    #[serde(default)]
    pub last_error: Option<Value>,
}

/// The devices in a `GET /v1/push/subscriptions` answer: the list under `subscriptions` (or
/// `devices`, `items`, or the answer itself if it is an array); entries without an id are skipped.
pub fn parse_push_devices(v: &Value) -> Vec<PushDevice> {
    let list = ["subscriptions", "devices", "items"]
        .iter()
        .find_map(|k| v.get(*k).and_then(Value::as_array))
        .or_else(|| v.as_array());
    list.map(|items| {
        items
            .iter()
            .filter_map(|d| serde_json::from_value::<PushDevice>(d.clone()).ok())
            .filter(|d| !d.id.is_empty())
            .collect()
    })
    .unwrap_or_default()
}

/// `GET /v1/push/vapid-public-key`: the relay's VAPID public key (base64url).
pub async fn vapid_public_key() -> Result<String, NetError> {
    let v = request_json("GET", "/v1/push/vapid-public-key", None).await?;
    v.get("key")
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| NetError::Decode("no key in the answer".into()))
}

/// `POST /v1/push/subscriptions`: registers (or updates, same endpoint) this browser's
/// subscription (`PushSubscription.toJSON()`) with a device name and events; returns its id.
pub async fn register_push(
    subscription: &Value,
    label: &str,
    events: &[String],
) -> Result<String, NetError> {
    let mut body = subscription.clone();
    if let Some(o) = body.as_object_mut() {
        o.insert("label".into(), Value::from(label));
        o.insert("events".into(), Value::from(events.to_vec()));
    }
    let v = request_json("POST", "/v1/push/subscriptions", Some(&body)).await?;
    v.get("id")
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| NetError::Decode("no id in the answer".into()))
}

/// `GET /v1/push/subscriptions`.
pub async fn list_push_devices() -> Result<Vec<PushDevice>, NetError> {
    let v = request_json("GET", "/v1/push/subscriptions", None).await?;
    Ok(parse_push_devices(&v))
}

/// `DELETE /v1/push/subscriptions/{id}`.
pub async fn remove_push_device(id: &str) -> Result<(), NetError> {
    request_json(
        "DELETE",
        &format!("/v1/push/subscriptions/{}", enc(id)),
        None,
    )
    .await
    .map(|_| ())
}

/// `POST /v1/push/subscriptions/{id}/test`: the relay's answer (what the push service said).
pub async fn test_push_device(id: &str) -> Result<Value, NetError> {
    request_json(
        "POST",
        &format!("/v1/push/subscriptions/{}/test", enc(id)),
        None,
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_device_lists_are_read_tolerantly() {
        let v = serde_json::json!({"subscriptions": [
            {"id": "a", "label": "Chrome on Android", "events": ["needs_you", "resolved"],
             "created_at": "2025-01-01T00:00:00Z", "last_error": null, "future_field": 1},
            {"label": "no id"},
            {"id": "b"}
        ]});
        let list = parse_push_devices(&v);
        assert_eq!(list.len(), 2);
        assert_eq!(list[0].label.as_deref(), Some("Chrome on Android"));
        assert_eq!(list[0].events, ["needs_you", "resolved"]);
        assert_eq!(list[1].id, "b");
        assert!(list[1].session_ids.is_empty());
        let bare = serde_json::json!([{"id": "c"}]);
        assert_eq!(parse_push_devices(&bare)[0].id, "c");
        let other_key = serde_json::json!({"devices": [{"id": "d"}]});
        assert_eq!(parse_push_devices(&other_key)[0].id, "d");
        assert!(parse_push_devices(&serde_json::json!({"ok": true})).is_empty());
    }
}
