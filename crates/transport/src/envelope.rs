//! Decoding what the relay sends (CCR-WIRE §2.4–§2.7, CONTRACTS "Relay HTTP API"):
//! SSE events and `/ws?envelope=1` text frames become [`Frame`]s carrying the
//! payload as raw JSON (its `type` checked to be a string). Decoding it into a
//! typed [`CliMessage`] is left to whoever needs it ([`Durable::decode`],
//! [`crate::Inbound::decode`]), or done up front by a [`PayloadCheck`]
//! (e.g. [`PayloadCheck::TYPED`]) set in [`crate::Config::payload_check`]:
//! that keeps the typed decoder out of consumers (the wasm console) that only
//! want the JSON.

use bridge_protocol::{CliMessage, MessageType, ParseError};
use serde::Deserialize;
use serde_json::Value;

use crate::sse::SseEvent;

/// Who produced a durable event (the envelope's `source`): `worker`, `client`, `relay`, or anything
/// else kept as sent (a missing source is `Other("")`). Shared with the relay.
pub use bridge_protocol::api::Source;

/// A stored event with its sequence number.
#[derive(Debug, Clone, PartialEq)]
pub struct Durable {
    /// The dense, per-session `sequence_num` (1, 2, 3, …).
    pub seq: u64,
    /// The relay's id for the event.
    pub event_id: Option<String>,
    /// Who produced it.
    pub source: Source,
    /// RFC 3339 time the relay stored it.
    pub created_at: Option<String>,
    /// The payload's `uuid`, read from the raw JSON (every kind of payload,
    /// including `control_response`s a client posted, may carry one).
    pub uuid: Option<String>,
    /// The payload, as sent (a JSON object with a string `type`).
    pub message: Value,
}

impl Durable {
    /// The payload decoded into a typed [`CliMessage`] (unknown types are
    /// kept as [`CliMessage::Unknown`]; a known type with a bad body is an
    /// error).
    pub fn decode(&self) -> Result<CliMessage, ParseError> {
        CliMessage::from_value(self.message.clone())
    }
}

/// A check run on every payload before it is delivered; a payload it
/// refuses is reported as malformed ([`DecodeError::BadPayload`]) instead.
/// Only linked into a binary that uses it.
#[derive(Clone, Copy)]
pub struct PayloadCheck(pub fn(&Value) -> Result<(), String>);

impl PayloadCheck {
    /// Refuses payloads whose known type does not decode into a typed
    /// [`CliMessage`] (what the transport did unconditionally before).
    pub const TYPED: PayloadCheck = PayloadCheck(check_typed);

    /// Runs the check on a decoded frame (durable and ephemeral payloads).
    pub fn apply(self, frame: Frame) -> Result<Frame, DecodeError> {
        let (event, seq, payload) = match &frame {
            Frame::Durable(d) => ("client_event", Some(d.seq), &d.message),
            Frame::Ephemeral(m) => ("ephemeral_event", None, &**m),
            _ => return Ok(frame),
        };
        match (self.0)(payload) {
            Ok(()) => Ok(frame),
            Err(error) => Err(DecodeError::BadPayload {
                event: event.to_owned(),
                seq,
                error,
            }),
        }
    }
}

impl std::fmt::Debug for PayloadCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PayloadCheck(..)")
    }
}

impl PartialEq for PayloadCheck {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::fn_addr_eq(self.0, other.0)
    }
}

/// The check behind [`PayloadCheck::TYPED`].
pub fn check_typed(payload: &Value) -> Result<(), String> {
    CliMessage::from_value(payload.clone())
        .map(drop)
        .map_err(|e| e.to_string())
}

/// A `delivery_update` (progress of an event a client posted).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct DeliveryUpdate {
    /// The relay's event id of the posted event.
    pub event_id: String,
    /// `DELIVERY_STATUS_RECEIVED | …_PROCESSING | …_PROCESSED`.
    pub status: String,
    /// When the status changed.
    #[serde(default)]
    pub timestamp: Option<String>,
}

/// One decoded frame.
#[derive(Debug, Clone, PartialEq)]
pub enum Frame {
    /// `client_event`: stored, ordered by `seq`.
    Durable(Box<Durable>),
    /// `ephemeral_event`: not stored, never replayed (stream deltas and the
    /// projected system subtypes).
    Ephemeral(Box<Value>),
    /// `catch_up_truncated`: the relay could not replay everything after the
    /// cursor.
    CatchUpTruncated,
    /// `delivery_update`.
    DeliveryUpdate(DeliveryUpdate),
    /// An error frame of the WebSocket envelope protocol (a refused inbound
    /// frame): `status` and `{type, message}`.
    WsError {
        /// The HTTP status the same payload would have got from a POST.
        status: u16,
        /// The error `type`.
        kind: String,
        /// The error message.
        message: String,
    },
    /// An event name this client does not use (e.g. the default `message`,
    /// `session_update`); counted and dropped.
    Ignored(String),
}

/// Why a frame could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The `data` (or the whole WS frame) is not JSON.
    #[error("{event} frame is not JSON: {error}")]
    NotJson {
        /// The event name.
        event: String,
        /// serde_json's message.
        error: String,
    },
    /// A durable frame without a usable sequence number.
    #[error("client_event without a sequence number (no numeric id and no data.sequence_num)")]
    NoSequence,
    /// A frame without `payload`, or whose `payload.type` is not a string.
    #[error("{event} frame has no payload with a string `type`")]
    MissingType {
        /// The event name.
        event: String,
    },
    /// A payload whose known type has a bad body (`seq` is set for durable
    /// frames so the cursor can still move past it).
    #[error("{event} payload (seq {seq:?}) does not decode: {error}")]
    BadPayload {
        /// The event name.
        event: String,
        /// The durable sequence number, if any.
        seq: Option<u64>,
        /// The protocol crate's message.
        error: String,
    },
    /// A `delivery_update` without `event_id`/`status` strings.
    #[error("malformed delivery_update: {0}")]
    BadDeliveryUpdate(String),
}

impl DecodeError {
    /// The sequence number of a durable frame that failed to decode, if the
    /// frame was durable and its sequence number was readable.
    pub fn seq(&self) -> Option<u64> {
        match self {
            DecodeError::BadPayload { seq, .. } => *seq,
            _ => None,
        }
    }
}

/// Decodes one SSE event.
pub fn decode_sse(event: &SseEvent) -> Result<Frame, DecodeError> {
    decode(
        &event.event,
        event.id.as_deref().and_then(parse_seq),
        || {
            serde_json::from_str(&event.data).map_err(|e| DecodeError::NotJson {
                event: event.event.clone(),
                error: e.to_string(),
            })
        },
    )
}

/// Decodes one `/ws?envelope=1` text frame (`{"event","id","data"}`).
pub fn decode_ws(text: &str) -> Result<Frame, DecodeError> {
    let mut outer: Value = serde_json::from_str(text).map_err(|e| DecodeError::NotJson {
        event: "websocket".into(),
        error: e.to_string(),
    })?;
    let event = outer
        .get("event")
        .and_then(Value::as_str)
        .unwrap_or("message")
        .to_owned();
    let id = match outer.get("id") {
        Some(Value::Number(n)) => n.as_u64(),
        Some(Value::String(s)) => parse_seq(s),
        _ => None,
    };
    let data = outer
        .get_mut("data")
        .map(Value::take)
        .unwrap_or(Value::Null);
    decode(&event, id, || Ok(data))
}

/// Decodes one envelope of the REST event list (`GET …/events`).
pub fn decode_envelope(envelope: Value) -> Result<Durable, DecodeError> {
    match decode("client_event", None, || Ok(envelope))? {
        Frame::Durable(d) => Ok(*d),
        _ => unreachable!("client_event decodes to Durable or an error"),
    }
}

fn parse_seq(s: &str) -> Option<u64> {
    let s = s.trim();
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok().filter(|n| *n > 0)
}

fn decode(
    event: &str,
    id: Option<u64>,
    data: impl FnOnce() -> Result<Value, DecodeError>,
) -> Result<Frame, DecodeError> {
    match event {
        "client_event" => {
            let mut data = data()?;
            let seq = id
                .or_else(|| data.get("sequence_num").and_then(Value::as_u64))
                .filter(|n| *n > 0)
                .ok_or(DecodeError::NoSequence)?;
            let field = |d: &Value, k: &str| d.get(k).and_then(Value::as_str).map(str::to_owned);
            let event_id = field(&data, "event_id");
            let source = Source::from(
                data.get("source")
                    .and_then(Value::as_str)
                    .unwrap_or_default(),
            );
            let created_at = field(&data, "created_at");
            let payload = take_payload(&mut data, event)?;
            let uuid = payload
                .get("uuid")
                .and_then(Value::as_str)
                .filter(|u| !u.is_empty())
                .map(str::to_owned);
            let message = payload;
            Ok(Frame::Durable(Box::new(Durable {
                seq,
                event_id,
                source,
                created_at,
                uuid,
                message,
            })))
        }
        "ephemeral_event" => {
            let mut data = data()?;
            let payload = take_payload(&mut data, event)?;
            Ok(Frame::Ephemeral(Box::new(payload)))
        }
        "catch_up_truncated" => Ok(Frame::CatchUpTruncated),
        "delivery_update" => serde_json::from_value(data()?)
            .map(Frame::DeliveryUpdate)
            .map_err(|e| DecodeError::BadDeliveryUpdate(e.to_string())),
        "error" => {
            let data = data()?;
            let s = |p: &str| data.pointer(p).and_then(Value::as_str).unwrap_or("");
            Ok(Frame::WsError {
                status: data
                    .get("status")
                    .and_then(Value::as_u64)
                    .and_then(|n| u16::try_from(n).ok())
                    .unwrap_or(0),
                kind: s("/error/type").to_owned(),
                message: s("/error/message").to_owned(),
            })
        }
        other => Ok(Frame::Ignored(other.to_owned())),
    }
}

fn take_payload(data: &mut Value, event: &str) -> Result<Value, DecodeError> {
    let payload = data.get_mut("payload").map(Value::take).unwrap_or_default();
    if MessageType::of(&payload).is_none() {
        return Err(DecodeError::MissingType {
            event: event.to_owned(),
        });
    }
    Ok(payload)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test;

    fn sse(id: Option<&str>, event: &str, data: &str) -> SseEvent {
        SseEvent {
            id: id.map(str::to_owned),
            event: event.to_owned(),
            data: data.to_owned(),
        }
    }

    const ASSISTANT: &str = r#"{"type":"assistant","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"hi"}],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}},"parent_tool_use_id":null,"session_id":"s","uuid":"u-1"}"#;

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn durable_sse_frame() {
        let data = format!(
            r#"{{"event_id":"e","sequence_num":13,"event_type":"assistant","source":"worker","created_at":"t","payload":{ASSISTANT}}}"#
        );
        let Frame::Durable(d) = decode_sse(&sse(Some("13"), "client_event", &data)).unwrap() else {
            panic!("not durable")
        };
        assert_eq!(d.seq, 13);
        assert_eq!(d.source, Source::Worker);
        assert_eq!(d.event_id.as_deref(), Some("e"));
        assert_eq!(d.decode().unwrap().uuid(), Some("u-1"));
        assert_eq!(
            serde_json::to_value(&d.message).unwrap(),
            serde_json::from_str::<Value>(ASSISTANT).unwrap()
        );
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn sequence_falls_back_to_data_and_is_required() {
        let data = r#"{"sequence_num":7,"source":"client","payload":{"type":"keep_alive"}}"#;
        let Frame::Durable(d) = decode_sse(&sse(Some("x7"), "client_event", data)).unwrap() else {
            panic!()
        };
        assert_eq!((d.seq, d.source.clone()), (7, Source::Client));
        let data = r#"{"payload":{"type":"keep_alive"}}"#;
        assert_eq!(
            decode_sse(&sse(None, "client_event", data)),
            Err(DecodeError::NoSequence)
        );
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn bad_payloads_are_typed_errors_with_the_seq() {
        let e = decode_sse(&sse(Some("3"), "client_event", "{nope")).unwrap_err();
        assert!(matches!(e, DecodeError::NotJson { .. }));
        let e = decode_sse(&sse(Some("3"), "client_event", r#"{"payload":{"x":1}}"#)).unwrap_err();
        assert!(matches!(e, DecodeError::MissingType { .. }));
        // a known type with a bad body: delivered raw, refused by the typed check
        let bad = sse(
            Some("4"),
            "client_event",
            r#"{"payload":{"type":"assistant","message":5}}"#,
        );
        let Frame::Durable(d) = decode_sse(&bad).unwrap() else {
            panic!("not durable")
        };
        assert_eq!(d.message, json!({"type":"assistant","message":5}));
        assert!(d.decode().is_err());
        let e = PayloadCheck::TYPED
            .apply(decode_sse(&bad).unwrap())
            .unwrap_err();
        assert_eq!(e.seq(), Some(4), "{e}");
        assert!(matches!(e, DecodeError::BadPayload { .. }), "{e}");
        // a good one passes the check unchanged
        let data = format!(r#"{{"sequence_num":5,"payload":{ASSISTANT}}}"#);
        let good = decode_sse(&sse(None, "client_event", &data)).unwrap();
        assert_eq!(PayloadCheck::TYPED.apply(good.clone()), Ok(good));
        // ephemeral frames are checked too, without a seq
        let text = r#"{"event":"ephemeral_event","id":null,"data":{"payload":{"type":"stream_event","event":3}}}"#;
        let e = PayloadCheck::TYPED
            .apply(decode_ws(text).unwrap())
            .unwrap_err();
        assert_eq!(e.seq(), None, "{e}");
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn unknown_payload_types_are_kept() {
        let Frame::Durable(d) = decode_sse(&sse(
            Some("5"),
            "client_event",
            r#"{"payload":{"type":"brand_new","x":[1]}}"#,
        ))
        .unwrap() else {
            panic!()
        };
        assert!(!d.decode().unwrap().is_known());
        assert_eq!(
            serde_json::to_value(&d.message).unwrap(),
            json!({"type":"brand_new","x":[1]})
        );
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn ws_envelopes() {
        let text = json!({"event":"ephemeral_event","id":null,"data":{"event_type":"stream_event","payload":{"type":"stream_event","event":{"type":"message_stop"},"session_id":"s","parent_tool_use_id":null,"uuid":"x"}}}).to_string();
        assert!(matches!(decode_ws(&text).unwrap(), Frame::Ephemeral(_)));
        let text = json!({"event":"client_event","id":9,"data":{"sequence_num":9,"source":"relay","payload":{"type":"keep_alive"}}}).to_string();
        let Frame::Durable(d) = decode_ws(&text).unwrap() else {
            panic!()
        };
        assert_eq!((d.seq, d.source.clone()), (9, Source::Relay));
        assert_eq!(
            decode_ws(r#"{"event":"catch_up_truncated","id":null,"data":{}}"#).unwrap(),
            Frame::CatchUpTruncated
        );
        let err = json!({"event":"error","id":null,"data":{"type":"error","status":409,"error":{"type":"request_not_pending","message":"m"}}}).to_string();
        assert_eq!(
            decode_ws(&err).unwrap(),
            Frame::WsError {
                status: 409,
                kind: "request_not_pending".into(),
                message: "m".into()
            }
        );
        assert!(matches!(decode_ws("[1,"), Err(DecodeError::NotJson { .. })));
        assert_eq!(
            decode_ws(r#"{"event":"session_update","data":{}}"#).unwrap(),
            Frame::Ignored("session_update".into())
        );
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn delivery_updates() {
        let f = decode_sse(&sse(
            None,
            "delivery_update",
            r#"{"event_id":"e1","status":"DELIVERY_STATUS_RECEIVED","timestamp":"t"}"#,
        ))
        .unwrap();
        assert_eq!(
            f,
            Frame::DeliveryUpdate(DeliveryUpdate {
                event_id: "e1".into(),
                status: "DELIVERY_STATUS_RECEIVED".into(),
                timestamp: Some("t".into())
            })
        );
        assert!(matches!(
            decode_sse(&sse(None, "delivery_update", r#"{"status":1}"#)),
            Err(DecodeError::BadDeliveryUpdate(_))
        ));
    }
}
