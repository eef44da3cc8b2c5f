//! The host side (role `agents` / `all`): publishing each hosted session's log to JetStream in
//! order, its live frames to core NATS, and the registry entries and node heartbeat to KV.
//!
//! A session's events go through a bounded queue to one publisher task per session, so the
//! session's mutex never waits on NATS. When the queue is full (NATS slow or down) the events are
//! not buffered further: they are in the session's own store already, and the publisher reads
//! them back from there once it catches up. `/healthz` and a log line say so meanwhile.
//!
//! Group commit: one message is in flight per session, and it carries every event that queued up
//! meanwhile (up to [`BATCH_EVENTS`] / [`BATCH_BYTES`]), so a burst costs one round trip per batch,
//! not per event. Each message keeps `Nats-Expected-Last-Subject-Sequence` (the stream sequence of
//! the previous one, known from its ack) and `Nats-Msg-Id`. Several single-event messages in flight
//! at once could not: the stream is shared by every session, so the sequence a message will get
//! is unknown until its predecessor's ack, and messages sent without the header could land after
//! another writer's event (a forked log) or after a reconnect in which an earlier one was lost (a
//! hole).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use async_nats::HeaderMap;
use async_nats::jetstream::context::PublishErrorKind;
use bytes::Bytes;
use tokio::sync::{Notify, mpsc};

use crate::core::frames::Frame;
use crate::core::session::{ClusterHook, Session};
use crate::core::store::StoredEvent;

use super::wire::{self, NodeEntry, RegistryEntry};
use super::{Cluster, PUBLISH_QUEUE};

/// The hook a hosted session calls (under its mutex: only `try_send`).
pub(super) struct HostHook {
    cluster: Weak<Cluster>,
    session_id: String,
    tx: mpsc::Sender<(StoredEvent, bool)>,
    /// The queue overflowed: the publisher reads from the store up to the session's end.
    overflow: AtomicBool,
    wake: Notify,
}

impl ClusterHook for HostHook {
    fn durable(&self, ev: &StoredEvent, ends_session: bool) {
        // The cluster ended the session while this node was out of touch: its log on NATS is
        // closed; what this node appends after that stays in its own store.
        if self
            .cluster
            .upgrade()
            .is_some_and(|c| c.is_cut(&self.session_id))
        {
            return;
        }
        match self.tx.try_send((ev.clone(), ends_session)) {
            Ok(()) => {}
            Err(mpsc::error::TrySendError::Full(_)) => {
                if !self.overflow.swap(true, Ordering::AcqRel) {
                    tracing::warn!(session = %self.session_id, queued = PUBLISH_QUEUE,
                        "NATS publish queue full (NATS slow or unreachable): further events stay in the local store and are published from there when NATS catches up");
                    if let Some(c) = self.cluster.upgrade() {
                        c.health.backlog_full.fetch_add(1, Ordering::Relaxed);
                    }
                }
                self.wake.notify_one();
            }
            Err(mpsc::error::TrySendError::Closed(_)) => {}
        }
    }

    fn live(&self, session_id: &str, frame: &Arc<Frame>) {
        let Some(c) = self.cluster.upgrade() else {
            return;
        };
        let Some(body) = wire::encode_live(frame) else {
            return;
        };
        if c.live_tx
            .try_send((wire::live_subject(session_id), body))
            .is_err()
        {
            c.health.live_dropped.fetch_add(1, Ordering::Relaxed);
        }
    }
}

impl Cluster {
    /// Starts publishing `session`'s log (from wherever its subject stands) and lists it in the
    /// registry. Idempotent.
    pub(super) async fn host(self: &Arc<Self>, session: &Arc<Session>) {
        let (tx, rx) = mpsc::channel(PUBLISH_QUEUE);
        let hook = Arc::new(HostHook {
            cluster: Arc::downgrade(self),
            session_id: session.id.clone(),
            tx,
            overflow: AtomicBool::new(false),
            wake: Notify::new(),
        });
        if !session.set_cluster_hook(hook.clone()) {
            return;
        }
        self.hosted
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(session.id.clone(), String::new());
        self.put_registry(session).await;
        // Events stored before it was hosted (a resumed or forked session's history) are
        // published at once, not when the agent next writes.
        if session.tail().0 > 0 {
            hook.wake.notify_one();
        }
        publishers().spawn(publisher(
            Arc::downgrade(self),
            Arc::downgrade(session),
            hook,
            rx,
        ));
    }

    /// Writes the session's registry entry when it changed since the last write. One write at a
    /// time, each read when it starts: two callers (the node's round, a publisher) could otherwise
    /// land an older entry after a newer one, and the newer one was never written again.
    pub(super) async fn put_registry(&self, session: &Session) {
        static WRITES: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
        let Some(n) = self.nats() else { return };
        let _one = WRITES.lock().await;
        let mut entry = RegistryEntry {
            node: self.config.node.clone(),
            summary: session.summary(),
        };
        if self.is_cut(&session.id) {
            // Listed as the gateway that ended it listed it.
            let why = super::lost::reason(&self.config.node);
            entry
                .summary
                .extra
                .insert(super::lost::LOST_KEY.into(), serde_json::Value::String(why));
        }
        let Ok(json) = serde_json::to_string(&entry) else {
            return;
        };
        {
            let mut hosted = self.hosted.lock().unwrap_or_else(|p| p.into_inner());
            match hosted.get_mut(&session.id) {
                Some(last) if *last == json => return,
                Some(last) => last.clone_from(&json),
                None => return,
            }
        }
        let sealed = self.seal_kv(wire::SESSIONS_BUCKET, &session.id, json.as_bytes());
        if let Err(e) = n.sessions_kv.put(&session.id, sealed).await {
            tracing::warn!(session = %session.id, error = %e, "cannot write the session registry (NATS KV)");
            // Written again on the next round.
            if let Some(last) = self
                .hosted
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get_mut(&session.id)
            {
                last.clear();
            }
        }
    }

    /// Publishes consecutive events as one message after `expected` (the subject's last stream
    /// sequence); retries until NATS takes it. `Ok((stream sequence, last seq published))`;
    /// `Err`: the subject holds events this host did not write (never forked).
    async fn publish(
        &self,
        batch: &[(StoredEvent, bool)],
        expected: u64,
    ) -> Result<(u64, u64), Refused> {
        let (Some((first, _)), Some((last, _))) = (batch.first(), batch.last()) else {
            return Ok((expected, 0));
        };
        let id = &first.session_id;
        let subject = wire::events_subject(id);
        let body = wire::encode_events(batch);
        let mut headers = HeaderMap::new();
        // One event: `<id>:<seq>` as before; a batch names its range.
        let msg_id = if batch.len() == 1 {
            format!("{id}:{}", first.seq)
        } else {
            format!("{id}:{}-{}", first.seq, last.seq)
        };
        headers.insert(async_nats::header::NATS_MESSAGE_ID, msg_id.as_str());
        headers.insert(
            async_nats::header::NATS_EXPECTED_LAST_SUBJECT_SEQUENCE,
            expected.to_string().as_str(),
        );
        headers.insert(wire::SEQ_HEADER, last.seq.to_string().as_str());
        headers.insert(wire::EVENT_ID_HEADER, last.event_id.as_str());
        let mut backoff = Duration::from_millis(50);
        // An event larger than the server's max_payload (an image, a big tool result) goes to the
        // object store; the log gets a reference to it (never a message NATS refuses forever).
        let object = format!("ev.{id}.{}-{}", first.seq, last.seq);
        let body = loop {
            match self.outsized(&object, body.clone(), &mut headers).await {
                Ok(b) => break b,
                Err(e) => {
                    self.health.publish_errors.fetch_add(1, Ordering::Relaxed);
                    tracing::warn!(session = %id, seq = first.seq, error = %e, "storing a large event on NATS failed; retrying");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_secs(2));
                }
            }
        };
        self.keys.sign(&mut headers, &subject, &body);
        let Some(n) = self.nats() else {
            return Err(Refused::Fork);
        };
        loop {
            let sent =
                n.js.publish_with_headers(subject.clone(), headers.clone(), body.clone())
                    .await;
            let err = match sent {
                Ok(ack) => match ack.await {
                    // A duplicate ack (the message id was seen) is believed only once the tail
                    // shows this batch: JetStream skips the expected-sequence check for a
                    // duplicate, so another writer's message of the same id would pass for ours.
                    Ok(ack) if !ack.duplicate => return Ok((ack.sequence, last.seq)),
                    Ok(_) => return self.settle(batch, id).await,
                    Err(e) if e.kind() == PublishErrorKind::WrongLastSequence => {
                        return self.settle(batch, id).await;
                    }
                    Err(e) => e.to_string(),
                },
                Err(e) => e.to_string(),
            };
            self.health.publish_errors.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(session = %id, seq = first.seq, error = %err, "publishing to NATS failed; retrying");
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(Duration::from_secs(2));
        }
    }

    /// A publish of `batch` that NATS did not simply take (wrong last sequence, or a duplicate
    /// id): ours already (an ack lost on the way), the cluster's end, or another writer's events.
    async fn settle(&self, batch: &[(StoredEvent, bool)], id: &str) -> Result<(u64, u64), Refused> {
        let (Some((first, _)), Some((last, _))) = (batch.first(), batch.last()) else {
            return Err(Refused::Fork);
        };
        // A tail that cannot be read (NATS slow: the request timed out) is read
        // again: it says nothing about who wrote it.
        let mut wait = Duration::from_millis(50);
        let tail = loop {
            match self.tail_event(id).await {
                Ok(t) => break t,
                Err(e) => {
                    tracing::warn!(session = %id, error = %e, "cannot read the session's last event on NATS; retrying");
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(Duration::from_secs(2));
                }
            }
        };
        if let Some((stream_seq, tail)) = &tail
            && tail.seq >= first.seq
            && tail.seq <= last.seq
            && batch[(tail.seq - first.seq) as usize].0.event_id == tail.event_id
        {
            return Ok((*stream_seq, tail.seq));
        }
        if let Some((_, tail)) = &tail
            && super::lost::ended_by_cluster(&self.config.node, tail)
        {
            return Err(Refused::Ended);
        }
        self.health.forks.fetch_add(1, Ordering::Relaxed);
        tracing::error!(session = %id, seq = first.seq,
                            "the session's log on NATS has events this node did not write (another writer?): publishing stopped so that the log never forks");
        Err(Refused::Fork)
    }
}

/// Why a host's publish was refused for good (the log is never forked).
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Refused {
    /// Another writer's events are on the subject.
    Fork,
    /// A gateway ended the session while this node was out of touch ([`super::lost`]).
    Ended,
}

impl Cluster {
    /// `(stream sequence, last event)` of the last message on a session's subject; `Ok(None)`
    /// when it has none (or an undecodable one); `Err` when NATS did not answer.
    pub(super) async fn tail_event(&self, id: &str) -> anyhow::Result<Option<(u64, StoredEvent)>> {
        let Some(m) = self.last_message(id).await? else {
            return Ok(None);
        };
        // A message without the cluster's seal is never believed (a forged `ended` stops
        // nothing): to the host it is another writer's.
        if let Err(why) = self
            .keys
            .check_event(&m.subject, Some(&m.headers), &m.payload)
        {
            tracing::warn!(subject = %m.subject, why = why.as_str(),
                "the last message on this session's subject is not the cluster's: someone without the cluster secret publishes there (restrict bridge.ev.> to the agents nodes)");
            return Ok(None);
        }
        let body = self.body_of(Some(&m.headers), &m.payload, false).await?;
        Ok(wire::decode_event(id, &body).map(|(ev, _)| (m.sequence, ev)))
    }
}

/// The runtime the publishers run on: a thread of their own. On the relay's runtime a publisher
/// woken by the task that reads an agent's output (which appends the events and so queues them)
/// lands in that worker's LIFO slot, which other workers cannot steal, and waits until the reader
/// yields: under a steady stream of agent lines that was seconds, and the events queued meanwhile.
/// Woken from another thread, a task here is queued on this runtime, which does nothing else.
fn publishers() -> &'static tokio::runtime::Handle {
    static RT: std::sync::OnceLock<tokio::runtime::Handle> = std::sync::OnceLock::new();
    RT.get_or_init(|| {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime for the NATS publishers");
        let handle = rt.handle().clone();
        std::thread::Builder::new()
            .name("nats-publish".into())
            .spawn(move || rt.block_on(std::future::pending::<()>()))
            .expect("a thread for the NATS publishers");
        handle
    })
}

/// Most events, and bytes of payload, in one message (NATS refuses messages over 1 MB by default;
/// a single larger event still goes alone).
pub(super) const BATCH_EVENTS: usize = 256;
pub(super) const BATCH_BYTES: usize = 256 * 1024;

/// One per hosted session: its events in order, from the queue or (after a gap) from its store,
/// one message in flight holding whatever queued up meanwhile.
async fn publisher(
    cluster: Weak<Cluster>,
    session: Weak<Session>,
    hook: Arc<HostHook>,
    mut rx: mpsc::Receiver<(StoredEvent, bool)>,
) {
    let id = hook.session_id.clone();
    // Where the subject stands (a restarted host continues its log; nothing is published twice).
    let (mut stream_seq, mut published) = loop {
        let Some(c) = cluster.upgrade() else { return };
        let tail = match c.tail_event(&id).await {
            Ok(Some((_, ev))) if super::lost::ended_by_cluster(&c.config.node, &ev) => {
                // Ended by the cluster while this node was away (or down): nothing more goes there.
                if let Some(s) = session.upgrade() {
                    c.cut_off(&s).await;
                }
                return;
            }
            Ok(Some((stream_seq, ev))) => Ok((stream_seq, ev.seq)),
            // None, or not decodable: its headers say where it stands.
            Ok(None) => c.subject_tail(&id).await,
            Err(e) => Err(e),
        };
        match tail {
            Ok(t) => break t,
            Err(e) => {
                tracing::warn!(session = %id, error = %e, "cannot read the session's subject on NATS; retrying");
                drop(c);
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    };
    // Events taken from the queue and not yet published, in order (at most one batch's worth).
    let mut carry: VecDeque<(StoredEvent, bool)> = VecDeque::new();
    // The session state last written to the registry from here.
    let mut listed_state = None;
    loop {
        if carry.is_empty() {
            tokio::select! {
                ev = rx.recv() => match ev {
                    Some(ev) => carry.push_back(ev),
                    None => return,
                },
                () = hook.wake.notified() => {}
            }
        }
        while carry.len() < BATCH_EVENTS {
            match rx.try_recv() {
                Ok(ev) => carry.push_back(ev),
                Err(_) => break,
            }
        }
        while carry.front().is_some_and(|(e, _)| e.seq <= published) {
            carry.pop_front();
        }
        let (Some(c), Some(s)) = (cluster.upgrade(), session.upgrade()) else {
            return;
        };
        if c.is_cut(&id) {
            return;
        }
        let mut batch: Vec<(StoredEvent, bool)> = Vec::new();
        let mut bytes = 0usize;
        let fits = |batch: &Vec<(StoredEvent, bool)>, bytes: usize| {
            batch.len() < BATCH_EVENTS && (batch.is_empty() || bytes < BATCH_BYTES)
        };
        if carry.front().is_some_and(|(e, _)| e.seq == published + 1) {
            // The usual case: the queue holds the next events.
            while fits(&batch, bytes)
                && let Some((e, _)) = carry.front()
                && e.seq == published + 1 + batch.len() as u64
                && (batch.is_empty() || bytes + e.payload.len() <= BATCH_BYTES)
            {
                let ev = carry.pop_front().unwrap_or_else(|| unreachable!());
                bytes += ev.0.payload.len();
                batch.push(ev);
            }
        } else {
            // A gap (the queue overflowed) or a wake-up: the next events come from the store.
            let until = carry.front().map_or(u64::MAX, |(e, _)| e.seq);
            let page = match s.read_after(published, BATCH_EVENTS) {
                Ok(p) => p,
                Err(e) => {
                    tracing::error!(session = %id, error = %e, "cannot read the store to publish to NATS");
                    drop((c, s));
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    continue;
                }
            };
            let (last, ended) = s.tail();
            if let Some(first) = page.first()
                && first.seq != published + 1
                && first.seq < until
            {
                // Pruned by retention before it was published: the log on NATS starts later.
                tracing::warn!(session = %id, from = published + 1, to = first.seq - 1, "events pruned before they reached NATS");
            }
            for ev in page.into_iter().take_while(|e| e.seq < until) {
                if !batch.is_empty() && bytes + ev.payload.len() > BATCH_BYTES {
                    break;
                }
                bytes += ev.payload.len();
                let ends = ended && ev.seq == last;
                batch.push((ev, ends));
            }
            if batch.is_empty()
                && let Some((e, _)) = carry.front()
                && e.seq > published + 1
            {
                // Not in the store either (pruned): the log on NATS continues from there.
                tracing::warn!(session = %id, from = published + 1, to = e.seq - 1, "events pruned before they reached NATS");
                published = e.seq - 1;
                continue;
            }
        }
        if !batch.is_empty() {
            // The registry has the state these events lead to before a gateway has them: a
            // console reads its list when the header's state changes, and got the state from
            // before (until the next registry round and its next list poll, 4 s later).
            let state = s.state();
            if listed_state.as_ref() != Some(&state) {
                c.put_registry(&s).await;
                listed_state = Some(state);
            }
            match c.publish(&batch, stream_seq).await {
                Ok((sq, upto)) => {
                    stream_seq = sq;
                    published = upto;
                    // Whatever of the batch did not land goes first next time.
                    for ev in batch.into_iter().rev().filter(|(e, _)| e.seq > upto) {
                        carry.push_front(ev);
                    }
                }
                Err(Refused::Fork) => return,
                Err(Refused::Ended) => {
                    c.cut_off(&s).await;
                    return;
                }
            }
        }
        if carry.is_empty()
            && rx.is_empty()
            && hook.overflow.load(Ordering::Acquire)
            && published >= s.last_seq()
        {
            hook.overflow.store(false, Ordering::Release);
            c.health.backlog_full.fetch_sub(1, Ordering::Relaxed);
            tracing::info!(session = %id, seq = published, "NATS caught up with the session's log");
        } else if carry.is_empty() && hook.overflow.load(Ordering::Acquire) {
            // Still behind the store: come round again without waiting for the queue.
            hook.wake.notify_one();
        }
    }
}

/// Live frames of every hosted session to core NATS (not persisted; dropped when NATS is down).
pub(super) async fn live_publisher(
    client: async_nats::Client,
    keys: Arc<super::seal::Keys>,
    mut rx: mpsc::Receiver<(String, Bytes)>,
) {
    while let Some((subject, body)) = rx.recv().await {
        let headers = keys.signed(&subject, &body);
        if let Err(e) = client.publish_with_headers(subject, headers, body).await {
            tracing::debug!(error = %e, "live frame not sent to NATS");
        }
    }
}

/// Every 250 ms: hosts the sessions this node runs that are not yet published, refreshes their
/// registry entries, drops deleted ones; every second a heartbeat with the node's load. A node
/// that serves every session also watches the others' heartbeats ([`super::lost`]).
pub(super) async fn node_loop(cluster: Weak<Cluster>) {
    let mut tick = tokio::time::interval(Duration::from_millis(250));
    let mut round = 0u64;
    let mut watch = super::lost::Watch::new();
    // When this node's heartbeat last landed, and until when it checks whether the cluster ended
    // its sessions after a silence (a gateway may still be ending them when it is back).
    let mut last_beat: Option<std::time::Instant> = None;
    let mut recheck_until: Option<std::time::Instant> = None;
    loop {
        tick.tick().await;
        let Some(c) = cluster.upgrade() else { return };
        let Some(relay) = c.relay() else { return };
        let Some(n) = c.nats() else { return };
        round += 1;
        if c.config.role.serves_all() && round.is_multiple_of(2) {
            c.check_hosts(&mut watch).await;
        }
        if !c.config.role.runs_agents() {
            continue;
        }
        let sessions = relay.list();
        for s in &sessions {
            if !s.has_cluster_hook() {
                c.host(s).await;
            } else if c.hosts(&s.id) {
                c.put_registry(s).await;
            }
        }
        let gone: Vec<String> = {
            let hosted = c.hosted.lock().unwrap_or_else(|p| p.into_inner());
            hosted
                .keys()
                .filter(|id| relay.get(id).is_none())
                .cloned()
                .collect()
        };
        for id in gone {
            c.hosted
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&id);
            if let Err(e) = n.sessions_kv.delete(&id).await {
                tracing::warn!(session = %id, error = %e, "cannot remove a deleted session from the registry");
            }
        }
        if round % (super::lost::HEARTBEAT_EVERY.as_millis() as u64 / 250) == 1 {
            let entry = NodeEntry {
                node: c.config.node.clone(),
                agents: true,
                load: sessions
                    .iter()
                    .filter(|s| c.hosts(&s.id) && s.agent_running())
                    .count(),
                max_sessions: relay.config.quotas.max_sessions,
                cwd: relay.config.cwd.display().to_string(),
                at: wire::unix_now(),
            };
            if let Ok(json) = serde_json::to_vec(&entry) {
                let sealed = c.seal_kv(wire::NODES_BUCKET, &c.config.node, &json);
                match n.nodes_kv.put(&c.config.node, sealed).await {
                    Ok(_) => {
                        let now = std::time::Instant::now();
                        if let Some(gap) = last_beat.map(|t| now.duration_since(t))
                            && gap >= super::lost::OUT_OF_TOUCH
                        {
                            tracing::warn!(silent = ?gap, "this node's heartbeat was not written for a while (paused, or cut off from NATS): checking whether the cluster ended its sessions meanwhile");
                            recheck_until = Some(now + 2 * super::lost::DEAD_AFTER);
                        }
                        last_beat = Some(now);
                    }
                    Err(e) => tracing::debug!(error = %e, "node heartbeat not written"),
                }
            }
            match recheck_until {
                Some(t) if std::time::Instant::now() < t => c.reconcile(&sessions).await,
                _ => recheck_until = None,
            }
        }
    }
}
