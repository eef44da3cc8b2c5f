//! What a gateway needs to pass a request on to the node that hosts its session ([`super::gateway`]
//! for sessions, [`super::cli`] for the CLI's own): who asked, the body within the relay's limit,
//! the host's answer as a response, and which agents nodes are alive to place a session on.

use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse as _, Response};
use serde_json::{Value, json};

use crate::core::auth::Principal;
use crate::edge::error::ApiError;
use crate::edge::external::External;
use crate::edge::extract::AppState;

use super::Cluster;
use super::wire::{self, NodeEntry};

pub(super) fn principal(app: &AppState, req: &Request) -> Result<Principal, ApiError> {
    let ext = req
        .extensions()
        .get::<External>()
        .ok_or_else(|| ApiError::unauthorized("missing credentials"))?;
    app.authenticate(req.headers(), ext)
}

/// How long a gateway waits for a host-only request's answer: longer than the host's own limits
/// (a git run 10 s, a rewind 20 s), so that the host's 504 comes through when it has one.
pub const FORWARD_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(25);

/// The HTTP status of a host's answer (502 when it carries none).
pub(super) fn status_of(m: &async_nats::Message) -> u16 {
    wire::reply_status(m).unwrap_or(502)
}

pub(super) fn verdict_response(status: u16, body: bytes::Bytes) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY);
    if body.is_empty() {
        return status.into_response();
    }
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

pub(super) async fn body_bytes(app: &AppState, req: Request) -> Result<bytes::Bytes, ApiError> {
    let limit = app.config.quotas.max_body_bytes;
    axum::body::to_bytes(req.into_body(), limit)
        .await
        .map_err(|_| {
            ApiError::too_large(format!(
                "the body is larger than {limit} bytes (--max-body-bytes)"
            ))
        })
}

/// `req` as a gateway forwards it, to be run as `who`: its method, its path with the query, its
/// body (UTF-8, within --max-body-bytes).
pub(super) async fn http_request(
    app: &AppState,
    who: &Principal,
    req: Request,
) -> Result<wire::HttpRequest, ApiError> {
    let path = req
        .uri()
        .path_and_query()
        .map_or_else(|| req.uri().path().to_owned(), |p| p.as_str().to_owned());
    let method = req.method().as_str().to_owned();
    let body = String::from_utf8(body_bytes(app, req).await?.into())
        .map_err(|_| ApiError::bad_request("malformed JSON body: not UTF-8"))?;
    Ok(wire::HttpRequest {
        who: wire::Who::of(who),
        method,
        path,
        body,
    })
}

pub(super) async fn body_json(
    app: &AppState,
    req: Request,
    optional: bool,
) -> Result<Value, ApiError> {
    let bytes = body_bytes(app, req).await?;
    if bytes.is_empty() && optional {
        return Ok(json!({}));
    }
    serde_json::from_slice(&bytes)
        .map_err(|e| ApiError::bad_request(format!("malformed JSON body: {e}")))
}

impl Cluster {
    /// The agents nodes with a fresh heartbeat (one in the last 10 s), sorted by name.
    async fn fresh_agents(&self) -> Vec<NodeEntry> {
        let now = wire::unix_now();
        let mut nodes = Vec::new();
        if let Some(kv) = self.nats().map(|n| &n.nodes_kv)
            && let Ok(keys) = super::kv_keys(kv).await
        {
            for k in keys {
                // Only a heartbeat a relay of this cluster sealed: a forged one wins no session.
                if let Ok(Some(b)) = kv.get(&k).await
                    && let Some(v) = self.open_kv(wire::NODES_BUCKET, &k, &b)
                    && let Ok(n) = serde_json::from_slice::<NodeEntry>(&v)
                    && n.node == k
                    && n.agents
                    && n.at + 10 >= now
                {
                    nodes.push(n);
                }
            }
        }
        nodes.sort_by(|a, b| a.node.cmp(&b.node));
        nodes
    }

    /// The names of the agents nodes with a fresh heartbeat, sorted.
    pub(super) async fn live_agents(&self) -> Vec<String> {
        self.fresh_agents()
            .await
            .into_iter()
            .map(|n| n.node)
            .collect()
    }

    /// An agents node with a fresh heartbeat and room: one whose `--cwd` holds `cwd` first, then
    /// the least loaded.
    pub(super) async fn pick_node(&self, cwd: Option<&str>) -> Result<String, ApiError> {
        let mut nodes = self.fresh_agents().await;
        nodes.retain(|n| n.load < n.max_sessions);
        let fits = |n: &NodeEntry| cwd.is_some_and(|c| std::path::Path::new(c).starts_with(&n.cwd));
        nodes
            .iter()
            .min_by(|a, b| {
                fits(b).cmp(&fits(a)).then_with(|| {
                    (a.load as f64 / a.max_sessions.max(1) as f64)
                        .total_cmp(&(b.load as f64 / b.max_sessions.max(1) as f64))
                })
            })
            .map(|n| n.node.clone())
            .ok_or_else(|| {
                super::unavailable(
                    "no agents node with room is running: start one with `bridge-relay --nats URL --role agents`",
                )
            })
    }
}
