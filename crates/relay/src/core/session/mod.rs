//! One session: its durable log, live fan-out, state machine, pending control requests and the agent's
//! stdin. Everything that must be atomic (sequence numbers, first-answer-wins, stdin order) happens under
//! one short mutex per session; subscribers receive pre-rendered frames over a broadcast channel.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde::Serialize;
use serde_json::Value;
use tokio::sync::{broadcast, mpsc};

use bridge_dedup::BoundedSet;
use bridge_protocol::api::{self, SessionDetail, SessionSummary, WorktreeInfo};

use crate::core::agent::{AgentControl, AgentEvents as _, AgentHandle};
use crate::core::audit::AuditLog;
use crate::core::frames::{Delivery, Frame};
use crate::core::notice::PushHandle;
use crate::core::store::{EventStore, StoreError};
use crate::core::util::{json_str, now_rfc3339};

pub use crate::core::record::{ExitInfo, SessionMeta, SessionState, Worktree};
pub use mirror::ClusterHook;

mod ingest;
mod log;
mod mirror;
mod notify;
mod prompts;
mod worker;

/// Frames buffered per subscriber before it counts as lagging (it then catches up from the store).
pub const BROADCAST_CAPACITY: usize = 8192;
/// How much of an undecodable line is echoed in a `relay_error` event.
pub const RELAY_ERROR_RAW_BYTES: usize = 4096;
const SETTLED_MEMORY: usize = 1024;
/// Posted `payload.uuid`s remembered per session (with their original result), so a retry is
/// recognised even after retention pruned its event.
pub const UUID_MEMORY: usize = bridge_dedup::DEFAULT_CAPACITY;
/// Recent durable frames kept in memory per live session for replays (reconnects, REST pages): at
/// most this many frames and this many bytes of SSE text. Dropped when the agent exits.
pub const RECENT_FRAMES: usize = 1024;
pub const RECENT_BYTES: usize = 2 << 20;
const DELIVERY_MEMORY: usize = 256;

/// What sessions share.
pub struct SessionCtx {
    pub store: Arc<dyn EventStore>,
    pub audit: Arc<AuditLog>,
    pub permission_timeout: Option<Duration>,
    pub retention_events: Option<u64>,
    /// Told the id of every session whose agent ended.
    pub ended_tx: Option<mpsc::UnboundedSender<String>>,
    /// Push notifications (prompts waiting and settled, long turns done, agents dying); never blocks.
    pub push: Option<PushHandle>,
    /// Clients may switch to `bypassPermissions` (`set_permission_mode`).
    pub allow_bypass_permissions: bool,
}

/// A control request still waiting for an answer, as [`Session::pending_request`] shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingRequest {
    pub request_id: String,
    pub subtype: String,
    pub tool_name: Option<String>,
    pub tool_use_id: Option<String>,
    pub input: Option<Value>,
}

/// A control_request from the CLI waiting for a client's answer.
#[derive(Debug, Clone)]
struct Pending {
    request_id: String,
    seq: u64,
    subtype: String,
    tool_name: Option<String>,
    tool_use_id: Option<String>,
    input: Option<Value>,
    payload: Bytes,
    /// can_use_tool / elicitation / request_user_dialog: a person must act.
    prompt: Option<bridge_protocol::PersonPrompt>,
}

impl Pending {
    /// A person must act (a permission, question, form or dialog).
    fn needs_action(&self) -> bool {
        self.prompt.is_some()
    }
}

#[derive(Debug)]
struct DeliveryTrack {
    uuid: Option<String>,
    event_id: String,
    status: Delivery,
}

struct Inner {
    meta: SessionMeta,
    last_seq: u64,
    first_seq: u64,
    pending: Vec<Pending>,
    settled: VecDeque<(String, String)>,
    /// Recently posted uuids (bounded, oldest evicted first) and their original results.
    posted: BoundedSet<String>,
    uuids: HashMap<String, (String, u64)>,
    /// The last durable frames, oldest first, dense in `seq`, all `>= first_seq`.
    recent: VecDeque<Arc<Frame>>,
    recent_bytes: usize,
    stdin: Option<mpsc::Sender<Bytes>>,
    relay_init_id: Option<String>,
    deliveries: VecDeque<DeliveryTrack>,
    /// Last activity reported by the CLI or implied by traffic (idle / running / requires_action).
    activity: SessionState,
    /// When the running turn's first user message was sent (for `turn_done` without `duration_ms`).
    turn_started: Option<Instant>,
    /// The relay is stopping the agent (archive, shutdown): its exit is not news.
    stopping: bool,
}

/// Result of one ingested event.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IngestResult {
    pub event_id: Option<String>,
    pub sequence_num: Option<u64>,
}

/// A subscriber's starting point: live frames from `rx`, history `(cursor, last_seq]` from the store.
pub struct Subscription {
    pub rx: broadcast::Receiver<Arc<Frame>>,
    pub last_seq: u64,
    pub first_seq: u64,
    /// The session had ended: `last_seq` is final.
    pub ended: bool,
}

pub struct Session {
    pub id: String,
    ctx: Arc<SessionCtx>,
    inner: Mutex<Inner>,
    /// Live fan-out, made by the first subscriber: an unopened (archived, ended) session holds no
    /// ring of [`BROADCAST_CAPACITY`] slots.
    tx: OnceLock<broadcast::Sender<Arc<Frame>>>,
    agent: Mutex<Option<Arc<AgentControl>>>,
    me: Weak<Session>,
    /// Scale-out (`--nats`): see [`mirror`].
    hook: OnceLock<Arc<dyn ClusterHook>>,
}

fn str_at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    let mut cur = v;
    for k in path {
        cur = cur.get(k)?;
    }
    cur.as_str()
}

impl Session {
    fn build(
        meta: SessionMeta,
        last_seq: u64,
        first_seq: u64,
        ctx: Arc<SessionCtx>,
    ) -> Arc<Session> {
        let activity = match &meta.state {
            SessionState::Ended => SessionState::Idle,
            s => s.clone(),
        };
        Arc::new_cyclic(|me| Session {
            id: meta.id.clone(),
            ctx,
            inner: Mutex::new(Inner {
                meta,
                last_seq,
                first_seq,
                pending: Vec::new(),
                settled: VecDeque::new(),
                posted: BoundedSet::with_capacity(UUID_MEMORY),
                uuids: HashMap::new(),
                recent: VecDeque::new(),
                recent_bytes: 0,
                stdin: None,
                relay_init_id: None,
                deliveries: VecDeque::new(),
                activity,
                turn_started: None,
                stopping: false,
            }),
            tx: OnceLock::new(),
            agent: Mutex::new(None),
            me: me.clone(),
            hook: OnceLock::new(),
        })
    }

    /// A brand-new session (the record is saved).
    pub fn create(meta: SessionMeta, ctx: Arc<SessionCtx>) -> Result<Arc<Session>, StoreError> {
        ctx.store.save_session(&meta)?;
        Ok(Self::build(meta, 0, 1, ctx))
    }

    /// A session loaded from the store after a restart. Its process is gone: if it was not ended, it is
    /// ended now, with a relay event saying why.
    pub fn restore(meta: SessionMeta, ctx: Arc<SessionCtx>) -> Result<Arc<Session>, StoreError> {
        let (first, last) = ctx.store.bounds(&meta.id)?;
        let first = if last == 0 { 1 } else { first };
        let was_live = meta.state != SessionState::Ended;
        if let Some(agent) = meta.agent_process.filter(|_| was_live) {
            crate::core::agent::stop_leftover(agent, crate::core::agent::GROUP_GRACE);
        }
        let s = Self::build(meta, last, first, ctx);
        if was_live {
            s.on_exit(ExitInfo {
                exit_code: None,
                signal: None,
                stderr_tail: String::new(),
                at: now_rfc3339(),
                reason: Some(
                    "the relay restarted; the agent process of this session is gone".into(),
                ),
            });
        }
        Ok(s)
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Connects a started agent: stdin queue, control handle, and the relay's own `initialize`.
    pub fn attach_agent(&self, handle: AgentHandle) {
        let proc_id = handle.control.proc_id;
        *self.agent.lock().unwrap_or_else(|p| p.into_inner()) = Some(handle.control);
        let mut g = self.lock();
        if proc_id.is_some() {
            g.meta.agent_process = proc_id;
            self.save_meta(&g);
        }
        let rid = format!("relay_init_{}", uuid::Uuid::new_v4().simple());
        let line = format!(
            "{{\"type\":\"control_request\",\"request_id\":{},\"request\":{{\"subtype\":\"initialize\"}}}}\n",
            json_str(&rid)
        );
        let _ = handle.stdin.try_send(Bytes::from(line));
        g.stdin = Some(handle.stdin);
        g.relay_init_id = Some(rid);
    }

    pub fn meta(&self) -> SessionMeta {
        self.lock().meta.clone()
    }

    pub fn state(&self) -> SessionState {
        self.lock().meta.state.clone()
    }

    /// The session as the list shows it (CONTRACTS.md), without `origin` (the list adds it).
    pub fn summary(&self) -> SessionSummary {
        summary_of(&self.lock())
    }

    /// `GET /v1/code/sessions/{id}`: the summary, the CLI's `initialize` answer and the requests
    /// waiting for an answer.
    pub fn detail(&self) -> SessionDetail {
        let g = self.lock();
        SessionDetail {
            summary: summary_of(&g),
            initialize: g.meta.initialize.clone().unwrap_or(Value::Null),
            pending_requests: g
                .pending
                .iter()
                .map(|p| api::PendingRequest {
                    request_id: p.request_id.clone(),
                    subtype: p.subtype.clone(),
                    sequence_num: p.seq,
                    tool_name: p.tool_name.clone(),
                })
                .collect(),
        }
    }

    fn save_meta(&self, g: &Inner) {
        if let Err(e) = self.ctx.store.save_session(&g.meta) {
            tracing::error!(session = %self.id, error = %e, "cannot save session record");
        }
    }

    fn write_stdin(&self, g: &Inner, line: String) -> bool {
        match &g.stdin {
            Some(tx) => {
                let mut line = line;
                line.push('\n');
                match tx.try_send(Bytes::from(line)) {
                    Ok(()) => true,
                    Err(mpsc::error::TrySendError::Full(_)) => {
                        tracing::warn!(session = %self.id, "agent stdin queue is full (--max-stdin-queue); line dropped");
                        false
                    }
                    Err(mpsc::error::TrySendError::Closed(_)) => false,
                }
            }
            None => false,
        }
    }

    /// Recomputes the visible state; persists and returns whether it changed.
    fn recompute_state(&self, g: &mut Inner) {
        if g.meta.state == SessionState::Ended {
            return;
        }
        let new = if g.pending.iter().any(Pending::needs_action) {
            SessionState::RequiresAction
        } else if g.activity == SessionState::RequiresAction {
            SessionState::Running
        } else {
            g.activity.clone()
        };
        if new != g.meta.state {
            g.meta.state = new;
            self.save_meta(g);
        }
    }

    /// Records that the archived session's worktree was kept (`Some(why)`) or removed (`None`).
    pub fn set_worktree_kept(&self, why: Option<String>) {
        let mut g = self.lock();
        g.meta.worktree_kept = why;
        self.save_meta(&g);
    }

    pub fn set_archived(&self) -> bool {
        let mut g = self.lock();
        let was = g.meta.archived;
        g.meta.archived = true;
        self.save_meta(&g);
        !was
    }

    /// Graceful stop: close stdin, then SIGTERM, then SIGKILL (see `agent` constants).
    pub async fn shutdown_agent(&self, stdin_grace: Duration, term_grace: Duration) {
        {
            let mut g = self.lock();
            g.stdin = None;
            g.stopping = true;
        }
        let control = self.agent.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if let Some(c) = control {
            c.terminate(stdin_grace, term_grace).await;
        }
    }

    /// It runs in a terminal and is followed through Claude Code's hooks (`cli.terminal`).
    pub fn is_terminal(&self) -> bool {
        self.lock().meta.cli.as_ref().is_some_and(|c| c.terminal)
    }

    pub fn agent_running(&self) -> bool {
        self.agent
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .is_some_and(|c| !c.has_exited())
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
impl SessionCtx {
    /// For unit tests: events in `store`, no audit log, no permission timeout, retention or push.
    pub(crate) fn for_tests(store: Arc<dyn EventStore>) -> SessionCtx {
        SessionCtx {
            store,
            audit: Arc::new(AuditLog::disabled()),
            permission_timeout: None,
            retention_events: None,
            ended_tx: None,
            push: None,
            allow_bypass_permissions: false,
        }
    }
}

#[cfg(test)]
impl Session {
    /// For unit tests: the session made from `meta` in `ctx`, its agent attached with a detached
    /// control; the receiver gets what the session writes to the agent's stdin (`capacity` writes).
    pub(crate) fn with_test_agent(
        meta: SessionMeta,
        ctx: Arc<SessionCtx>,
        capacity: usize,
    ) -> (Arc<Session>, mpsc::Receiver<Bytes>) {
        let session = Session::create(meta, ctx).unwrap();
        let (stdin, rx) = mpsc::channel(capacity);
        session.attach_agent(AgentHandle {
            stdin,
            control: AgentControl::detached(),
        });
        (session, rx)
    }
}

fn summary_of(g: &Inner) -> SessionSummary {
    let m = &g.meta;
    SessionSummary {
        cwd: Some(m.cwd.clone()),
        model: m.model.clone(),
        permission_mode: m.permission_mode.clone(),
        title: m.title.clone(),
        created_at: Some(m.created_at.clone()),
        last_activity_at: Some(m.last_activity_at.clone()),
        pending_permissions: g
            .pending
            .iter()
            .filter(|p| p.prompt == Some(bridge_protocol::PersonPrompt::CanUseTool))
            .count() as u64,
        exit: Some(m.exit.clone()),
        archived: m.archived,
        last_sequence_num: Some(g.last_seq),
        worktree: m.worktree.as_ref().map(|wt| WorktreeInfo {
            path: wt.path.clone(),
            branch: wt.branch.clone(),
        }),
        worktree_kept: m.worktree_kept.clone(),
        cli: m.cli.clone(),
        ..SessionSummary::new(m.id.clone(), m.state.clone())
    }
}
