//! HTTP for terminal sessions:
//!
//! * `POST /v1/hooks` — Claude Code's HTTP hooks post their input here, with a **hook-only
//!   credential** (`Authorization: Bearer brh_…`, minted below; nothing else is accepted, and that
//!   credential is accepted nowhere else). Each event is answered as the CLI expects; a
//!   `PermissionRequest` is held until it is answered here, at the terminal, or
//!   [`HookSettings::wait_secs`] pass.
//! * `GET /v1/hooks` — the same credential: is it valid, and what the relay does with prompts
//!   (`hooks status`).
//! * `POST /v1/hooks/credentials` — the controller mints a hook credential (`hooks install`);
//!   it is listed and revoked with the others (`/v1/credentials`).
//! * `GET /v1/hooks/settings` (any principal that may read terminal sessions) and
//!   `PUT /v1/hooks/settings` (the controller): the "send terminal prompts to my phone" switch and
//!   how long a prompt waits before the terminal's own takes over.

use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

use super::live::{HookSettings, Terminal, Verdict};
use crate::core::auth::Principal;
use crate::core::session::{Session, SessionMeta};
use crate::edge::error::ApiError;
use crate::edge::extract::{AppState, Controller, json_created};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/hooks", post(hook).get(status))
        .route("/v1/hooks/credentials", post(mint))
        .route("/v1/hooks/settings", get(get_settings).put(put_settings))
}

/// In a cluster, terminal sessions are hosted by the node on the machine where `claude` runs, and
/// reach every gateway from there: a node that runs no agents (`--role gateway`) refuses hooks.
fn runs_terminals(app: &AppState) -> Result<(), ApiError> {
    match &app.config.cluster {
        Some(c) if !c.role.runs_agents() => Err(ApiError::conflict(
            "gateway_only",
            "this relay is a cluster gateway and hosts no session: point the hooks at the relay that runs \
             agents on the machine where claude runs (bridge-relay hooks install --url); every gateway then \
             shows its terminal sessions and takes their answers",
        )),
        _ => Ok(()),
    }
}

/// The hook credential's id, from `Authorization: Bearer …`.
fn hook_credential(app: &AppState, headers: &HeaderMap) -> Result<String, ApiError> {
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    token
        .and_then(|t| app.auth.authenticate_hook(t))
        .ok_or_else(|| {
            ApiError::new(
                StatusCode::UNAUTHORIZED,
                "authentication_error",
                "a hook credential is required (bridge-relay hooks install writes one into Claude Code's settings)",
            )
        })
}

/// What a hook input must hold, checked before anything is made of it.
pub struct HookInput {
    pub event: String,
    pub session_id: String,
    pub cwd: String,
    pub transcript_path: Option<String>,
    pub permission_mode: Option<String>,
}

/// Reads a hook input: an object with `hook_event_name`, a `session_id` that is a UUID and an
/// absolute `cwd`; everything else is optional. Pure (fuzzed).
pub fn parse_input(v: &Value) -> Result<HookInput, String> {
    let o = v
        .as_object()
        .ok_or("the hook input must be a JSON object")?;
    let s = |k: &str| o.get(k).and_then(Value::as_str);
    let event = s("hook_event_name").ok_or("hook_event_name is missing")?;
    if event.is_empty() || event.len() > 64 || !event.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Err(format!("hook_event_name {event:?} is not an event name"));
    }
    let session_id = s("session_id").ok_or("session_id is missing")?;
    if !crate::features::transcripts::index::valid_id(session_id) {
        return Err(format!(
            "session_id {session_id:?} is not a Claude Code session id"
        ));
    }
    let cwd = s("cwd").ok_or("cwd is missing")?;
    if !cwd.starts_with('/') || cwd.len() > 4096 || cwd.contains('\0') {
        return Err("cwd must be an absolute path".into());
    }
    Ok(HookInput {
        event: event.to_owned(),
        session_id: session_id.to_owned(),
        cwd: cwd.to_owned(),
        transcript_path: s("transcript_path").map(str::to_owned),
        permission_mode: s("permission_mode")
            .filter(|m| m.len() <= 64)
            .map(str::to_owned),
    })
}

/// The relay session for a terminal session, made on its first hook.
async fn terminal_of(app: &AppState, h: &HookInput) -> Result<Arc<Terminal>, ApiError> {
    let made = super::live::Terminals::of(app).get_or_make(&h.session_id, || {
        let id = format!("cse_{}", uuid::Uuid::new_v4().simple());
        let mut meta = SessionMeta::new(id, h.cwd.clone(), None, h.permission_mode.clone(), None);
        meta.cli = Some(crate::core::record::CliLink {
            session_id: Some(h.session_id.clone()),
            terminal: true,
            ..Default::default()
        });
        match Session::create(meta, app.session_ctx()) {
            Ok(s) => Some(app.adopt(s)),
            Err(e) => {
                tracing::error!(error = %e, "cannot record a terminal session");
                None
            }
        }
    });
    let (t, new) = made.map_err(|e| match e {
        super::live::MakeError::TooMany => ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "rate_limit_error",
            format!(
                "{} terminal sessions are followed already: end or archive one",
                super::live::MAX_TERMINALS
            ),
        ),
        super::live::MakeError::Store => ApiError::internal("cannot record the terminal session"),
    })?;
    if new {
        t.attach();
        tracing::info!(session = %t.session.id, cli_session = %h.session_id, cwd = %h.cwd, "terminal session followed through hooks");
    }
    if let Some(p) = h
        .transcript_path
        .as_deref()
        .and_then(|p| super::live::Terminals::of(app).confine(p))
    {
        t.follow(p).await;
    }
    // What the CLI wrote before this event shows before what the event adds.
    t.pump().await;
    Ok(t)
}

/// `POST /v1/hooks`.
async fn hook(
    State(app): State<AppState>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    if let Err(e) = hook_credential(&app, &headers).and_then(|_| runs_terminals(&app)) {
        return e.into_response();
    }
    if body.len() > app.config.quotas.max_body_bytes {
        return ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "request_too_large",
            "hook input larger than --max-body-bytes",
        )
        .into_response();
    }
    let v: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => {
            return ApiError::bad_request(format!("the hook input is not JSON: {e}"))
                .into_response();
        }
    };
    let h = match parse_input(&v) {
        Ok(h) => h,
        Err(e) => return ApiError::bad_request(e).into_response(),
    };
    let t = match terminal_of(&app, &h).await {
        Ok(t) => t,
        Err(e) => return e.into_response(),
    };
    let answer = match h.event.as_str() {
        "UserPromptSubmit" => {
            t.turn_started();
            json!({})
        }
        "PermissionRequest" => return permission(&app, &t, &v).await,
        "PostToolUse" | "PostToolUseFailure" => {
            t.tool_ran(&v);
            json!({})
        }
        "Stop" => {
            t.flush_input().await;
            t.stopped(&v)
        }
        "SessionEnd" => {
            t.ended(v.get("reason").and_then(Value::as_str));
            super::live::Terminals::of(&app).forget(&h.session_id);
            json!({})
        }
        // SessionStart, Notification, and any event added later: the session is followed; no
        // decision.
        _ => json!({}),
    };
    Json(answer).into_response()
}

/// Settles a held prompt when its request is dropped (the CLI gave up on it, or timed out).
struct Held {
    t: Arc<Terminal>,
    request_id: String,
}

impl Drop for Held {
    fn drop(&mut self) {
        self.t.settle(&self.request_id);
    }
}

/// A `PermissionRequest`: shown here, held for the first answer.
async fn permission(app: &AppState, t: &Arc<Terminal>, v: &Value) -> Response {
    let settings = super::live::Terminals::of(app).settings();
    let Some((request_id, rx)) = t.ask(v, &settings) else {
        return Json(json!({})).into_response();
    };
    let held = Held {
        t: t.clone(),
        request_id,
    };
    let verdict = tokio::time::timeout(Duration::from_secs(settings.wait_secs), rx).await;
    let answer = match verdict {
        Ok(Ok(Verdict::Decision(d))) => json!({
            "hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": d}
        }),
        // Timed out, or settled elsewhere: the terminal asks.
        _ => json!({}),
    };
    drop(held);
    Json(answer).into_response()
}

/// `GET /v1/hooks` with a hook credential.
async fn status(State(app): State<AppState>, headers: HeaderMap) -> Result<Json<Value>, ApiError> {
    let id = hook_credential(&app, &headers)?;
    let s = super::live::Terminals::of(&app).settings();
    Ok(Json(json!({
        "ok": true,
        "credential_id": id,
        "send_to_phone": s.send_to_phone,
        "wait_secs": s.wait_secs,
    })))
}

/// `POST /v1/hooks/credentials` (controller): a new hook-only credential.
async fn mint(
    State(app): State<AppState>,
    Controller(who): Controller,
) -> Result<Response, ApiError> {
    runs_terminals(&app)?;
    let m = app
        .auth
        .mint_hook()
        .map_err(|e| ApiError::internal(e.to_string()))?;
    tracing::info!(id = %m.id, by = %who.token_id, "hook credential minted");
    Ok(json_created(json!({"id": m.id, "token": m.token})))
}

/// `GET /v1/hooks/settings`.
async fn get_settings(
    State(app): State<AppState>,
    who: Principal,
) -> Result<Json<HookSettings>, ApiError> {
    if !who.transcripts {
        return Err(ApiError::forbidden(
            "terminal sessions are the controller's (or an observer token's minted with transcripts: true)",
        ));
    }
    Ok(Json(super::live::Terminals::of(&app).settings()))
}

/// `PUT /v1/hooks/settings` (controller).
async fn put_settings(
    State(app): State<AppState>,
    Controller(_who): Controller,
    crate::edge::extract::JsonBody(v): crate::edge::extract::JsonBody,
) -> Result<Json<HookSettings>, ApiError> {
    let s: HookSettings = serde_json::from_value(v).map_err(|e| {
        ApiError::bad_request(format!(
            "expected {{\"send_to_phone\": true|false, \"wait_secs\": N}}: {e}"
        ))
    })?;
    super::live::Terminals::of(&app)
        .set_settings(s)
        .map(Json)
        .map_err(|e| ApiError::internal(format!("cannot save the hook settings: {e}")))
}
