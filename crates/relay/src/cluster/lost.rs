//! Hosts that stop answering (role `gateway` / `all`): an agents node writes a heartbeat to
//! `bridge_nodes` every second; a gateway that sees no new heartbeat from a node for
//! [`DEAD_AFTER`] ends that node's open sessions the way a single relay ends a session whose agent
//! crashed: a `system/session_state_changed` `ended` event (with the reason
//! `host <name> stopped answering`) appended to the session's log on JetStream — expected-last-
//! subject-sequence makes exactly one gateway's write land, and every gateway's mirror and
//! follower gets it — and the registry entry marked ended with the same reason. The log stays
//! readable: gateways serve it from their mirrors.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use async_nats::HeaderMap;
use bytes::Bytes;
use futures::StreamExt as _;
use serde_json::json;

use crate::record::{ExitInfo, SessionState};
use crate::store::{Source, StoredEvent};

use super::Cluster;
use super::wire::{self, RegistryEntry};

/// No new heartbeat for this long: the node is taken for dead.
pub const DEAD_AFTER: Duration = Duration::from_secs(3);
/// How often an agents node writes its heartbeat.
pub const HEARTBEAT_EVERY: Duration = Duration::from_secs(1);
/// The registry's key under which a lost host's reason is listed.
pub const LOST_KEY: &str = "host_lost";

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
        let Ok(mut keys) = self.nodes_kv.keys().await else {
            return;
        };
        let mut names = Vec::new();
        while let Some(Ok(k)) = keys.next().await {
            names.push(k);
        }
        // This gateway could not watch for a while (NATS down): nobody's silence counts yet.
        if now.duration_since(w.last_read) > 2 * HEARTBEAT_EVERY {
            w.started = now;
            w.seen.values_mut().for_each(|(_, at)| *at = now);
        }
        w.last_read = now;
        for k in names {
            if let Ok(Some(e)) = self.nodes_kv.entry(&k).await
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
        let Ok(mut keys) = self.sessions_kv.keys().await else {
            return;
        };
        let mut ids = Vec::new();
        while let Some(Ok(k)) = keys.next().await {
            ids.push(k);
        }
        for id in ids {
            let Ok(Some(e)) = self.sessions_kv.entry(&id).await else {
                continue;
            };
            let Ok(entry) = serde_json::from_slice::<RegistryEntry>(&e.value) else {
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
        let why = reason(&entry.node);
        let at = crate::util::now_rfc3339();
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
                headers.insert(
                    async_nats::header::NATS_MESSAGE_ID,
                    format!("{id}:{}", ev.seq).as_str(),
                );
                headers.insert(
                    async_nats::header::NATS_EXPECTED_LAST_SUBJECT_SEQUENCE,
                    stream_seq.to_string().as_str(),
                );
                headers.insert(wire::SEQ_HEADER, ev.seq.to_string().as_str());
                let sent = self
                    .js
                    .publish_with_headers(
                        wire::events_subject(id),
                        headers,
                        wire::encode_event(&ev, true),
                    )
                    .await;
                // Refused: another gateway (or the host, back again) wrote first; the registry
                // update below is still due.
                if let Ok(ack) = sent
                    && ack.await.is_ok()
                {
                    tracing::warn!(session = %id, host = %entry.node, "{why}: the session is ended");
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
            let _ = self
                .sessions_kv
                .update(id, Bytes::from(json), revision)
                .await;
        }
        if let Some(m) = self.mirrors.lock().await.get(id) {
            let exit = entry.summary.exit.clone().flatten();
            m.session.mirror_meta(|meta| meta.exit = exit);
        }
    }
}
