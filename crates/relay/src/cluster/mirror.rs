//! Gateway mirrors: a session run by another host, held as a [`Session`] with no agent whose log
//! is fed from JetStream (an ordered consumer on `bridge.ev.<id>` from its first event) and whose
//! live frames come from `bridge.live.<id>`. SSE, WebSocket and event pages then serve it with the
//! host's sequence numbers, unchanged.
//!
//! Mirrors are bounded ([`Limits`]): one no client has used for a while (no open stream, no
//! request) is dropped, the least recently used first when there are more, or more bytes, than the
//! limits allow. It is read again from JetStream when a client next asks — the same events with
//! the same sequence numbers.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use async_nats::jetstream::consumer::{DeliverPolicy, pull};
use futures::StreamExt as _;
use futures::future::BoxFuture;
use serde_json::Value;
use tokio::sync::watch;

use crate::core::auth::Principal;
use crate::core::error::Error;
use crate::core::frames::Frame;
use crate::core::session::{ClusterHook, IngestResult, Session, SessionMeta};
use crate::core::store::StoredEvent;
use crate::edge::error::ApiError;

use super::wire::{self, Input, RegistryEntry, Who};
use super::{Cluster, REQUEST_TIMEOUT};

/// How long a request waits for a mirror to hold what the host has published.
const SYNC_TIMEOUT: Duration = Duration::from_secs(5);

pub(super) struct Feed {
    pub session: Arc<Session>,
    /// The highest sequence number the mirror holds.
    seq: watch::Receiver<u64>,
    /// When a client last asked for it (or last had a stream of it open).
    used: Mutex<Instant>,
    /// Payload bytes it holds (about: what it was fed).
    bytes: Arc<AtomicU64>,
    /// Its feeding tasks, stopped when it is dropped.
    tasks: Vec<tokio::task::AbortHandle>,
}

impl Drop for Feed {
    fn drop(&mut self) {
        self.tasks.iter().for_each(tokio::task::AbortHandle::abort);
    }
}

impl Feed {
    fn touch(&self, at: Instant) {
        *self.used.lock().unwrap_or_else(|p| p.into_inner()) = at;
    }
    fn used(&self) -> Instant {
        *self.used.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// How many mirrors a gateway keeps. Defaults; the environment can set them
/// (`BRIDGE_MIRROR_IDLE_SECS`, `BRIDGE_MIRROR_MAX`, `BRIDGE_MIRROR_MAX_BYTES`; tests use tiny ones).
#[derive(Debug, Clone)]
pub(super) struct Limits {
    /// Unused this long: dropped.
    pub idle: Duration,
    /// More mirrors than this, or more bytes: the least recently used are dropped (once unused
    /// for [`Limits::grace`]).
    pub max: usize,
    pub max_bytes: u64,
}

impl Limits {
    pub fn from_env() -> Limits {
        let num = |k: &str| {
            std::env::var(k)
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
        };
        Limits {
            idle: Duration::from_secs(num("BRIDGE_MIRROR_IDLE_SECS").unwrap_or(600)),
            max: num("BRIDGE_MIRROR_MAX").map_or(1000, |n| n as usize),
            max_bytes: num("BRIDGE_MIRROR_MAX_BYTES").unwrap_or(256 << 20),
        }
    }

    /// A mirror asked for less than this long ago is kept even over the limits (the request that
    /// asked is still using it).
    fn grace(&self) -> Duration {
        self.idle.min(Duration::from_secs(5))
    }
}

/// How often a gateway looks for mirrors to drop.
pub(super) const SWEEP_EVERY: Duration = Duration::from_secs(1);

/// A mirror's hook: input goes to the host.
struct MirrorHook {
    cluster: Weak<Cluster>,
}

impl ClusterHook for MirrorHook {
    fn durable(&self, _ev: &StoredEvent, _ends: bool) {}
    fn live(&self, _id: &str, _frame: &Arc<Frame>) {}
    fn is_mirror(&self) -> bool {
        true
    }
    /// Input that reaches a mirror without going through the gateway's HTTP forwarding (a WebSocket
    /// frame): sent to the host without waiting; a refusal is logged (the POST path returns it).
    fn forward(
        &self,
        session_id: &str,
        who: &Principal,
        payloads: Vec<Value>,
    ) -> Result<Vec<IngestResult>, Error> {
        let Some(c) = self.cluster.upgrade() else {
            return Err(super::unavailable("the relay is shutting down").into());
        };
        let input = ingest_input(who, payloads)?;
        let id = session_id.to_owned();
        tokio::spawn(async move {
            let (status, body) = c.ask(&id, &input).await;
            if status >= 300 {
                tracing::warn!(session = %id, status, body = %String::from_utf8_lossy(&body), "input from a WebSocket refused by the session's host");
            }
        });
        Ok(Vec::new())
    }

    fn forward_verdict(
        &self,
        session_id: &str,
        who: &Principal,
        payloads: Vec<Value>,
    ) -> BoxFuture<'static, Result<(), Error>> {
        let cluster = self.cluster.upgrade();
        let id = session_id.to_owned();
        let input = ingest_input(who, payloads);
        Box::pin(async move {
            let c = cluster.ok_or_else(|| super::unavailable("the relay is shutting down"))?;
            let input = input?;
            let (status, body) = c.ask(&id, &input).await;
            if status < 300 {
                return Ok(());
            }
            // Through the core as a fault; the edge answers it with the host's status again.
            Err(host_error(status, &body).into())
        })
    }
}

/// What asks a session's host to ingest `payloads` from `who`; an observer may send none (403).
fn ingest_input(who: &Principal, payloads: Vec<Value>) -> Result<Input, Error> {
    if !who.can_write() {
        return Err(Error::forbidden(
            "observer tokens are read-only: sending events needs the controller token",
        ));
    }
    Ok(Input::Ingest {
        who: Who::of(who),
        payloads,
        device: None,
    })
}

/// The host's refusal (`{"type":"error","error":{"type","message"}}` with its status) as an error
/// of this relay's.
pub(super) fn host_error(status: u16, body: &[u8]) -> ApiError {
    let v: Value = serde_json::from_slice(body).unwrap_or_default();
    let kind = match v["error"]["type"].as_str().unwrap_or("") {
        "request_not_pending" => "request_not_pending",
        "session_ended" => "session_ended",
        "invalid_request_error" => "invalid_request_error",
        "permission_error" => "permission_error",
        "not_found_error" => "not_found_error",
        "authentication_error" => "authentication_error",
        "request_too_large" => "request_too_large",
        "agent_error" => "agent_error",
        "host_unavailable" => "host_unavailable",
        "cluster_unavailable" => "cluster_unavailable",
        _ => "api_error",
    };
    let message = v["error"]["message"]
        .as_str()
        .map(str::to_owned)
        .unwrap_or_else(|| format!("the session's host refused it ({status})"));
    ApiError::new(
        axum::http::StatusCode::from_u16(status).unwrap_or(axum::http::StatusCode::BAD_GATEWAY),
        kind,
        message,
    )
}

impl Cluster {
    /// The registry entry of session `id`.
    pub(super) async fn entry(&self, id: &str) -> Option<RegistryEntry> {
        if !wire::valid_session_id(id) {
            return None;
        }
        let n = self.nats()?;
        match n.sessions_kv.get(id).await {
            Ok(Some(b)) => self
                .open_kv(wire::SESSIONS_BUCKET, id, &b)
                .and_then(|v| serde_json::from_slice(&v).ok()),
            Ok(None) => None,
            Err(e) => {
                tracing::warn!(session = %id, error = %e, "cannot read the session registry");
                None
            }
        }
    }

    /// Sends `input` to the session's host: `(status, body)`; 503 when no host answers.
    pub(super) async fn ask(&self, id: &str, input: &Input) -> (u16, bytes::Bytes) {
        let body = serde_json::to_vec(input).unwrap_or_default();
        let sent = tokio::time::timeout(
            REQUEST_TIMEOUT,
            self.call(wire::input_subject(id), body.into(), REQUEST_TIMEOUT),
        )
        .await;
        verdict(id, sent)
    }

    /// The mirror of session `id`, made on first use, holding at least every event the host had
    /// published when this was called (so a cursor the client got anywhere is never past its end).
    pub(super) async fn mirror(
        self: &Arc<Self>,
        id: &str,
        entry: &RegistryEntry,
    ) -> Result<Arc<Session>, ApiError> {
        let feed = {
            let mut mirrors = self.mirrors.lock().await;
            match mirrors.get(id) {
                Some(f) => f.clone(),
                None => {
                    let feed = self.start_mirror(id, entry).await?;
                    mirrors.insert(id.to_owned(), feed.clone());
                    self.health
                        .mirrors
                        .store(mirrors.len() as u64, Ordering::Relaxed);
                    feed
                }
            }
        };
        feed.touch(Instant::now());
        let (_, target) = self
            .subject_tail(id)
            .await
            .map_err(|e| super::unavailable(format!("cannot read session {id} from NATS: {e}")))?;
        let mut seq = feed.seq.clone();
        let reached = tokio::time::timeout(SYNC_TIMEOUT, seq.wait_for(|s| *s >= target)).await;
        if !matches!(reached, Ok(Ok(_))) {
            return Err(super::unavailable(format!(
                "session {id}: this gateway has not caught up with its log on NATS yet (has {}, wants {target}); retry",
                *feed.seq.borrow()
            )));
        }
        Ok(feed.session.clone())
    }

    async fn start_mirror(
        self: &Arc<Self>,
        id: &str,
        entry: &RegistryEntry,
    ) -> Result<Arc<Feed>, ApiError> {
        let relay = self
            .relay()
            .ok_or_else(|| super::unavailable("the relay is shutting down"))?;
        let s = &entry.summary;
        let mut meta = SessionMeta::new(
            id.to_owned(),
            s.cwd.clone().unwrap_or_default(),
            s.model.clone(),
            s.permission_mode.clone(),
            s.title.clone(),
        );
        if let Some(c) = &s.created_at {
            meta.created_at.clone_from(c);
        }
        meta.archived = s.archived;
        let session = Session::mirror(
            meta,
            self.mirror_ctx.clone(),
            Arc::new(MirrorHook {
                cluster: Arc::downgrade(self),
            }),
        );
        let session = relay.adopt(session);
        let live = self
            .client
            .subscribe(wire::live_subject(id))
            .await
            .map_err(|e| super::unavailable(format!("NATS: {e}")))?;
        let (tx, rx) = watch::channel(session.last_seq());
        let bytes = Arc::new(AtomicU64::new(0));
        let tasks = vec![
            tokio::spawn(feed_live(Arc::downgrade(&session), self.keys.clone(), live))
                .abort_handle(),
            tokio::spawn(feed_log(
                Arc::downgrade(self),
                Arc::downgrade(&session),
                tx,
                bytes.clone(),
            ))
            .abort_handle(),
        ];
        tracing::debug!(session = %id, host = %entry.node, "mirroring a session from NATS");
        Ok(Arc::new(Feed {
            session,
            seq: rx,
            used: Mutex::new(Instant::now()),
            bytes,
            tasks,
        }))
    }

    /// Drops the mirrors no client has used for [`Limits::idle`], then the least recently used
    /// ones while there are more (or more bytes) than the limits allow. A mirror with an open
    /// stream is never dropped.
    pub(super) async fn evict_mirrors(&self) {
        let now = Instant::now();
        let limits = &self.mirror_limits;
        let mut mirrors = self.mirrors.lock().await;
        let mut unused: Vec<(Instant, String)> = Vec::new();
        for (id, f) in mirrors.iter() {
            if f.session.subscriber_count() > 0 {
                f.touch(now);
            } else {
                unused.push((f.used(), id.clone()));
            }
        }
        unused.sort();
        let mut bytes: u64 = mirrors
            .values()
            .map(|f| f.bytes.load(Ordering::Relaxed))
            .sum();
        let relay = self.relay();
        for (used, id) in unused {
            let idle = now.duration_since(used);
            let over = mirrors.len() > limits.max || bytes > limits.max_bytes;
            if idle < limits.idle && !(over && idle >= limits.grace()) {
                continue;
            }
            let Some(f) = mirrors.remove(&id) else {
                continue;
            };
            bytes = bytes.saturating_sub(f.bytes.load(Ordering::Relaxed));
            if let Some(r) = &relay {
                r.forget_mirror(&f.session);
            }
            if let Err(e) = self.mirror_ctx.store.delete_session(&id) {
                tracing::warn!(session = %id, error = %e, "cannot drop a mirror's events");
            }
            self.health.mirrors_evicted.fetch_add(1, Ordering::Relaxed);
            tracing::debug!(session = %id, idle = ?idle, "mirror dropped (read again from NATS when asked)");
        }
        self.health
            .mirrors
            .store(mirrors.len() as u64, Ordering::Relaxed);
    }
}

fn verdict(
    id: &str,
    sent: Result<
        Result<async_nats::Message, async_nats::RequestError>,
        tokio::time::error::Elapsed,
    >,
) -> (u16, bytes::Bytes) {
    let unavailable = |why: String| {
        let body =
            serde_json::json!({"type":"error","error":{"type":"host_unavailable","message":why}});
        (503, bytes::Bytes::from(body.to_string()))
    };
    match sent {
        Ok(Ok(m)) => (super::forward::status_of(&m), m.payload),
        Ok(Err(e)) => unavailable(format!(
            "the relay running session {id} did not answer ({e}); it may have stopped"
        )),
        Err(_) => unavailable(format!(
            "the relay running session {id} did not answer within {} s",
            REQUEST_TIMEOUT.as_secs()
        )),
    }
}

async fn feed_live(
    session: Weak<Session>,
    keys: Arc<super::seal::Keys>,
    mut live: async_nats::Subscriber,
) {
    while let Some(m) = live.next().await {
        let Some(s) = session.upgrade() else { return };
        // Live frames are fresh or nothing: one without the cluster's seal is dropped.
        if keys
            .check_reply(m.subject.as_str(), m.headers.as_ref(), &m.payload)
            .is_err()
        {
            tracing::debug!(subject = %m.subject, "a live frame without the cluster's seal was dropped");
            continue;
        }
        if let Some(f) = wire::decode_live(&m.payload) {
            s.mirror_live(f);
        }
    }
}

/// The session's log from JetStream into the mirror, in order; resumes after a consumer failure.
async fn feed_log(
    cluster: Weak<Cluster>,
    session: Weak<Session>,
    tx: watch::Sender<u64>,
    bytes: Arc<AtomicU64>,
) {
    let mut next_stream_seq = 0u64;
    loop {
        let Some(c) = cluster.upgrade() else { return };
        let Some(s) = session.upgrade() else { return };
        let id = s.id.clone();
        let config = pull::OrderedConfig {
            filter_subject: wire::events_subject(&id),
            deliver_policy: if next_stream_seq == 0 {
                DeliverPolicy::All
            } else {
                DeliverPolicy::ByStartSequence {
                    start_sequence: next_stream_seq,
                }
            },
            ..Default::default()
        };
        let mut reconnected = c.connected.clone();
        reconnected.mark_unchanged();
        let messages = match c.nats() {
            Some(n) => match n.events.create_consumer(config).await {
                Ok(consumer) => consumer.messages().await.map_err(|e| e.to_string()),
                Err(e) => Err(e.to_string()),
            },
            None => Err("NATS has not been reachable yet".to_owned()),
        };
        drop((c, s));
        let mut messages = match messages {
            Ok(m) => m,
            Err(e) => {
                tracing::warn!(session = %id, error = %e, "cannot follow the session's log on NATS; retrying");
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        };
        loop {
            let m = tokio::select! {
                m = messages.next() => m,
                // NATS came back: its consumer may be gone; follow again from where it stopped.
                _ = reconnected.changed() => break,
            };
            let Some(m) = m else { break };
            let Some(s) = session.upgrade() else { return };
            let m = match m {
                Ok(m) => m,
                Err(e) => {
                    tracing::warn!(session = %id, error = %e, "following the session's log on NATS failed; resuming");
                    break;
                }
            };
            if let Ok(info) = m.info() {
                next_stream_seq = info.stream_sequence + 1;
            }
            if let Some(c) = cluster.upgrade()
                && let Err(why) =
                    c.keys
                        .check_event(m.subject.as_str(), m.headers.as_ref(), &m.payload)
            {
                tracing::warn!(session = %id, why = why.as_str(), "a message without the cluster's seal on the session's log was skipped");
                continue;
            }
            // An event larger than max_payload: the object its reference names.
            let body = match cluster.upgrade() {
                Some(c) => c.body_of(m.headers.as_ref(), &m.payload, false).await,
                None => return,
            };
            let body = match body {
                Ok(b) => b,
                Err(e) => {
                    tracing::warn!(session = %id, error = %e, "cannot read a large event from the NATS object store; retrying");
                    if let Ok(info) = m.info() {
                        next_stream_seq = info.stream_sequence;
                    }
                    break;
                }
            };
            let Some(events) = wire::decode_events(&id, &body) else {
                tracing::warn!(session = %id, "an undecodable event on NATS was skipped");
                continue;
            };
            for (ev, ends) in events {
                bytes.fetch_add(ev.payload.len() as u64, Ordering::Relaxed);
                if let Err(e) = s.mirror_append(ev, ends) {
                    tracing::error!(session = %id, error = %e, "the session's log on NATS has a gap; the mirror stops here");
                    return;
                }
            }
            tx.send_replace(s.last_seq());
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Drops unused mirrors every [`SWEEP_EVERY`] (role `gateway` / `all`).
pub(super) async fn sweeper(cluster: Weak<Cluster>) {
    let mut tick = tokio::time::interval(SWEEP_EVERY);
    loop {
        tick.tick().await;
        let Some(c) = cluster.upgrade() else { return };
        c.evict_mirrors().await;
    }
}
