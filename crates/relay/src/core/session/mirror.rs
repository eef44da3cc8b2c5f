//! The one hook scale-out ([`crate::cluster`]) has into a session, and mirror sessions.
//!
//! - On the host that runs a session's agent, a [`ClusterHook`] is told every durable event the
//!   session appends (with its dense `seq`) and every live frame it fans out; it queues them for
//!   NATS and never blocks (it is called under the session's mutex).
//! - On a gateway, a *mirror* is a session with no agent whose log is fed from JetStream with the
//!   host's sequence numbers ([`Session::mirror_append`]), so SSE, WebSocket and REST replays work
//!   on it unchanged. Input posted to a mirror is handed to its hook ([`ClusterHook::forward`]),
//!   which sends it to the host: first-answer-wins is decided there, by one authority.

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::Value;

use crate::core::auth::Principal;
use crate::core::error::Error;
use crate::core::frames::Frame;
use crate::core::store::{StoreError, StoredEvent};

use super::{IngestResult, Session, SessionCtx, SessionMeta, SessionState};

/// What a session tells scale-out. Called under the session's mutex: must not block or wait.
pub trait ClusterHook: Send + Sync {
    /// A durable event was appended (`ends_session`: the agent-exit event, the last one).
    fn durable(&self, ev: &StoredEvent, ends_session: bool);
    /// An ephemeral or delivery frame was fanned out.
    fn live(&self, session_id: &str, frame: &Arc<Frame>);
    /// The session is a mirror: its input goes to [`Self::forward`].
    fn is_mirror(&self) -> bool {
        false
    }
    /// A mirror's input, sent to the session's host (only called when [`Self::is_mirror`]).
    fn forward(
        &self,
        session_id: &str,
        _who: &Principal,
        _payloads: Vec<Value>,
    ) -> Result<Vec<IngestResult>, Error> {
        Err(Error::internal(format!(
            "session {session_id} is not a mirror"
        )))
    }
    /// A mirror's input from a WebSocket frame, sent to the session's host: resolves to the host's
    /// verdict (only called when [`Self::is_mirror`]).
    fn forward_verdict(
        &self,
        session_id: &str,
        _who: &Principal,
        _payloads: Vec<Value>,
    ) -> BoxFuture<'static, Result<(), Error>> {
        let e = Error::internal(format!("session {session_id} is not a mirror"));
        Box::pin(async move { Err(e) })
    }
}

impl Session {
    /// Connects the session to scale-out (once; later calls are ignored). Returns whether it was set.
    pub fn set_cluster_hook(&self, hook: Arc<dyn ClusterHook>) -> bool {
        self.hook.set(hook).is_ok()
    }

    pub fn has_cluster_hook(&self) -> bool {
        self.hook.get().is_some()
    }

    /// Input posted to a mirror goes to its host: `Some(verdict)`; `None` for any other session.
    pub(super) fn hook_forward(
        &self,
        who: &Principal,
        payloads: &mut Option<Vec<Value>>,
    ) -> Option<Result<Vec<IngestResult>, Error>> {
        let h = self.hook.get().filter(|h| h.is_mirror())?;
        Some(h.forward(&self.id, who, payloads.take().unwrap_or_default()))
    }

    /// Whether this is a mirror of a session another process runs.
    pub fn is_mirror(&self) -> bool {
        self.hook.get().is_some_and(|h| h.is_mirror())
    }

    /// A WebSocket frame's payload for a mirror, sent to its host: resolves to the host's verdict
    /// (an ended session refuses at once, as [`Self::ingest`] does).
    pub fn forward_input(
        &self,
        who: &Principal,
        payload: Value,
    ) -> BoxFuture<'static, Result<(), Error>> {
        let refuse =
            |e: Error| -> BoxFuture<'static, Result<(), Error>> { Box::pin(async move { Err(e) }) };
        if self.state() == SessionState::Ended {
            return refuse(Error::gone(format!(
                "session {} has ended (its agent exited); start a new session to continue",
                self.id
            )));
        }
        match self.hook.get().filter(|h| h.is_mirror()) {
            Some(h) => h.forward_verdict(&self.id, who, vec![payload]),
            None => refuse(Error::internal(format!(
                "session {} is not a mirror",
                self.id
            ))),
        }
    }

    pub(super) fn hook_durable(&self, ev: &StoredEvent, ends_session: bool) {
        if let Some(h) = self.hook.get() {
            h.durable(ev, ends_session);
        }
    }

    pub(super) fn hook_live(&self, frame: &Arc<Frame>) {
        if frame.seq.is_none()
            && let Some(h) = self.hook.get()
        {
            h.live(&self.id, frame);
        }
    }

    /// A mirror of a session another process runs: no agent, its log fed by [`Self::mirror_append`].
    pub fn mirror(
        meta: SessionMeta,
        ctx: Arc<SessionCtx>,
        hook: Arc<dyn ClusterHook>,
    ) -> Arc<Session> {
        let s = Self::build(meta, 0, 1, ctx);
        let _ = s.hook.set(hook);
        s
    }

    /// Appends an event the host already numbered. Returns `Ok(false)` for one already held
    /// (a redelivery); an event that skips numbers is refused (the caller reads from the gap).
    pub fn mirror_append(&self, ev: StoredEvent, ends_session: bool) -> Result<bool, StoreError> {
        let mut g = self.lock();
        if ev.seq <= g.last_seq {
            return Ok(false);
        }
        // A log may start later than 1 (retention pruned it before it was published).
        if g.last_seq > 0 && ev.seq != g.last_seq + 1 {
            return Err(StoreError::Gap {
                session_id: self.id.clone(),
                expected: g.last_seq + 1,
                got: ev.seq,
            });
        }
        self.ctx.store.append(&ev)?;
        if g.last_seq == 0 {
            g.first_seq = ev.seq;
        }
        g.last_seq = ev.seq;
        g.meta.last_activity_at.clone_from(&ev.created_at);
        if let Some(u) = &ev.client_uuid {
            super::log::remember_uuid(&mut g, u, &ev.event_id, ev.seq);
        }
        if ends_session {
            g.meta.state = SessionState::Ended;
        }
        let frame = Frame::durable_with(&ev, ends_session);
        g.recent_bytes += frame.sse.len();
        g.recent.push_back(frame.clone());
        while g.recent.len() > super::RECENT_FRAMES
            || (g.recent_bytes > super::RECENT_BYTES && g.recent.len() > 1)
        {
            if let Some(old) = g.recent.pop_front() {
                g.recent_bytes -= old.sse.len();
            }
        }
        if let Some(tx) = self.tx.get() {
            let _ = tx.send(frame);
        }
        self.maybe_prune(&mut g);
        Ok(true)
    }

    /// A live frame from the host (ephemeral, delivery update): to this process's subscribers.
    pub fn mirror_live(&self, frame: Arc<Frame>) {
        if let Some(tx) = self.tx.get() {
            let _ = tx.send(frame);
        }
    }

    /// Takes the host's view of the session (state, title, archived …) from its registry entry.
    pub fn mirror_meta(&self, f: impl FnOnce(&mut SessionMeta)) {
        let mut g = self.lock();
        let ended = g.meta.state == SessionState::Ended;
        f(&mut g.meta);
        // The log says when it ended; the registry may be a moment behind.
        if ended {
            g.meta.state = SessionState::Ended;
        }
    }
}
