//! What travels over NATS: subject names, the encoding of durable events and live frames, the
//! input requests a gateway sends to a session's host and the host's verdicts.
//!
//! Bodies are one line of JSON metadata, `\n`, then the payload verbatim, so the event a gateway
//! serves is byte for byte the host's (same `event_id`, `created_at`, payload text). Nothing a
//! client or agent wrote ever goes into a NATS header (no CR/LF injection): only numbers and ids
//! the relay made.

use std::sync::Arc;

use bytes::{BufMut as _, Bytes, BytesMut};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::auth::{Principal, Role as AuthRole};
use crate::frames::{Delivery, Frame, FrameKind};
use crate::store::{Source, StoredEvent};

/// The JetStream stream holding every session's durable log.
pub const EVENTS_STREAM: &str = "BRIDGE_EVENTS";
/// Session registry: id → [`RegistryEntry`].
pub const SESSIONS_BUCKET: &str = "bridge_sessions";
/// Node heartbeats: node name → [`NodeEntry`].
pub const NODES_BUCKET: &str = "bridge_nodes";
/// The host's dense per-session sequence number of an event.
pub const SEQ_HEADER: &str = "Bridge-Seq";
/// The HTTP status of a host's verdict.
pub const STATUS_HEADER: &str = "Bridge-Status";

pub fn events_subject(session_id: &str) -> String {
    format!("bridge.ev.{session_id}")
}

pub fn live_subject(session_id: &str) -> String {
    format!("bridge.live.{session_id}")
}

pub fn input_subject(session_id: &str) -> String {
    format!("bridge.in.{session_id}")
}

pub fn create_subject(node: &str) -> String {
    format!("bridge.create.{node}")
}

/// A session id usable as one subject token (the relay makes `cse_<hex>`; anything else is refused).
pub fn valid_session_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

#[derive(Serialize, Deserialize)]
struct EventMeta {
    seq: u64,
    event_id: String,
    event_type: String,
    source: Source,
    created_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    uuid: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    ends: bool,
}

fn with_payload(meta: &impl Serialize, payload: &[u8]) -> Bytes {
    let head = serde_json::to_vec(meta).unwrap_or_default();
    let mut out = BytesMut::with_capacity(head.len() + 1 + payload.len());
    out.put_slice(&head);
    out.put_u8(b'\n');
    out.put_slice(payload);
    out.freeze()
}

fn split(body: &[u8]) -> Option<(&[u8], &[u8])> {
    let nl = body.iter().position(|b| *b == b'\n')?;
    Some((&body[..nl], &body[nl + 1..]))
}

pub fn encode_event(ev: &StoredEvent, ends: bool) -> Bytes {
    let meta = EventMeta {
        seq: ev.seq,
        event_id: ev.event_id.clone(),
        event_type: ev.event_type.clone(),
        source: ev.source.clone(),
        created_at: ev.created_at.clone(),
        uuid: ev.client_uuid.clone(),
        ends,
    };
    with_payload(&meta, ev.payload.as_bytes())
}

pub fn decode_event(session_id: &str, body: &[u8]) -> Option<(StoredEvent, bool)> {
    let (head, payload) = split(body)?;
    let m: EventMeta = serde_json::from_slice(head).ok()?;
    let payload = std::str::from_utf8(payload).ok()?.to_owned();
    Some((
        StoredEvent {
            session_id: session_id.to_owned(),
            seq: m.seq,
            event_id: m.event_id,
            event_type: m.event_type,
            source: m.source,
            created_at: m.created_at,
            payload,
            client_uuid: m.uuid,
        },
        m.ends,
    ))
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "k")]
enum LiveMeta {
    #[serde(rename = "e")]
    Ephemeral { ty: String },
    #[serde(rename = "d")]
    Delivery {
        event_id: String,
        status: String,
        at: String,
    },
}

/// The `event_type` of an ephemeral frame: its data is `{"event_type":<string>,"payload":<payload>}`.
fn ephemeral_type(f: &Frame) -> Option<String> {
    const HEAD: &[u8] = b"{\"event_type\":";
    const MID: &[u8] = b",\"payload\":";
    let d = &f.data[..];
    let end = d.len().checked_sub(1 + f.payload.len() + MID.len())?;
    if !d.starts_with(HEAD) || end < HEAD.len() || &d[end..end + MID.len()] != MID {
        return serde_json::from_slice::<Value>(d)
            .ok()?
            .get("event_type")?
            .as_str()
            .map(str::to_owned);
    }
    serde_json::from_slice(&d[HEAD.len()..end]).ok()
}

/// A live frame for `bridge.live.<id>`; `None` for kinds that are not sent (catch-up markers).
pub fn encode_live(f: &Frame) -> Option<Bytes> {
    match f.kind {
        FrameKind::Ephemeral => {
            let meta = LiveMeta::Ephemeral {
                ty: ephemeral_type(f)?,
            };
            Some(with_payload(&meta, &f.payload))
        }
        FrameKind::DeliveryUpdate => {
            let v: Value = serde_json::from_slice(&f.data).ok()?;
            let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
            let meta = LiveMeta::Delivery {
                event_id: s("event_id"),
                status: s("status"),
                at: s("timestamp"),
            };
            Some(with_payload(&meta, b""))
        }
        _ => None,
    }
}

pub fn decode_live(body: &[u8]) -> Option<Arc<Frame>> {
    let (head, payload) = split(body)?;
    match serde_json::from_slice(head).ok()? {
        LiveMeta::Ephemeral { ty } => {
            Some(Frame::ephemeral(&ty, std::str::from_utf8(payload).ok()?))
        }
        LiveMeta::Delivery {
            event_id,
            status,
            at,
        } => {
            let status = [
                Delivery::Received,
                Delivery::Processing,
                Delivery::Processed,
            ]
            .into_iter()
            .find(|d| d.as_str() == status)?;
            Some(Frame::delivery(&event_id, status, &at))
        }
    }
}

/// Who is asking, as the gateway authenticated them (every process shares the host token; observer
/// tokens across gateways are a later slice).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Who {
    pub controller: bool,
    pub token_id: String,
    #[serde(default)]
    pub session_scope: Option<String>,
}

impl Who {
    pub fn of(p: &Principal) -> Who {
        Who {
            controller: p.can_write(),
            token_id: p.token_id.clone(),
            session_scope: p.session_scope.clone(),
        }
    }

    pub fn principal(&self) -> Principal {
        Principal {
            role: if self.controller {
                AuthRole::Controller
            } else {
                AuthRole::Observer
            },
            token_id: self.token_id.clone(),
            session_scope: self.session_scope.clone(),
            login_id: None,
        }
    }
}

/// What a gateway asks a session's host (`bridge.in.<id>`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Input {
    /// `POST …/events` (or a WebSocket frame): the payloads, ingested all-or-nothing.
    Ingest { who: Who, payloads: Vec<Value> },
    /// `GET /v1/code/sessions/{id}`.
    Detail { who: Who },
    /// `POST …/archive`.
    Archive { who: Who, discard_worktree: bool },
    /// `DELETE /v1/code/sessions/{id}`.
    Delete { who: Who, force: bool },
}

/// A session in the registry: the host's summary and which node runs it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RegistryEntry {
    pub node: String,
    pub summary: bridge_protocol::api::SessionSummary,
}

/// A node's heartbeat.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NodeEntry {
    pub node: String,
    /// Runs agents (role `agents` or `all`).
    pub agents: bool,
    /// Sessions with a running agent, and the most it takes (--max-sessions).
    pub load: usize,
    pub max_sessions: usize,
    /// Its default working directory (--cwd).
    pub cwd: String,
    /// Unix seconds of this heartbeat.
    pub at: u64,
}

pub fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_and_live_frames_round_trip_byte_for_byte() {
        let ev = StoredEvent {
            session_id: "cse_x".into(),
            seq: 7,
            event_id: "e1".into(),
            event_type: "user".into(),
            source: Source::Client,
            created_at: "2026-01-01T00:00:00Z".into(),
            payload: "{\"type\":\"user\",\"x\":\"a\\nb <script>\"}".into(),
            client_uuid: Some("u\r\nInjected: 1".into()),
        };
        let (back, ends) = decode_event("cse_x", &encode_event(&ev, true)).unwrap();
        assert!(ends);
        assert_eq!(Frame::durable(&back).sse, Frame::durable(&ev).sse);
        assert_eq!(back.client_uuid, ev.client_uuid);
        let f = Frame::ephemeral("stream_event", "{\"type\":\"stream_event\",\"d\":1}");
        assert_eq!(decode_live(&encode_live(&f).unwrap()).unwrap().sse, f.sse);
        let d = Frame::delivery("e1", Delivery::Processed, "t");
        assert_eq!(decode_live(&encode_live(&d).unwrap()).unwrap().sse, d.sse);
    }
}
