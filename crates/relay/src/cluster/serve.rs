//! The host answering gateways: input, detail, archive and delete for the sessions it runs
//! (`bridge.in.<id>`), the requests only it can answer ([`wire::HOST_ONLY`]: changes, diffs, fork,
//! rewind — run through its own API routes as the gateway's caller), and new sessions placed on it
//! (`bridge.create.<node>`), and what a gateway asks about the Claude Code CLI's own sessions on
//! this machine (`bridge.cli.<node>`: the list, which node holds one, open, resume, fork). Each request runs through the same code as a local HTTP request; the
//! reply is the verdict: an HTTP status in the [`wire::STATUS_HEADER`] header and the JSON body the
//! single relay would have answered.

use std::collections::HashMap;
use std::sync::{Arc, Weak};
use std::time::Duration;

use async_nats::Message;
use axum::http::StatusCode;
use axum::response::{IntoResponse as _, Response};
use bytes::Bytes;
use futures::StreamExt as _;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::core::relay::{CreateSession, Relay};
use crate::edge::error::ApiError;
use crate::edge::extract::json_created;
use bridge_protocol::api::NewSession;

use super::Cluster;
use super::wire::{self, CliAsk, Input};

pub(super) async fn start(cluster: &Arc<Cluster>) -> anyhow::Result<()> {
    let inputs = cluster
        .client
        .subscribe("bridge.in.*")
        .await
        .map_err(|e| anyhow::anyhow!("cannot subscribe to session input on NATS: {e}"))?;
    let creates = cluster
        .client
        .subscribe(wire::create_subject(&cluster.config.node))
        .await
        .map_err(|e| anyhow::anyhow!("cannot subscribe to session creation on NATS: {e}"))?;
    let c = Arc::downgrade(cluster);
    tokio::spawn(async move {
        let mut inputs = inputs;
        // One lane per session: its input runs in the order it was sent (an SDK's `initialize`
        // before its first message, as on a single relay); sessions run in parallel.
        let mut lanes: HashMap<String, mpsc::Sender<Message>> = HashMap::new();
        while let Some(msg) = inputs.next().await {
            let Some(cluster) = c.upgrade() else { return };
            if !sealed(&cluster, &msg).await {
                continue;
            }
            let Some(msg) = whole(&cluster, msg).await else {
                continue;
            };
            let id = msg.subject.as_str().to_owned();
            lanes.retain(|_, tx| !tx.is_closed());
            let mut msg = Some(msg);
            for _ in 0..2 {
                let tx = lanes.entry(id.clone()).or_insert_with(|| {
                    let (tx, rx) = mpsc::channel(LANE);
                    tokio::spawn(lane(Arc::downgrade(&cluster), rx));
                    tx
                });
                match tx.try_send(msg.take().expect("one message")) {
                    Ok(()) => break,
                    // The lane had just gone idle: a new one.
                    Err(mpsc::error::TrySendError::Closed(m)) => {
                        lanes.remove(&id);
                        msg = Some(m);
                    }
                    Err(mpsc::error::TrySendError::Full(m)) => {
                        let busy = ApiError::new(
                            StatusCode::TOO_MANY_REQUESTS,
                            "rate_limit_error",
                            format!(
                                "{LANE} inputs are waiting for this session on its host; send fewer at once"
                            ),
                        );
                        let cluster = cluster.clone();
                        tokio::spawn(
                            async move { reply(&cluster, &m, busy.into_response()).await },
                        );
                        break;
                    }
                }
            }
        }
    });
    let clis = cluster
        .client
        .subscribe(wire::cli_subject(&cluster.config.node))
        .await
        .map_err(|e| anyhow::anyhow!("cannot subscribe to CLI session requests on NATS: {e}"))?;
    each_at_once(cluster, clis, on_cli);
    each_at_once(cluster, creates, on_create);
    Ok(())
}

/// Runs `handle` on every message of `subscription`, each in its own task, while the cluster lives.
fn each_at_once<F, Fut>(cluster: &Arc<Cluster>, mut subscription: async_nats::Subscriber, handle: F)
where
    F: Fn(Arc<Cluster>, Message) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let c = Arc::downgrade(cluster);
    tokio::spawn(async move {
        while let Some(msg) = subscription.next().await {
            let Some(cluster) = c.upgrade() else { return };
            if !sealed(&cluster, &msg).await {
                continue;
            }
            let handle = handle.clone();
            tokio::spawn(async move {
                if let Some(msg) = whole(&cluster, msg).await {
                    handle(cluster, msg).await;
                }
            });
        }
    });
}

/// Whether `msg` is a request a relay of this cluster sealed, fresh and not seen before. Anything
/// else (a NATS client without the cluster secret, a replayed request) is answered 401 and not run.
async fn sealed(cluster: &Cluster, msg: &Message) -> bool {
    match cluster
        .keys()
        .check_request(msg.subject.as_str(), msg.headers.as_ref(), &msg.payload)
    {
        Ok(()) => true,
        Err(why) => {
            tracing::warn!(subject = %msg.subject, why = why.as_str(), "refusing a NATS request without the cluster's seal");
            let e = ApiError::new(
                StatusCode::UNAUTHORIZED,
                "authentication_error",
                format!("refused: {}", why.as_str()),
            );
            reply(cluster, msg, e.into_response()).await;
            false
        }
    }
}

/// The request with its whole body: a request larger than max_payload came as a reference to the
/// object store (read once, then deleted). `None`: answered already (the object is not there).
async fn whole(cluster: &Arc<Cluster>, mut msg: Message) -> Option<Message> {
    match cluster
        .body_of(msg.headers.as_ref(), &msg.payload, true)
        .await
    {
        Ok(body) => {
            msg.payload = body;
            Some(msg)
        }
        Err(e) => {
            let bad =
                ApiError::bad_request(format!("a large request could not be read from NATS: {e}"));
            reply(cluster, &msg, bad.into_response()).await;
            None
        }
    }
}

/// Replies with `resp` (status + body).
async fn reply(cluster: &Cluster, msg: &Message, resp: Response) {
    let Some(to) = msg.reply.clone() else { return };
    // Never more than NATS carries in one message (read no further: an answer past it is refused,
    // not held whole in memory).
    let cap = cluster
        .client
        .server_info()
        .max_payload
        .saturating_sub(4096)
        .max(4096);
    let mut status = resp.status().as_u16();
    let body = match axum::body::to_bytes(resp.into_body(), cap).await {
        Ok(b) => b,
        Err(_) => {
            status = 502;
            let e = ApiError::new(
                StatusCode::BAD_GATEWAY,
                "api_error",
                format!(
                    "the answer is larger than the NATS server's max_payload ({cap} bytes with headers): ask for less (a page, a smaller transcript) or raise max_payload"
                ),
            );
            axum::body::to_bytes(e.into_response().into_body(), cap)
                .await
                .unwrap_or_default()
        }
    };
    // The seal covers the status with the body ([`wire::reply_content`]).
    let mut headers = cluster
        .keys()
        .signed(to.as_str(), &wire::reply_content(status, &body));
    headers.insert(wire::STATUS_HEADER, status.to_string().as_str());
    if let Err(e) = cluster.client.publish_with_headers(to, headers, body).await {
        tracing::warn!(error = %e, "cannot reply to a gateway over NATS");
    }
}

/// Inputs one session's lane holds at most.
const LANE: usize = 256;
/// A lane with nothing to do for this long ends (the next input starts another).
const LANE_IDLE: Duration = Duration::from_secs(30);

/// Runs one session's inputs in order.
async fn lane(cluster: Weak<Cluster>, mut rx: mpsc::Receiver<Message>) {
    while let Ok(Some(msg)) = tokio::time::timeout(LANE_IDLE, rx.recv()).await {
        let Some(c) = cluster.upgrade() else { return };
        on_input(c, msg).await;
    }
}

async fn on_input(cluster: Arc<Cluster>, msg: Message) {
    let id = msg
        .subject
        .as_str()
        .strip_prefix("bridge.in.")
        .unwrap_or_default()
        .to_owned();
    // Another host's session: its host answers.
    if !cluster.hosts(&id) {
        return;
    }
    let Some(relay) = cluster.relay() else { return };
    let input = match serde_json::from_slice::<Input>(&msg.payload) {
        Ok(input) => input,
        Err(e) => {
            let bad = ApiError::bad_request(format!("malformed request from a gateway: {e}"));
            return reply(&cluster, &msg, bad.into_response()).await;
        }
    };
    // A read of the host's disk (a `git status` may take seconds) runs beside the session's input
    // instead of holding up its lane.
    if matches!(&input, Input::Http(http) if http.method == "GET") {
        tokio::spawn(async move {
            let resp = run_input(&relay, &cluster, &id, input)
                .await
                .unwrap_or_else(|e| e.into_response());
            reply(&cluster, &msg, resp).await;
        });
        return;
    }
    let resp = run_input(&relay, &cluster, &id, input)
        .await
        .unwrap_or_else(|e| e.into_response());
    reply(&cluster, &msg, resp).await;
}

/// A host-only request a gateway forwarded: checked against [`wire::HOST_ONLY`] for this session,
/// then run through the relay's own API routes as `who` (same handlers, caches, statuses, bodies).
async fn run_forwarded(
    relay: &Arc<Relay>,
    cluster: &Arc<Cluster>,
    id: &str,
    request: wire::HttpRequest,
) -> Result<Response, ApiError> {
    let host_only = |method: &str, path: &str| {
        let tail = path
            .strip_prefix("/v1/code/sessions/")
            .and_then(|r| r.strip_prefix(id))
            .unwrap_or_default();
        wire::host_only(method, tail)
    };
    let to = format!("to session {id}'s host");
    through_own_routes(relay, cluster, request, host_only, &to).await
}

async fn run_input(
    relay: &Arc<Relay>,
    cluster: &Arc<Cluster>,
    id: &str,
    input: Input,
) -> Result<Response, ApiError> {
    let session = relay.get(id).ok_or_else(|| ApiError::unknown_session(id))?;
    let resp = match input {
        Input::Ingest {
            who,
            payloads,
            device,
        } => {
            let who = who.principal();
            if !who.can_see(id) {
                return Err(ApiError::forbidden(
                    "this observer token is scoped to another session",
                ));
            }
            let results = session.ingest_from(&who, device.as_ref(), payloads)?;
            axum::Json(json!({"results": results})).into_response()
        }
        Input::Detail { who } => {
            let mut v = session.detail();
            if !who.controller {
                crate::core::redact::initialize_for_observer(&mut v.initialize);
            }
            axum::Json(v).into_response()
        }
        Input::Archive {
            who,
            discard_worktree,
        } => {
            controller(&who)?;
            let (s, kept) = relay.archive(id, discard_worktree).await?;
            let mut answer = json!({"session_id": s.id, "archived": true});
            if let Some(why) = kept {
                answer["worktree_kept"] = json!(why);
                if let Some(wt) = s.meta().worktree {
                    answer["worktree"] = json!({"path": wt.path, "branch": wt.branch});
                }
            }
            cluster.put_registry(&s).await;
            axum::Json(answer).into_response()
        }
        Input::Delete { who, force } => {
            controller(&who)?;
            relay.delete_session(id, force).await?;
            StatusCode::NO_CONTENT.into_response()
        }
        Input::Http(http) => run_forwarded(relay, cluster, id, http).await?,
    };
    Ok(resp)
}

fn controller(who: &wire::Who) -> Result<(), ApiError> {
    if who.controller {
        Ok(())
    } else {
        Err(ApiError::forbidden(
            "observer tokens are read-only: this needs the controller token",
        ))
    }
}

async fn on_create(cluster: Arc<Cluster>, msg: Message) {
    let Some(relay) = cluster.relay() else { return };
    let resp = match create(&relay, &cluster, &msg.payload).await {
        Ok(r) => r,
        Err(e) => e.into_response(),
    };
    reply(&cluster, &msg, resp).await;
}

async fn create(
    relay: &Arc<Relay>,
    cluster: &Arc<Cluster>,
    body: &Bytes,
) -> Result<Response, ApiError> {
    let req: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("malformed session request: {e}")))?;
    let req: NewSession = crate::edge::extract::parse_body(req, "session request")?;
    let s = relay.create_session(CreateSession::from(req)).await?;
    // Listed and published before the gateway hears of it.
    cluster.host(&s).await;
    Ok(json_created(
        json!({"session_id": s.id, "node": cluster.config.node}),
    ))
}

/// A gateway's question about the CLI's transcripts on this machine ([`CliAsk`]).
async fn on_cli(cluster: Arc<Cluster>, msg: Message) {
    let Some(relay) = cluster.relay() else { return };
    let resp = match serde_json::from_slice::<CliAsk>(&msg.payload) {
        Err(e) => {
            ApiError::bad_request(format!("malformed request from a gateway: {e}")).into_response()
        }
        // As on a single relay: the CLI's sessions are listed to those who may read them.
        Ok(CliAsk::List { who }) if !who.principal().transcripts => {
            axum::Json(Vec::<Value>::new()).into_response()
        }
        Ok(CliAsk::List { .. }) => {
            axum::Json(crate::features::transcripts::api::cli_list(&relay).await).into_response()
        }
        Ok(CliAsk::Holds { id }) => {
            if crate::features::transcripts::api::holds(&relay, &id).await {
                StatusCode::NO_CONTENT.into_response()
            } else {
                StatusCode::NOT_FOUND.into_response()
            }
        }
        Ok(CliAsk::Http(http)) => run_cli(&relay, &cluster, http)
            .await
            .unwrap_or_else(|e| e.into_response()),
    };
    reply(&cluster, &msg, resp).await;
}

/// Runs a forwarded request through this node's own routes as the gateway's caller `who`, once
/// `forwarded(method, path without its query)` says it is a request a gateway forwards here (else
/// 400: not one a gateway forwards `to`); a session it starts (a fork, a resume) is listed and
/// published here before the gateway hears of it.
async fn through_own_routes(
    relay: &Arc<Relay>,
    cluster: &Arc<Cluster>,
    wire::HttpRequest {
        who,
        method,
        path,
        body,
    }: wire::HttpRequest,
    forwarded: impl FnOnce(&str, &str) -> bool,
    to: &str,
) -> Result<Response, ApiError> {
    let uri: axum::http::Uri = path
        .parse()
        .map_err(|_| ApiError::bad_request(format!("malformed forwarded path {path:?}")))?;
    if !forwarded(&method, uri.path()) {
        return Err(ApiError::bad_request(format!(
            "{method} {} is not a request a gateway forwards {to}",
            uri.path()
        )));
    }
    let Some(routes) = cluster.routes.get().cloned() else {
        return Err(super::unavailable(
            "this agents node is still starting: retry in a moment",
        ));
    };
    let method = axum::http::Method::from_bytes(method.as_bytes())
        .map_err(|_| ApiError::bad_request("malformed forwarded method"))?;
    let mut builder = axum::http::Request::builder().method(method).uri(uri);
    if !body.is_empty() {
        builder = builder.header(axum::http::header::CONTENT_TYPE, "application/json");
    }
    let mut req = builder
        .body(axum::body::Body::from(body))
        .map_err(|e| ApiError::internal(e.to_string()))?;
    req.extensions_mut()
        .insert(crate::edge::extract::Forwarded(who.principal()));
    let Ok(resp) = tower::ServiceExt::oneshot(routes, req).await;
    Ok(super::gateway::host_created(relay, cluster, resp).await)
}

/// A request about one CLI session a gateway forwarded ([`wire::cli_route`]), run through the
/// relay's own routes as `who`; a session it starts (resume, fork) is hosted here, listed and
/// published before the gateway hears of it.
async fn run_cli(
    relay: &Arc<Relay>,
    cluster: &Arc<Cluster>,
    request: wire::HttpRequest,
) -> Result<Response, ApiError> {
    let cli_route = |method: &str, path: &str| wire::cli_route(method, path).is_some();
    through_own_routes(relay, cluster, request, cli_route, "about a CLI session").await
}
