//! All network I/O of the console, behind a small interface: the relay's REST calls (login, me,
//! sessions, Web Push devices) and the session connection, which is `bridge-transport` (SSE + POST with reconnect,
//! lossless resume, dedup and an outbox). Nothing else in the crate touches the network.

use std::cell::RefCell;

use futures::future::LocalBoxFuture;
use serde::Serialize;
use serde_json::Value;

use crate::state::Source;
pub use bridge_transport::Payload;

pub mod changes;
pub mod cli_sessions;
mod connection;
pub mod hooks;
mod push;

pub use connection::{Subscription, conn_state, send_error, stream_event, subscribe};
pub use push::{
    list_push_devices, register_push, remove_push_device, test_push_device, vapid_public_key,
};

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
pub use bridge_protocol::api::Me;

/// `POST /v1/auth/login`'s body and answer, and `GET /v1/embed/config`.
use bridge_protocol::api::{EmbedConfig, LoginAnswer, LoginRequest, NewSession, SessionCreated};

/// One entry of `GET /v1/code/sessions` and where a session's worktree is: bridge-protocol's REST
/// shapes, the ones the relay writes.
pub use bridge_protocol::api::{SessionSummary, WorktreeInfo};

/// The answer to `POST /v1/code/sessions/{id}/archive`.
pub use bridge_protocol::api::ArchiveAnswer;

/// One frame from the session stream.
#[derive(Clone, Debug, PartialEq)]
pub struct Incoming {
    /// Who wrote it.
    pub source: Source,
    /// Durable sequence number (None for ephemeral frames).
    pub seq: Option<u64>,
    /// The CLI / client message, as the JSON text the relay sent (decoded typed from the text).
    pub payload: Payload,
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
        let body = bridge_transport::outbox::post_body(session_id, vec![payload]);
        Box::pin(async move { request_json("POST", &url, Some(&body)).await.map(|_| ()) })
    }
}

/// Percent-encodes a path segment ([`bridge_protocol::api::path_segment`]).
pub use bridge_protocol::api::path_segment as enc;

thread_local! {
    /// A token an embedding host handed over (`auth` message) whose login cookie does not come
    /// back (a cross-site iframe): sent as `Authorization: Bearer` instead. Memory only.
    static BEARER: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Uses `token` as a bearer token for every later call and session connection (None: the cookie).
pub fn set_bearer(token: Option<String>) {
    BEARER.with(|b| *b.borrow_mut() = token);
}

pub(super) fn bearer() -> Option<String> {
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

pub(super) async fn request_json(
    method: &str,
    url: &str,
    body: Option<&Value>,
) -> Result<Value, NetError> {
    use gloo_net::http::Request;
    let mut builder = match method {
        "POST" => Request::post(url),
        "PUT" => Request::put(url),
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

/// Reads an answer as its `bridge_protocol::api` type.
pub(crate) fn decode<T: serde::de::DeserializeOwned>(v: Value) -> Result<T, NetError> {
    serde_json::from_value(v).map_err(|e| NetError::Decode(e.to_string()))
}

/// A request body (a `bridge_protocol::api` type) as JSON.
pub(crate) fn encode(body: &impl Serialize) -> Result<Value, NetError> {
    serde_json::to_value(body).map_err(|e| NetError::Decode(e.to_string()))
}

/// `POST /v1/auth/login` with the one-time code (or a token) from the URL fragment; keeps the
/// login secret the relay returns.
pub async fn login(token: &str) -> Result<(), NetError> {
    let body = LoginRequest {
        token: token.to_owned(),
    };
    let v = request_json("POST", "/v1/auth/login", Some(&encode(&body)?)).await?;
    let answer: LoginAnswer = decode(v)?;
    store_login_secret(Some(answer.login_secret)).await;
    Ok(())
}

/// The sign-in index.html's boot script made with the page's `#login=` code before the console
/// ran (`window.__bridgeLogin`: a promise of `{ok, secret}` or `{ok: false, status, message}`), or
/// `None` if it took no code (the console then reads the URL itself). Login codes are single-use, so
/// the console never sends that code again: it waits for the script's answer and keeps the secret as
/// [`login`] does (mirrored for the service worker). Read once.
pub async fn login_from_page() -> Option<Result<(), NetError>> {
    #[cfg(target_arch = "wasm32")]
    {
        use wasm_bindgen::JsCast as _;
        let window = web_sys::window()?;
        let key = wasm_bindgen::JsValue::from_str(PAGE_LOGIN);
        let promise = js_sys::Reflect::get(&window, &key)
            .ok()?
            .dyn_into::<js_sys::Promise>()
            .ok()?;
        let _ = js_sys::Reflect::delete_property(&window, &key);
        let outcome = wasm_bindgen_futures::JsFuture::from(promise).await;
        let field = |name: &str| {
            outcome
                .as_ref()
                .ok()
                .and_then(|o| js_sys::Reflect::get(o, &wasm_bindgen::JsValue::from_str(name)).ok())
        };
        let ok = field("ok").and_then(|v| v.as_bool()).unwrap_or(false);
        let secret = field("secret").and_then(|v| v.as_string());
        let status = field("status").and_then(|v| v.as_f64()).unwrap_or(0.0) as u16;
        let message = field("message")
            .and_then(|v| v.as_string())
            .unwrap_or_else(|| "the sign-in did not finish".into());
        Some(match page_login_outcome(ok, status, message) {
            Ok(()) => {
                store_login_secret(secret).await;
                Ok(())
            }
            Err(e) => Err(e),
        })
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        let _ = (PAGE_LOGIN, page_login_outcome);
        None
    }
}

/// The window property index.html's boot script puts its sign-in on.
const PAGE_LOGIN: &str = "__bridgeLogin";

/// The boot script's answer as [`login`] would have returned it: the relay's status and
/// `error.message`, or a network failure (status 0).
fn page_login_outcome(ok: bool, status: u16, message: String) -> Result<(), NetError> {
    match (ok, status) {
        (true, _) => Ok(()),
        (false, 0) => Err(NetError::Network(message)),
        (false, s) => Err(NetError::Status(s, message)),
    }
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
    decode(request_json("GET", "/v1/me", None).await?)
}

/// `GET /v1/embed/config` (public): the origins allowed to embed the console (--embed-origin).
pub async fn embed_origins() -> Result<Vec<String>, NetError> {
    let v = request_json("GET", "/v1/embed/config", None).await?;
    decode::<EmbedConfig>(v).map(|c| c.origins)
}

/// `GET /v1/code/sessions?kept_worktrees=1`: the live sessions, and the archived ones whose
/// worktree was kept (`archived`, `worktree_kept`).
pub async fn list_sessions() -> Result<Vec<SessionSummary>, NetError> {
    let v = request_json("GET", "/v1/code/sessions?kept_worktrees=1", None).await?;
    // An entry that does not fit is left out; the rest of the list still shows.
    decode::<bridge_protocol::api::SessionList>(v).map(|l| l.sessions)
}

/// `POST /v1/code/sessions`; returns the new session id.
pub async fn create_session(req: &NewSession) -> Result<String, NetError> {
    let v = request_json("POST", "/v1/code/sessions", Some(&encode(req)?)).await?;
    decode::<SessionCreated>(v).map(|c| c.session_id)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detail_polling_backs_off_and_stops_within_a_minute() {
        let d: Vec<u32> = detail_retry_delays().collect();
        assert_eq!(&d[..5], &[500, 1000, 2000, 4000, 4000]);
        let total: u32 = d.iter().sum();
        assert!(total <= 60_000 && total > 55_000, "{total}");
        assert!(d.iter().all(|&x| x <= 4000));
    }

    #[test]
    fn the_boot_scripts_sign_in_fails_as_the_consoles_own_would() {
        assert_eq!(page_login_outcome(true, 200, String::new()), Ok(()));
        let used = page_login_outcome(
            false,
            401,
            "invalid, expired or already used login token".into(),
        )
        .unwrap_err();
        assert_eq!(
            used.to_string(),
            "invalid, expired or already used login token (HTTP 401)"
        );
        assert_eq!(
            page_login_outcome(false, 0, "Failed to fetch".into()),
            Err(NetError::Network("Failed to fetch".into()))
        );
    }

    #[test]
    fn path_segments_are_encoded() {
        assert_eq!(enc("abc-1_2"), "abc-1_2");
        assert_eq!(enc("a/b?c"), "a%2Fb%3Fc");
    }
}
