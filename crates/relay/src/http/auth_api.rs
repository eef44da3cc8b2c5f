//! Credential endpoints: log in with the token or a one-time code, log out, who am I, the embed
//! configuration, login codes, credentials and observer tokens.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};

use bridge_protocol::api::{EmbedConfig, LoginAnswer, LoginRequest};

use crate::core::auth::{Auth, AuthError, Principal};
use crate::edge::error::ApiError;
use crate::edge::external::External;
use crate::edge::extract::{
    AppState, Controller, JsonBody, PeerIp, SmallJsonBody, cookie_value, json_created, parse_body,
};

/// Asks `POST /v1/auth/login` to answer with the first screen too (`1`, or `needs-you`).
const FIRST_SCREEN_HEADER: &str = "x-bridge-first-screen";

pub(super) async fn login(
    State(app): State<AppState>,
    ext: External,
    PeerIp(peer): PeerIp,
    headers: HeaderMap,
    SmallJsonBody(body): SmallJsonBody,
) -> Result<Response, ApiError> {
    // Every attempt is charged before it runs (attempts racing each other cannot all pass one
    // check); a successful one gets its token back (guessing is what the limit stops, not a
    // person or a test signing in with a good link many times a minute).
    if let Err(wait) = app.limits.login.check(peer, std::time::Instant::now()) {
        tracing::warn!(?peer, "login attempts rate-limited");
        return Ok(crate::edge::error::too_many_login_attempts(wait));
    }
    let body: LoginRequest = parse_body(body, "login body (expected {\"token\": \"…\"})")?;
    let secret = body.token.trim();
    let cluster = crate::cluster::Cluster::of(&app);
    // With --nats a login code minted through any relay is redeemed in the shared bucket (once).
    let logged_in = match &cluster {
        Some(c)
            if crate::core::auth::shared::is_login_code(secret)
                && !app.auth.has_local_code(secret) =>
        {
            if c.redeem_login_code(secret).await? {
                app.auth.login_with_redeemed_code()
            } else {
                Ok(None)
            }
        }
        _ => app.auth.login(secret),
    }
    .map_err(|e| ApiError::internal(e.to_string()))?;
    if let (Some(c), Some(l)) = (&cluster, &logged_in) {
        share_login(&app, c, l).await?;
    }
    let Some(crate::core::auth::LoggedIn {
        cookie,
        login_secret,
        principal,
        max_age,
    }) = logged_in
    else {
        return Err(ApiError::unauthorized(
            "invalid, expired or already used login token",
        ));
    };
    app.limits.login.refund(peer);
    tracing::info!(role = principal.role.as_str(), token_id = %principal.token_id, login_id = ?principal.login_id, "login");
    let set = format!(
        "{}={cookie}; {}Max-Age={max_age}",
        ext.cookie_name(),
        cookie_attributes(&ext)
    );
    // The cookie alone is not enough: the console keeps the login secret in its origin's storage
    // and sends it in X-Bridge-Login (and as a WebSocket's first frame).
    let mut answer = LoginAnswer {
        login_secret,
        login_id: principal.login_id.clone(),
        role: principal.role.as_str().to_owned(),
        session_id: principal.session_scope.clone(),
        first_screen: None,
    };
    // The first visit's boot script (index.html) asks for the first screen with the login, so it
    // need not fetch the page again: the same markup and boot data the page's pre-render puts in
    // (`1`, or `needs-you` for that view); a controller only, like the page.
    let wanted = headers
        .get(FIRST_SCREEN_HEADER)
        .and_then(|v| v.to_str().ok());
    if let Some(v @ ("1" | "needs-you")) = wanted
        && let Some(screen) =
            super::first_screen::for_principal(&app, &principal, v == "needs-you", None).await
    {
        answer.first_screen = Some(screen);
    }
    let mut resp = Json(answer).into_response();
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
pub(super) async fn mint_login_code(
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
    let code = match crate::cluster::Cluster::of(&app) {
        Some(c) => {
            let (code, key, entry) = crate::core::auth::shared::new_shared_code(ttl);
            c.share_credentials(vec![(key, entry)], "minting a login code")
                .await?;
            code
        }
        None => app.auth.mint_login_code(ttl),
    };
    Ok(json_created(
        json!({"code": code, "console_url": ext.url(&format!("/#login={code}")), "expires_in_secs": ttl}),
    ))
}

/// `GET /v1/credentials`: the controller token, observer tokens and logins, without secrets.
pub(super) async fn list_credentials(
    State(app): State<AppState>,
    Controller(_): Controller,
) -> Json<Value> {
    Json(json!({"credentials": app.auth.list_credentials()}))
}

/// `DELETE /v1/credentials/{id}`: revokes any credential; open streams that used it end within a
/// second.
pub(super) async fn revoke_credential(
    State(app): State<AppState>,
    Controller(who): Controller,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    revoke_everywhere(&app, &id, Auth::revoke, format!("no credential {id}")).await?;
    tracing::info!(id = %id, by = ?who.login_id, "credential revoked");
    Ok(StatusCode::NO_CONTENT)
}

/// `Secure` (over HTTPS), `HttpOnly`, `SameSite=Strict`, `Path=/`, no `Domain`; ends with "; ".
fn cookie_attributes(ext: &External) -> &'static str {
    if ext.https {
        "Secure; HttpOnly; SameSite=Strict; Path=/; "
    } else {
        "HttpOnly; SameSite=Strict; Path=/; "
    }
}

pub(super) async fn logout(
    State(app): State<AppState>,
    ext: External,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let mut shared = Ok(());
    if let Some(c) = cookie_value(&headers, ext.cookie_name()) {
        if let Some(cluster) = crate::cluster::Cluster::of(&app) {
            shared = cluster
                .unshare_credentials(vec![crate::core::auth::shared::login_key(c)], "logging out")
                .await;
        }
        app.auth
            .logout(c)
            .map_err(|e| ApiError::internal(e.to_string()))?;
    }
    // Logged out here; the other gateways could not be told.
    shared?;
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
pub(super) async fn embed_config(State(app): State<AppState>) -> Json<EmbedConfig> {
    Json(EmbedConfig {
        bridge: 1,
        origins: app.config.embed_origins.clone(),
    })
}

pub(super) async fn me(who: Principal) -> Json<Value> {
    Json(super::first_screen::me_json(&who))
}

/// What `GET /v1/me` answers (also in the pre-rendered first screen's boot data).
#[derive(Deserialize)]
pub(super) struct MintBody {
    session_id: Option<String>,
    /// Also read Claude Code's own transcripts on this machine (not with `session_id`).
    #[serde(default)]
    transcripts: bool,
    expires_in_secs: Option<u64>,
}

pub(super) async fn mint_observer(
    State(app): State<AppState>,
    ext: External,
    Controller(_): Controller,
    JsonBody(body): JsonBody,
) -> Result<Response, ApiError> {
    let body: MintBody = parse_body(body, "observer token request")?;
    if body.transcripts && body.session_id.is_some() {
        return Err(ApiError::bad_request(
            "an observer token scoped to one session cannot also read Claude Code's transcripts: mint one without session_id for that",
        ));
    }
    if let Some(sid) = &body.session_id
        && app.get(sid).is_none()
        && !crate::cluster::knows_session(&app, sid).await
    {
        return Err(ApiError::unknown_session(sid));
    }
    let m = app
        .auth
        .mint_observer(
            body.session_id.clone(),
            body.transcripts,
            body.expires_in_secs,
        )
        .map_err(|e| ApiError::internal(e.to_string()))?;
    if let Some(c) = crate::cluster::Cluster::of(&app) {
        let entries = app.auth.shared_observer(&m.id).into_iter().collect();
        if let Err(e) = c
            .share_credentials(entries, "minting an observer token")
            .await
        {
            let _ = app.auth.revoke_observer(&m.id);
            return Err(e);
        }
    }
    let path = body
        .session_id
        .as_ref()
        .map_or_else(String::new, |s| format!("s/{s}"));
    let console_url = ext.url(&format!("/{path}#login={}", m.token));
    tracing::info!(id = %m.id, scope = ?body.session_id, "observer token minted");
    Ok(json_created(
        json!({"id": m.id, "token": m.token, "console_url": console_url, "session_id": body.session_id, "transcripts": body.transcripts, "expires_at": m.expires_at}),
    ))
}

pub(super) async fn list_observers(
    State(app): State<AppState>,
    Controller(_): Controller,
) -> Json<Value> {
    Json(json!({"observer_tokens": app.auth.list_observers()}))
}

pub(super) async fn revoke_observer(
    State(app): State<AppState>,
    Controller(_): Controller,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    let missing = format!("no observer token with id {id:?}");
    if id.starts_with("lgn_") {
        return Err(ApiError::not_found(missing));
    }
    revoke_everywhere(&app, &id, Auth::revoke_observer, missing).await?;
    tracing::info!(id = %id, "observer token revoked");
    Ok(StatusCode::NO_CONTENT)
}

/// With `--nats`: writes a new login to the shared bucket; if NATS does not take it, the login is
/// undone here and the answer is 503.
async fn share_login(
    app: &AppState,
    cluster: &crate::cluster::Cluster,
    l: &crate::core::auth::LoggedIn,
) -> Result<(), ApiError> {
    let entries = l
        .principal
        .login_id
        .as_deref()
        .and_then(|id| app.auth.shared_login(id))
        .into_iter()
        .collect();
    if let Err(e) = cluster.share_credentials(entries, "logging in").await {
        let _ = app.auth.logout(&l.cookie);
        return Err(e);
    }
    Ok(())
}

/// With `--nats`: deletes what revoking credential `id` removes from the shared bucket first, so
/// every gateway forgets it (a revocation NATS does not confirm changes nothing: 503). `true`:
/// there was something to delete (this relay may have forgotten it already when the bucket's
/// change reached it).
async fn unshare(app: &AppState, id: &str) -> Result<bool, ApiError> {
    let Some(c) = crate::cluster::Cluster::of(app) else {
        return Ok(false);
    };
    let keys = app.auth.shared_keys_of(id);
    let any = !keys.is_empty();
    c.unshare_credentials(keys, "revoking a credential").await?;
    Ok(any)
}

/// Revokes `id` in the shared bucket (with `--nats`) and here with `revoke`; 404 with `missing`
/// when it was found in neither.
async fn revoke_everywhere(
    app: &AppState,
    id: &str,
    revoke: fn(&Auth, &str) -> Result<bool, AuthError>,
    missing: String,
) -> Result<(), ApiError> {
    let shared = unshare(app, id).await?;
    let here = revoke(&app.auth, id).map_err(|e| ApiError::internal(e.to_string()))?;
    if here || shared {
        Ok(())
    } else {
        Err(ApiError::not_found(missing))
    }
}
