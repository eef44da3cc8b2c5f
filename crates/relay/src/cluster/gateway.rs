//! The gateway's HTTP side, as one middleware in front of the single relay's routes (so those stay
//! exactly as they are): `/healthz` with NATS state; the session list from the registry with each
//! session's host; creation placed on an agents node; for a session another node runs, detail,
//! input, archive, delete and the host-only requests ([`wire::HOST_ONLY`]: changes, diffs, fork,
//! rewind) forwarded to its host (its verdict returned as is), and streams and event pages served
//! from a mirror ([`super::mirror`]) by the ordinary handlers. The Claude Code CLI's own sessions
//! are those of every live agents node's machine ([`super::cli`]).

use std::collections::HashMap;
use std::sync::Arc;

use axum::Json;
use axum::extract::{Query, Request, State};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse as _, Response};
use futures::StreamExt as _;
use serde_json::{Value, json};

use crate::core::auth::Principal;
use crate::edge::error::ApiError;
use crate::edge::external::External;
use crate::edge::extract::{AppState, json_created};

use super::forward::{
    FORWARD_TIMEOUT, body_json, http_request, principal, status_of, verdict_response,
};
use super::wire::{self, Input, Who};
use super::{Cluster, REQUEST_TIMEOUT, Role};

/// Runs before the router's handlers (inside the Host/Origin guard). Without `--nats`: nothing.
pub async fn middleware(State(app): State<AppState>, req: Request, next: Next) -> Response {
    let Some(cluster) = Cluster::of(&app) else {
        return next.run(req).await;
    };
    if req.uri().path() == "/healthz" {
        let (ok, v) = cluster.health();
        let status = if ok {
            StatusCode::OK
        } else {
            StatusCode::SERVICE_UNAVAILABLE
        };
        return (status, Json(v)).into_response();
    }
    // Started before NATS: nothing of the API until it is up (the console shows it reconnecting).
    if req.uri().path().starts_with("/v1/")
        && let Err(e) = cluster.ready()
    {
        return e.into_response();
    }
    // A session made through this host's own API is published and listed before the answer, so
    // another gateway can serve it as soon as the client has its id.
    if cluster.config.role.runs_agents()
        && req.method() == Method::POST
        && matches!(req.uri().path(), "/v1/code/sessions" | "/v1/code/sessions/")
    {
        let resp = next.run(req).await;
        return host_created(&app, &cluster, resp).await;
    }
    // The Claude Code CLI's own sessions: on a gateway, those of every agents node's machine.
    if req.uri().path().starts_with(wire::CLI_SESSIONS) {
        if cluster.config.role.serves_all() {
            return super::cli::cli(&app, &cluster, req, next)
                .await
                .unwrap_or_else(|e| e.into_response());
        }
        // An agents node asked directly: a session it starts (resume, fork) is hosted here.
        if req.method() == Method::POST {
            let resp = next.run(req).await;
            return host_created(&app, &cluster, resp).await;
        }
        return next.run(req).await;
    }
    if !cluster.config.role.serves_all() {
        return next.run(req).await;
    }
    // Allow / Deny from a notification, for a session another node runs.
    if req.method() == Method::POST && req.uri().path() == "/v1/push/answer" {
        return super::push::answer(&app, req, next)
            .await
            .unwrap_or_else(|e| e.into_response());
    }
    let Some(rest) = req.uri().path().strip_prefix("/v1/code/sessions") else {
        return next.run(req).await;
    };
    let rest = rest.to_owned();
    route(&app, &cluster, &rest, req, next)
        .await
        .unwrap_or_else(|e| e.into_response())
}

async fn route(
    app: &AppState,
    cluster: &Arc<Cluster>,
    rest: &str,
    req: Request,
    next: Next,
) -> Result<Response, ApiError> {
    let method = req.method().clone();
    if rest.is_empty() || rest == "/" {
        if method == Method::GET {
            let who = principal(app, &req)?;
            let uri = req.uri().clone();
            return Ok(list(cluster, &who, &uri).await);
        }
        if method == Method::POST && cluster.config.role == Role::Gateway {
            let who = principal(app, &req)?;
            if !who.can_write() {
                return Err(ApiError::forbidden(
                    "observer tokens are read-only: creating a session needs the controller token",
                ));
            }
            return create(app, cluster, req).await;
        }
        return Ok(next.run(req).await);
    }
    let Some(rest) = rest.strip_prefix('/') else {
        return Ok(next.run(req).await);
    };
    let (id, tail) = match rest.split_once('/') {
        Some((id, tail)) => (id.to_owned(), format!("/{tail}")),
        None => (rest.to_owned(), String::new()),
    };
    // A session of this node's own (hosted, or not yet published): as the single relay.
    if let Some(s) = app.get(&id)
        && (!s.has_cluster_hook() || cluster.hosts(&id))
    {
        return Ok(next.run(req).await);
    }
    // The registry cannot be read while NATS is away: say so at once rather than wait for it or
    // answer "no such session".
    if cluster.client.connection_state() != async_nats::connection::State::Connected {
        return Err(super::unavailable(format!(
            "NATS is unreachable: session {id} cannot be reached through this gateway until it returns"
        )));
    }
    let Some(entry) = cluster.entry(&id).await else {
        return Ok(next.run(req).await);
    };
    // A WebSocket may bring its credential in its first frame (the official SDK's authMessage):
    // the ordinary handler authenticates it (scope included) as on a single relay.
    if method == Method::GET && tail == "/ws" {
        let mirror = cluster.mirror(&id, &entry).await?;
        if super::lost::lost(&entry).is_some() {
            let exit = entry.summary.exit.clone().flatten();
            mirror.mirror_meta(|m| m.exit = exit);
        }
        // It closes when NATS becomes unreachable, as an SSE stream ends.
        let c = Arc::downgrade(cluster);
        let mut req = req;
        req.extensions_mut()
            .insert(crate::edge::ws::SourceLost(Arc::new(move || {
                Box::pin(nats_lost(c.clone()))
            })));
        return Ok(next.run(req).await);
    }
    let who = principal(app, &req)?;
    if !who.can_see(&id) {
        return Err(ApiError::forbidden(
            "this observer token is scoped to another session",
        ));
    }
    // Its host stopped answering: the session is ended; its log and detail come from the mirror.
    if let Some(why) = super::lost::lost(&entry) {
        return match (&method, tail.as_str()) {
            (&Method::GET, "" | "/events" | "/events/stream" | "/ws") => {
                let exit = entry.summary.exit.clone().flatten();
                cluster
                    .mirror(&id, &entry)
                    .await?
                    .mirror_meta(|m| m.exit = exit);
                Ok(next.run(req).await)
            }
            (&Method::POST, "/events") => Err(ApiError::gone(format!(
                "session {id} has ended ({why}); start a new session to continue"
            ))),
            (&Method::POST, "/archive") | (&Method::DELETE, "") => Err(super::unavailable(
                format!("session {id} cannot be changed: {why}"),
            )),
            (m, t) if wire::host_only(m.as_str(), t) => Err(super::unavailable(format!(
                "session {id}'s working directory and agent are on its host, which cannot be reached: {why}"
            ))),
            _ => Ok(next.run(req).await),
        };
    }
    let input = match (&method, tail.as_str()) {
        (&Method::GET, "") => Input::Detail { who: Who::of(&who) },
        (&Method::DELETE, "") => {
            let q: Query<HashMap<String, String>> =
                Query::try_from_uri(req.uri()).map_err(|e| ApiError::bad_request(e.to_string()))?;
            let force = q.get("force").is_some_and(|v| v == "1" || v == "true");
            Input::Delete {
                who: Who::of(&who),
                force,
            }
        }
        (&Method::POST, "/archive") => {
            let body = body_json(app, req, true).await?;
            Input::Archive {
                who: Who::of(&who),
                discard_worktree: crate::edge::extract::discard_worktree(&body)?,
            }
        }
        (&Method::POST, "/events") => {
            if !who.can_write() {
                return Err(ApiError::forbidden(
                    "observer tokens are read-only: sending events needs the controller token",
                ));
            }
            let body = body_json(app, req, false).await?;
            Input::Ingest {
                who: Who::of(&who),
                payloads: crate::edge::extract::posted_payloads(&id, body)?,
                device: None,
            }
        }
        (&Method::GET, "/events" | "/events/stream" | "/ws") => {
            cluster.mirror(&id, &entry).await?;
            let resp = next.run(req).await;
            return Ok(if tail == "/events/stream" {
                until_nats_lost(cluster, resp)
            } else {
                resp
            });
        }
        (m, t) if wire::host_only(m.as_str(), t) => {
            if *m != Method::GET && !who.can_write() {
                return Err(ApiError::forbidden(
                    "observer tokens are read-only: this needs the controller token",
                ));
            }
            let input = Input::Http(http_request(app, &who, req).await?);
            return Ok(forward(cluster, &id, &entry.node, &input).await);
        }
        _ => return Ok(next.run(req).await),
    };
    let (status, body) = cluster.ask(&id, &input).await;
    Ok(verdict_response(status, body))
}

/// Sends a host-only request ([`Input::Http`]) to the session's host and returns its answer as is:
/// 503 `cluster_unavailable` when no host listens, 504 when it does not answer in time.
async fn forward(cluster: &Cluster, id: &str, node: &str, input: &Input) -> Response {
    let body = serde_json::to_vec(input).unwrap_or_default();
    match cluster
        .call(wire::input_subject(id), body.into(), FORWARD_TIMEOUT)
        .await
    {
        Ok(m) => verdict_response(status_of(&m), m.payload),
        Err(e) if e.kind() == async_nats::RequestErrorKind::TimedOut => ApiError::new(
            StatusCode::GATEWAY_TIMEOUT,
            "timeout_error",
            format!(
                "the agents node {node} running session {id} did not answer within {} s; retry",
                FORWARD_TIMEOUT.as_secs()
            ),
        )
        .into_response(),
        Err(e) => super::unavailable(format!(
            "the agents node {node} running session {id} cannot be reached over NATS ({e}); it may have stopped"
        ))
        .into_response(),
    }
}

/// An SSE stream served from a mirror ends when NATS becomes unreachable (checked every 250 ms):
/// the client sees it (a console shows "reconnecting"), its reconnection gets 503 until NATS is
/// back, and then it resumes from its `Last-Event-ID` with nothing lost.
fn until_nats_lost(cluster: &Arc<Cluster>, resp: Response) -> Response {
    if !resp.status().is_success() {
        return resp;
    }
    let lost = nats_lost(Arc::downgrade(cluster));
    let (parts, body) = resp.into_parts();
    let body = axum::body::Body::from_stream(body.into_data_stream().take_until(lost));
    Response::from_parts(parts, body)
}

/// Resolves once NATS is unreachable (checked every 250 ms) or the cluster is gone. A WebSocket
/// served from a mirror closes then ([`crate::edge::ws::SourceLost`]), as an SSE stream ends.
async fn nats_lost(cluster: std::sync::Weak<Cluster>) {
    let mut tick = tokio::time::interval(std::time::Duration::from_millis(250));
    loop {
        tick.tick().await;
        match cluster.upgrade() {
            Some(c) if c.client.connection_state() == async_nats::connection::State::Connected => {}
            _ => return,
        }
    }
}

/// A session created here (`POST /v1/code/sessions`, or a fork) is hosted: listed and published.
pub(super) async fn host_created(
    app: &AppState,
    cluster: &Arc<Cluster>,
    resp: Response,
) -> Response {
    if resp.status() != StatusCode::CREATED {
        return resp;
    }
    let (parts, body) = resp.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, 1 << 20).await else {
        return (StatusCode::INTERNAL_SERVER_ERROR, "unreadable answer").into_response();
    };
    let id = serde_json::from_slice::<Value>(&bytes)
        .ok()
        .and_then(|v| v["session_id"].as_str().map(str::to_owned));
    if let Some(s) = id.and_then(|id| app.get(&id)) {
        cluster.host(&s).await;
    }
    Response::from_parts(parts, axum::body::Body::from(bytes))
}

/// `GET /v1/code/sessions` from the registry: every host's sessions, each with its `host`.
async fn list(cluster: &Cluster, who: &Principal, uri: &axum::http::Uri) -> Response {
    let q: HashMap<String, String> = Query::try_from_uri(uri)
        .map(|q: Query<HashMap<String, String>>| q.0)
        .unwrap_or_default();
    let yes = |k: &str| q.get(k).is_some_and(|v| v == "1" || v == "true");
    let mut list =
        match session_list(cluster, who, yes("include_archived"), yes("kept_worktrees")).await {
            Ok(list) => list,
            Err(e) => return e.into_response(),
        };
    // As on a single relay, a session-scoped observer sees no CLI session.
    let mut missing = Vec::new();
    if who.session_scope.is_none() {
        let (cli, gone) = super::cli::cli_sessions(cluster, who).await;
        list.sessions.extend(cli);
        missing = gone;
    }
    let mut v = serde_json::to_value(&list).unwrap_or_else(|_| json!({"sessions": []}));
    if !missing.is_empty() {
        v["missing_hosts"] = json!(missing);
    }
    Json(v).into_response()
}

/// The session list from the registry, each with its host: every archived session too with
/// `all`, those whose worktree was kept with `kept` (also the relay's pre-rendered first screen).
pub async fn session_list(
    cluster: &Cluster,
    who: &Principal,
    all: bool,
    kept: bool,
) -> Result<bridge_protocol::api::SessionList, ApiError> {
    let mut sessions = Vec::new();
    let keys = match cluster.ready() {
        Ok(n) => super::kv_keys(&n.sessions_kv)
            .await
            .map_err(|e| e.to_string()),
        Err(e) => Err(e.message),
    };
    match keys {
        Ok(keys) => {
            for k in keys {
                if who.session_scope.as_deref().is_some_and(|s| s != k) {
                    continue;
                }
                let Some(e) = cluster.entry(&k).await else {
                    continue;
                };
                let mut s = e.summary;
                if s.archived && !(all || (kept && s.worktree_kept.is_some())) {
                    continue;
                }
                s.origin = Some(bridge_protocol::api::Origin::Relay);
                s.extra.insert("host".into(), Value::String(e.node));
                sessions.push(s);
            }
        }
        Err(e) => {
            return Err(super::unavailable(format!(
                "cannot read the session registry on NATS: {e}"
            )));
        }
    }
    sessions.sort_by(|a, b| {
        a.created_at
            .cmp(&b.created_at)
            .then_with(|| a.id.cmp(&b.id))
    });
    Ok(bridge_protocol::api::SessionList { sessions })
}

/// `POST /v1/code/sessions` on a gateway: placed on an agents node (same `cwd` first, then the
/// least loaded), which creates it; the answer names this gateway's URLs.
async fn create(app: &AppState, cluster: &Cluster, req: Request) -> Result<Response, ApiError> {
    let ext = req
        .extensions()
        .get::<External>()
        .cloned()
        .ok_or_else(|| ApiError::unauthorized("missing credentials"))?;
    let body = body_json(app, req, true).await?;
    let cwd = body.get("cwd").and_then(Value::as_str).map(str::to_owned);
    let node = cluster.pick_node(cwd.as_deref()).await?;
    let sent = tokio::time::timeout(
        REQUEST_TIMEOUT,
        cluster.call(
            wire::create_subject(&node),
            body.to_string().into(),
            REQUEST_TIMEOUT,
        ),
    )
    .await;
    let (status, answer) = match sent {
        Ok(Ok(m)) => (status_of(&m), m.payload),
        _ => {
            return Err(super::unavailable(format!(
                "the agents node {node} did not answer within {} s",
                REQUEST_TIMEOUT.as_secs()
            )));
        }
    };
    if status != 201 {
        return Ok(verdict_response(status, answer));
    }
    let v: Value = serde_json::from_slice(&answer).unwrap_or_default();
    let Some(id) = v["session_id"].as_str() else {
        return Err(ApiError::internal(
            "the agents node answered without a session id",
        ));
    };
    Ok(json_created(
        ext.session_created(id.to_owned(), Some(node.to_string())),
    ))
}
