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

use crate::core::auth::{Principal, Role as AuthRole};
use crate::core::frames::{Delivery, Frame, FrameKind};
use crate::core::store::{Source, StoredEvent};

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

/// The status a reply carries in its [`STATUS_HEADER`], if any.
pub fn reply_status(m: &async_nats::Message) -> Option<u16> {
    m.headers
        .as_ref()
        .and_then(|h| h.get(STATUS_HEADER))
        .and_then(|v| v.as_str().parse::<u16>().ok())
}

/// A message whose body is in the object store [`OBJECTS_BUCKET`] under this name (its payload is
/// the reference: name, size, SHA-256).
pub const OBJECT_HEADER: &str = "Bridge-Object";
/// The object store of messages larger than the server's `max_payload`.
pub const OBJECTS_BUCKET: &str = "bridge_objects";
/// The id of the last event a log message holds.
pub const EVENT_ID_HEADER: &str = "Bridge-Event-Id";
/// Room kept for headers below `max_payload`.
pub const HEADER_ROOM: usize = 16 * 1024;

/// What a reply's seal covers: its status and its body.
pub fn reply_content(status: u16, body: &[u8]) -> Vec<u8> {
    let mut v = format!("{status} ").into_bytes();
    v.extend_from_slice(body);
    v
}

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

/// Requests about the Claude Code CLI's own sessions on one agents node's machine ([`CliAsk`]).
pub fn cli_subject(node: &str) -> String {
    format!("bridge.cli.{node}")
}

pub use crate::core::util::valid_session_id;

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
    /// The payload's length in bytes when another event follows it in the same message (a batch);
    /// absent for the last (or only) one, whose payload runs to the end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    len: Option<usize>,
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

fn event_meta(ev: &StoredEvent, ends: bool, len: Option<usize>) -> EventMeta {
    EventMeta {
        seq: ev.seq,
        event_id: ev.event_id.clone(),
        event_type: ev.event_type.clone(),
        source: ev.source.clone(),
        created_at: ev.created_at.clone(),
        uuid: ev.client_uuid.clone(),
        ends,
        len,
    }
}

/// One event as one message.
pub fn encode_event(ev: &StoredEvent, ends: bool) -> Bytes {
    with_payload(&event_meta(ev, ends, None), ev.payload.as_bytes())
}

/// Consecutive events as one message (a host publishes whatever queued up while its previous
/// message was in flight): `meta\npayload` per event, each payload but the last with its length
/// in its meta. One event encodes exactly as [`encode_event`].
pub fn encode_events(events: &[(StoredEvent, bool)]) -> Bytes {
    let mut out = BytesMut::new();
    for (i, (ev, ends)) in events.iter().enumerate() {
        let len = (i + 1 < events.len()).then_some(ev.payload.len());
        let head = serde_json::to_vec(&event_meta(ev, *ends, len)).unwrap_or_default();
        out.reserve(head.len() + 1 + ev.payload.len());
        out.put_slice(&head);
        out.put_u8(b'\n');
        out.put_slice(ev.payload.as_bytes());
    }
    out.freeze()
}

/// Whether `payload` is one line of JSON, as every payload the relay stores is: what comes from NATS
/// goes into SSE `data:` lines, where a raw CR or LF would start a line of its own (a forged `id:`
/// or `event:`), so anything else is refused.
pub fn one_line_json(payload: &[u8]) -> bool {
    !payload.iter().any(|b| matches!(b, b'\n' | b'\r'))
        && serde_json::from_slice::<serde::de::IgnoredAny>(payload).is_ok()
}

/// Whether `s` (an event's type, id or time) holds no control character.
fn plain(s: &str) -> bool {
    !s.chars().any(char::is_control)
}

fn stored(session_id: &str, m: EventMeta, payload: &[u8]) -> Option<(StoredEvent, bool)> {
    if !one_line_json(payload)
        || !plain(&m.event_id)
        || !plain(&m.event_type)
        || !plain(&m.created_at)
    {
        return None;
    }
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

/// The events of one message, in order (one, or a batch); `None` when any part is malformed.
pub fn decode_events(session_id: &str, mut body: &[u8]) -> Option<Vec<(StoredEvent, bool)>> {
    let mut out = Vec::new();
    loop {
        let (head, rest) = split(body)?;
        let m: EventMeta = serde_json::from_slice(head).ok()?;
        match m.len {
            Some(len) if len <= rest.len() => {
                let (payload, next) = rest.split_at(len);
                out.push(stored(session_id, m, payload)?);
                body = next;
            }
            Some(_) => return None,
            None => {
                out.push(stored(session_id, m, rest)?);
                return Some(out);
            }
        }
    }
}

/// The last event of a message (its only one, unless it is a batch).
pub fn decode_event(session_id: &str, body: &[u8]) -> Option<(StoredEvent, bool)> {
    decode_events(session_id, body)?.pop()
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
            if !plain(&ty) || !one_line_json(payload) {
                return None;
            }
            Some(Frame::ephemeral(&ty, std::str::from_utf8(payload).ok()?))
        }
        LiveMeta::Delivery {
            event_id,
            status,
            at,
        } => {
            if !plain(&event_id) || !plain(&at) {
                return None;
            }
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
    /// May read Claude Code's transcripts (absent: no).
    #[serde(default)]
    pub transcripts: bool,
}

impl Who {
    pub fn of(p: &Principal) -> Who {
        Who {
            controller: p.can_write(),
            token_id: p.token_id.clone(),
            session_scope: p.session_scope.clone(),
            transcripts: p.transcripts,
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
            transcripts: self.controller || (self.transcripts && self.session_scope.is_none()),
        }
    }
}

/// What a gateway asks a session's host (`bridge.in.<id>`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Input {
    /// `POST …/events` (or a WebSocket frame): the payloads, ingested all-or-nothing. `device`:
    /// an answer given on a notification names its device (audit records, a later 409).
    Ingest {
        who: Who,
        payloads: Vec<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        device: Option<crate::features::push::Device>,
    },
    /// `GET /v1/code/sessions/{id}`.
    Detail { who: Who },
    /// `POST …/archive`.
    Archive { who: Who, discard_worktree: bool },
    /// `DELETE /v1/code/sessions/{id}`.
    Delete { who: Who, force: bool },
    /// A request only the host can answer (its disk or its agent: `GET …/changes`,
    /// `…/changes/diff?path=`, `POST …/fork`, `…/rewind`), run through the host's own routes.
    Http(HttpRequest),
}

/// An HTTP request a gateway forwards, to be run through another node's own routes as `who`
/// ([`Input::Http`], [`CliAsk::Http`]). `path` holds the query; `body` is the request's body (JSON
/// text, or empty).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HttpRequest {
    pub who: Who,
    pub method: String,
    pub path: String,
    #[serde(default)]
    pub body: String,
}

/// The requests [`Input::Http`] carries: `(method, path under /v1/code/sessions/{id})`. Reads run
/// beside the session's other input; writes wait their turn in its lane.
pub const HOST_ONLY: &[(&str, &str)] = &[
    ("GET", "/changes"),
    ("GET", "/changes/diff"),
    ("POST", "/fork"),
    ("POST", "/rewind"),
];

/// Whether `method` on `tail` (the path after `/v1/code/sessions/{id}`, no query) is host-only.
pub fn host_only(method: &str, tail: &str) -> bool {
    HOST_ONLY.iter().any(|(m, t)| *m == method && *t == tail)
}

/// What a gateway asks an agents node (`bridge.cli.<node>`) about the CLI's transcripts on its
/// machine, which only it can read.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum CliAsk {
    /// Its CLI sessions that no relay session owns: a JSON array of list entries.
    List { who: Who },
    /// Whether it holds CLI session `id`: 204 or 404.
    Holds { id: String },
    /// A request about one CLI session ([`cli_route`]), run through the node's own routes as
    /// `who` (same rights, statuses and bodies as a single relay).
    Http(HttpRequest),
}

/// Where the CLI sessions' routes start.
pub const CLI_SESSIONS: &str = "/v1/code/cli-sessions/";

/// The id in `path` (no query) when `method path` is a request about one CLI session that a
/// gateway forwards to the node holding it: `GET /v1/code/cli-sessions/{id}`, or `POST` of its
/// `/resume`, `/fork` or `/rewind`.
pub fn cli_route<'a>(method: &str, path: &'a str) -> Option<&'a str> {
    let rest = path.strip_prefix(CLI_SESSIONS)?;
    let (id, tail) = rest.split_once('/').unwrap_or((rest, ""));
    let ok = matches!(
        (method, tail),
        ("GET", "") | ("POST", "resume" | "fork" | "rewind")
    );
    (ok && !id.is_empty()).then_some(id)
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
    use serde_json::json;

    /// A forwarded request's fields stand beside `op`, as nodes of every version write them;
    /// `body` may be left out.
    #[test]
    fn a_forwarded_request_is_flat_beside_its_op() {
        let http = json!({
            "op": "http",
            "who": {"controller": true, "token_id": "controller"},
            "method": "GET",
            "path": "/v1/code/sessions/cse_1/changes?x=1",
        });
        let Ok(Input::Http(request)) = serde_json::from_value(http.clone()) else {
            panic!("not an Input::Http");
        };
        assert_eq!(
            (request.method.as_str(), request.body.as_str()),
            ("GET", "")
        );
        let mut written = serde_json::to_value(CliAsk::Http(request)).unwrap();
        assert_eq!(
            written.as_object_mut().unwrap().remove("body"),
            Some(json!(""))
        );
        written["who"] = http["who"].clone();
        assert_eq!(written, http);
    }

    #[test]
    fn events_that_would_break_an_sse_line_are_refused() {
        let ev = |payload: &str, event_type: &str| StoredEvent {
            session_id: "cse_1".into(),
            seq: 3,
            event_id: "e3".into(),
            event_type: event_type.into(),
            source: crate::core::store::Source::Worker,
            created_at: "2026-01-01T00:00:00Z".into(),
            payload: payload.into(),
            client_uuid: None,
        };
        let good = encode_event(
            &ev(r#"{"type":"assistant","text":"a\nb"}"#, "assistant"),
            false,
        );
        assert!(decode_events("cse_1", &good).is_some());
        for bad in [
            ev("{\"type\":\"x\"}\nid: 999\nevent: forged", "assistant"),
            ev("{\"type\":\r\"x\"}", "assistant"),
            ev("not json", "assistant"),
            ev(r#"{"type":"x"}"#, "assistant\nevent: forged"),
        ] {
            let body = encode_event(&bad, false);
            assert!(decode_events("cse_1", &body).is_none(), "{:?}", bad.payload);
        }
    }

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

    #[test]
    fn only_requests_about_one_cli_session_are_forwarded() {
        let id = "27784601-dc95-46a5-9f01-072efd77a9f0";
        let p = |t: &str| format!("{CLI_SESSIONS}{id}{t}");
        assert_eq!(cli_route("GET", &p("")), Some(id));
        for t in ["/resume", "/fork", "/rewind"] {
            assert_eq!(cli_route("POST", &p(t)), Some(id), "{t}");
            assert_eq!(cli_route("GET", &p(t)), None, "GET {t}");
        }
        for (m, path) in [
            ("POST", p("")),
            ("DELETE", p("")),
            ("POST", p("/other")),
            ("POST", p("/resume/x")),
            ("GET", CLI_SESSIONS.to_owned()),
            ("GET", format!("/v1/code/sessions/{id}")),
        ] {
            assert_eq!(cli_route(m, &path), None, "{m} {path}");
        }
    }

    #[test]
    fn a_batch_decodes_to_its_events_and_one_event_encodes_as_before() {
        let ev = |seq: u64, payload: &str| StoredEvent {
            session_id: "cse_x".into(),
            seq,
            event_id: format!("e{seq}"),
            event_type: "assistant".into(),
            source: Source::Worker,
            created_at: "2026-01-01T00:00:00Z".into(),
            payload: payload.into(),
            client_uuid: None,
        };
        // Payloads holding escaped newlines and what looks like a meta line.
        let batch = vec![
            (ev(3, "{\"a\":\"x\\ny\",\"b\":\"{\\\"seq\\\":99}\"}"), false),
            (ev(4, "{}"), false),
            (ev(5, "{\"type\":\"assistant\",\"ü\":1}"), true),
        ];
        let back = decode_events("cse_x", &encode_events(&batch)).unwrap();
        assert_eq!(back.len(), 3);
        for ((a, ea), (b, eb)) in back.iter().zip(&batch) {
            assert_eq!(
                (a.seq, &a.event_id, &a.payload, ea),
                (b.seq, &b.event_id, &b.payload, eb)
            );
        }
        assert_eq!(
            decode_event("cse_x", &encode_events(&batch)).unwrap().0.seq,
            5
        );
        assert_eq!(encode_events(&batch[..1]), encode_event(&batch[0].0, false));
        // A length past the end is refused, not read out of bounds.
        let two = encode_events(&batch[..2]);
        let head = two.iter().position(|b| *b == b'\n').unwrap();
        assert!(decode_events("cse_x", &two[..head + 4]).is_none());
    }
}
