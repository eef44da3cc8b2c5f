//! What subscribers receive, pre-rendered once per event and shared by every subscriber:
//! SSE text, the WebSocket envelope, and the bare payload line.

use std::sync::Arc;

use bytes::Bytes;
use serde_json::Value;

use crate::store::{Source, StoredEvent};
use crate::util::json_str;

/// The SSE `event:` name of a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameKind {
    /// Durable, stored, has a sequence number (`event: client_event`).
    ClientEvent,
    /// Not stored, no id (`event: ephemeral_event`): stream_event and projected system subtypes.
    Ephemeral,
    /// Progress of a client event (`event: delivery_update`).
    DeliveryUpdate,
}

impl FrameKind {
    pub fn event_name(self) -> &'static str {
        match self {
            FrameKind::ClientEvent => "client_event",
            FrameKind::Ephemeral => "ephemeral_event",
            FrameKind::DeliveryUpdate => "delivery_update",
        }
    }
}

/// One frame for subscribers.
#[derive(Debug)]
pub struct Frame {
    pub kind: FrameKind,
    pub seq: Option<u64>,
    pub source: Source,
    /// The JSON of the SSE `data:` line (envelope, ephemeral wrapper or delivery update).
    pub data: Bytes,
    /// The bare payload JSON (empty for delivery updates).
    pub payload: Bytes,
    /// The whole SSE frame, terminated by a blank line.
    pub sse: Bytes,
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
    format!(
        "{{\"event_id\":{},\"sequence_num\":{},\"event_type\":{},\"source\":\"{}\",\"created_at\":{},\"payload\":{}}}",
        json_str(&e.event_id),
        e.seq,
        json_str(&e.event_type),
        e.source.as_str(),
        json_str(&e.created_at),
        e.payload
    )
}

impl Frame {
    pub fn durable(e: &StoredEvent) -> Arc<Frame> {
        let data = envelope_json(e);
        let sse = format!("id: {}\nevent: client_event\ndata: {data}\n\n", e.seq);
        Arc::new(Frame {
            kind: FrameKind::ClientEvent,
            seq: Some(e.seq),
            source: e.source,
            data: Bytes::from(data),
            payload: Bytes::from(e.payload.clone()),
            sse: Bytes::from(sse),
        })
    }

    pub fn ephemeral(event_type: &str, payload: &str) -> Arc<Frame> {
        let data = format!(
            "{{\"event_type\":{},\"payload\":{payload}}}",
            json_str(event_type)
        );
        let sse = format!("event: ephemeral_event\ndata: {data}\n\n");
        Arc::new(Frame {
            kind: FrameKind::Ephemeral,
            seq: None,
            source: Source::Worker,
            data: Bytes::from(data),
            payload: Bytes::from(payload.to_owned()),
            sse: Bytes::from(sse),
        })
    }

    pub fn delivery(event_id: &str, status: Delivery, timestamp: &str) -> Arc<Frame> {
        let data = format!(
            "{{\"event_id\":{},\"status\":\"{}\",\"timestamp\":{}}}",
            json_str(event_id),
            status.as_str(),
            json_str(timestamp)
        );
        let sse = format!("event: delivery_update\ndata: {data}\n\n");
        Arc::new(Frame {
            kind: FrameKind::DeliveryUpdate,
            seq: None,
            source: Source::Relay,
            data: Bytes::from(data),
            payload: Bytes::new(),
            sse: Bytes::from(sse),
        })
    }

    /// `{"event":…,"id":…,"data":…}` for `/ws?envelope=1`.
    pub fn ws_envelope(&self) -> String {
        let id = self
            .seq
            .map_or_else(|| "null".to_owned(), |s| s.to_string());
        let data = std::str::from_utf8(&self.data).unwrap_or("{}");
        format!(
            "{{\"event\":\"{}\",\"id\":{id},\"data\":{data}}}",
            self.kind.event_name()
        )
    }
}

/// `event: catch_up_truncated` (data must be non-empty for the SDK).
pub const SSE_CATCH_UP_TRUNCATED: &str = "event: catch_up_truncated\ndata: {}\n\n";
pub const WS_CATCH_UP_TRUNCATED: &str =
    "{\"event\":\"catch_up_truncated\",\"id\":null,\"data\":{}}";
pub const SSE_KEEPALIVE: &str = ": keepalive\n\n";

/// System subtypes the SDK accepts only on the ephemeral channel (CCR-WIRE §2.7).
const EPHEMERAL_SYSTEM_SUBTYPES: &[&str] = &[
    "thinking_tokens",
    "post_turn_summary",
    "task_summary",
    "commands_changed",
];

/// How a CLI stdout message is routed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    Durable,
    Ephemeral,
    /// `keep_alive`: dropped.
    Drop,
}

pub fn route_worker(v: &Value) -> Route {
    let ty = v.get("type").and_then(Value::as_str).unwrap_or("");
    match ty {
        "stream_event" | "sources_changed" => Route::Ephemeral,
        "keep_alive" => Route::Drop,
        "system" => {
            let sub = v.get("subtype").and_then(Value::as_str).unwrap_or("");
            if EPHEMERAL_SYSTEM_SUBTYPES.contains(&sub) {
                Route::Ephemeral
            } else {
                Route::Durable
            }
        }
        _ => Route::Durable,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
        let e = Frame::ephemeral("stream_event", "{\"type\":\"stream_event\"}");
        let ws: Value = serde_json::from_str(&e.ws_envelope()).unwrap();
        assert_eq!(
            ws,
            json!({"event":"ephemeral_event","id":null,"data":{"event_type":"stream_event","payload":{"type":"stream_event"}}})
        );
    }
}
