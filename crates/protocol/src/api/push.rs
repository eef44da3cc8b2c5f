//! Web Push's REST shapes (`/v1/push/*`, controller only): the relay's VAPID key, registering this
//! browser's subscription, the devices with push on, a test push, and an Allow / Deny sent from a
//! notification. One definition for the relay that writes and reads them and the console (and its
//! service worker's answer) on the other side.
//!
//! Reading tolerates fields these types do not model (a newer relay's); writing gives the JSON the
//! relay has always written: every field of a device, `null` included, except `session_ids`, which
//! is absent when the device gets every session.

use serde::{Deserialize, Serialize};

use crate::util::open_enum;

/// `GET /v1/push/vapid-public-key`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VapidPublicKey {
    /// The relay's VAPID public key (an uncompressed P-256 point, base64url): the browser's
    /// `applicationServerKey`.
    pub key: String,
}

/// The keys of a push subscription (`PushSubscription.toJSON().keys`), base64url as the browser
/// gives them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PushKeys {
    /// The browser's P-256 public key (`getKey('p256dh')`).
    pub p256dh: String,
    /// The browser's 16-byte authentication secret (`getKey('auth')`).
    pub auth: String,
}

/// The body of `POST /v1/push/subscriptions`: `PushSubscription.toJSON()` plus the relay's own
/// fields. Registering an endpoint the relay knows updates its keys, label and filters.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PushSubscribeRequest {
    /// The push service's URL for this browser.
    pub endpoint: String,
    /// When the subscription expires (ms since the epoch), as the browser says (`null`: never, or
    /// unknown).
    #[serde(default, rename = "expirationTime")]
    pub expiration_time: Option<f64>,
    /// The browser's keys.
    pub keys: PushKeys,
    /// The device's name in the device list (trimmed, at most 100 characters; absent: unnamed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The events it wants: `needs_you`, `resolved`, `turn_done`, `agent_exited` (absent: all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<Vec<String>>,
    /// Only these sessions (absent or `null`: every session; never empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_ids: Option<Vec<String>>,
}

/// The answer of `POST /v1/push/subscriptions` (201 for a new endpoint, 200 for a known one).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PushSubscribeAnswer {
    /// The subscription's id (`psub_…`), kept when the same endpoint registers again.
    pub id: String,
}

/// One device in `GET /v1/push/subscriptions` (its keys and endpoint are never shown).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PushDevice {
    /// The relay's id of the subscription (`psub_…`).
    pub id: String,
    /// The name given when push was turned on (`null`: unnamed).
    pub label: Option<String>,
    /// The push service's origin (scheme, host and port of the endpoint).
    #[serde(default)]
    pub endpoint_origin: String,
    /// The events it receives (`needs_you`, `resolved`, `turn_done`, `agent_exited`).
    #[serde(default)]
    pub events: Vec<String>,
    /// When the browser says the subscription expires (ms since the epoch; `null`: never, or
    /// unknown).
    pub expiration_time: Option<i64>,
    /// When it was first registered (RFC 3339).
    #[serde(default)]
    pub created_at: String,
    /// When it was last registered (RFC 3339).
    #[serde(default)]
    pub updated_at: String,
    /// When a push last reached its push service (RFC 3339; `null`: never).
    pub last_success_at: Option<String>,
    /// Why the last delivery failed (`null`: none since the last success).
    pub last_error: Option<String>,
    /// When the last delivery failed (RFC 3339; `null` with `last_error`).
    pub last_error_at: Option<String>,
    /// Only these sessions (absent: every session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_ids: Option<Vec<String>>,
}

/// The answer of `GET /v1/push/subscriptions`: `{"subscriptions": [...]}`, oldest first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PushDeviceList {
    /// The devices with push on.
    pub subscriptions: Vec<PushDevice>,
}

/// The answer of `POST /v1/push/subscriptions/{id}/test` when the push service took the message (a
/// refusal is an error answer, 502).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PushTestAnswer {
    /// The push service took it (always `true` here).
    pub delivered: bool,
    /// The push service's HTTP status (2xx).
    pub status: u16,
}

open_enum! {
    /// What a notification's button answers a permission prompt with.
    pub enum PushDecision {
        /// Allow the tool call, with its input unchanged.
        Allow = "allow",
        /// Deny it.
        Deny = "deny",
    }
}

/// The body of `POST /v1/push/answer`, sent by the service worker from a notification's Allow /
/// Deny.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PushAnswerRequest {
    /// The session asking.
    pub session_id: String,
    /// The permission prompt answered (`control_request.request_id`).
    pub request_id: String,
    /// `allow` or `deny` (the relay refuses anything else).
    pub decision: PushDecision,
    /// The device answering (its subscription id), named in the audit record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscription_id: Option<String>,
}

/// The answer of `POST /v1/push/answer` once the decision was sent to the session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PushAnswered {
    /// Always `true` (a refusal is an error answer).
    pub ok: bool,
    /// The decision, as sent.
    pub decision: PushDecision,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn device() -> PushDevice {
        PushDevice {
            id: "psub_1".into(),
            label: Some("Phone".into()),
            endpoint_origin: "https://fcm.googleapis.com".into(),
            events: vec!["needs_you".into(), "resolved".into()],
            expiration_time: None,
            created_at: "2025-01-01T00:00:00.000Z".into(),
            updated_at: "2025-01-02T00:00:00.000Z".into(),
            last_success_at: None,
            last_error: None,
            last_error_at: None,
            session_ids: None,
        }
    }

    #[test]
    fn a_device_is_written_with_the_relays_fields_in_its_order() {
        assert_eq!(
            serde_json::to_string(&device()).unwrap(),
            r#"{"id":"psub_1","label":"Phone","endpoint_origin":"https://fcm.googleapis.com","events":["needs_you","resolved"],"expiration_time":null,"created_at":"2025-01-01T00:00:00.000Z","updated_at":"2025-01-02T00:00:00.000Z","last_success_at":null,"last_error":null,"last_error_at":null}"#,
            "every field but session_ids, null included; no session_ids: every session"
        );
        let filtered = PushDevice {
            session_ids: Some(vec!["cse_a".into()]),
            label: None,
            expiration_time: Some(1_700_000_000_000),
            ..device()
        };
        let text = serde_json::to_string(&filtered).unwrap();
        assert!(text.contains(r#""label":null,"#), "{text}");
        assert!(
            text.contains(r#""expiration_time":1700000000000,"#),
            "{text}"
        );
        assert!(
            text.ends_with(r#","last_error_at":null,"session_ids":["cse_a"]}"#),
            "the filter comes last: {text}"
        );
        let list = PushDeviceList {
            subscriptions: vec![device()],
        };
        let v = serde_json::to_value(&list).unwrap();
        assert_eq!(v["subscriptions"][0]["id"], "psub_1");
        assert_eq!(v.as_object().unwrap().len(), 1);
    }

    #[test]
    fn a_device_reads_back_as_written_and_tolerates_unknown_fields() {
        for d in [
            device(),
            PushDevice {
                session_ids: Some(vec!["cse_a".into()]),
                last_error: Some("the push service answered 400".into()),
                last_error_at: Some("2025-01-03T00:00:00.000Z".into()),
                ..device()
            },
        ] {
            let text = serde_json::to_string(&d).unwrap();
            let back: PushDevice = serde_json::from_str(&text).unwrap();
            assert_eq!(back, d);
            assert_eq!(serde_json::to_string(&back).unwrap(), text);
        }
        let mut v = serde_json::to_value(device()).unwrap();
        v["future_field"] = json!({"x": 1});
        let list: PushDeviceList = serde_json::from_value(json!({"subscriptions": [v]})).unwrap();
        assert_eq!(list.subscriptions, [device()]);
        let back = serde_json::to_value(&list.subscriptions[0]).unwrap();
        assert!(back.get("future_field").is_none() && back.get("session_ids").is_none());
        // `null` session_ids reads as every session, which is written absent.
        let null_filter: PushDevice =
            serde_json::from_value(json!({"id": "psub_2", "session_ids": null})).unwrap();
        assert_eq!(null_filter.session_ids, None);
        assert!(serde_json::from_value::<PushDevice>(json!({"label": "no id"})).is_err());
    }

    #[test]
    fn a_subscribe_request_is_the_browsers_subscription_plus_the_relays_fields() {
        let browser = json!({
            "endpoint": "https://push.example/abc",
            "expirationTime": null,
            "keys": {"p256dh": "BP…", "auth": "a…"}
        });
        let mut req: PushSubscribeRequest = serde_json::from_value(browser).unwrap();
        assert_eq!((req.expiration_time, req.label.as_deref()), (None, None));
        assert_eq!(
            serde_json::to_string(&req).unwrap(),
            r#"{"endpoint":"https://push.example/abc","expirationTime":null,"keys":{"p256dh":"BP…","auth":"a…"}}"#,
            "what the browser gave, as it gave it"
        );
        req.label = Some("Phone".into());
        req.events = Some(vec!["needs_you".into()]);
        assert_eq!(
            serde_json::to_string(&req).unwrap(),
            r#"{"endpoint":"https://push.example/abc","expirationTime":null,"keys":{"p256dh":"BP…","auth":"a…"},"label":"Phone","events":["needs_you"]}"#
        );
        let with_expiry: PushSubscribeRequest = serde_json::from_value(json!({
            "endpoint": "e", "expirationTime": 1.5e12, "keys": {"p256dh": "k", "auth": "a"},
            "session_ids": null, "extra": true
        }))
        .unwrap();
        assert_eq!(
            (with_expiry.expiration_time, with_expiry.session_ids),
            (Some(1.5e12), None)
        );
        assert!(serde_json::from_value::<PushSubscribeRequest>(json!({"endpoint": "e"})).is_err());
        assert_eq!(
            serde_json::to_value(PushSubscribeAnswer {
                id: "psub_1".into()
            })
            .unwrap(),
            json!({"id": "psub_1"})
        );
    }

    #[test]
    fn the_small_answers_keep_their_layout() {
        assert_eq!(
            serde_json::to_string(&VapidPublicKey { key: "BK".into() }).unwrap(),
            r#"{"key":"BK"}"#
        );
        assert_eq!(
            serde_json::to_string(&PushTestAnswer {
                delivered: true,
                status: 201
            })
            .unwrap(),
            r#"{"delivered":true,"status":201}"#
        );
        let answer: PushAnswerRequest = serde_json::from_value(
            json!({"session_id": "cse_1", "request_id": "r1", "decision": "maybe"}),
        )
        .unwrap();
        assert_eq!(answer.decision, PushDecision::Other("maybe".into()));
        assert_eq!(answer.subscription_id, None);
        assert_eq!(
            serde_json::to_value(&answer).unwrap(),
            json!({"session_id": "cse_1", "request_id": "r1", "decision": "maybe"})
        );
        assert!(
            serde_json::from_value::<PushAnswerRequest>(
                json!({"session_id": "s", "request_id": "r"})
            )
            .is_err(),
            "a decision is needed"
        );
        assert_eq!(
            serde_json::to_string(&PushAnswered {
                ok: true,
                decision: PushDecision::Allow
            })
            .unwrap(),
            r#"{"ok":true,"decision":"allow"}"#
        );
    }
}
