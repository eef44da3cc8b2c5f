//! The Claude Code CLI's own sessions on a gateway: those of every live agents node's machine,
//! each node asked over NATS (`bridge.cli.<node>`, [`CliAsk`]) — the list with each entry's host,
//! and one session's detail / resume / fork / rewind sent to the node that holds its transcript.

use std::sync::Arc;

use axum::extract::Request;
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::Response;
use serde_json::Value;

use crate::core::auth::Principal;
use crate::edge::error::ApiError;
use crate::edge::extract::AppState;

use super::Cluster;
use super::forward::{FORWARD_TIMEOUT, http_request, principal, status_of, verdict_response};
use super::wire::{self, CliAsk, Who};

/// How long a gateway waits for each agents node's answer about the CLI sessions on its machine:
/// a node that does not answer in time is left out (and named).
pub const CLI_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

/// `ask` sent to each of `nodes` at once: each node's status and body, `None` when it did not
/// answer within [`CLI_TIMEOUT`].
async fn ask_nodes(
    cluster: &Cluster,
    nodes: &[String],
    ask: &CliAsk,
) -> Vec<(String, Option<(u16, bytes::Bytes)>)> {
    let body = bytes::Bytes::from(serde_json::to_vec(ask).unwrap_or_default());
    futures::future::join_all(nodes.iter().map(|node| {
        let body = body.clone();
        async move {
            let asked = cluster.call(wire::cli_subject(node), body, CLI_TIMEOUT);
            let answer = match tokio::time::timeout(CLI_TIMEOUT, asked).await {
                Ok(Ok(m)) => Some((status_of(&m), m.payload)),
                _ => None,
            };
            (node.clone(), answer)
        }
    }))
    .await
}

/// The CLI sessions of every live agents node, each with its `host` (newest first, forks after
/// their origin), and the nodes that did not answer.
pub(super) async fn cli_sessions(
    cluster: &Cluster,
    who: &Principal,
) -> (Vec<bridge_protocol::api::SessionSummary>, Vec<String>) {
    let nodes = cluster.live_agents().await;
    let ask = CliAsk::List { who: Who::of(who) };
    let mut sessions = Vec::new();
    let mut missing = Vec::new();
    for (node, answer) in ask_nodes(cluster, &nodes, &ask).await {
        let listed = answer
            .filter(|(status, _)| *status == 200)
            .and_then(|(_, body)| {
                serde_json::from_slice::<bridge_protocol::api::SessionList>(
                    &[b"{\"sessions\":".as_slice(), &body, b"}"].concat(),
                )
                .ok()
            });
        let Some(listed) = listed else {
            missing.push(node);
            continue;
        };
        for mut s in listed.sessions {
            s.origin = Some(bridge_protocol::api::Origin::Cli);
            s.extra.insert("host".into(), Value::String(node.clone()));
            sessions.push(s);
        }
    }
    crate::features::transcripts::api::order(&mut sessions);
    (sessions, missing)
}

/// `GET /v1/code/cli-sessions/{id}` and `POST …/{id}/resume|fork|rewind` on a gateway: sent to the
/// agents node whose machine holds the transcript (each live one is asked; the first by name that
/// has it answers), which runs it through its own routes — same rights, statuses and bodies as a
/// single relay — and hosts a session it starts. The answer names that node (`host`). Refusals
/// that need no node (a scoped observer, an observer's write, a malformed id) come from this
/// gateway's own handlers, worded as on a single relay.
pub(super) async fn cli(
    app: &AppState,
    cluster: &Arc<Cluster>,
    req: Request,
    next: Next,
) -> Result<Response, ApiError> {
    let path = req.uri().path().to_owned();
    let Some(id) = wire::cli_route(req.method().as_str(), &path).map(str::to_owned) else {
        return Ok(next.run(req).await);
    };
    let who = principal(app, &req)?;
    if who.session_scope.is_some()
        || (req.method() != Method::GET && !who.can_write())
        || !crate::features::transcripts::index::valid_id(&id)
    {
        return Ok(next.run(req).await);
    }
    let nodes = cluster.live_agents().await;
    let answers = ask_nodes(cluster, &nodes, &CliAsk::Holds { id: id.clone() }).await;
    let holder = answers
        .iter()
        .find(|(_, a)| matches!(a, Some((204, _))))
        .map(|(n, _)| n.clone());
    let Some(node) = holder else {
        let missing: Vec<&str> = answers
            .iter()
            .filter(|(_, a)| a.is_none())
            .map(|(n, _)| n.as_str())
            .collect();
        if missing.is_empty() {
            return Err(ApiError::not_found(format!(
                "no agents node of this cluster holds Claude Code session {id} ({} asked)",
                nodes.len()
            )));
        }
        return Err(super::unavailable(format!(
            "Claude Code session {id} is on none of the agents nodes that answered; {} did not answer within {} s: retry",
            missing.join(", "),
            CLI_TIMEOUT.as_secs()
        )));
    };
    let ask = CliAsk::Http(http_request(app, &who, req).await?);
    let m = match cluster
        .call(
            wire::cli_subject(&node),
            serde_json::to_vec(&ask).unwrap_or_default().into(),
            FORWARD_TIMEOUT,
        )
        .await
    {
        Ok(m) => m,
        Err(e) if e.kind() == async_nats::RequestErrorKind::TimedOut => {
            return Err(ApiError::new(
                StatusCode::GATEWAY_TIMEOUT,
                "timeout_error",
                format!(
                    "the agents node {node} holding Claude Code session {id} did not answer within {} s; retry",
                    FORWARD_TIMEOUT.as_secs()
                ),
            ));
        }
        Err(e) => {
            return Err(super::unavailable(format!(
                "the agents node {node} holding Claude Code session {id} cannot be reached over NATS ({e})"
            )));
        }
    };
    let status = status_of(&m);
    // Which node answered: the list names it the same way.
    if (200..300).contains(&status)
        && let Ok(Value::Object(mut o)) = serde_json::from_slice::<Value>(&m.payload)
    {
        o.insert("host".into(), Value::String(node));
        let body = serde_json::to_vec(&o).unwrap_or_default();
        return Ok(verdict_response(status, body.into()));
    }
    Ok(verdict_response(status, m.payload))
}
