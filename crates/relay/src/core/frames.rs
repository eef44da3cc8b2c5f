//! What subscribers receive, pre-rendered once per event and shared by every subscriber:
//! SSE text, the WebSocket envelope, and the bare payload line.

use std::sync::{Arc, OnceLock};

use bridge_protocol::MessageType;
use bytes::Bytes;
use serde_json::Value;
use tokio_tungstenite::tungstenite::Utf8Bytes;

use crate::core::store::{Source, StoredEvent};
use crate::core::util::json_str;

/// The SSE `event:` name of a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameKind {
    /// Durable, stored, has a sequence number (`event: client_event`).
    ClientEvent,
    /// Not stored, no id (`event: ephemeral_event`): stream_event and projected system subtypes.
    Ephemeral,
    /// Progress of a client event (`event: delivery_update`).
    DeliveryUpdate,
    /// Events the subscriber has not seen were pruned by retention (`event: catch_up_truncated`).
    CatchUpTruncated,
}

impl FrameKind {
    pub fn event_name(self) -> &'static str {
        match self {
            FrameKind::ClientEvent => "client_event",
            FrameKind::Ephemeral => "ephemeral_event",
            FrameKind::DeliveryUpdate => "delivery_update",
            FrameKind::CatchUpTruncated => "catch_up_truncated",
        }
    }
}

/// One frame for subscribers, rendered once and shared by all of them: `data` and `payload` are
/// slices of `sse` (one allocation per frame); the WebSocket texts are rendered on first use.
#[derive(Debug)]
pub struct Frame {
    pub kind: FrameKind,
    pub seq: Option<u64>,
    pub source: Source,
    /// The relay's agent-exit event: nothing durable follows it (SSE streams close after it).
    pub ends_session: bool,
    /// The JSON of the SSE `data:` line (envelope, ephemeral wrapper or delivery update).
    pub data: Bytes,
    /// The bare payload JSON (empty for delivery updates).
    pub payload: Bytes,
    /// The whole SSE frame, terminated by a blank line.
    pub sse: Bytes,
    ws_envelope: OnceLock<Utf8Bytes>,
    ws_line: OnceLock<Utf8Bytes>,
}

/// Delivery statuses per CCR-WIRE §9.4.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    Received,
    Processing,
    Processed,
}

impl Delivery {
    pub fn as_str(self) -> &'static str {
        match self {
            Delivery::Received => "DELIVERY_STATUS_RECEIVED",
            Delivery::Processing => "DELIVERY_STATUS_PROCESSING",
            Delivery::Processed => "DELIVERY_STATUS_PROCESSED",
        }
    }
}

/// The durable envelope JSON; `payload` is spliced in verbatim.
pub fn envelope_json(e: &StoredEvent) -> String {
    let mut out = String::with_capacity(e.payload.len() + 160);
    push_envelope(&mut out, e);
    out
}

/// Appends the envelope JSON of `e` (ends with `"payload":<payload>}`).
fn push_envelope(out: &mut String, e: &StoredEvent) {
    out.push_str("{\"event_id\":");
    out.push_str(&json_str(&e.event_id));
    out.push_str(",\"sequence_num\":");
    out.push_str(&e.seq.to_string());
    out.push_str(",\"event_type\":");
    out.push_str(&json_str(&e.event_type));
    out.push_str(",\"source\":\"");
    out.push_str(e.source.as_str());
    out.push_str("\",\"created_at\":");
    out.push_str(&json_str(&e.created_at));
    out.push_str(",\"payload\":");
    out.push_str(&e.payload);
    out.push('}');
}

/// A frame from its whole SSE text and the byte ranges of its `data:` JSON and of the payload in it.
fn assemble(
    kind: FrameKind,
    seq: Option<u64>,
    source: Source,
    ends_session: bool,
    sse: String,
    data: std::ops::Range<usize>,
    payload: std::ops::Range<usize>,
) -> Arc<Frame> {
    let sse = Bytes::from(sse);
    Arc::new(Frame {
        kind,
        seq,
        source,
        ends_session,
        data: sse.slice(data),
        payload: sse.slice(payload),
        sse,
        ws_envelope: OnceLock::new(),
        ws_line: OnceLock::new(),
    })
}

impl Frame {
    pub fn durable(e: &StoredEvent) -> Arc<Frame> {
        Self::durable_with(e, false)
    }

    /// A durable frame; `ends_session` marks the relay's agent-exit event.
    pub fn durable_with(e: &StoredEvent, ends_session: bool) -> Arc<Frame> {
        let mut sse = String::with_capacity(e.payload.len() + 200);
        sse.push_str("id: ");
        sse.push_str(&e.seq.to_string());
        sse.push_str("\nevent: client_event\ndata: ");
        let data_start = sse.len();
        push_envelope(&mut sse, e);
        let data_end = sse.len();
        sse.push_str("\n\n");
        let payload = data_end - 1 - e.payload.len()..data_end - 1;
        assemble(
            FrameKind::ClientEvent,
            Some(e.seq),
            e.source.clone(),
            ends_session,
            sse,
            data_start..data_end,
            payload,
        )
    }

    pub fn ephemeral(event_type: &str, payload: &str) -> Arc<Frame> {
        let mut sse = String::with_capacity(payload.len() + 64);
        sse.push_str("event: ephemeral_event\ndata: {\"event_type\":");
        let data_start = sse.len() - "{\"event_type\":".len();
        sse.push_str(&json_str(event_type));
        sse.push_str(",\"payload\":");
        let payload_start = sse.len();
        sse.push_str(payload);
        let payload_end = sse.len();
        sse.push('}');
        let data_end = sse.len();
        sse.push_str("\n\n");
        assemble(
            FrameKind::Ephemeral,
            None,
            Source::Worker,
            false,
            sse,
            data_start..data_end,
            payload_start..payload_end,
        )
    }

    pub fn delivery(event_id: &str, status: Delivery, timestamp: &str) -> Arc<Frame> {
        let data = format!(
            "{{\"event_id\":{},\"status\":\"{}\",\"timestamp\":{}}}",
            json_str(event_id),
            status.as_str(),
            json_str(timestamp)
        );
        let prefix = "event: delivery_update\ndata: ";
        let sse = format!("{prefix}{data}\n\n");
        let data_range = prefix.len()..prefix.len() + data.len();
        assemble(
            FrameKind::DeliveryUpdate,
            None,
            Source::Relay,
            false,
            sse,
            data_range,
            0..0,
        )
    }

    /// [`SSE_CATCH_UP_TRUNCATED`] as a frame, for a gap found in the middle of a stream.
    pub fn catch_up_truncated() -> Arc<Frame> {
        let sse = SSE_CATCH_UP_TRUNCATED.to_owned();
        let data = sse.find("{}").unwrap_or(0);
        assemble(
            FrameKind::CatchUpTruncated,
            None,
            Source::Relay,
            false,
            sse,
            data..data + 2,
            0..0,
        )
    }

    /// `{"event":…,"id":…,"data":…}` for `/ws?envelope=1` (rendered once, then shared).
    pub fn ws_envelope(&self) -> Utf8Bytes {
        self.ws_envelope
            .get_or_init(|| {
                let id = self
                    .seq
                    .map_or_else(|| "null".to_owned(), |s| s.to_string());
                let data = std::str::from_utf8(&self.data).unwrap_or("{}");
                Utf8Bytes::from(format!(
                    "{{\"event\":\"{}\",\"id\":{id},\"data\":{data}}}",
                    self.kind.event_name()
                ))
            })
            .clone()
    }

    /// The bare payload plus `\n`, for the SDK's `websocket` transport (rendered once, then shared).
    pub fn ws_line(&self) -> Utf8Bytes {
        self.ws_line
            .get_or_init(|| {
                Utf8Bytes::from(format!("{}\n", String::from_utf8_lossy(&self.payload)))
            })
            .clone()
    }
}

/// `event: catch_up_truncated` (data must be non-empty for the SDK).
pub const SSE_CATCH_UP_TRUNCATED: &str = "event: catch_up_truncated\ndata: {}\n\n";
pub const WS_CATCH_UP_TRUNCATED: &str =
    "{\"event\":\"catch_up_truncated\",\"id\":null,\"data\":{}}";
pub const SSE_KEEPALIVE: &str = ": keepalive\n\n";

/// The relay's own frame type for a change in the session's sources (never from the CLI).
const SOURCES_CHANGED: &str = "sources_changed";

/// How a CLI stdout message is routed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    Durable,
    Ephemeral,
    /// `keep_alive`: dropped.
    Drop,
}

/// `stream_event`, `sources_changed` and the system subtypes the SDK accepts only on the
/// ephemeral channel (CCR-WIRE §2.7, [`MessageType::is_ephemeral`]) are ephemeral,
/// `keep_alive` is dropped, everything else (unknown types too) is stored.
pub fn route_worker(v: &Value) -> Route {
    match MessageType::of(v) {
        Some(MessageType::KeepAlive) => Route::Drop,
        Some(MessageType::Other(SOURCES_CHANGED)) => Route::Ephemeral,
        Some(ty) if ty.is_ephemeral(v) => Route::Ephemeral,
        _ => Route::Durable,
    }
}

/// A CLI stdout line's tags, read without building it ([`bridge_protocol::kind::Tags`]); `None`
/// when the line needs a `serde_json::Value` to say what it is (not JSON, no string `type`, a
/// repeated key): the caller reads it as one.
pub fn peek_line(text: &str) -> Option<bridge_protocol::kind::Tags<'_>> {
    bridge_protocol::kind::Tags::peek(text)
}

/// [`route_worker`], from a line's tags.
pub fn route_tags(tags: &bridge_protocol::kind::Tags<'_>) -> Route {
    match tags.kind() {
        MessageType::KeepAlive => Route::Drop,
        MessageType::Other(SOURCES_CHANGED) => Route::Ephemeral,
        _ if tags.is_ephemeral() => Route::Ephemeral,
        _ => Route::Durable,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn routes_from_tags_agree_with_routes_from_values() {
        let mut lines: Vec<String> = [
            r#"{"type":"stream_event","event":{}}"#,
            r#"{"type":"keep_alive"}"#,
            r#"{"type":"sources_changed"}"#,
            r#"{"type":"system","subtype":"init"}"#,
            r#"{"type":"system"}"#,
            r#"{"type":"assistant","message":{}}"#,
            r#"{"type":"something_new"}"#,
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        for sub in bridge_protocol::SystemMessage::EPHEMERAL_SUBTYPES {
            lines.push(format!(r#"{{"type":"system","subtype":"{sub}"}}"#));
        }
        for line in &lines {
            let v: Value = serde_json::from_str(line).unwrap();
            let tags = peek_line(line).unwrap();
            assert_eq!(route_tags(&tags), route_worker(&v), "{line}");
        }
    }

    #[test]
    fn routes() {
        assert_eq!(
            route_worker(&json!({"type":"stream_event"})),
            Route::Ephemeral
        );
        assert_eq!(
            route_worker(&json!({"type":"system","subtype":"thinking_tokens"})),
            Route::Ephemeral
        );
        assert_eq!(
            route_worker(&json!({"type":"system","subtype":"init"})),
            Route::Durable
        );
        assert_eq!(route_worker(&json!({"type":"keep_alive"})), Route::Drop);
        assert_eq!(route_worker(&json!({"type":"assistant"})), Route::Durable);
        assert_eq!(
            route_worker(&json!({"type":"something_new"})),
            Route::Durable
        );
        for sub in bridge_protocol::SystemMessage::EPHEMERAL_SUBTYPES {
            assert_eq!(
                route_worker(&json!({"type":"system","subtype":sub})),
                Route::Ephemeral
            );
        }
        assert_eq!(
            route_worker(&json!({"type":"sources_changed"})),
            Route::Ephemeral
        );
        assert_eq!(route_worker(&json!({"type":"system"})), Route::Durable);
        assert_eq!(
            route_worker(&json!({"type":"user","subtype":"thinking_tokens"})),
            Route::Durable
        );
    }

    #[test]
    fn durable_frame_keeps_payload_bytes() {
        let raw = r#"{"type":"assistant","x":1.0,"z":"é"}"#;
        let e = StoredEvent {
            session_id: "s".into(),
            seq: 7,
            event_id: "ev".into(),
            event_type: "assistant".into(),
            source: Source::Worker,
            created_at: "t".into(),
            payload: raw.into(),
            client_uuid: None,
        };
        let f = Frame::durable(&e);
        let sse = std::str::from_utf8(&f.sse).unwrap();
        assert!(sse.starts_with(
            "id: 7\nevent: client_event\ndata: {\"event_id\":\"ev\",\"sequence_num\":7"
        ));
        assert!(sse.contains(raw), "{sse}");
        assert!(sse.ends_with("}\n\n"));
        let v: Value = serde_json::from_slice(&f.data).unwrap();
        assert_eq!(v["source"], "worker");
        assert_eq!(v["payload"]["z"], "é");
        assert_eq!(&f.payload[..], raw.as_bytes(), "payload is the exact bytes");
        assert_eq!(&f.data[..], envelope_json(&e).as_bytes());
        assert_eq!(
            sse,
            format!(
                "id: 7\nevent: client_event\ndata: {}\n\n",
                envelope_json(&e)
            )
        );
        assert_eq!(f.ws_line().as_str(), format!("{raw}\n"));
        assert!(!f.ends_session && Frame::durable_with(&e, true).ends_session);
        let ws: Value = serde_json::from_str(&f.ws_envelope()).unwrap();
        assert_eq!(ws["event"], "client_event");
        assert_eq!(ws["id"], 7);
        assert_eq!(ws["data"]["sequence_num"], 7);
    }

    #[test]
    fn delivery_and_ephemeral_shapes() {
        let d = Frame::delivery("e1", Delivery::Received, "t");
        assert_eq!(
            std::str::from_utf8(&d.sse).unwrap(),
            "event: delivery_update\ndata: {\"event_id\":\"e1\",\"status\":\"DELIVERY_STATUS_RECEIVED\",\"timestamp\":\"t\"}\n\n"
        );
        assert_eq!(
            &d.data[..],
            &b"{\"event_id\":\"e1\",\"status\":\"DELIVERY_STATUS_RECEIVED\",\"timestamp\":\"t\"}"[..]
        );
        assert!(d.payload.is_empty());
        let e = Frame::ephemeral("stream_event", "{\"type\":\"stream_event\"}");
        assert_eq!(
            std::str::from_utf8(&e.sse).unwrap(),
            "event: ephemeral_event\ndata: {\"event_type\":\"stream_event\",\"payload\":{\"type\":\"stream_event\"}}\n\n"
        );
        assert_eq!(&e.payload[..], b"{\"type\":\"stream_event\"}");
        assert_eq!(
            &e.data[..],
            &b"{\"event_type\":\"stream_event\",\"payload\":{\"type\":\"stream_event\"}}"[..]
        );
        let ws: Value = serde_json::from_str(&e.ws_envelope()).unwrap();
        assert_eq!(
            ws,
            json!({"event":"ephemeral_event","id":null,"data":{"event_type":"stream_event","payload":{"type":"stream_event"}}})
        );
    }
}
