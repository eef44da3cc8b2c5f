//! Web Push: this device's subscription at the relay (controller only; observers get 403). The
//! bodies are `bridge_protocol::api::push`'s.

use bridge_protocol::api::push::{
    PushDevice, PushDeviceList, PushSubscribeAnswer, PushSubscribeRequest, PushTestAnswer,
    VapidPublicKey,
};
use serde_json::Value;

use super::{NetError, decode, enc, encode, request_json};

/// The devices in a `GET /v1/push/subscriptions` answer (`{"subscriptions": [...]}`).
fn parse_push_devices(v: Value) -> Result<Vec<PushDevice>, NetError> {
    decode::<PushDeviceList>(v).map(|l| l.subscriptions)
}

/// `GET /v1/push/vapid-public-key`: the relay's VAPID public key (base64url).
pub async fn vapid_public_key() -> Result<String, NetError> {
    let v = request_json("GET", "/v1/push/vapid-public-key", None).await?;
    decode::<VapidPublicKey>(v).map(|k| k.key)
}

/// `POST /v1/push/subscriptions`: registers (or updates, same endpoint) this browser's
/// subscription (`PushSubscription.toJSON()`) with a device name and events; returns its id.
pub async fn register_push(
    subscription: &Value,
    label: &str,
    events: &[String],
) -> Result<String, NetError> {
    let body = PushSubscribeRequest {
        label: Some(label.to_owned()),
        events: Some(events.to_vec()),
        ..serde_json::from_value::<PushSubscribeRequest>(subscription.clone())
            .map_err(|e| NetError::Decode(format!("the browser's push subscription: {e}")))?
    };
    let v = request_json("POST", "/v1/push/subscriptions", Some(&encode(&body)?)).await?;
    decode::<PushSubscribeAnswer>(v).map(|a| a.id)
}

/// `GET /v1/push/subscriptions`.
pub async fn list_push_devices() -> Result<Vec<PushDevice>, NetError> {
    parse_push_devices(request_json("GET", "/v1/push/subscriptions", None).await?)
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

/// `POST /v1/push/subscriptions/{id}/test`: what the push service said (a refusal is an error).
pub async fn test_push_device(id: &str) -> Result<PushTestAnswer, NetError> {
    let v = request_json(
        "POST",
        &format!("/v1/push/subscriptions/{}/test", enc(id)),
        None,
    )
    .await?;
    decode(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_device_list_is_the_relays_subscriptions() {
        let v = serde_json::json!({"subscriptions": [
            {"id": "a", "label": "Chrome on Android", "endpoint_origin": "https://fcm.googleapis.com",
             "events": ["needs_you", "resolved"], "expiration_time": null,
             "created_at": "2025-01-01T00:00:00.000Z", "updated_at": "2025-01-01T00:00:00.000Z",
             "last_success_at": null, "last_error": null, "last_error_at": null, "future_field": 1},
            {"id": "b", "label": null, "events": [], "session_ids": ["cse_1"]}
        ]});
        let list = parse_push_devices(v).unwrap();
        assert_eq!(list.len(), 2);
        assert_eq!(list[0].label.as_deref(), Some("Chrome on Android"));
        assert_eq!(list[0].events, ["needs_you", "resolved"]);
        assert_eq!(list[0].session_ids, None, "absent: every session");
        assert_eq!(
            list[1].session_ids.as_deref(),
            Some(&["cse_1".to_owned()][..])
        );
        assert!(parse_push_devices(serde_json::json!({"ok": true})).is_err());
    }
}
