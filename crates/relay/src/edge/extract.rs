//! What every route module shares: the router's state ([`AppState`]), authentication of a request
//! (bearer token or login cookie), and the extractors for principals, JSON bodies and the peer's
//! address. The router ([`crate::http`]) and the streaming routes ([`crate::edge::sse`], [`crate::edge::ws`])
//! depend on this module, not on each other.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{ConnectInfo, FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, header};
use serde_json::{Value, json};

use crate::core::auth::Principal;
use crate::core::relay::Relay;
use crate::core::session::Session;
use crate::edge::error::ApiError;
use crate::edge::external::External;

pub type AppState = Arc<Relay>;

/// Who a gateway authenticated, for a request it forwarded (a cluster request of its, `crate::cluster`): the relay's
/// [`Principal`] extractor takes it from the request's extensions, which no client can set.
#[derive(Clone)]
pub(crate) struct Forwarded(pub Principal);

/// The guard middleware stores an [`External`] in every request; a handler reached some other way
/// works it out itself, trusting nothing forwarded.
impl FromRequestParts<AppState> for External {
    type Rejection = std::convert::Infallible;
    async fn from_request_parts(
        parts: &mut Parts,
        app: &AppState,
    ) -> Result<Self, Self::Rejection> {
        if let Some(e) = parts.extensions.get::<External>() {
            return Ok(e.clone());
        }
        let peer = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map(|c| c.0);
        Ok(External::of(
            &app.config,
            &parts.headers,
            parts.uri.authority().map(|a| a.as_str()),
            peer,
        ))
    }
}

pub(crate) fn cookie_value<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.trim())
}

fn bearer(headers: &HeaderMap) -> Option<Result<&str, ()>> {
    let v = headers.get(header::AUTHORIZATION)?;
    let v = v.to_str().map_err(|_| ());
    Some(v.and_then(|v| {
        let (scheme, token) = v.split_once(' ').ok_or(())?;
        if scheme.eq_ignore_ascii_case("bearer") && !token.trim().is_empty() {
            Ok(token.trim())
        } else {
            Err(())
        }
    }))
}

impl Relay {
    /// Bearer token, else the login cookie of the request's scheme (`ext`: see [`External`]).
    pub fn authenticate(&self, headers: &HeaderMap, ext: &External) -> Result<Principal, ApiError> {
        match bearer(headers) {
            Some(Ok(token)) => {
                return self
                    .auth
                    .authenticate_token(token)
                    .ok_or_else(|| ApiError::unauthorized("invalid, expired or revoked token"));
            }
            Some(Err(())) => {
                return Err(ApiError::unauthorized(
                    "malformed Authorization header: expected `Bearer <token>`",
                ));
            }
            None => {}
        }
        if let Some(c) = cookie_value(headers, ext.cookie_name()) {
            let Some(secret) = headers
                .get(crate::core::auth::LOGIN_SECRET_HEADER)
                .and_then(|v| v.to_str().ok())
            else {
                return Err(ApiError::unauthorized(
                    "the login cookie needs its login secret in the X-Bridge-Login header: log in again through the console URL",
                ));
            };
            return self
                .auth
                .authenticate_cookie(c, Some(secret.trim()))
                .ok_or_else(|| {
                    ApiError::unauthorized("login expired or revoked: open the console URL again")
                });
        }
        Err(ApiError::unauthorized(
            "missing credentials: send `Authorization: Bearer <token>` or log in through the console URL printed by the relay",
        ))
    }

    /// The session if it exists and `who` may see it.
    pub fn visible_session(&self, who: &Principal, id: &str) -> Result<Arc<Session>, ApiError> {
        let s = self.get(id).ok_or_else(|| ApiError::unknown_session(id))?;
        if !who.can_see(id) {
            return Err(ApiError::forbidden(
                "this observer token is scoped to another session",
            ));
        }
        if !may_see_terminal(who, &s) {
            return Err(ApiError::forbidden(
                "this session runs in a terminal: like Claude Code's transcripts, it is the controller's \
                 (or an observer token's minted for it, or with transcripts: true)",
            ));
        }
        Ok(s)
    }
}

/// A terminal session ([`crate::features::hooks::live`]) is a Claude Code session of this machine's user:
/// seen by those who may read the CLI's transcripts, or by an observer token scoped to it.
pub fn may_see_terminal(who: &Principal, s: &Session) -> bool {
    !s.is_terminal() || who.transcripts || who.session_scope.as_deref() == Some(s.id.as_str())
}

impl FromRequestParts<AppState> for Principal {
    type Rejection = ApiError;
    async fn from_request_parts(parts: &mut Parts, app: &AppState) -> Result<Self, ApiError> {
        // A host-only request a gateway forwarded over NATS: who the gateway authenticated (only
        // the relay's own code can put it there; never read from the request).
        if let Some(Forwarded(who)) = parts.extensions.get() {
            return Ok(who.clone());
        }
        let Ok(ext) = External::from_request_parts(parts, app).await;
        app.authenticate(&parts.headers, &ext)
    }
}

/// A principal allowed to write (the controller). Observers get 403.
pub struct Controller(pub Principal);

impl FromRequestParts<AppState> for Controller {
    type Rejection = ApiError;
    async fn from_request_parts(parts: &mut Parts, app: &AppState) -> Result<Self, ApiError> {
        let p = Principal::from_request_parts(parts, app).await?;
        if !p.can_write() {
            return Err(ApiError::forbidden(
                "observer tokens are read-only: this needs the controller token",
            ));
        }
        Ok(Controller(p))
    }
}

/// A JSON body read with the configured size cap (413) and a JSON error on bad syntax (400).
/// An empty body reads as `{}`.
pub struct JsonBody(pub Value);

impl FromRequest<AppState> for JsonBody {
    type Rejection = ApiError;
    async fn from_request(req: Request, app: &AppState) -> Result<Self, ApiError> {
        read_json(req, app.config.quotas.max_body_bytes, "--max-body-bytes").await
    }
}

/// [`JsonBody`] of a path that needs no credentials: at most
/// [`crate::core::limits::UNAUTHENTICATED_BODY_BYTES`].
pub struct SmallJsonBody(pub Value);

impl FromRequest<AppState> for SmallJsonBody {
    type Rejection = ApiError;
    async fn from_request(req: Request, _: &AppState) -> Result<Self, ApiError> {
        read_json(
            req,
            crate::core::limits::UNAUTHENTICATED_BODY_BYTES,
            "the fixed cap for requests without credentials",
        )
        .await
        .map(|JsonBody(v)| SmallJsonBody(v))
    }
}

async fn read_json(req: Request, limit: usize, why: &str) -> Result<JsonBody, ApiError> {
    let too_large =
        || ApiError::too_large(format!("request body is larger than {limit} bytes ({why})"));
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    let bytes = axum::body::to_bytes(req.into_body(), limit)
        .await
        .map_err(|_| too_large())?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(JsonBody(json!({})));
    }
    serde_json::from_slice(&bytes)
        .map(JsonBody)
        .map_err(|e| ApiError::bad_request(format!("malformed JSON body: {e}")))
}

/// `201 Created` with `body` as JSON: what a route that makes something answers.
pub(crate) fn json_created(body: impl serde::Serialize) -> axum::response::Response {
    use axum::response::IntoResponse as _;
    (axum::http::StatusCode::CREATED, axum::Json(body)).into_response()
}

pub(crate) fn parse_body<T: serde::de::DeserializeOwned>(
    v: Value,
    what: &str,
) -> Result<T, ApiError> {
    serde_json::from_value(v).map_err(|e| ApiError::bad_request(format!("invalid {what}: {e}")))
}

/// The payloads of a `POST …/events` body, `{"session_id", "events":[{"payload":{…}}]}`: its
/// `session_id`, when given, must be the URL's `id`, and it holds at least one event. A gateway
/// checks what it forwards with this too.
pub(crate) fn posted_payloads(id: &str, body: Value) -> Result<Vec<Value>, ApiError> {
    #[derive(serde::Deserialize)]
    struct PostEvents {
        #[serde(default)]
        session_id: Option<String>,
        events: Vec<PostedEvent>,
    }
    #[derive(serde::Deserialize)]
    struct PostedEvent {
        payload: Value,
    }
    let body: PostEvents = parse_body(
        body,
        "events body (expected {\"session_id\", \"events\":[{\"payload\":{…}}]})",
    )?;
    if let Some(sid) = body.session_id.as_deref().filter(|s| !s.is_empty())
        && sid != id
    {
        return Err(ApiError::bad_request(format!(
            "body session_id {sid:?} does not match the URL's {id:?}"
        )));
    }
    if body.events.is_empty() {
        return Err(ApiError::bad_request("events must hold at least one event"));
    }
    Ok(body.events.into_iter().map(|e| e.payload).collect())
}

/// The `discard_worktree` of a `POST …/archive` body: `true` or `false`, absent or null for `false`.
/// A gateway reads what it forwards with it too.
pub(crate) fn discard_worktree(body: &Value) -> Result<bool, ApiError> {
    match body.get("discard_worktree") {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(ApiError::bad_request(
            "discard_worktree must be true or false",
        )),
    }
}

/// The client's address for per-peer limits: the TCP peer, or behind a trusted proxy the first
/// `X-Forwarded-For` hop; `None` when unknown (one shared bucket).
pub fn peer_ip(
    app: &Relay,
    peer: Option<SocketAddr>,
    headers: &HeaderMap,
) -> Option<std::net::IpAddr> {
    if crate::edge::external::trusts_forwarded(app.config.behind_proxy, peer)
        && let Some(ip) = headers
            .get("x-forwarded-for")
            .and_then(|v| v.to_str().ok())
            // The hop the trusted proxy added: the last one (the first ones are whatever the
            // client sent, and a client may send anything).
            .and_then(|v| v.rsplit(',').next())
            .and_then(|v| v.trim().parse::<std::net::IpAddr>().ok())
    {
        return Some(ip.to_canonical());
    }
    peer.map(|p| p.ip().to_canonical())
}

/// [`peer_ip`] as an extractor.
pub struct PeerIp(pub Option<std::net::IpAddr>);

impl FromRequestParts<AppState> for PeerIp {
    type Rejection = std::convert::Infallible;
    async fn from_request_parts(
        parts: &mut Parts,
        app: &AppState,
    ) -> Result<Self, std::convert::Infallible> {
        let peer = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map(|c| c.0);
        Ok(PeerIp(peer_ip(app, peer, &parts.headers)))
    }
}

/// How often an open stream checks its credential besides being told of every revocation (a
/// safety net: nothing is expected to need it).
pub const REVOCATION_CHECK: std::time::Duration = std::time::Duration::from_secs(5);

/// Resolves once `who`'s credential is revoked, expires or is logged out: SSE streams end and
/// WebSockets close when it does. A revocation wakes it before the request that made it is answered
/// (a stream polls this before its next frame, so no frame follows a revocation); expiry at its
/// time. No scan of every credential on a timer: one check per revocation, one every
/// [`REVOCATION_CHECK`].
pub async fn until_revoked(app: AppState, who: Principal) {
    let mut removed = app.auth.revocations();
    removed.mark_unchanged();
    if !app.auth.is_live(&who) {
        return;
    }
    let expiry = app.auth.expiry(&who).map(|t| {
        let left = u64::try_from(t.saturating_sub(crate::core::util::unix_now())).unwrap_or(0);
        tokio::time::Instant::now() + std::time::Duration::from_secs(left)
    });
    let mut tick = tokio::time::interval_at(
        tokio::time::Instant::now() + REVOCATION_CHECK,
        REVOCATION_CHECK,
    );
    loop {
        tokio::select! {
            r = removed.changed() => if r.is_err() { std::future::pending::<()>().await },
            () = async {
                match expiry {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            } => return,
            _ = tick.tick() => {}
        }
        if !app.auth.is_live(&who) {
            return;
        }
    }
}
