//! Web Push in a cluster ([`crate::features::push::cluster`] holds the key and subscriptions): the buckets
//! opened at set-up, followed into every node's memory, and a notification's answer given through
//! a gateway that does not run the session.
//!
//! Who sends: the node that runs a session (role `agents` or `all`) — its sessions hold the relay's
//! push handle and raise the events; a gateway's mirrors hold none, so a device gets each
//! notification once.

use std::sync::{Arc, Weak};
use std::time::Duration;

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse as _, Response};
use serde_json::Value;

use super::Cluster;
use super::wire::{Input, Who};
use crate::core::auth::Principal;
use crate::core::relay::Relay;
use crate::core::session::{PendingRequest, Session};
use crate::edge::error::ApiError;
use crate::edge::extract::AppState;
use crate::features::push::cluster::{ClusterSubs, KEYS_BUCKET, SUBSCRIPTIONS_BUCKET, agree_vapid};

/// Called when the relay starts with `--nats`: push stays off until the cluster's key and
/// subscriptions are read ([`set_up`]); the relay's own file and table are not used.
pub(super) fn expect(relay: &Relay) {
    if let Some(p) = crate::features::push::Push::of(relay) {
        p.subs.expect_cluster();
    }
}

/// Opens the buckets (made if missing), agrees on the VAPID key, reads the subscriptions and
/// starts following them.
pub(super) async fn set_up(
    cluster: &Arc<Cluster>,
    js: &async_nats::jetstream::Context,
) -> anyhow::Result<()> {
    let Some(relay) = cluster.relay() else {
        return Ok(());
    };
    let Some(push) = crate::features::push::Push::of(&relay) else {
        return Ok(());
    };
    let subs_kv = super::bucket(js, SUBSCRIPTIONS_BUCKET, Duration::ZERO).await?;
    let keys_kv = super::bucket(js, KEYS_BUCKET, Duration::ZERO).await?;
    let vapid = agree_vapid(&keys_kv, &cluster.keys, push.subs.local_vapid()).await?;
    let vapid_is_local = vapid.public_key() == push.subs.local_vapid().public_key();
    let subs = Arc::new(ClusterSubs::new(
        subs_kv,
        cluster.client.clone(),
        Arc::new(vapid),
        cluster.keys.clone(),
    ));
    subs.load()
        .await
        .map_err(|e| anyhow::anyhow!("cannot read the push subscriptions on NATS: {e}"))?;
    // This relay's key is the cluster's: the devices of its own table are the cluster's now.
    if vapid_is_local {
        let local = push.subs.local_store();
        let mut moved = 0;
        for s in local.list().unwrap_or_default() {
            if subs
                .import(&s)
                .await
                .map_err(|e| anyhow::anyhow!("cannot share this relay's push subscriptions: {e}"))?
            {
                moved += 1;
            }
            if let Err(e) = local.delete(&s.id) {
                tracing::warn!(error = %e, "cannot remove a shared push subscription from relay.db");
            }
        }
        if moved > 0 {
            tracing::info!(
                moved,
                "this relay's push subscriptions are now shared with the cluster"
            );
        }
    }
    push.subs.join_cluster(subs.clone());
    tokio::spawn(follow(Arc::downgrade(cluster), Arc::downgrade(&subs)));
    Ok(())
}

/// Follows the subscriptions bucket into memory; again from the start after NATS comes back (a
/// deletion's marker stays in the bucket, so one missed meanwhile is seen then).
async fn follow(cluster: Weak<Cluster>, subs: Weak<ClusterSubs>) {
    loop {
        let Some(c) = cluster.upgrade() else { return };
        let Some(kv) = subs.upgrade().map(|s| s.kv_store()) else {
            return;
        };
        let mut reconnected = c.connected.clone();
        reconnected.mark_unchanged();
        drop(c);
        match kv.watch_with_history(">").await {
            Ok(mut watch) => {
                let take = |e: async_nats::jetstream::kv::Entry| match subs.upgrade() {
                    Some(s) => {
                        s.apply(e);
                        true
                    }
                    None => false,
                };
                let what = "the push subscriptions";
                if !super::follow_watch(&mut watch, &mut reconnected, what, take).await {
                    return;
                }
            }
            Err(e) => tracing::warn!(error = %e, "cannot follow the push subscriptions"),
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// A session another node runs, answered from a notification through this node.
pub struct Remote {
    /// Its mirror here, caught up with what its host had published.
    pub session: Arc<Session>,
    cluster: Arc<Cluster>,
    id: String,
}

/// The session `id` when another node runs it and this node serves every session (a gateway, or
/// `all`); `None` without `--nats`, for a session this node runs, or one the registry does not
/// know (the caller answers as the single relay does).
pub async fn remote_session(relay: &Relay, id: &str) -> Result<Option<Remote>, ApiError> {
    let Some(c) = crate::cluster::Cluster::of(relay) else {
        return Ok(None);
    };
    if let Some(s) = relay.get(id)
        && (!s.has_cluster_hook() || c.hosts(id))
    {
        return Ok(None);
    }
    if !c.config.role.serves_all() {
        return Ok(None);
    }
    if c.client.connection_state() != async_nats::connection::State::Connected {
        return Err(super::unavailable(format!(
            "NATS is unreachable: session {id} cannot be reached through this gateway until it returns"
        )));
    }
    let Some(entry) = c.entry(id).await else {
        return Ok(None);
    };
    if let Some(why) = super::lost::lost(&entry) {
        return Err(ApiError::gone(format!(
            "session {id} has ended ({why}); start a new session to continue"
        )));
    }
    let session = c.mirror(id, &entry).await?;
    Ok(Some(Remote {
        session,
        cluster: c.clone(),
        id: id.to_owned(),
    }))
}

impl Remote {
    /// The request `request_id` if the host says it is pending: which one from the host's detail,
    /// what it asks from the mirror's log (the `control_request` at its sequence number).
    pub async fn pending_request(
        &self,
        who: &Principal,
        request_id: &str,
    ) -> Result<Option<PendingRequest>, ApiError> {
        let (status, body) = self
            .cluster
            .ask(&self.id, &Input::Detail { who: Who::of(who) })
            .await;
        if status >= 300 {
            return Err(super::mirror::host_error(status, &body));
        }
        let detail: bridge_protocol::api::SessionDetail = serde_json::from_slice(&body)
            .map_err(|e| ApiError::internal(format!("the session's host answered: {e}")))?;
        let Some(seq) = detail
            .pending_requests
            .iter()
            .find(|p| p.request_id == request_id)
            .map(|p| p.sequence_num)
        else {
            return Ok(None);
        };
        let ev = self
            .session
            .read_after(seq.saturating_sub(1), 1)
            .map_err(|e| ApiError::internal(e.to_string()))?
            .into_iter()
            .find(|e| e.seq == seq)
            .ok_or_else(|| {
                super::unavailable(format!(
                    "session {}: this gateway does not hold event {seq} (the prompt); retry",
                    self.id
                ))
            })?;
        let v: Value = serde_json::from_str(&ev.payload).unwrap_or_default();
        if v["type"] != "control_request" || v["request_id"].as_str() != Some(request_id) {
            return Ok(None);
        }
        let req = &v["request"];
        let text = |k: &str| req.get(k).and_then(Value::as_str).map(str::to_owned);
        Ok(Some(PendingRequest {
            request_id: request_id.to_owned(),
            subtype: text("subtype").unwrap_or_default(),
            tool_name: ["tool_name", "mcp_server_name", "dialog_kind"]
                .iter()
                .find_map(|k| text(k)),
            tool_use_id: text("tool_use_id"),
            input: req.get("input").cloned(),
        }))
    }

    /// Sends the answer given on `device` to the session's host, which decides (first answer wins
    /// there) and names the device as its own answers do: its verdict.
    pub async fn ingest(
        &self,
        who: &Principal,
        device: Option<&crate::features::push::Device>,
        payloads: Vec<Value>,
    ) -> Result<(), ApiError> {
        let input = Input::Ingest {
            who: Who::of(who),
            payloads,
            device: device.cloned(),
        };
        let (status, body) = self.cluster.ask(&self.id, &input).await;
        if status >= 300 {
            return Err(super::mirror::host_error(status, &body));
        }
        Ok(())
    }
}

/// `POST /v1/push/answer` on a node that serves every session, for a session another node runs:
/// checked as the relay's own handler does (`crate::features::push::api`), the pending request read from the
/// host, the answer sent to the host (first answer wins there). Any other answer goes on to the
/// relay's handler as it came.
pub async fn answer(app: &AppState, req: Request, next: Next) -> Result<Response, ApiError> {
    let (parts, body) = req.into_parts();
    // Who asks comes first, as with the relay's own handler: nothing is read for a stranger.
    let who = super::forward::principal(
        app,
        &Request::from_parts(parts.clone(), axum::body::Body::empty()),
    )?;
    if !who.can_write() {
        return Err(ApiError::forbidden(
            "observer tokens are read-only: this needs the controller token",
        ));
    }
    let bytes = super::forward::body_bytes(app, Request::from_parts(parts.clone(), body)).await?;
    let json = serde_json::from_slice::<Value>(&bytes).ok();
    let remote = match json.as_ref().and_then(|v| v.get("session_id")?.as_str()) {
        Some(id) => remote_session(app, id).await?,
        None => None,
    };
    let (Some(remote), Some(body)) = (remote, json) else {
        let req = Request::from_parts(parts, axum::body::Body::from(bytes));
        return Ok(next.run(req).await);
    };
    if !who.can_see(&remote.id) {
        return Err(ApiError::forbidden(
            "this token is scoped to another session",
        ));
    }
    let answer = crate::features::push::api::read_answer(app, body).await?;
    let pending = remote
        .pending_request(&who, &answer.body.request_id)
        .await?;
    let msg = crate::features::push::api::answer_message(&answer, pending, &remote.session)?;
    remote
        .ingest(&who, answer.device.as_ref(), vec![msg])
        .await?;
    Ok(crate::features::push::api::answered(&answer).into_response())
}
