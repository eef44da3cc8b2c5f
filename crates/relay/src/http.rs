//! The HTTP surface: router, auth extractors, Host/Origin guard and CORS, REST handlers, static files.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{ConnectInfo, FromRequest, FromRequestParts, Path, Query, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, delete, get, post};
use axum::{Json, Router};
use bytes::BytesMut;
use serde::Deserialize;
use serde_json::{Value, json};
use tower_http::services::{ServeDir, ServeFile};

use crate::auth::Principal;
use crate::error::ApiError;
use crate::external::External;
use crate::follow::{REPLAY_PAGE, REPLAY_PAGE_BYTES};
use crate::relay::{CreateSession, Relay};
use crate::session::Session;

pub type AppState = Arc<Relay>;

/// The whole relay as a router; `main` only binds it.
pub fn app(state: AppState) -> Router {
    let api = Router::new()
        .route("/v1/auth/login", post(login))
        .route("/v1/auth/logout", post(logout))
        .route("/v1/me", get(me))
        .route("/v1/embed/config", get(embed_config))
        .route(
            "/v1/observer-tokens",
            post(mint_observer).get(list_observers),
        )
        .route("/v1/observer-tokens/{id}", delete(revoke_observer))
        .route("/v1/auth/login-codes", post(mint_login_code))
        .route("/v1/credentials", get(list_credentials))
        .route("/v1/credentials/{id}", delete(revoke_credential))
        .route("/v1/code/sessions", post(create_session).get(list_sessions))
        .route(
            "/v1/code/sessions/{id}",
            get(get_session).delete(delete_session),
        )
        .route("/v1/code/sessions/{id}/archive", post(archive_session))
        .route(
            "/v1/code/sessions/{id}/events",
            post(post_events).get(list_events),
        )
        .route(
            "/v1/code/sessions/{id}/events/stream",
            get(crate::sse::stream),
        )
        .route("/v1/code/sessions/{id}/ws", get(crate::ws::upgrade))
        .merge(crate::changes::routes())
        .merge(crate::push::routes())
        .merge(crate::transcripts::api::routes())
        .merge(crate::tls::routes())
        .route("/healthz", get(|| async { Json(json!({"ok": true})) }))
        .route("/v1/{*rest}", any(api_not_found));
    let static_dir = state.config.static_dir.clone();
    let index_html = std::fs::read_to_string(static_dir.join("index.html")).ok();
    let csp = HeaderValue::from_str(&crate::headers::content_security_policy_embedded(
        index_html.as_deref(),
        &state.config.embed_origins,
    ))
    .expect("the policy is ASCII");
    let router = if static_dir.join("index.html").is_file() {
        let index = static_dir.join("index.html");
        let copies = crate::assets::Precompressed::new(&static_dir);
        copies.warm();
        let files = ServeDir::new(&static_dir).fallback(ServeFile::new(index));
        // Brotli / gzip copies made once at startup when the request accepts them (see assets.rs).
        let compressed = middleware::from_fn(move |req: Request, next: Next| {
            let copies = copies.clone();
            async move {
                match copies.respond(req.method(), req.uri().path(), req.headers()) {
                    Some(res) => res,
                    None => next.run(req).await,
                }
            }
        });
        api.fallback_service(
            tower::ServiceBuilder::new()
                .layer(compressed)
                .service(files),
        )
    } else {
        tracing::warn!(dir = %static_dir.display(), "no console build found (index.html missing); serving a placeholder page");
        api.fallback(placeholder_page)
    };
    router
        .layer(middleware::from_fn_with_state(state.clone(), guard))
        .layer(middleware::from_fn(move |req: Request, next: Next| {
            crate::headers::add(csp.clone(), req, next)
        }))
        .with_state(state)
}

async fn api_not_found(method: Method, uri: axum::http::Uri) -> ApiError {
    ApiError::not_found(format!("no API endpoint {method} {}", uri.path()))
}

async fn placeholder_page(method: Method) -> Response {
    if method != Method::GET && method != Method::HEAD {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    }
    let html = "<!doctype html><meta charset=utf-8><title>Bridge Console relay</title>\
        <h1>Bridge Console relay</h1><p>The relay is running, but no console build was found. \
        Build it with <code>trunk build --release</code> in the repository root (output: <code>dist/</code>) \
        or pass <code>--static-dir DIR</code>.</p>";
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], html).into_response()
}

// ------------------------------------------------------------------ guard: Host, Origin, CORS

const CORS_ALLOW_HEADERS: &str =
    "authorization, anthropic-client-platform, content-type, last-event-id, x-bridge-login";
const CORS_ALLOW_METHODS: &str = "GET, POST, DELETE, OPTIONS";

async fn guard(State(app): State<AppState>, mut req: Request, next: Next) -> Response {
    let cfg = &app.config;
    // No ConnectInfo (a router driven without a socket): an unknown peer, trusted with nothing.
    let peer = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0);
    let ext = External::of(
        cfg,
        req.headers(),
        req.uri().authority().map(|a| a.as_str()),
        peer,
    );
    let raw_host = req
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(str::to_owned)
        .or_else(|| req.uri().authority().map(|a| a.as_str().to_owned()))
        .unwrap_or_default()
        .to_ascii_lowercase();
    // The Host the connection carries, and the one a trusted proxy forwarded: both must be known.
    for host in std::iter::once(&raw_host).chain(ext.forwarded_host.as_ref()) {
        if !cfg.allowed_hosts.contains(host)
            && !crate::config::is_bare_loopback_host(host, cfg.addr)
        {
            return ApiError::forbidden(format!(
                "Host {host:?} is not allowed (DNS-rebinding protection); allowed: {}; add one with --allowed-host{}",
                cfg.allowed_hosts.join(", "),
                if cfg.tls { " or --tls-name" } else { "" }
            ))
            .into_response();
        }
    }
    let origin = req
        .headers()
        .get(header::ORIGIN)
        .and_then(|o| o.to_str().ok())
        .map(|o| o.trim_end_matches('/').to_ascii_lowercase());
    let mut cors_origin = None;
    if let Some(origin) = &origin {
        // Over TLS a page of this relay is only ever https://.
        let same_origin = cfg.allowed_hosts.iter().any(|h| {
            *origin == format!("https://{h}") || (!cfg.tls && *origin == format!("http://{h}"))
        });
        let configured = cfg.cors_origins.iter().any(|o| o == origin);
        if !same_origin && !configured {
            return ApiError::forbidden(format!(
                "Origin {origin:?} is not allowed; add it with --allowed-origin"
            ))
            .into_response();
        }
        if configured && !same_origin {
            cors_origin = req.headers().get(header::ORIGIN).cloned();
        }
    }
    if let Some(o) = &cors_origin
        && req.method() == Method::OPTIONS
    {
        let mut resp = StatusCode::NO_CONTENT.into_response();
        add_cors(resp.headers_mut(), o);
        let h = resp.headers_mut();
        h.insert(
            header::ACCESS_CONTROL_ALLOW_METHODS,
            HeaderValue::from_static(CORS_ALLOW_METHODS),
        );
        h.insert(
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            HeaderValue::from_static(CORS_ALLOW_HEADERS),
        );
        h.insert(
            header::ACCESS_CONTROL_MAX_AGE,
            HeaderValue::from_static("600"),
        );
        return resp;
    }
    // Without credentials only tiny bodies: nothing unauthenticated needs more (a login is a token).
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let credentials = req.headers().contains_key(header::AUTHORIZATION)
        || req.headers().contains_key(header::COOKIE);
    if !credentials
        && declared.is_some_and(|n| n > crate::limits::UNAUTHENTICATED_BODY_BYTES as u64)
    {
        return ApiError::too_large(format!(
            "a request without credentials may carry at most {} bytes",
            crate::limits::UNAUTHENTICATED_BODY_BYTES
        ))
        .into_response();
    }
    req.extensions_mut().insert(ext);
    let mut resp = next.run(req).await;
    if let Some(o) = &cors_origin {
        add_cors(resp.headers_mut(), o);
    }
    resp
}

fn add_cors(h: &mut HeaderMap, origin: &HeaderValue) {
    h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin.clone());
    h.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static("Retry-After"),
    );
    h.append(header::VARY, HeaderValue::from_static("Origin"));
}

// ------------------------------------------------------------------ auth extractors

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
                .get(crate::auth::LOGIN_SECRET_HEADER)
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
        Ok(s)
    }
}

impl FromRequestParts<AppState> for Principal {
    type Rejection = ApiError;
    async fn from_request_parts(parts: &mut Parts, app: &AppState) -> Result<Self, ApiError> {
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
        read_json(req, app.config.max_body_bytes, "--max-body-bytes").await
    }
}

/// [`JsonBody`] of a path that needs no credentials: at most
/// [`crate::limits::UNAUTHENTICATED_BODY_BYTES`].
pub struct SmallJsonBody(pub Value);

impl FromRequest<AppState> for SmallJsonBody {
    type Rejection = ApiError;
    async fn from_request(req: Request, _: &AppState) -> Result<Self, ApiError> {
        read_json(
            req,
            crate::limits::UNAUTHENTICATED_BODY_BYTES,
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

fn parse_body<T: serde::de::DeserializeOwned>(v: Value, what: &str) -> Result<T, ApiError> {
    serde_json::from_value(v).map_err(|e| ApiError::bad_request(format!("invalid {what}: {e}")))
}

// ------------------------------------------------------------------ auth endpoints

#[derive(Deserialize)]
struct LoginBody {
    token: String,
}

async fn login(
    State(app): State<AppState>,
    ext: External,
    PeerIp(peer): PeerIp,
    SmallJsonBody(body): SmallJsonBody,
) -> Result<Response, ApiError> {
    // Only failed attempts are charged (guessing is what the limit stops; a person or a test
    // signing in with a good link many times a minute is not).
    if let Err(wait) = app.limits.login.peek(peer, std::time::Instant::now()) {
        tracing::warn!(?peer, "login attempts rate-limited");
        return Ok(crate::limits::too_many_login_attempts(wait));
    }
    let body: LoginBody = parse_body(body, "login body (expected {\"token\": \"…\"})")?;
    let Some(crate::auth::LoggedIn {
        cookie,
        login_secret,
        principal,
        max_age,
    }) = app
        .auth
        .login(body.token.trim())
        .map_err(|e| ApiError::internal(e.to_string()))?
    else {
        let _ = app.limits.login.check(peer, std::time::Instant::now());
        return Err(ApiError::unauthorized(
            "invalid, expired or already used login token",
        ));
    };
    tracing::info!(role = principal.role.as_str(), token_id = %principal.token_id, login_id = ?principal.login_id, "login");
    let set = format!(
        "{}={cookie}; {}Max-Age={max_age}",
        ext.cookie_name(),
        cookie_attributes(&ext)
    );
    // The cookie alone is not enough: the console keeps the login secret in its origin's storage
    // and sends it in X-Bridge-Login (and as a WebSocket's first frame).
    let mut resp = Json(json!({
        "login_secret": login_secret,
        "login_id": principal.login_id,
        "role": principal.role.as_str(),
        "session_id": principal.session_scope,
    }))
    .into_response();
    resp.headers_mut().insert(
        header::SET_COOKIE,
        HeaderValue::from_str(&set).map_err(|e| ApiError::internal(e.to_string()))?,
    );
    resp.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(resp)
}

/// `POST /v1/auth/login-codes` (controller bearer token only): a fresh one-time login code and the
/// console URL carrying it, valid `--login-code-ttl-secs`. For scripts and tests that open the
/// console repeatedly; a login cannot mint codes (a stolen cookie must not outlive its logout).
async fn mint_login_code(
    State(app): State<AppState>,
    ext: External,
    Controller(who): Controller,
) -> Result<Response, ApiError> {
    if who.login_id.is_some() {
        return Err(ApiError::forbidden(
            "login codes are minted with the controller token (Authorization: Bearer), not a login cookie",
        ));
    }
    let ttl = app.config.login_code_ttl_secs;
    let code = app.auth.mint_login_code(ttl);
    Ok((
        StatusCode::CREATED,
        Json(json!({"code": code, "console_url": ext.url(&format!("/#login={code}")), "expires_in_secs": ttl})),
    )
        .into_response())
}

/// `GET /v1/credentials`: the controller token, observer tokens and logins, without secrets.
async fn list_credentials(State(app): State<AppState>, Controller(_): Controller) -> Json<Value> {
    Json(json!({"credentials": app.auth.list_credentials()}))
}

/// `DELETE /v1/credentials/{id}`: revokes any credential; open streams that used it end within a
/// second.
async fn revoke_credential(
    State(app): State<AppState>,
    Controller(who): Controller,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    if app
        .auth
        .revoke(&id)
        .map_err(|e| ApiError::internal(e.to_string()))?
    {
        tracing::info!(id = %id, by = ?who.login_id, "credential revoked");
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::not_found(format!("no credential {id}")))
    }
}

/// The client's address for per-peer limits: the TCP peer, or behind a trusted proxy the first
/// `X-Forwarded-For` hop; `None` when unknown (one shared bucket).
pub fn peer_ip(
    app: &Relay,
    peer: Option<SocketAddr>,
    headers: &HeaderMap,
) -> Option<std::net::IpAddr> {
    if crate::external::trusts_forwarded(app.config.behind_proxy, peer)
        && let Some(ip) = headers
            .get("x-forwarded-for")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(',').next())
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

/// `Secure` (over HTTPS), `HttpOnly`, `SameSite=Strict`, `Path=/`, no `Domain`; ends with "; ".
fn cookie_attributes(ext: &External) -> &'static str {
    if ext.https {
        "Secure; HttpOnly; SameSite=Strict; Path=/; "
    } else {
        "HttpOnly; SameSite=Strict; Path=/; "
    }
}

async fn logout(
    State(app): State<AppState>,
    ext: External,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    if let Some(c) = cookie_value(&headers, ext.cookie_name()) {
        app.auth
            .logout(c)
            .map_err(|e| ApiError::internal(e.to_string()))?;
    }
    let mut resp = StatusCode::NO_CONTENT.into_response();
    let clear = format!(
        "{}=; {}Max-Age=0",
        ext.cookie_name(),
        cookie_attributes(&ext)
    );
    resp.headers_mut().insert(
        header::SET_COOKIE,
        HeaderValue::from_str(&clear).map_err(|e| ApiError::internal(e.to_string()))?,
    );
    Ok(resp)
}

/// `GET /v1/embed/config` (public, no secrets): the origins allowed to embed the console
/// (--embed-origin); the console talks postMessage with those only.
async fn embed_config(State(app): State<AppState>) -> Json<Value> {
    Json(json!({"bridge": 1, "origins": app.config.embed_origins}))
}

async fn me(who: Principal) -> Json<Value> {
    Json(json!({"role": who.role.as_str(), "session_id": who.session_scope}))
}

#[derive(Deserialize)]
struct MintBody {
    session_id: Option<String>,
    expires_in_secs: Option<u64>,
}

async fn mint_observer(
    State(app): State<AppState>,
    ext: External,
    Controller(_): Controller,
    JsonBody(body): JsonBody,
) -> Result<Response, ApiError> {
    let body: MintBody = parse_body(body, "observer token request")?;
    if let Some(sid) = &body.session_id
        && app.get(sid).is_none()
    {
        return Err(ApiError::unknown_session(sid));
    }
    let m = app
        .auth
        .mint_observer(body.session_id.clone(), body.expires_in_secs)
        .map_err(|e| ApiError::internal(e.to_string()))?;
    let path = body
        .session_id
        .as_ref()
        .map_or_else(String::new, |s| format!("s/{s}"));
    let console_url = ext.url(&format!("/{path}#login={}", m.token));
    tracing::info!(id = %m.id, scope = ?body.session_id, "observer token minted");
    Ok((
        StatusCode::CREATED,
        Json(json!({"id": m.id, "token": m.token, "console_url": console_url, "session_id": body.session_id, "expires_at": m.expires_at})),
    )
        .into_response())
}

async fn list_observers(State(app): State<AppState>, Controller(_): Controller) -> Json<Value> {
    Json(json!({"observer_tokens": app.auth.list_observers()}))
}

async fn revoke_observer(
    State(app): State<AppState>,
    Controller(_): Controller,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    if app
        .auth
        .revoke_observer(&id)
        .map_err(|e| ApiError::internal(e.to_string()))?
    {
        tracing::info!(id = %id, "observer token revoked");
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::not_found(format!(
            "no observer token with id {id:?}"
        )))
    }
}

// ------------------------------------------------------------------ sessions

async fn create_session(
    State(app): State<AppState>,
    ext: External,
    Controller(_): Controller,
    JsonBody(body): JsonBody,
) -> Result<Response, ApiError> {
    let req: CreateSession = parse_body(body, "session request")?;
    let s = app.create_session(req).await?;
    let base = format!("/v1/code/sessions/{}", s.id);
    Ok((
        StatusCode::CREATED,
        Json(json!({
            "session_id": s.id,
            "stream_url": ext.url(&format!("{base}/events/stream")),
            "send_url": ext.url(&format!("{base}/events")),
            "ws_url": ext.ws_url(&format!("{base}/ws")),
        })),
    )
        .into_response())
}

#[derive(Deserialize)]
struct ListQuery {
    #[serde(default)]
    include_archived: Option<String>,
    /// Also the archived sessions whose worktree was kept (the console lists them so that the
    /// work can be found and discarded), without every other archived session.
    #[serde(default)]
    kept_worktrees: Option<String>,
}

async fn list_sessions(
    State(app): State<AppState>,
    who: Principal,
    Query(q): Query<ListQuery>,
) -> Json<Value> {
    let yes = |v: &Option<String>| v.as_deref().is_some_and(|v| v == "1" || v == "true");
    let archived = match (yes(&q.include_archived), yes(&q.kept_worktrees)) {
        (true, _) => crate::relay::Archived::All,
        (false, true) => crate::relay::Archived::WorktreeKept,
        (false, false) => crate::relay::Archived::None,
    };
    Json(crate::transcripts::api::list(&app, archived, who.session_scope.as_deref()).await)
}

async fn get_session(
    State(app): State<AppState>,
    who: Principal,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let mut v = app.visible_session(&who, &id)?.summary(true);
    if !who.can_write()
        && let Some(init) = v.get_mut("initialize")
    {
        crate::redact::initialize_for_observer(init);
    }
    Ok(Json(v))
}

#[derive(Deserialize)]
struct DeleteQuery {
    force: Option<String>,
}

/// `DELETE /v1/code/sessions/{id}[?force=1]`: the session's events and record are gone.
async fn delete_session(
    State(app): State<AppState>,
    Controller(_): Controller,
    Path(id): Path<String>,
    Query(q): Query<DeleteQuery>,
) -> Result<StatusCode, ApiError> {
    let force = q.force.as_deref().is_some_and(|v| v == "1" || v == "true");
    app.delete_session(&id, force).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Body (optional): `{"discard_worktree": true}` removes the session's worktree even when that
/// loses work; without it such a worktree is kept and the answer says why (`worktree_kept`) and
/// where (`worktree`: `path`, `branch`).
async fn archive_session(
    State(app): State<AppState>,
    Controller(_): Controller,
    Path(id): Path<String>,
    JsonBody(body): JsonBody,
) -> Result<Json<Value>, ApiError> {
    let discard = match body.get("discard_worktree") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            return Err(ApiError::bad_request(
                "discard_worktree must be true or false",
            ));
        }
    };
    let (s, kept) = app.archive(&id, discard).await?;
    let mut answer = json!({"session_id": s.id, "archived": true});
    if let Some(why) = kept {
        answer["worktree_kept"] = json!(why);
        if let Some(wt) = s.meta().worktree {
            answer["worktree"] = json!({"path": wt.path, "branch": wt.branch});
        }
    }
    Ok(Json(answer))
}

#[derive(Deserialize)]
struct PostEvents {
    #[serde(default)]
    session_id: Option<String>,
    events: Vec<PostedEvent>,
}

#[derive(Deserialize)]
struct PostedEvent {
    payload: Value,
}

async fn post_events(
    State(app): State<AppState>,
    who: Principal,
    Path(id): Path<String>,
    JsonBody(body): JsonBody,
) -> Result<Json<Value>, ApiError> {
    let session = app.visible_session(&who, &id)?;
    if !who.can_write() {
        return Err(ApiError::forbidden(
            "observer tokens are read-only: sending events needs the controller token",
        ));
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
    let results = session.ingest(&who, body.events.into_iter().map(|e| e.payload).collect())?;
    Ok(Json(json!({"results": results})))
}

#[derive(Deserialize)]
struct EventsQuery {
    after: Option<u64>,
    limit: Option<usize>,
}

pub const EVENTS_PAGE_DEFAULT: usize = 1000;
pub const EVENTS_PAGE_MAX: usize = 10_000;

async fn list_events(
    State(app): State<AppState>,
    who: Principal,
    Path(id): Path<String>,
    Query(q): Query<EventsQuery>,
) -> Result<Response, ApiError> {
    let session = app.visible_session(&who, &id)?;
    let after = q.after.unwrap_or(0);
    let limit = q
        .limit
        .unwrap_or(EVENTS_PAGE_DEFAULT)
        .clamp(1, EVENTS_PAGE_MAX);
    let (first, last) = session.bounds();
    if after > last {
        return Err(crate::follow::beyond_end_error(&id, after, last));
    }
    let truncated = last > 0 && after.saturating_add(1) < first;
    // The first page now (a store failure is still a clean 500), the rest as the client reads:
    // pages bounded in events and bytes, never the whole answer in memory.
    let page = session.replay_page(after, limit.min(REPLAY_PAGE), REPLAY_PAGE_BYTES)?;
    let pages = EventPages {
        session,
        cursor: after,
        left: limit,
        last,
        next: Some(page),
        wrote_head: false,
        wrote_event: false,
        observer: !who.can_write(),
        tail: Some(format!(
            "],\"truncated\":{truncated},\"last_sequence_num\":{last}}}"
        )),
    };
    let body = futures::stream::unfold(pages, |mut p| async move {
        let chunk = p.next_chunk();
        chunk.map(|c| (c, p))
    });
    Ok((
        [(header::CONTENT_TYPE, "application/json")],
        Body::from_stream(body),
    )
        .into_response())
}

/// `GET …/events` as a sequence of body chunks, one replay page each.
struct EventPages {
    session: Arc<Session>,
    cursor: u64,
    left: usize,
    /// Events after this one (appended during the answer) are left out.
    last: u64,
    next: Option<Vec<Arc<crate::frames::Frame>>>,
    wrote_head: bool,
    wrote_event: bool,
    /// Observers get frames through [`crate::redact::frame_for_observer`].
    observer: bool,
    tail: Option<String>,
}

impl EventPages {
    fn next_chunk(&mut self) -> Option<Result<bytes::Bytes, std::io::Error>> {
        let frames = match self.next.take() {
            Some(f) => f,
            None if self.left == 0 || self.cursor >= self.last || self.tail.is_none() => Vec::new(),
            None => match self.session.replay_page(
                self.cursor,
                self.left.min(REPLAY_PAGE),
                REPLAY_PAGE_BYTES,
            ) {
                Ok(f) => f,
                Err(e) => {
                    tracing::error!(session = %self.session.id, error = %e, "replay from the store failed mid-answer");
                    self.tail = None;
                    return Some(Err(std::io::Error::other(e.to_string())));
                }
            },
        };
        let frames: Vec<_> = frames
            .into_iter()
            .filter(|f| f.seq.is_some_and(|s| s <= self.last))
            .take(self.left)
            .collect();
        let mut out =
            BytesMut::with_capacity(frames.iter().map(|f| f.data.len() + 1).sum::<usize>() + 96);
        if !std::mem::replace(&mut self.wrote_head, true) {
            out.extend_from_slice(b"{\"events\":[");
        }
        match frames.last().and_then(|f| f.seq) {
            Some(seq) => {
                self.cursor = seq;
                self.left -= frames.len();
                for f in &frames {
                    if std::mem::replace(&mut self.wrote_event, true) {
                        out.extend_from_slice(b",");
                    }
                    let redacted = self.observer.then(|| crate::redact::frame_for_observer(f));
                    let f = redacted.as_ref().unwrap_or(f);
                    // The SSE data line of a durable frame is its envelope.
                    out.extend_from_slice(&f.data);
                }
            }
            None => out.extend_from_slice(self.tail.take()?.as_bytes()),
        }
        Some(Ok(out.freeze()))
    }
}
