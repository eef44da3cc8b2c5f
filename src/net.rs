//! All network I/O of the console, behind a small interface: the relay's REST calls (login, me,
//! sessions, Web Push devices) and the session connection, which is `bridge-transport` (SSE + POST with reconnect,
//! lossless resume, dedup and an outbox). Nothing else in the crate touches the network.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use futures::future::LocalBoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::state::Source;

pub mod changes;
pub mod cli_sessions;

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

/// One entry of `GET /v1/code/sessions` and where a session's worktree is: bridge-protocol's REST
/// shapes, the ones the relay writes.
pub use bridge_protocol::api::{SessionSummary, WorktreeInfo};

/// The answer to `POST /v1/code/sessions/{id}/archive`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
pub struct ArchiveAnswer {
    /// Why the session's worktree was kept (None: removed, or no worktree).
    #[serde(default)]
    pub worktree_kept: Option<String>,
    /// Where it is, when kept.
    #[serde(default)]
    pub worktree: Option<WorktreeInfo>,
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
    /// Waiting to retry.
    Reconnecting {
        /// When the next attempt starts (ms since the epoch).
        at_ms: f64,
        /// Attempt number.
        attempt: u32,
    },
    /// Paused while the page is hidden; resumes (from the cursor) when it is visible again.
    Paused,
    /// The session has ended: its stream is complete and will not reconnect.
    Ended,
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
            ConnState::Paused => "paused",
            ConnState::Ended => "ended",
            ConnState::Offline(_) => "offline",
        }
    }

    /// Human label at time `now_ms` (for the reconnect countdown).
    pub fn label_at(&self, now_ms: f64) -> String {
        match self {
            ConnState::Connecting => "Connecting…".into(),
            ConnState::Live => "Live".into(),
            ConnState::Reconnecting { at_ms, .. } => {
                format!(
                    "Reconnecting in {}s",
                    ((at_ms - now_ms) / 1000.0).ceil().max(0.0) as u64
                )
            }
            ConnState::Paused => "Paused (page hidden)".into(),
            ConnState::Ended => "Session ended".into(),
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

thread_local! {
    /// A token an embedding host handed over (`auth` message) whose login cookie does not come
    /// back (a cross-site iframe): sent as `Authorization: Bearer` instead. Memory only.
    static BEARER: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Uses `token` as a bearer token for every later call and session connection (None: the cookie).
pub fn set_bearer(token: Option<String>) {
    BEARER.with(|b| *b.borrow_mut() = token);
}

fn bearer() -> Option<String> {
    BEARER.with(|b| b.borrow().clone())
}

/// `localStorage` key of the login secret: origin-scoped (another server on this host cannot read
/// it, while it does receive the cookie), and it survives the installed app's restarts.
const LOGIN_SECRET_KEY: &str = "bridge-console.login-secret";

/// The login secret returned at login, sent beside the login cookie (`X-Bridge-Login`, and a
/// WebSocket's first frame): the cookie alone is refused.
pub fn login_secret() -> Option<String> {
    #[cfg(target_arch = "wasm32")]
    {
        web_sys::window()?
            .local_storage()
            .ok()
            .flatten()?
            .get_item(LOGIN_SECRET_KEY)
            .ok()
            .flatten()
            .filter(|s| !s.is_empty())
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        None
    }
}

/// Keeps (or forgets) the login secret, and mirrors it for the service worker.
async fn store_login_secret(secret: Option<String>) {
    #[cfg(target_arch = "wasm32")]
    {
        if let Some(ls) = web_sys::window().and_then(|w| w.local_storage().ok().flatten()) {
            let _ = match &secret {
                Some(s) => ls.set_item(LOGIN_SECRET_KEY, s),
                None => ls.remove_item(LOGIN_SECRET_KEY),
            };
        }
        crate::pwa::mirror_login_secret(secret).await;
    }
    #[cfg(not(target_arch = "wasm32"))]
    let _ = (secret, LOGIN_SECRET_KEY);
}

async fn request_json(method: &str, url: &str, body: Option<&Value>) -> Result<Value, NetError> {
    use gloo_net::http::Request;
    let mut builder = match method {
        "POST" => Request::post(url),
        "DELETE" => Request::delete(url),
        _ => Request::get(url),
    }
    .header("Accept", "application/json");
    if let Some(token) = bearer() {
        builder = builder.header("Authorization", &format!("Bearer {token}"));
    }
    if let Some(secret) = login_secret() {
        builder = builder.header("X-Bridge-Login", &secret);
    }
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

/// `POST /v1/auth/login` with the one-time code (or a token) from the URL fragment; keeps the
/// login secret the relay returns.
pub async fn login(token: &str) -> Result<(), NetError> {
    let v = request_json(
        "POST",
        "/v1/auth/login",
        Some(&serde_json::json!({ "token": token })),
    )
    .await?;
    let secret = v
        .get("login_secret")
        .and_then(Value::as_str)
        .map(str::to_owned);
    store_login_secret(secret).await;
    Ok(())
}

/// `POST /v1/auth/logout`.
pub async fn logout() -> Result<(), NetError> {
    let r = request_json("POST", "/v1/auth/logout", None)
        .await
        .map(|_| ());
    store_login_secret(None).await;
    r
}

/// `GET /v1/me`.
pub async fn me() -> Result<Me, NetError> {
    let v = request_json("GET", "/v1/me", None).await?;
    serde_json::from_value(v).map_err(|e| NetError::Decode(e.to_string()))
}

/// `GET /v1/embed/config` (public): the origins allowed to embed the console (--embed-origin).
pub async fn embed_origins() -> Result<Vec<String>, NetError> {
    let v = request_json("GET", "/v1/embed/config", None).await?;
    let list = v.get("origins").cloned().unwrap_or(Value::Array(vec![]));
    serde_json::from_value(list).map_err(|e| NetError::Decode(e.to_string()))
}

/// `GET /v1/code/sessions?kept_worktrees=1`: the live sessions, and the archived ones whose
/// worktree was kept (`archived`, `worktree_kept`).
pub async fn list_sessions() -> Result<Vec<SessionSummary>, NetError> {
    let v = request_json("GET", "/v1/code/sessions?kept_worktrees=1", None).await?;
    // An entry that does not fit is left out; the rest of the list still shows.
    serde_json::from_value::<bridge_protocol::api::SessionList>(v)
        .map(|l| l.sessions)
        .map_err(|e| NetError::Decode(e.to_string()))
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

/// `POST /v1/code/sessions/{id}/archive`; with `discard_worktree` its worktree is removed even
/// when that loses work (also for a session archived earlier whose worktree was kept).
pub async fn archive_session(id: &str, discard_worktree: bool) -> Result<ArchiveAnswer, NetError> {
    let body = serde_json::json!({ "discard_worktree": discard_worktree });
    let v = request_json(
        "POST",
        &format!("/v1/code/sessions/{}/archive", enc(id)),
        Some(&body),
    )
    .await?;
    serde_json::from_value(v).map_err(|e| NetError::Decode(e.to_string()))
}

/// Delays (ms) between reads of a session's detail while its `initialize` answer is still null:
/// 0.5 s doubling to 4 s, for at most a minute in all.
pub fn detail_retry_delays() -> impl Iterator<Item = u32> {
    let mut total = 0u32;
    (0u32..)
        .map(|i| 500u32.saturating_mul(1 << i.min(3)))
        .take_while(move |d| {
            total += d;
            total <= 60_000
        })
}

/// `GET /v1/code/sessions/{id}` (includes the `initialize` answer).
pub async fn get_session(id: &str) -> Result<Value, NetError> {
    request_json("GET", &format!("/v1/code/sessions/{}", enc(id)), None).await
}

// ---------------------------------------------------------------------------------------------
// Web Push: this device's subscription at the relay (controller only; observers get 403).

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

// ---------------------------------------------------------------------------------------------
// The session connection: bridge-transport (SSE + POST with reconnect, resume, dedup, outbox).

/// Maps the transport's connection state to what the header shows.
pub fn conn_state(state: &bridge_transport::ConnectionState, now_ms: f64) -> ConnState {
    use bridge_transport::ConnectionState as C;
    match state {
        C::Connecting { .. } => ConnState::Connecting,
        C::Open => ConnState::Live,
        C::Reconnecting {
            attempt,
            next_retry_ms,
            ..
        } => ConnState::Reconnecting {
            at_ms: now_ms + *next_retry_ms as f64,
            attempt: *attempt,
        },
        C::Suspended => ConnState::Paused,
        // The relay answers the stream of an ended session (cursor at its end) with 404
        // `session_ended`: final, and not an outage.
        C::Closed {
            reason: bridge_transport::CloseReason::Permanent(why),
        } if why.contains("session_ended") => ConnState::Ended,
        C::Closed { reason } => ConnState::Offline(reason.to_string()),
    }
}

/// Maps the transport's send error.
pub fn send_error(e: &bridge_transport::SendError) -> NetError {
    match e {
        bridge_transport::SendError::Rejected {
            status, message, ..
        } => NetError::Status(*status, message.clone()),
        other => NetError::Network(other.to_string()),
    }
}

/// Turns a transport event into what the store applies (None: nothing to show).
pub fn stream_event(ev: bridge_transport::TransportEvent, now_ms: f64) -> Option<StreamEvent> {
    use bridge_transport::TransportEvent as E;
    Some(match ev {
        E::Message(inbound) => {
            let source = match inbound.source {
                Some(bridge_transport::Source::Client) => Source::Client,
                Some(bridge_transport::Source::Relay) => Source::Relay,
                _ => Source::Worker,
            };
            StreamEvent::Frame(Incoming {
                source,
                seq: inbound.seq,
                payload: inbound.message,
            })
        }
        E::State(s) => StreamEvent::State(conn_state(&s, now_ms)),
        E::Gap { .. } => StreamEvent::Truncated,
        E::Malformed { seq, error } => StreamEvent::Frame(Incoming {
            source: Source::Relay,
            seq,
            payload: serde_json::json!({"type": "relay_error", "error": format!("A frame could not be read: {error}")}),
        }),
        E::Delivered { .. } | E::SendFailed { .. } | E::DeliveryUpdate(_) => return None,
    })
}

type Waiters =
    Rc<RefCell<HashMap<String, futures::channel::oneshot::Sender<Result<(), NetError>>>>>;

/// A live connection to one session. Dropping it (or [`Subscription::close`]) closes the transport.
pub struct Subscription {
    #[cfg(target_arch = "wasm32")]
    handle: bridge_transport::TransportHandle,
    waiters: Waiters,
    stopped: Rc<Cell<bool>>,
}

impl Subscription {
    /// Stops the stream (pending sends get a short grace period).
    pub fn close(&self) {
        if !self.stopped.replace(true) {
            #[cfg(target_arch = "wasm32")]
            self.handle.close();
        }
    }
}

impl Subscription {
    /// Stops reading while the page is hidden (nothing is lost: [`Subscription::resume`]
    /// reconnects from the cursor).
    pub fn suspend(&self) {
        #[cfg(target_arch = "wasm32")]
        if !self.stopped.get() {
            self.handle.suspend();
        }
    }

    /// Reconnects at once after [`Subscription::suspend`].
    pub fn resume(&self) {
        #[cfg(target_arch = "wasm32")]
        if !self.stopped.get() {
            self.handle.resume();
        }
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.close();
    }
}

impl Sender for Subscription {
    /// Queues the payload in the transport's outbox; resolves when the relay confirmed it (its
    /// echo) or it failed for good.
    fn post_event(
        &self,
        _session_id: &str,
        payload: Value,
    ) -> LocalBoxFuture<'static, Result<(), NetError>> {
        #[cfg(target_arch = "wasm32")]
        {
            let (tx, rx) = futures::channel::oneshot::channel();
            match self.handle.send(payload) {
                Ok(uuid) => {
                    self.waiters.borrow_mut().insert(uuid, tx);
                    Box::pin(async move {
                        rx.await
                            .unwrap_or_else(|_| Err(NetError::Network("connection closed".into())))
                    })
                }
                Err(e) => {
                    let err = send_error(&e);
                    Box::pin(async move { Err(err) })
                }
            }
        }
        #[cfg(not(target_arch = "wasm32"))]
        {
            let _ = (&self.waiters, payload);
            Box::pin(async { Err(NetError::Network("no browser".into())) })
        }
    }
}

/// Connects to a session's event stream (from the start, `from_seq` = 0, or after a cursor) with
/// bridge-transport's SSE + POST transport and feeds `sink`; sends go through the returned
/// subscription (a [`Sender`]).
#[cfg(target_arch = "wasm32")]
pub fn subscribe(
    session_id: &str,
    from_seq: u64,
    sink: Rc<dyn Fn(StreamEvent)>,
) -> Rc<Subscription> {
    use bridge_transport::{Config, Endpoint, Resume, TransportEvent, TransportKind};
    let endpoint = Endpoint::new("", session_id, bearer()).with_login_secret(login_secret());
    let config = Config::new(TransportKind::SsePost, session_id);
    let resume = Resume {
        from_sequence_num: from_seq,
        ..Resume::default()
    };
    let mut transport = bridge_transport::web::connect(endpoint, config, resume);
    let waiters: Waiters = Rc::default();
    let stopped = Rc::new(Cell::new(false));
    let sub = Rc::new(Subscription {
        handle: transport.handle(),
        waiters: waiters.clone(),
        stopped: stopped.clone(),
    });
    wasm_bindgen_futures::spawn_local(async move {
        while let Some(ev) = transport.next_event().await {
            match ev {
                TransportEvent::Delivered { uuid, .. } => {
                    if let Some(tx) = waiters.borrow_mut().remove(&uuid) {
                        let _ = tx.send(Ok(()));
                    }
                }
                TransportEvent::SendFailed { uuid, error } => {
                    if let Some(tx) = waiters.borrow_mut().remove(&uuid) {
                        let _ = tx.send(Err(send_error(&error)));
                    }
                }
                other => {
                    if let Some(se) = stream_event(other, js_sys::Date::now()) {
                        sink(se);
                    }
                }
            }
        }
        for (_, tx) in waiters.borrow_mut().drain() {
            let _ = tx.send(Err(NetError::Network("connection closed".into())));
        }
    });
    sub
}

/// Native builds (tests) have no browser: a subscription that never connects.
#[cfg(not(target_arch = "wasm32"))]
pub fn subscribe(
    _session_id: &str,
    _from_seq: u64,
    _sink: Rc<dyn Fn(StreamEvent)>,
) -> Rc<Subscription> {
    Rc::new(Subscription {
        waiters: Rc::default(),
        stopped: Rc::new(Cell::new(true)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transport_states_map_to_the_header() {
        use bridge_transport::{CloseReason, ConnectionState as C};
        assert_eq!(conn_state(&C::Open, 0.0), ConnState::Live);
        assert_eq!(
            conn_state(&C::Connecting { attempt: 2 }, 0.0).as_str(),
            "connecting"
        );
        let r = conn_state(
            &C::Reconnecting {
                attempt: 3,
                next_retry_ms: 4_000,
                last_error: "x".into(),
            },
            1_000.0,
        );
        assert_eq!(
            r,
            ConnState::Reconnecting {
                at_ms: 5_000.0,
                attempt: 3
            }
        );
        assert_eq!(r.label_at(2_100.0), "Reconnecting in 3s");
        let closed = conn_state(
            &C::Closed {
                reason: CloseReason::Client,
            },
            0.0,
        );
        assert_eq!(closed.as_str(), "offline");
        assert_eq!(conn_state(&C::Suspended, 0.0), ConnState::Paused);
        let ended = conn_state(
            &C::Closed {
                reason: CloseReason::Permanent("HTTP 404 (session_ended)".into()),
            },
            0.0,
        );
        assert_eq!(ended, ConnState::Ended);
        assert_eq!(ended.label_at(0.0), "Session ended");
        // The WebSocket says the same with close code 4404.
        let ws_failure = bridge_transport::Failure::WsClosed {
            code: 4404,
            reason: "session_ended: nothing after sequence number 9".into(),
        };
        assert!(ws_failure.is_permanent());
        let ws_ended = conn_state(
            &C::Closed {
                reason: CloseReason::Permanent(ws_failure.to_string()),
            },
            0.0,
        );
        assert_eq!(ws_ended, ConnState::Ended);
        let gone = conn_state(
            &C::Closed {
                reason: CloseReason::Permanent("HTTP 404 (not_found)".into()),
            },
            0.0,
        );
        assert_eq!(gone.as_str(), "offline");
    }

    #[test]
    fn rejected_sends_keep_their_status() {
        let e = bridge_transport::SendError::Rejected {
            status: 409,
            kind: "conflict".into(),
            message: "already answered".into(),
        };
        assert_eq!(
            send_error(&e),
            NetError::Status(409, "already answered".into())
        );
    }

    #[test]
    fn detail_polling_backs_off_and_stops_within_a_minute() {
        let d: Vec<u32> = detail_retry_delays().collect();
        assert_eq!(&d[..5], &[500, 1000, 2000, 4000, 4000]);
        let total: u32 = d.iter().sum();
        assert!(total <= 60_000 && total > 55_000, "{total}");
        assert!(d.iter().all(|&x| x <= 4000));
    }

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

    #[test]
    fn path_segments_are_encoded() {
        assert_eq!(enc("abc-1_2"), "abc-1_2");
        assert_eq!(enc("a/b?c"), "a%2Fb%3Fc");
    }
}
