//! Decoding what the relay sends (CCR-WIRE §2.4–§2.7, CONTRACTS "Relay HTTP API"):
//! SSE events and `/ws?envelope=1` text frames become [`Frame`]s carrying the
//! payload as its JSON text ([`Payload`], its `type` checked to be a string):
//! the envelope is read without building a `Value` of the payload. Decoding
//! it into a typed [`CliMessage`] is left to whoever needs it (the console
//! decodes straight from the text; [`Durable::decode`],
//! [`crate::Inbound::decode`]), or done up front by a [`PayloadCheck`]
//! (e.g. [`PayloadCheck::TYPED`]) set in [`crate::Config::payload_check`]:
//! that keeps the typed decoder out of consumers (the wasm console's live
//! part) that only want the frames.

use bridge_protocol::{CliMessage, ParseError};
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

pub use crate::payload::Payload;
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
    pub message: Payload,
}

impl Durable {
    /// The payload decoded into a typed [`CliMessage`] (unknown types are
    /// kept as [`CliMessage::Unknown`]; a known type with a bad body is an
    /// error).
    pub fn decode(&self) -> Result<CliMessage, ParseError> {
        CliMessage::from_value(self.message.value())
    }
}

/// A check run on every payload before it is delivered; a payload it
/// refuses is reported as malformed ([`DecodeError::BadPayload`]) instead.
/// Only linked into a binary that uses it.
#[derive(Clone, Copy)]
pub struct PayloadCheck(pub fn(&Payload) -> Result<(), String>);

impl PayloadCheck {
    /// Refuses payloads whose known type does not decode into a typed
    /// [`CliMessage`] (what the transport did unconditionally before).
    pub const TYPED: PayloadCheck = PayloadCheck(check_typed);

    /// Runs the check on a decoded frame (durable and ephemeral payloads).
    pub fn apply(self, frame: Frame) -> Result<Frame, DecodeError> {
        let (event, seq, payload) = match &frame {
            Frame::Durable(d) => ("client_event", Some(d.seq), &d.message),
            Frame::Ephemeral(m) => ("ephemeral_event", None, m),
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
pub fn check_typed(payload: &Payload) -> Result<(), String> {
    CliMessage::from_value(payload.value())
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
    Ephemeral(Payload),
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

/// Declares a struct of the named fields of a JSON object, each kept as its JSON text
/// (`Option<&RawValue>`, `None` when absent), with `read`: field by field where [`object`] allows,
/// otherwise (not an object, or a key twice) as a `Value` reads it (the last one wins), the fields'
/// text then held in `owned`.
macro_rules! raw_fields {
    ($(#[$attr:meta])* struct $name:ident { $($field:ident),* $(,)? }) => {
        $(#[$attr])*
        #[derive(Deserialize)]
        struct $name<'a> {
            $(
                #[serde(borrow, default)]
                $field: Option<&'a RawValue>,
            )*
        }

        impl<'a> $name<'a> {
            fn read(
                text: &'a str,
                owned: &'a mut Vec<Option<Box<RawValue>>>,
            ) -> Result<Self, serde_json::Error> {
                if let Some(fields) = object(text).and_then(|text| serde_json::from_str(text).ok()) {
                    return Ok(fields);
                }
                let value: Value = serde_json::from_str(text)?;
                *owned = fields_of(&value, &[$(stringify!($field)),*]);
                let mut owned = owned.iter().map(|f| f.as_deref());
                Ok($name {
                    $($field: owned.next().flatten(),)*
                })
            }
        }
    };
}

/// Decodes one SSE event.
pub fn decode_sse(event: &SseEvent) -> Result<Frame, DecodeError> {
    decode(
        &event.event,
        event.id.as_deref().and_then(parse_seq),
        &event.data,
    )
}

/// Decodes one `/ws?envelope=1` text frame (`{"event","id","data"}`).
pub fn decode_ws(text: &str) -> Result<Frame, DecodeError> {
    let not_json = |e: serde_json::Error| DecodeError::NotJson {
        event: "websocket".into(),
        error: e.to_string(),
    };
    raw_fields! {
        struct Outer { event, id, data }
    }
    let mut owned = Vec::new();
    let outer = Outer::read(text, &mut owned).map_err(not_json)?;
    let event = str_of(outer.event).unwrap_or_else(|| "message".to_owned());
    let id = match outer.id.map(|id| serde_json::from_str::<Value>(id.get())) {
        Some(Ok(Value::Number(n))) => n.as_u64(),
        Some(Ok(Value::String(s))) => parse_seq(&s),
        _ => None,
    };
    decode(&event, id, outer.data.map_or("null", RawValue::get))
}

/// Decodes one envelope of the REST event list (`GET …/events`).
pub fn decode_envelope(envelope: Value) -> Result<Durable, DecodeError> {
    let text = envelope.to_string();
    match decode("client_event", None, &text)? {
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

/// `text` if it is a JSON object's (a struct also reads from an array, by position) and the
/// field reader is built in (feature `field-reader`); otherwise the envelope is read as a `Value`.
fn object(text: &str) -> Option<&str> {
    (cfg!(feature = "field-reader") && text.trim_start().starts_with('{')).then_some(text)
}

/// A string field's value (`None` when absent or not a string, as `Value::as_str`).
fn str_of(raw: Option<&RawValue>) -> Option<String> {
    raw.and_then(|raw| serde_json::from_str(raw.get()).ok())
}

/// Fields of a `Value` as JSON text: the fallback when an envelope is not read field by field
/// (not an object: no fields; a key twice: the last one, as a `Value` keeps).
fn fields_of(value: &Value, keys: &[&str]) -> Vec<Option<Box<RawValue>>> {
    keys.iter()
        .map(|k| {
            value
                .get(k)
                .map(|v| RawValue::from_string(v.to_string()).expect("a Value writes JSON"))
        })
        .collect()
}

raw_fields! {
    /// The `data` of a `client_event` / `ephemeral_event`, read without building its payload.
    struct Data { sequence_num, event_id, source, created_at, payload }
}

fn decode(event: &str, id: Option<u64>, data: &str) -> Result<Frame, DecodeError> {
    let not_json = |e: serde_json::Error| DecodeError::NotJson {
        event: event.to_owned(),
        error: e.to_string(),
    };
    match event {
        "client_event" | "ephemeral_event" => {
            let mut owned = Vec::new();
            let data = Data::read(data, &mut owned).map_err(not_json)?;
            let durable = event == "client_event";
            let seq = id
                .or_else(|| {
                    data.sequence_num
                        .and_then(|n| serde_json::from_str::<u64>(n.get()).ok())
                })
                .filter(|n| *n > 0);
            let seq = match (durable, seq) {
                (true, None) => return Err(DecodeError::NoSequence),
                (_, seq) => seq,
            };
            let Some((message, uuid)) = data.payload.and_then(|p| Payload::checked(p, durable))
            else {
                return Err(DecodeError::MissingType {
                    event: event.to_owned(),
                });
            };
            let Some(seq) = seq.filter(|_| durable) else {
                return Ok(Frame::Ephemeral(message));
            };
            Ok(Frame::Durable(Box::new(Durable {
                seq,
                event_id: str_of(data.event_id),
                source: Source::from(str_of(data.source).unwrap_or_default().as_str()),
                created_at: str_of(data.created_at),
                uuid,
                message,
            })))
        }
        "catch_up_truncated" => Ok(Frame::CatchUpTruncated),
        "delivery_update" => serde_json::from_value(serde_json::from_str(data).map_err(not_json)?)
            .map(Frame::DeliveryUpdate)
            .map_err(|e| DecodeError::BadDeliveryUpdate(e.to_string())),
        "error" => {
            let data: Value = serde_json::from_str(data).map_err(not_json)?;
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
        assert_eq!(d.message.value(), json!({"type":"assistant","message":5}));
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
    fn envelopes_read_as_a_value_would() {
        // Fields in any order, escapes, the payload's type not first: kept as its text.
        let data = r#"{"payload":{"uuid":"u-9","type":"keep_alive"},"source":"cli\u0065nt","sequence_num":9,"event_id":"e9"}"#;
        let Frame::Durable(d) = decode_sse(&sse(None, "client_event", data)).unwrap() else {
            panic!("not durable")
        };
        assert_eq!((d.seq, d.source.clone()), (9, Source::Client));
        assert_eq!(d.uuid.as_deref(), Some("u-9"));
        assert_eq!(d.message.text(), r#"{"uuid":"u-9","type":"keep_alive"}"#);
        // A key twice: the last one, as in a `Value`.
        let data = r#"{"sequence_num":1,"sequence_num":4,"payload":{"type":"x"},"payload":{"type":"keep_alive"}}"#;
        let Frame::Durable(d) = decode_sse(&sse(None, "client_event", data)).unwrap() else {
            panic!("not durable")
        };
        assert_eq!(d.seq, 4);
        assert_eq!(d.message.value(), json!({"type": "keep_alive"}));
        // Not an object: no fields.
        assert_eq!(
            decode_sse(&sse(None, "client_event", "[1]")),
            Err(DecodeError::NoSequence)
        );
        assert!(matches!(
            decode_sse(&sse(None, "ephemeral_event", "7")),
            Err(DecodeError::MissingType { .. })
        ));
        // A sequence number that is not a positive integer is none.
        let data = r#"{"sequence_num":"3","payload":{"type":"keep_alive"}}"#;
        assert_eq!(
            decode_sse(&sse(None, "client_event", data)),
            Err(DecodeError::NoSequence)
        );
        // WebSocket: the envelope's keys in any order, twice, or not an object.
        let text = r#"{"data":{"payload":{"type":"keep_alive"}},"id":"12","event":"client_event"}"#;
        assert!(matches!(decode_ws(text).unwrap(), Frame::Durable(d) if d.seq == 12));
        let text = r#"{"event":"x","event":"catch_up_truncated","data":{}}"#;
        assert_eq!(decode_ws(text).unwrap(), Frame::CatchUpTruncated);
        assert_eq!(decode_ws("[]").unwrap(), Frame::Ignored("message".into()));
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
