//! Hosts that stop answering (role `gateway` / `all`): an agents node writes a heartbeat to
//! `bridge_nodes` every second; a gateway that sees no new heartbeat from a node for
//! [`DEAD_AFTER`] ends that node's open sessions the way a single relay ends a session whose agent
//! crashed: a `system/session_state_changed` `ended` event (with the reason
//! `host <name> stopped answering`) appended to the session's log on JetStream — expected-last-
//! subject-sequence makes exactly one gateway's write land, and every gateway's mirror and
//! follower gets it — and the registry entry marked ended with the same reason. The log stays
//! readable: gateways serve it from their mirrors.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use async_nats::HeaderMap;
use serde_json::json;

use crate::core::record::{ExitInfo, SessionState};
use crate::core::session::Session;
use crate::core::store::{Source, StoredEvent};

use super::Cluster;
use super::wire::{self, RegistryEntry};

/// No new heartbeat for this long: the node is taken for dead.
pub const DEAD_AFTER: Duration = Duration::from_secs(3);
/// How often an agents node writes its heartbeat.
pub const HEARTBEAT_EVERY: Duration = Duration::from_secs(1);
/// The registry's key under which a lost host's reason is listed.
pub const LOST_KEY: &str = "host_lost";
/// An agents node whose heartbeats could not be written for this long may have been taken for
/// dead: it checks whether the cluster ended its sessions meanwhile ([`Cluster::reconcile`]).
pub const OUT_OF_TOUCH: Duration = Duration::from_secs(2);

/// What a gateway has seen of the nodes' heartbeats.
pub(super) struct Watch {
    started: Instant,
    /// The last round that could read the heartbeats.
    last_read: Instant,
    /// node → (its heartbeat's KV revision, when that revision was first seen here).
    seen: HashMap<String, (u64, Instant)>,
}

impl Watch {
    pub fn new() -> Watch {
        Watch {
            started: Instant::now(),
            last_read: Instant::now(),
            seen: HashMap::new(),
        }
    }
}

pub fn reason(node: &str) -> String {
    format!("host {node} stopped answering")
}

/// Whether `ev` is the `ended` event a gateway wrote into the log of a session of `node` when it
/// took `node` for dead ([`Cluster::end_lost`]): the host never writes that reason itself.
pub fn ended_by_cluster(node: &str, ev: &StoredEvent) -> bool {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&ev.payload) else {
        return false;
    };
    v["type"] == "system"
        && v["subtype"] == "session_state_changed"
        && v["state"] == "ended"
        && v["relay_generated"] == true
        && v["reason"].as_str() == Some(reason(node).as_str())
}

/// Whether a registry entry says its host was lost (and why).
pub fn lost(entry: &RegistryEntry) -> Option<String> {
    entry
        .summary
        .extra
        .get(LOST_KEY)
        .and_then(|v| v.as_str())
        .map(str::to_owned)
}

impl Cluster {
    /// One round: notes fresh heartbeats, then ends the open sessions of nodes gone quiet.
    pub(super) async fn check_hosts(&self, w: &mut Watch) {
        let now = Instant::now();
        let Some(n) = self.nats() else { return };
        let Ok(names) = super::kv_keys(&n.nodes_kv).await else {
            return;
        };
        // This gateway could not watch for a while (NATS down): nobody's silence counts yet.
        if now.duration_since(w.last_read) > 2 * HEARTBEAT_EVERY {
            w.started = now;
            w.seen.values_mut().for_each(|(_, at)| *at = now);
        }
        w.last_read = now;
        for k in names {
            // A heartbeat counts only with the cluster's seal: one a NATS client forged keeps no
            // node alive.
            if let Ok(Some(e)) = n.nodes_kv.entry(&k).await
                && self
                    .keys
                    .open_value(wire::NODES_BUCKET, &k, &e.value)
                    .is_some()
                && w.seen.get(&k).is_none_or(|(rev, _)| *rev != e.revision)
            {
                w.seen.insert(k, (e.revision, now));
            }
        }
        let alive = |node: &str| match w.seen.get(node) {
            Some((_, at)) => now.duration_since(*at) < DEAD_AFTER,
            // Never seen: dead once this gateway has watched long enough to have seen it.
            None => now.duration_since(w.started) < DEAD_AFTER,
        };
        let Ok(ids) = super::kv_keys(&n.sessions_kv).await else {
            return;
        };
        for id in ids {
            let Ok(Some(e)) = n.sessions_kv.entry(&id).await else {
                continue;
            };
            let Some(value) = self.keys.open_value(wire::SESSIONS_BUCKET, &id, &e.value) else {
                continue;
            };
            let Ok(entry) = serde_json::from_slice::<RegistryEntry>(value) else {
                continue;
            };
            if entry.node == self.config.node
                || entry.summary.state == SessionState::Ended
                || alive(&entry.node)
            {
                continue;
            }
            self.end_lost(&id, entry, e.revision).await;
        }
    }

    /// Ends session `id` of a lost host: its log (once, whichever gateway gets there first) and
    /// its registry entry.
    async fn end_lost(&self, id: &str, mut entry: RegistryEntry, revision: u64) {
        let Some(n) = self.nats() else { return };
        let why = reason(&entry.node);
        let at = crate::core::util::now_rfc3339();
        match self.subject_tail(id).await {
            Ok((stream_seq, seq)) => {
                let payload = json!({
                    "type": "system",
                    "subtype": "session_state_changed",
                    "state": "ended",
                    "exit_code": null,
                    "signal": null,
                    "stderr_tail": "",
                    "reason": why,
                    "uuid": uuid::Uuid::new_v4().to_string(),
                    "session_id": id,
                    "relay_generated": true,
                });
                let ev = StoredEvent {
                    session_id: id.to_owned(),
                    seq: seq + 1,
                    event_id: uuid::Uuid::new_v4().to_string(),
                    event_type: "system".into(),
                    source: Source::Worker,
                    created_at: at.clone(),
                    payload: payload.to_string(),
                    client_uuid: None,
                };
                let mut headers = HeaderMap::new();
                // Never the id the host would give its own event of that number: JetStream would
                // take the host's event for a duplicate of this one and ack it (with this
                // message's sequence), and the host would go on publishing after the end.
                headers.insert(
                    async_nats::header::NATS_MESSAGE_ID,
                    format!("{id}:{}:lost", ev.seq).as_str(),
                );
                headers.insert(
                    async_nats::header::NATS_EXPECTED_LAST_SUBJECT_SEQUENCE,
                    stream_seq.to_string().as_str(),
                );
                headers.insert(wire::SEQ_HEADER, ev.seq.to_string().as_str());
                let subject = wire::events_subject(id);
                let body = wire::encode_event(&ev, true);
                self.keys.sign(&mut headers, &subject, &body);
                let sent = n.js.publish_with_headers(subject, headers, body).await;
                let landed = match sent {
                    Ok(ack) => ack.await.is_ok(),
                    Err(_) => false,
                };
                if landed {
                    tracing::warn!(session = %id, host = %entry.node, "{why}: the session is ended");
                } else {
                    // Refused (or unanswered): the registry says ended only if the log does —
                    // another gateway wrote the end first. If the host, back again, published
                    // first, the session goes on (and its heartbeat says it is alive).
                    match self.tail_event(id).await {
                        Ok(Some((_, ev))) if ended_by_cluster(&entry.node, &ev) => {}
                        _ => return,
                    }
                }
            }
            Err(e) => {
                tracing::warn!(session = %id, error = %e, "cannot end a lost host's session on NATS; retrying");
                return;
            }
        }
        entry.summary.state = SessionState::Ended;
        entry.summary.exit = Some(Some(ExitInfo {
            exit_code: None,
            signal: None,
            stderr_tail: String::new(),
            at,
            reason: Some(why.clone()),
        }));
        entry
            .summary
            .extra
            .insert(LOST_KEY.into(), serde_json::Value::String(why));
        if let Ok(json) = serde_json::to_vec(&entry) {
            // Compare-and-set: one gateway's write lands; the others see it ended next round.
            let sealed = self.seal_kv(wire::SESSIONS_BUCKET, id, &json);
            let _ = n.sessions_kv.update(id, sealed, revision).await;
        }
        if let Some(m) = self.mirrors.lock().await.get(id) {
            let exit = entry.summary.exit.clone().flatten();
            m.session.mirror_meta(|meta| meta.exit = exit);
        }
    }
}

/// The agents node's side: a node that comes back after it was taken for dead (paused, or cut off
/// from NATS) finds its sessions ended in their logs. It ends them itself too — the agent process
/// is stopped, the session shows ended with the cluster's reason — and publishes nothing more into
/// those logs (they are closed; what it wrote meanwhile stays in its own store). New sessions
/// placed on it work as before.
impl Cluster {
    /// Whether the cluster ended hosted session `id` while this node was out of touch.
    pub(super) fn is_cut(&self, id: &str) -> bool {
        self.cut
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(id)
    }

    /// Ends hosted session `session` here as the cluster ended it (once).
    pub(super) async fn cut_off(&self, session: &Arc<Session>) {
        if !self
            .cut
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(session.id.clone())
        {
            return;
        }
        self.health.ended_while_away.fetch_add(1, Ordering::Relaxed);
        let why = reason(&self.config.node);
        tracing::warn!(session = %session.id, local_last_seq = session.last_seq(),
            "{why}: the cluster ended this session while this node was out of touch (paused, or cut off from NATS); its agent is stopped and nothing more of it is published (what it wrote since stays in this node's store)");
        crate::core::agent::AgentEvents::on_exit(
            &**session,
            ExitInfo {
                exit_code: None,
                signal: None,
                stderr_tail: String::new(),
                at: crate::core::util::now_rfc3339(),
                reason: Some(why),
            },
        );
        let s = session.clone();
        tokio::spawn(async move {
            s.shutdown_agent(Duration::from_millis(500), Duration::from_secs(2))
                .await;
        });
        self.put_registry(session).await;
    }

    /// After this node was out of touch: ends here the open sessions whose logs the cluster ended
    /// meanwhile (a session that publishes finds out on its next publish anyway; an idle one
    /// would not).
    pub(super) async fn reconcile(&self, sessions: &[Arc<Session>]) {
        for s in sessions {
            if !self.hosts(&s.id) || self.is_cut(&s.id) || s.state() == SessionState::Ended {
                continue;
            }
            if let Ok(Some((_, ev))) = self.tail_event(&s.id).await
                && ended_by_cluster(&self.config.node, &ev)
            {
                self.cut_off(s).await;
            }
        }
    }
}
