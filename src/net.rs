//! All network I/O of the console, behind a small interface: the relay's REST calls, the session
//! event stream (SSE over fetch streaming, resumed by sequence number), and posting events.
//!
//! Nothing else in the crate touches the network; swapping in `bridge-transport` means changing
//! this file only. The SSE parser ([`SseParser`]) is sans-IO and tested natively.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use futures::future::LocalBoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::state::Source;

/// A failed request.
#[derive(Clone, Debug, PartialEq)]
pub enum NetError {
    /// The relay answered with an HTTP error (status, its `error.message`).
    Status(u16, String),
    /// No answer (offline, relay down, aborted).
    Network(String),
    /// The answer could not be read.
    Decode(String),
}

impl NetError {
    /// HTTP status, if the relay answered.
    pub fn status(&self) -> Option<u16> {
        match self {
            NetError::Status(s, _) => Some(*s),
            _ => None,
        }
    }
}

impl std::fmt::Display for NetError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NetError::Status(code, msg) if msg.is_empty() => {
                write!(f, "the relay answered HTTP {code}")
            }
            NetError::Status(code, msg) => write!(f, "{msg} (HTTP {code})"),
            NetError::Network(e) => write!(f, "could not reach the relay: {e}"),
            NetError::Decode(e) => write!(f, "unreadable answer from the relay: {e}"),
        }
    }
}

/// `GET /v1/me`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
pub struct Me {
    /// `controller` or `observer`.
    pub role: String,
    /// The one session an observer token is scoped to, if any.
    #[serde(default)]
    pub session_id: Option<String>,
}

impl Me {
    /// Observer role.
    pub fn is_observer(&self) -> bool {
        self.role != "controller"
    }
}

/// One entry of `GET /v1/code/sessions`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
pub struct SessionSummary {
    /// Session id.
    pub id: String,
    /// `idle`, `running`, `requires_action`, `ended`.
    #[serde(default)]
    pub state: String,
    /// Working directory.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Model.
    #[serde(default)]
    pub model: Option<String>,
    /// Permission mode.
    #[serde(default)]
    pub permission_mode: Option<String>,
    /// Title.
    #[serde(default)]
    pub title: Option<String>,
    /// Creation time.
    #[serde(default)]
    pub created_at: Option<Value>,
    /// Last activity.
    #[serde(default)]
    pub last_activity_at: Option<Value>,
    /// Pending permission prompts.
    #[serde(default)]
    pub pending_permissions: u64,
}

/// `POST /v1/code/sessions` body.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct NewSession {
    /// Working directory (relay default when absent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Permission mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permission_mode: Option<String>,
    /// Title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// One frame from the session stream.
#[derive(Clone, Debug, PartialEq)]
pub struct Incoming {
    /// Who wrote it.
    pub source: Source,
    /// Durable sequence number (None for ephemeral frames).
    pub seq: Option<u64>,
    /// The CLI / client message.
    pub payload: Value,
}

/// Connection state shown in the header (`data-state`).
#[derive(Clone, Debug, PartialEq)]
pub enum ConnState {
    /// First connection attempt.
    Connecting,
    /// Streaming.
    Live,
    /// Waiting to retry (seconds left, attempt number).
    Reconnecting {
        /// Seconds until the next attempt.
        in_secs: u32,
        /// Attempt number.
        attempt: u32,
    },
    /// Not connected and not retrying (reason).
    Offline(String),
}

impl ConnState {
    /// `data-state` value.
    pub fn as_str(&self) -> &'static str {
        match self {
            ConnState::Connecting => "connecting",
            ConnState::Live => "live",
            ConnState::Reconnecting { .. } => "reconnecting",
            ConnState::Offline(_) => "offline",
        }
    }

    /// Human label.
    pub fn label(&self) -> String {
        match self {
            ConnState::Connecting => "Connecting…".into(),
            ConnState::Live => "Live".into(),
            ConnState::Reconnecting { in_secs, .. } => format!("Reconnecting in {in_secs}s"),
            ConnState::Offline(why) => format!("Offline: {why}"),
        }
    }
}

/// What the stream reports.
#[derive(Clone, Debug, PartialEq)]
pub enum StreamEvent {
    /// A frame.
    Frame(Incoming),
    /// Connection state changed.
    State(ConnState),
    /// The relay could not replay from our cursor (history beyond retention).
    Truncated,
}

/// Sends events to a session. The store holds one; tests inject a fake through context.
pub trait Sender {
    /// Posts one payload (`POST /v1/code/sessions/{id}/events`).
    fn post_event(
        &self,
        session_id: &str,
        payload: Value,
    ) -> LocalBoxFuture<'static, Result<(), NetError>>;
}

/// The real [`Sender`]: HTTP POST to the relay (cookie auth, same origin).
#[derive(Clone, Copy, Debug, Default)]
pub struct HttpSender;

impl Sender for HttpSender {
    fn post_event(
        &self,
        session_id: &str,
        payload: Value,
    ) -> LocalBoxFuture<'static, Result<(), NetError>> {
        let url = format!("/v1/code/sessions/{}/events", enc(session_id));
        let body = serde_json::json!({"session_id": session_id, "events": [{"payload": payload}]});
        Box::pin(async move { request_json("POST", &url, Some(&body)).await.map(|_| ()) })
    }
}

/// Percent-encodes a path segment.
pub fn enc(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for b in segment.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

async fn request_json(method: &str, url: &str, body: Option<&Value>) -> Result<Value, NetError> {
    use gloo_net::http::Request;
    let builder = match method {
        "POST" => Request::post(url),
        "DELETE" => Request::delete(url),
        _ => Request::get(url),
    }
    .header("Accept", "application/json");
    let resp = match body {
        Some(b) => {
            builder
                .json(b)
                .map_err(|e| NetError::Decode(e.to_string()))?
                .send()
                .await
        }
        None => builder.send().await,
    }
    .map_err(|e| NetError::Network(e.to_string()))?;
    let status = resp.status();
    let text = resp.text().await.unwrap_or_default();
    if !(200..300).contains(&status) {
        let msg = serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|v| {
                v.get("error")
                    .and_then(|e| e.get("message"))
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
            .unwrap_or_default();
        return Err(NetError::Status(status, msg));
    }
    if text.trim().is_empty() {
        return Ok(Value::Null);
    }
    serde_json::from_str(&text).map_err(|e| NetError::Decode(e.to_string()))
}

/// `POST /v1/auth/login` with the one-time token from the URL fragment.
pub async fn login(token: &str) -> Result<(), NetError> {
    request_json(
        "POST",
        "/v1/auth/login",
        Some(&serde_json::json!({ "token": token })),
    )
    .await
    .map(|_| ())
}

/// `POST /v1/auth/logout`.
pub async fn logout() -> Result<(), NetError> {
    request_json("POST", "/v1/auth/logout", None)
        .await
        .map(|_| ())
}

/// `GET /v1/me`.
pub async fn me() -> Result<Me, NetError> {
    let v = request_json("GET", "/v1/me", None).await?;
    serde_json::from_value(v).map_err(|e| NetError::Decode(e.to_string()))
}

/// `GET /v1/code/sessions`.
pub async fn list_sessions() -> Result<Vec<SessionSummary>, NetError> {
    let v = request_json("GET", "/v1/code/sessions", None).await?;
    let list = v.get("sessions").cloned().unwrap_or(Value::Array(vec![]));
    serde_json::from_value(list).map_err(|e| NetError::Decode(e.to_string()))
}

/// `POST /v1/code/sessions`; returns the new session id.
pub async fn create_session(req: &NewSession) -> Result<String, NetError> {
    let body = serde_json::to_value(req).map_err(|e| NetError::Decode(e.to_string()))?;
    let v = request_json("POST", "/v1/code/sessions", Some(&body)).await?;
    v.get("session_id")
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| NetError::Decode("no session_id in the answer".into()))
}

/// `POST /v1/code/sessions/{id}/archive`.
pub async fn archive_session(id: &str) -> Result<(), NetError> {
    request_json(
        "POST",
        &format!("/v1/code/sessions/{}/archive", enc(id)),
        None,
    )
    .await
    .map(|_| ())
}

/// `GET /v1/code/sessions/{id}` (includes the `initialize` answer).
pub async fn get_session(id: &str) -> Result<Value, NetError> {
    request_json("GET", &format!("/v1/code/sessions/{}", enc(id)), None).await
}

// ---------------------------------------------------------------------------------------------
// SSE

/// One server-sent event.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SseEvent {
    /// `event:` (default `message`).
    pub event: String,
    /// `data:` lines joined by `\n`.
    pub data: String,
    /// `id:`, if the event had one.
    pub id: Option<String>,
}

/// A push parser for `text/event-stream`: feed it bytes split anywhere, get whole events.
#[derive(Debug, Default)]
pub struct SseParser {
    buf: Vec<u8>,
    event: String,
    data: Option<String>,
    id: Option<String>,
    skip_lf: bool,
}

impl SseParser {
    /// A new parser.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds bytes; returns the events completed by them.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        let mut out = Vec::new();
        for &b in chunk {
            if self.skip_lf {
                self.skip_lf = false;
                if b == b'\n' {
                    continue;
                }
            }
            if b == b'\n' || b == b'\r' {
                self.skip_lf = b == b'\r';
                let line = std::mem::take(&mut self.buf);
                self.line(&String::from_utf8_lossy(&line), &mut out);
            } else {
                self.buf.push(b);
            }
        }
        out
    }

    fn line(&mut self, line: &str, out: &mut Vec<SseEvent>) {
        if line.is_empty() {
            if let Some(data) = self.data.take() {
                out.push(SseEvent {
                    event: if self.event.is_empty() {
                        "message".into()
                    } else {
                        std::mem::take(&mut self.event)
                    },
                    data,
                    id: self.id.take(),
                });
            }
            self.event.clear();
            self.id = None;
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.find(':') {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(' ').unwrap_or(v))
            }
            None => (line, ""),
        };
        match field {
            "event" => self.event = value.to_string(),
            "data" => match &mut self.data {
                Some(d) => {
                    d.push('\n');
                    d.push_str(value);
                }
                None => self.data = Some(value.to_string()),
            },
            "id" if !value.contains('\0') => self.id = Some(value.to_string()),
            _ => {}
        }
    }
}

/// Turns one SSE event of the relay's session stream into what the console applies.
pub fn decode_stream_event(ev: &SseEvent) -> Option<StreamEvent> {
    match ev.event.as_str() {
        "client_event" | "message" => {
            let v: Value = serde_json::from_str(&ev.data).ok()?;
            let payload = v.get("payload")?.clone();
            let seq = v
                .get("sequence_num")
                .and_then(Value::as_u64)
                .or_else(|| ev.id.as_deref()?.parse().ok());
            let source = Source::parse(v.get("source").and_then(Value::as_str).unwrap_or("worker"));
            Some(StreamEvent::Frame(Incoming {
                source,
                seq,
                payload,
            }))
        }
        "ephemeral_event" => {
            let v: Value = serde_json::from_str(&ev.data).ok()?;
            let payload = v.get("payload")?.clone();
            let source = Source::parse(v.get("source").and_then(Value::as_str).unwrap_or("worker"));
            Some(StreamEvent::Frame(Incoming {
                source,
                seq: None,
                payload,
            }))
        }
        "catch_up_truncated" => Some(StreamEvent::Truncated),
        _ => None,
    }
}

/// Reconnect delay for an attempt (1 s → 30 s, exponential, with jitter `r` in 0..1).
pub fn backoff_secs(attempt: u32, r: f64) -> u32 {
    let base = 2f64.powi(attempt.min(5) as i32).min(30.0);
    let jittered = base * (0.5 + 0.5 * r.clamp(0.0, 1.0));
    jittered.ceil().clamp(1.0, 30.0) as u32
}

/// A live subscription to a session's events. Dropping it (or calling [`Subscription::close`])
/// stops the stream.
pub struct Subscription {
    stopped: Rc<Cell<bool>>,
    abort: Rc<RefCell<Option<web_sys::AbortController>>>,
}

impl Subscription {
    /// Stops the stream.
    pub fn close(&self) {
        self.stopped.set(true);
        if let Some(c) = self.abort.borrow_mut().take() {
            c.abort();
        }
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.close();
    }
}

/// Subscribes to `GET /v1/code/sessions/{id}/events/stream`, replaying after `from_seq`, and
/// reconnects with backoff, resuming from the last durable sequence number it delivered.
pub fn subscribe(session_id: &str, from_seq: u64, sink: Rc<dyn Fn(StreamEvent)>) -> Subscription {
    let stopped = Rc::new(Cell::new(false));
    let abort: Rc<RefCell<Option<web_sys::AbortController>>> = Rc::new(RefCell::new(None));
    let sub = Subscription {
        stopped: stopped.clone(),
        abort: abort.clone(),
    };
    let id = session_id.to_string();
    wasm_bindgen_futures::spawn_local(async move {
        run_stream(id, from_seq, sink, stopped, abort).await;
    });
    sub
}

async fn run_stream(
    id: String,
    from_seq: u64,
    sink: Rc<dyn Fn(StreamEvent)>,
    stopped: Rc<Cell<bool>>,
    abort: Rc<RefCell<Option<web_sys::AbortController>>>,
) {
    use futures::FutureExt;
    use gloo_timers::future::TimeoutFuture;
    use wasm_bindgen::JsCast;

    let mut last_seq = from_seq;
    let mut attempt: u32 = 0;
    let mut unhealthy_since = js_sys::Date::now();
    while !stopped.get() {
        sink(StreamEvent::State(ConnState::Connecting));
        let ctrl = web_sys::AbortController::new().ok();
        *abort.borrow_mut() = ctrl.clone();
        let url = format!(
            "/v1/code/sessions/{}/events/stream?from_sequence_num={last_seq}",
            enc(&id)
        );
        let req = gloo_net::http::Request::get(&url)
            .header("Accept", "text/event-stream")
            .abort_signal(ctrl.as_ref().map(|c| c.signal()).as_ref());
        let mut retry_after: Option<u32> = None;
        match req.send().await {
            Ok(resp) if resp.ok() => {
                sink(StreamEvent::State(ConnState::Live));
                let opened = js_sys::Date::now();
                if let Some(body) = resp.body() {
                    let reader: web_sys::ReadableStreamDefaultReader =
                        body.get_reader().unchecked_into();
                    let mut parser = SseParser::new();
                    loop {
                        if stopped.get() {
                            break;
                        }
                        let read = wasm_bindgen_futures::JsFuture::from(reader.read()).fuse();
                        let timeout = TimeoutFuture::new(45_000).fuse();
                        futures::pin_mut!(read, timeout);
                        let chunk = futures::select! {
                            r = read => r,
                            _ = timeout => break, // no bytes (not even a keepalive) for 45 s
                        };
                        let Ok(obj) = chunk else { break };
                        let done = js_sys::Reflect::get(&obj, &"done".into())
                            .ok()
                            .and_then(|d| d.as_bool())
                            .unwrap_or(true);
                        if done {
                            break;
                        }
                        let Ok(value) = js_sys::Reflect::get(&obj, &"value".into()) else {
                            break;
                        };
                        let bytes = js_sys::Uint8Array::new(&value).to_vec();
                        for ev in parser.feed(&bytes) {
                            if let Some(se) = decode_stream_event(&ev) {
                                if let StreamEvent::Frame(Incoming { seq: Some(seq), .. }) = &se {
                                    last_seq = last_seq.max(*seq);
                                }
                                sink(se);
                            }
                        }
                        // Healthy for 10 s: forget earlier failures.
                        if js_sys::Date::now() - opened > 10_000.0 {
                            attempt = 0;
                            unhealthy_since = js_sys::Date::now();
                        }
                    }
                    let _ = reader.cancel();
                }
            }
            Ok(resp) if matches!(resp.status(), 401 | 403 | 404) => {
                let why = match resp.status() {
                    401 => "not signed in (open the login link printed by bridge-relay)",
                    403 => "not allowed to see this session",
                    _ => "no such session",
                };
                sink(StreamEvent::State(ConnState::Offline(why.into())));
                return;
            }
            Ok(resp) => {
                retry_after = resp
                    .headers()
                    .get("retry-after")
                    .and_then(|v| v.trim().parse().ok());
            }
            Err(_) => {}
        }
        if stopped.get() {
            return;
        }
        if js_sys::Date::now() - unhealthy_since > 600_000.0 {
            sink(StreamEvent::State(ConnState::Offline(
                "gave up after 10 minutes; reload to retry".into(),
            )));
            return;
        }
        attempt += 1;
        let mut wait = retry_after
            .unwrap_or_else(|| backoff_secs(attempt - 1, js_sys::Math::random()))
            .clamp(1, 60);
        while wait > 0 && !stopped.get() {
            sink(StreamEvent::State(ConnState::Reconnecting {
                in_secs: wait,
                attempt,
            }));
            TimeoutFuture::new(1_000).await;
            wait -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STREAM: &str = "id: 1\nevent: client_event\ndata: {\"sequence_num\":1,\"source\":\"worker\",\"payload\":{\"type\":\"x\"}}\n\n: keepalive\n\nevent: ephemeral_event\r\ndata: {\"event_type\":\"stream_event\",\r\ndata: \"payload\":{\"type\":\"stream_event\"}}\r\n\r\nevent: catch_up_truncated\rdata: {}\r\r";

    #[test]
    fn sse_events_split_at_every_byte() {
        let whole = SseParser::new().feed(STREAM.as_bytes());
        assert_eq!(whole.len(), 3);
        assert_eq!(whole[0].id.as_deref(), Some("1"));
        assert_eq!(whole[1].event, "ephemeral_event");
        assert!(whole[1].data.contains('\n'));
        for cut in 0..STREAM.len() {
            let mut p = SseParser::new();
            let mut got = p.feed(&STREAM.as_bytes()[..cut]);
            got.extend(p.feed(&STREAM.as_bytes()[cut..]));
            assert_eq!(got, whole, "cut at {cut}");
        }
    }

    #[test]
    fn decodes_relay_frames() {
        let evs = SseParser::new().feed(STREAM.as_bytes());
        match decode_stream_event(&evs[0]) {
            Some(StreamEvent::Frame(f)) => {
                assert_eq!(f.seq, Some(1));
                assert_eq!(f.source, Source::Worker);
                assert_eq!(f.payload["type"], "x");
            }
            other => panic!("{other:?}"),
        }
        match decode_stream_event(&evs[1]) {
            Some(StreamEvent::Frame(f)) => assert_eq!(f.seq, None),
            other => panic!("{other:?}"),
        }
        assert_eq!(decode_stream_event(&evs[2]), Some(StreamEvent::Truncated));
    }

    #[test]
    fn backoff_grows_and_is_clamped() {
        assert_eq!(backoff_secs(0, 1.0), 1);
        assert_eq!(backoff_secs(3, 1.0), 8);
        assert_eq!(backoff_secs(20, 1.0), 30);
        assert!(backoff_secs(4, 0.0) >= 8);
    }

    #[test]
    fn path_segments_are_encoded() {
        assert_eq!(enc("abc-1_2"), "abc-1_2");
        assert_eq!(enc("a/b?c"), "a%2Fb%3Fc");
    }
}
