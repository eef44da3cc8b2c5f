//! One session: its durable log, live fan-out, state machine, pending control requests and the agent's
//! stdin. Everything that must be atomic (sequence numbers, first-answer-wins, stdin order) happens under
//! one short mutex per session; subscribers receive pre-rendered frames over a broadcast channel.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use tokio::sync::{broadcast, mpsc};

use bridge_dedup::BoundedSet;

use crate::agent::{AgentControl, AgentEvents, AgentHandle};
use crate::audit::AuditLog;
use crate::auth::Principal;
use crate::error::ApiError;
use crate::frames::{Delivery, Frame, Route, route_worker};
use crate::push::{Device, PushEvent, PushHandle};
use crate::store::{EventStore, Source, StoreError, StoredEvent};
use crate::util::{json_str, now_rfc3339, truncate_utf8};

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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionState {
    Idle,
    Running,
    RequiresAction,
    Ended,
}

impl SessionState {
    pub fn as_str(self) -> &'static str {
        match self {
            SessionState::Idle => "idle",
            SessionState::Running => "running",
            SessionState::RequiresAction => "requires_action",
            SessionState::Ended => "ended",
        }
    }
    fn from_cli(s: &str) -> Option<SessionState> {
        match s {
            "idle" => Some(SessionState::Idle),
            "running" => Some(SessionState::Running),
            "requires_action" => Some(SessionState::RequiresAction),
            _ => None,
        }
    }
}

/// How the agent ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExitInfo {
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub stderr_tail: String,
    pub at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A git worktree owned by a session (spawn mode `worktree`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Worktree {
    pub repo: String,
    pub path: String,
    /// The session's own branch (`bridge/<id prefix>`); `None` for worktrees made detached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// What it was branched from (the repository's branch then, or a commit): commits not in it
    /// are work an archive must not destroy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
}

/// The persisted session record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionMeta {
    pub id: String,
    pub state: SessionState,
    pub cwd: String,
    pub model: Option<String>,
    pub permission_mode: Option<String>,
    pub title: Option<String>,
    pub created_at: String,
    pub last_activity_at: String,
    pub exit: Option<ExitInfo>,
    #[serde(default)]
    pub archived: bool,
    #[serde(default)]
    pub initialize: Option<Value>,
    #[serde(default)]
    pub worktree: Option<Worktree>,
    /// The agent process (pid and start time) while it may run: a relay restarting after a crash
    /// stops what its previous run left behind, and never a process that merely reuses the pid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_process: Option<crate::agent::ProcId>,
    /// Archived, but its worktree was kept, and why ("uncommitted changes", "2 commit(s) not
    /// merged into main").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree_kept: Option<String>,
    /// Its Claude Code session (id from `system/init`), and whether it resumed or forked one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cli: Option<crate::transcripts::CliLink>,
}

impl SessionMeta {
    pub fn new(
        id: String,
        cwd: String,
        model: Option<String>,
        permission_mode: Option<String>,
        title: Option<String>,
    ) -> Self {
        let now = now_rfc3339();
        Self {
            id,
            state: SessionState::Idle,
            cwd,
            model,
            permission_mode,
            title,
            created_at: now.clone(),
            last_activity_at: now,
            exit: None,
            archived: false,
            initialize: None,
            worktree: None,
            agent_process: None,
            worktree_kept: None,
            cli: None,
        }
    }
}

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
    needs_action: bool,
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
        let activity = match meta.state {
            SessionState::Ended => SessionState::Idle,
            s => s,
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
            crate::agent::stop_leftover(agent, crate::agent::GROUP_GRACE);
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

    pub fn subscribe(&self) -> Subscription {
        let g = self.lock();
        Subscription {
            rx: self
                .tx
                .get_or_init(|| broadcast::channel(BROADCAST_CAPACITY).0)
                .subscribe(),
            last_seq: g.last_seq,
            first_seq: g.first_seq,
            ended: g.meta.state == SessionState::Ended,
        }
    }

    pub fn last_seq(&self) -> u64 {
        self.lock().last_seq
    }

    /// `(last_seq, ended)` read together.
    pub fn tail(&self) -> (u64, bool) {
        let g = self.lock();
        (g.last_seq, g.meta.state == SessionState::Ended)
    }

    /// Durable frames with `seq > after`, ascending, at most `limit`: from memory when the recent
    /// window covers `after + 1`, otherwise rendered from the store.
    pub fn replay_after(&self, after: u64, limit: usize) -> Result<Vec<Arc<Frame>>, StoreError> {
        self.replay_page(after, limit, usize::MAX)
    }

    /// [`Self::replay_after`] bounded in bytes too: frames stop once their payloads pass
    /// `max_bytes` (the first frame always comes, however large). Replays read page by page with
    /// this, so a log of multi-megabyte events is never held in memory whole.
    pub fn replay_page(
        &self,
        after: u64,
        limit: usize,
        max_bytes: usize,
    ) -> Result<Vec<Arc<Frame>>, StoreError> {
        {
            let g = self.lock();
            if let Some(front) = g.recent.front().and_then(|f| f.seq)
                && front <= after.saturating_add(1)
            {
                let skip = usize::try_from(after.saturating_add(1) - front).unwrap_or(usize::MAX);
                let mut out = Vec::new();
                let mut bytes = 0usize;
                for f in g.recent.iter().skip(skip).take(limit) {
                    if !out.is_empty() && bytes.saturating_add(f.payload.len()) > max_bytes {
                        break;
                    }
                    bytes = bytes.saturating_add(f.payload.len());
                    out.push(f.clone());
                }
                return Ok(out);
            }
        }
        Ok(self
            .ctx
            .store
            .read_page(&self.id, after, limit, max_bytes)?
            .iter()
            .map(Frame::durable)
            .collect())
    }

    /// `(first retained, last)` sequence numbers.
    pub fn bounds(&self) -> (u64, u64) {
        let g = self.lock();
        (g.first_seq, g.last_seq)
    }

    pub fn read_after(&self, after: u64, limit: usize) -> Result<Vec<StoredEvent>, StoreError> {
        self.ctx.store.read_after(&self.id, after, limit)
    }

    pub fn meta(&self) -> SessionMeta {
        self.lock().meta.clone()
    }

    pub fn state(&self) -> SessionState {
        self.lock().meta.state
    }

    pub fn subscriber_count(&self) -> usize {
        self.tx.get().map_or(0, broadcast::Sender::receiver_count)
    }

    /// Whether the live fan-out ring exists (someone subscribed since the relay started).
    pub fn has_fanout(&self) -> bool {
        self.tx.get().is_some()
    }

    fn fan_out(&self, frame: Arc<Frame>) {
        if let Some(tx) = self.tx.get() {
            let _ = tx.send(frame);
        }
    }

    /// Raw payloads of the control requests still waiting for an answer, oldest first.
    pub fn pending_payloads(&self) -> Vec<Bytes> {
        self.lock()
            .pending
            .iter()
            .map(|p| p.payload.clone())
            .collect()
    }

    /// A control request still waiting for an answer.
    pub fn pending_request(&self, request_id: &str) -> Option<PendingRequest> {
        self.lock()
            .pending
            .iter()
            .find(|p| p.request_id == request_id)
            .map(|p| PendingRequest {
                request_id: p.request_id.clone(),
                subtype: p.subtype.clone(),
                tool_name: p.tool_name.clone(),
                tool_use_id: p.tool_use_id.clone(),
                input: p.input.clone(),
            })
    }

    /// The 409 an answer to `request_id` gets when that request is not pending (what `ingest` says).
    pub fn not_pending_error(&self, request_id: &str) -> ApiError {
        Self::not_pending(&self.lock(), request_id, false)
    }

    fn not_pending(g: &Inner, rid: &str, pending: bool) -> ApiError {
        let why = g
            .settled
            .iter()
            .rev()
            .find(|(r, _)| r == rid)
            .map(|(_, w)| w.clone())
            .unwrap_or_else(|| {
                if pending {
                    "it is answered earlier in this request".into()
                } else {
                    "no such request is pending".into()
                }
            });
        ApiError::conflict(
            "request_not_pending",
            format!(
                "control_request {rid:?} is already settled: {why}; this answer was not forwarded"
            ),
        )
    }

    // ---------------------------------------------------------------- push notifications

    fn notify(&self, g: &Inner, event: crate::push::Event) {
        if let Some(push) = &self.ctx.push {
            push.notify(PushEvent {
                session_id: self.id.clone(),
                session_label: session_label(&g.meta),
                event,
            });
        }
    }

    fn prompt_of(p: &Pending, with_input: bool) -> crate::push::Prompt {
        crate::push::Prompt {
            request_id: p.request_id.clone(),
            subtype: p.subtype.clone(),
            tool_name: p.tool_name.clone(),
            input: if with_input { p.input.clone() } else { None },
        }
    }

    /// `resolved` for a prompt a person was told about (`needs_action`), once it stopped waiting.
    fn notify_resolved(&self, g: &Inner, p: &Pending, resolution: crate::push::Resolution) {
        if !p.needs_action || self.ctx.push.is_none() {
            return;
        }
        let others_pending = g.pending.iter().any(|q| q.needs_action);
        self.notify(
            g,
            crate::push::Event::Resolved {
                prompt: Self::prompt_of(p, false),
                resolution,
                others_pending,
            },
        );
    }

    /// `turn_done` from a `result` frame: its `duration_ms`, else the time since the turn started.
    fn notify_turn_done(&self, g: &Inner, result: &Value, started: Option<Instant>) {
        let duration = result
            .get("duration_ms")
            .and_then(Value::as_f64)
            .filter(|ms| ms.is_finite() && *ms >= 0.0)
            .map(|ms| Duration::from_secs_f64(ms / 1000.0))
            .or_else(|| started.map(|t| t.elapsed()));
        let Some(duration) = duration else {
            return;
        };
        let subtype = result
            .get("subtype")
            .and_then(Value::as_str)
            .unwrap_or("success");
        let is_error = result.get("is_error").and_then(Value::as_bool) == Some(true);
        let error = match (subtype, is_error) {
            ("success", false) => None,
            ("success", true) => Some("error".to_owned()),
            (other, _) => Some(other.to_owned()),
        };
        self.notify(
            g,
            crate::push::Event::TurnDone {
                duration,
                cost_usd: result.get("total_cost_usd").and_then(Value::as_f64),
                error,
            },
        );
    }

    /// The list/detail JSON (CONTRACTS.md).
    pub fn summary(&self, with_initialize: bool) -> Value {
        let g = self.lock();
        let m = &g.meta;
        let mut v = json!({
            "id": m.id,
            "state": m.state.as_str(),
            "cwd": m.cwd,
            "model": m.model,
            "permission_mode": m.permission_mode,
            "title": m.title,
            "created_at": m.created_at,
            "last_activity_at": m.last_activity_at,
            "pending_permissions": g.pending.iter().filter(|p| p.subtype == "can_use_tool").count(),
            "exit": m.exit,
            "archived": m.archived,
            "last_sequence_num": g.last_seq,
        });
        if let Some(wt) = &m.worktree {
            v["worktree"] = json!({"path": wt.path, "branch": wt.branch});
        }
        if let Some(why) = &m.worktree_kept {
            v["worktree_kept"] = json!(why);
        }
        if let Some(cli) = &m.cli {
            v["cli"] = json!(cli);
        }
        if with_initialize {
            v["initialize"] = m.initialize.clone().unwrap_or(Value::Null);
            v["pending_requests"] = Value::Array(
                g.pending
                    .iter()
                    .map(|p| json!({"request_id": p.request_id, "subtype": p.subtype, "sequence_num": p.seq, "tool_name": p.tool_name}))
                    .collect(),
            );
        }
        v
    }

    fn save_meta(&self, g: &Inner) {
        if let Err(e) = self.ctx.store.save_session(&g.meta) {
            tracing::error!(session = %self.id, error = %e, "cannot save session record");
        }
    }

    /// Appends a durable event and fans it out. Caller holds the lock.
    fn append(
        &self,
        g: &mut Inner,
        source: Source,
        event_type: &str,
        payload: String,
        client_uuid: Option<String>,
    ) -> Result<(u64, String), StoreError> {
        self.append_with(g, source, event_type, payload, client_uuid, false)
    }

    /// [`Self::append`]; `ends_session` marks the agent-exit event (streams close after it).
    fn append_with(
        &self,
        g: &mut Inner,
        source: Source,
        event_type: &str,
        payload: String,
        client_uuid: Option<String>,
        ends_session: bool,
    ) -> Result<(u64, String), StoreError> {
        let ev = StoredEvent {
            session_id: self.id.clone(),
            seq: g.last_seq + 1,
            event_id: uuid::Uuid::new_v4().to_string(),
            event_type: event_type.to_owned(),
            source,
            created_at: now_rfc3339(),
            payload,
            client_uuid,
        };
        self.ctx.store.append(&ev)?;
        g.last_seq = ev.seq;
        g.meta.last_activity_at.clone_from(&ev.created_at);
        if let Some(u) = &ev.client_uuid {
            remember_uuid(g, u, &ev.event_id, ev.seq);
        }
        let frame = Frame::durable_with(&ev, ends_session);
        g.recent_bytes += frame.sse.len();
        g.recent.push_back(frame.clone());
        while g.recent.len() > RECENT_FRAMES
            || (g.recent_bytes > RECENT_BYTES && g.recent.len() > 1)
        {
            if let Some(old) = g.recent.pop_front() {
                g.recent_bytes -= old.sse.len();
            }
        }
        self.fan_out(frame);
        self.maybe_prune(g);
        Ok((ev.seq, ev.event_id))
    }

    fn maybe_prune(&self, g: &mut Inner) {
        let Some(keep) = self.ctx.retention_events else {
            return;
        };
        let keep = keep.max(1);
        let retained = g.last_seq + 1 - g.first_seq;
        let slack = (keep / 8).max(1);
        if retained <= keep + slack {
            return;
        }
        let mut first_kept = g.last_seq + 1 - keep;
        // A prompt still waiting for an answer must reach late joiners: never prune it.
        if let Some(oldest) = g.pending.iter().map(|p| p.seq).min() {
            first_kept = first_kept.min(oldest);
        }
        if first_kept > g.first_seq {
            match self.ctx.store.prune_before(&self.id, first_kept) {
                Ok(()) => {
                    g.first_seq = first_kept;
                    while g
                        .recent
                        .front()
                        .and_then(|f| f.seq)
                        .is_some_and(|s| s < first_kept)
                    {
                        if let Some(old) = g.recent.pop_front() {
                            g.recent_bytes -= old.sse.len();
                        }
                    }
                }
                Err(e) => tracing::error!(session = %self.id, error = %e, "retention prune failed"),
            }
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

    fn broadcast_delivery(&self, event_id: &str, status: Delivery) {
        self.fan_out(Frame::delivery(event_id, status, &now_rfc3339()));
    }

    fn set_delivery(&self, g: &mut Inner, pred: impl Fn(&DeliveryTrack) -> bool, status: Delivery) {
        let mut updated = Vec::new();
        for d in g.deliveries.iter_mut().filter(|d| pred(d)) {
            if (d.status as u8) < (status as u8) {
                d.status = status;
                updated.push(d.event_id.clone());
            }
        }
        for id in updated {
            self.broadcast_delivery(&id, status);
        }
        g.deliveries.retain(|d| d.status != Delivery::Processed);
    }

    /// Recomputes the visible state; persists and returns whether it changed.
    fn recompute_state(&self, g: &mut Inner) {
        if g.meta.state == SessionState::Ended {
            return;
        }
        let new = if g.pending.iter().any(|p| p.needs_action) {
            SessionState::RequiresAction
        } else if g.activity == SessionState::RequiresAction {
            SessionState::Running
        } else {
            g.activity
        };
        if new != g.meta.state {
            g.meta.state = new;
            self.save_meta(g);
        }
    }

    fn remember_settled(g: &mut Inner, request_id: &str, why: String) {
        g.settled.push_back((request_id.to_owned(), why));
        while g.settled.len() > SETTLED_MEMORY {
            g.settled.pop_front();
        }
    }

    fn lookup_uuid(&self, g: &Inner, uuid: &str) -> Result<Option<(String, u64)>, StoreError> {
        if let Some(hit) = g.uuids.get(uuid) {
            return Ok(Some(hit.clone()));
        }
        self.ctx.store.find_client_uuid(&self.id, uuid)
    }

    // ---------------------------------------------------------------- worker (CLI stdout) side

    fn handle_worker_line(&self, text: &str) {
        let text = text.trim_end_matches('\r');
        if text.trim().is_empty() {
            return;
        }
        let value: Value = match serde_json::from_str::<Value>(text) {
            Ok(v) if v.get("type").is_some_and(Value::is_string) => v,
            Ok(_) => {
                return self.relay_error(
                    "agent wrote JSON that is not an object with a string \"type\"",
                    text,
                );
            }
            Err(e) => {
                return self
                    .relay_error(&format!("agent wrote a line that is not JSON: {e}"), text);
            }
        };
        // The typed parse only classifies (the line is forwarded as is either way): skip its cost unless
        // someone reads the debug log.
        if tracing::enabled!(tracing::Level::DEBUG)
            && let Err(e) = crate::proto::validate_cli_line(text)
        {
            tracing::debug!(session = %self.id, error = %e, "CLI line does not match the typed model; forwarded as is");
        }
        // Forward the exact bytes unless they would break an SSE data line.
        let payload = if text.contains(['\r', '\n'])
            || text.starts_with(char::is_whitespace)
            || text.ends_with(char::is_whitespace)
        {
            value.to_string()
        } else {
            text.to_owned()
        };
        let ty = value["type"].as_str().unwrap_or_default().to_owned();

        let mut g = self.lock();
        if ty == "control_response" {
            let rid = str_at(&value, &["response", "request_id"]);
            if rid.is_some() && rid == g.relay_init_id.as_deref() {
                g.relay_init_id = None;
                g.meta.initialize = Some(
                    if str_at(&value, &["response", "subtype"]) == Some("success") {
                        value["response"]
                            .get("response")
                            .cloned()
                            .unwrap_or_else(|| json!({}))
                    } else {
                        tracing::warn!(session = %self.id, "agent rejected the relay's initialize");
                        Value::Null
                    },
                );
                self.save_meta(&g);
                return;
            }
        }
        match route_worker(&value) {
            Route::Drop => return,
            Route::Ephemeral => {
                self.fan_out(Frame::ephemeral(&ty, &payload));
                return;
            }
            Route::Durable => {}
        }
        let seq = match self.append(&mut g, Source::Worker, &ty, payload.clone(), None) {
            Ok((seq, _)) => seq,
            Err(e) => {
                tracing::error!(session = %self.id, error = %e, "event store failure; agent frame dropped");
                return;
            }
        };
        self.apply_worker_effects(&mut g, &ty, &value, seq, payload);
        self.recompute_state(&mut g);
    }

    fn apply_worker_effects(&self, g: &mut Inner, ty: &str, v: &Value, seq: u64, payload: String) {
        match ty {
            "control_request" => {
                let Some(rid) = v.get("request_id").and_then(Value::as_str) else {
                    return;
                };
                let req = &v["request"];
                let subtype = req
                    .get("subtype")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned();
                let needs_action = matches!(
                    subtype.as_str(),
                    "can_use_tool" | "elicitation" | "request_user_dialog"
                );
                if needs_action {
                    // Asking means the agent is mid-turn; once answered it carries on.
                    g.activity = SessionState::Running;
                }
                g.pending.retain(|p| p.request_id != rid);
                g.pending.push(Pending {
                    request_id: rid.to_owned(),
                    seq,
                    // Who asks: the tool, or the MCP server of an elicitation, or the dialog kind.
                    tool_name: ["tool_name", "mcp_server_name", "dialog_kind"]
                        .iter()
                        .find_map(|k| req.get(*k).and_then(Value::as_str))
                        .map(str::to_owned),
                    tool_use_id: req
                        .get("tool_use_id")
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                    // What is asked: the tool input, the elicitation's message and form, or the
                    // dialog's payload.
                    input: req
                        .get("input")
                        .cloned()
                        .or_else(|| match subtype.as_str() {
                            "elicitation" => Some(json!({
                                "message": req.get("message"),
                                "requested_schema": req.get("requested_schema"),
                                "url": req.get("url"),
                            })),
                            "request_user_dialog" => req.get("payload").cloned(),
                            _ => None,
                        }),
                    subtype,
                    payload: Bytes::from(payload),
                    needs_action,
                });
                if needs_action && self.ctx.push.is_some() {
                    let prompt = g.pending.last().map(|p| Self::prompt_of(p, true));
                    if let Some(prompt) = prompt {
                        self.notify(g, crate::push::Event::NeedsYou(prompt));
                    }
                }
                if let Some(timeout) = self.ctx.permission_timeout {
                    let me = self.me.clone();
                    let rid = rid.to_owned();
                    tokio::spawn(async move {
                        tokio::time::sleep(timeout).await;
                        if let Some(s) = me.upgrade() {
                            s.on_prompt_timeout(&rid, timeout);
                        }
                    });
                }
            }
            "control_cancel_request" => {
                if let Some(rid) = v.get("request_id").and_then(Value::as_str)
                    && let Some(pos) = g.pending.iter().position(|p| p.request_id == rid)
                {
                    let p = g.pending.remove(pos);
                    Self::remember_settled(g, rid, "it was cancelled by the agent".into());
                    self.notify_resolved(g, &p, crate::push::Resolution::Withdrawn);
                }
            }
            "result" => {
                g.activity = SessionState::Idle;
                self.set_delivery(g, |_| true, Delivery::Processed);
                let started = g.turn_started.take();
                if self.ctx.push.is_some() {
                    self.notify_turn_done(g, v, started);
                }
            }
            "system" => match v.get("subtype").and_then(Value::as_str) {
                Some("session_state_changed") => {
                    if let Some(s) = v
                        .get("state")
                        .and_then(Value::as_str)
                        .and_then(SessionState::from_cli)
                    {
                        g.activity = s;
                    }
                }
                Some("init") => {
                    let mut changed = false;
                    if let Some(m) = v.get("model").and_then(Value::as_str) {
                        changed |= g.meta.model.as_deref() != Some(m);
                        g.meta.model = Some(m.to_owned());
                    }
                    if let Some(p) = v.get("permissionMode").and_then(Value::as_str) {
                        changed |= g.meta.permission_mode.as_deref() != Some(p);
                        g.meta.permission_mode = Some(p.to_owned());
                    }
                    // Its transcript is this session's: the list of CLI sessions leaves it out.
                    if let Some(id) = v.get("session_id").and_then(Value::as_str) {
                        let cli = g.meta.cli.get_or_insert_with(Default::default);
                        if cli.session_id.is_none() {
                            cli.session_id = Some(id.to_owned());
                            changed = true;
                        }
                    }
                    if changed {
                        self.save_meta(g);
                    }
                }
                _ => {}
            },
            "user" => {
                if v.get("isReplay").and_then(Value::as_bool) == Some(true)
                    && let Some(u) = v.get("uuid").and_then(Value::as_str)
                {
                    self.set_delivery(g, |d| d.uuid.as_deref() == Some(u), Delivery::Processing);
                }
            }
            "command_lifecycle" => {
                if let Some(u) = v.get("command_uuid").and_then(Value::as_str) {
                    let status = match v.get("state").and_then(Value::as_str) {
                        Some("started") => Some(Delivery::Processing),
                        Some("completed" | "cancelled" | "discarded" | "refused") => {
                            Some(Delivery::Processed)
                        }
                        _ => None,
                    };
                    if let Some(status) = status {
                        self.set_delivery(g, |d| d.uuid.as_deref() == Some(u), status);
                    }
                }
            }
            _ => {}
        }
    }

    /// Surfaces a line the relay could not decode as a durable `relay_error` event. It stands in for
    /// the worker's output, so it goes out as `source:"worker"` (the SDK drops other sources) and
    /// says `relay_generated: true`.
    fn relay_error(&self, error: &str, raw: &str) {
        tracing::warn!(session = %self.id, error, "undecodable agent output");
        let payload = json!({
            "type": "relay_error",
            "error": error,
            "raw": truncate_utf8(raw, RELAY_ERROR_RAW_BYTES),
            "uuid": uuid::Uuid::new_v4().to_string(),
            "session_id": self.id,
            "relay_generated": true,
        });
        let mut g = self.lock();
        if let Err(e) = self.append(
            &mut g,
            Source::Worker,
            "relay_error",
            payload.to_string(),
            None,
        ) {
            tracing::error!(session = %self.id, error = %e, "event store failure");
        }
    }

    fn on_prompt_timeout(&self, request_id: &str, timeout: Duration) {
        let mut g = self.lock();
        let Some(pos) = g.pending.iter().position(|p| p.request_id == request_id) else {
            return;
        };
        let p = g.pending.remove(pos);
        let message = format!(
            "No controller answered within {} s, so the relay denied this request (--permission-timeout-secs).",
            timeout.as_secs()
        );
        let response = if p.subtype == "can_use_tool" {
            let mut r = Map::new();
            r.insert("behavior".into(), "deny".into());
            r.insert("message".into(), message.clone().into());
            if let Some(t) = &p.tool_use_id {
                r.insert("toolUseID".into(), t.clone().into());
            }
            json!({"subtype": "success", "request_id": request_id, "response": r})
        } else {
            json!({"subtype": "error", "request_id": request_id, "error": message})
        };
        // On record (and on disk) before the agent hears it; the deny goes out even if the
        // audit log cannot be written (nobody is waiting to be told no).
        let _ = self.ctx.audit.record(&json!({
            "at": now_rfc3339(),
            "session_id": self.id,
            "request_id": request_id,
            "subtype": p.subtype,
            "tool_name": p.tool_name,
            "tool_use_id": p.tool_use_id,
            "input": p.input,
            "who": {"role": "relay", "token_id": null},
            "decision": "deny",
            "reason": "timeout",
            "message": message,
        }));
        let payload = json!({"type": "control_response", "response": response}).to_string();
        self.write_stdin(&g, payload.clone());
        if let Err(e) = self.append(&mut g, Source::Relay, "control_response", payload, None) {
            tracing::error!(session = %self.id, error = %e, "event store failure");
        }
        Self::remember_settled(
            &mut g,
            request_id,
            format!(
                "the relay denied it after {} s without an answer",
                timeout.as_secs()
            ),
        );
        self.notify_resolved(&g, &p, crate::push::Resolution::TimedOut);
        self.recompute_state(&mut g);
    }

    // ---------------------------------------------------------------- client side

    /// Stores, echoes and forwards client payloads. All-or-nothing validation first: a bad event
    /// anywhere in the batch changes nothing.
    pub fn ingest(
        &self,
        who: &Principal,
        payloads: Vec<Value>,
    ) -> Result<Vec<IngestResult>, ApiError> {
        self.ingest_from(who, None, payloads)
    }

    /// [`Self::ingest`] for answers given on a device (a push notification): audit records and the
    /// 409 of later answers name it.
    pub fn ingest_from(
        &self,
        who: &Principal,
        device: Option<&Device>,
        payloads: Vec<Value>,
    ) -> Result<Vec<IngestResult>, ApiError> {
        if !who.can_write() {
            return Err(ApiError::forbidden(
                "observer tokens are read-only: sending events needs the controller token",
            ));
        }
        enum Plan {
            Known(IngestResult),
            Apply {
                ty: String,
                text: String,
                uuid: Option<String>,
                value: Value,
            },
        }
        let mut g = self.lock();
        let mut plans = Vec::with_capacity(payloads.len());
        let mut batch_uuids = HashSet::new();
        let mut batch_answers = HashSet::new();
        for (i, payload) in payloads.into_iter().enumerate() {
            let Some(obj) = payload.as_object() else {
                return Err(ApiError::bad_request(format!(
                    "events[{i}].payload must be a JSON object"
                )));
            };
            let Some(ty) = obj.get("type").and_then(Value::as_str).map(str::to_owned) else {
                return Err(ApiError::bad_request(format!(
                    "events[{i}].payload.type must be a string"
                )));
            };
            let uuid = obj
                .get("uuid")
                .and_then(Value::as_str)
                .filter(|u| !u.is_empty())
                .map(str::to_owned);
            if let Some(u) = &uuid {
                if let Some((event_id, seq)) = self.lookup_uuid(&g, u)? {
                    plans.push(Plan::Known(IngestResult {
                        event_id: Some(event_id),
                        sequence_num: Some(seq),
                    }));
                    continue;
                }
                if !batch_uuids.insert(u.clone()) {
                    return Err(ApiError::bad_request(format!(
                        "events[{i}].payload.uuid {u:?} appears twice in one request"
                    )));
                }
            }
            if ty == "keep_alive" {
                plans.push(Plan::Known(IngestResult {
                    event_id: None,
                    sequence_num: None,
                }));
                continue;
            }
            if g.meta.state == SessionState::Ended {
                return Err(ApiError::gone(format!(
                    "session {} has ended (its agent exited); start a new session to continue",
                    self.id
                )));
            }
            let text = payload.to_string();
            if let Err(e) = crate::proto::validate_client_line(&text) {
                return Err(ApiError::bad_request(format!(
                    "events[{i}].payload is not a valid {ty} message: {e}"
                )));
            }
            if ty == "control_request" {
                crate::validate::control_request(&payload, self.ctx.allow_bypass_permissions)
                    .map_err(|mut e| {
                        e.message = format!("events[{i}]: {}", e.message);
                        e
                    })?;
            }
            if ty == "control_response" {
                let Some(rid) = str_at(&payload, &["response", "request_id"]) else {
                    return Err(ApiError::bad_request(format!(
                        "events[{i}].payload.response.request_id must be a string"
                    )));
                };
                let pending = g.pending.iter().any(|p| p.request_id == rid);
                if !pending || !batch_answers.insert(rid.to_owned()) {
                    return Err(Self::not_pending(&g, rid, pending));
                }
            }
            plans.push(Plan::Apply {
                ty,
                text,
                uuid,
                value: payload,
            });
        }

        // Every applied event is one line for the agent: refuse the whole batch when its stdin queue
        // cannot take them all (nothing stored, nothing sent).
        let writes = plans
            .iter()
            .filter(|p| matches!(p, Plan::Apply { .. }))
            .count();
        if writes > 0
            && let Some(tx) = &g.stdin
            && tx.capacity() < writes
        {
            return Err(ApiError::new(
                axum::http::StatusCode::SERVICE_UNAVAILABLE,
                "agent_busy",
                format!(
                    "the agent is not reading its input: {} of its {} queued messages are waiting \
                     (--max-stdin-queue); nothing from this request was stored or sent. Retry later, or \
                     start the relay with a larger --max-stdin-queue",
                    tx.max_capacity() - tx.capacity(),
                    tx.max_capacity()
                ),
            ));
        }
        // Every answer's audit record is written and synced before anything of the batch is
        // stored or reaches the agent; one that cannot be written refuses the whole batch.
        for plan in &plans {
            if let Plan::Apply { ty, value, .. } = plan
                && ty == "control_response"
            {
                let rid = str_at(value, &["response", "request_id"]).unwrap_or_default();
                if let Some(p) = g.pending.iter().find(|p| p.request_id == rid) {
                    self.audit_answer(p, who, device, value).map_err(|e| {
                        ApiError::internal(format!(
                            "cannot write the audit log ({e}); the answer was not forwarded to the agent: \
                             free disk space or fix the data dir's permissions, then answer again"
                        ))
                    })?;
                }
            }
        }
        let mut results = Vec::with_capacity(plans.len());
        for plan in plans {
            let (ty, text, uuid, value) = match plan {
                Plan::Known(r) => {
                    results.push(r);
                    continue;
                }
                Plan::Apply {
                    ty,
                    text,
                    uuid,
                    value,
                } => (ty, text, uuid, value),
            };
            // Environment variable values never reach the log in clear (the agent gets them).
            let stored =
                crate::redact::stored_client_line(&ty, &value).unwrap_or_else(|| text.clone());
            let (seq, event_id) = self.append(&mut g, Source::Client, &ty, stored, uuid.clone())?;
            // What the CLI gets: control_* payloads without the SDK's added `uuid`.
            let line = if ty.starts_with("control_") && value.get("uuid").is_some() {
                let mut stripped = value.clone();
                if let Some(o) = stripped.as_object_mut() {
                    o.remove("uuid");
                }
                stripped.to_string()
            } else {
                text
            };
            if !self.write_stdin(&g, line) {
                tracing::warn!(session = %self.id, "agent stdin is closed; event stored but not delivered");
            }
            match ty.as_str() {
                "user" => {
                    g.activity = SessionState::Running;
                    if g.turn_started.is_none() {
                        g.turn_started = Some(Instant::now());
                    }
                    g.deliveries.push_back(DeliveryTrack {
                        uuid: uuid.clone(),
                        event_id: event_id.clone(),
                        status: Delivery::Received,
                    });
                    while g.deliveries.len() > DELIVERY_MEMORY {
                        g.deliveries.pop_front();
                    }
                    self.broadcast_delivery(&event_id, Delivery::Received);
                }
                "control_response" => {
                    let rid = str_at(&value, &["response", "request_id"])
                        .unwrap_or_default()
                        .to_owned();
                    if let Some(pos) = g.pending.iter().position(|p| p.request_id == rid) {
                        let p = g.pending.remove(pos);
                        let resolution = crate::push::Resolution::Answered {
                            decision: answer_decision(&value["response"]),
                            device: device.map(|d| {
                                d.label.clone().unwrap_or_else(|| "a notification".into())
                            }),
                        };
                        self.notify_resolved(&g, &p, resolution);
                    }
                    let by = match device {
                        Some(d) => format!(
                            "the {} from the device {:?}",
                            who.role.as_str(),
                            d.label.as_deref().unwrap_or(&d.id)
                        ),
                        None => format!("the {}", who.role.as_str()),
                    };
                    Self::remember_settled(
                        &mut g,
                        &rid,
                        format!("it was answered first by {by} (event {seq})"),
                    );
                    self.broadcast_delivery(&event_id, Delivery::Processed);
                }
                _ => self.broadcast_delivery(&event_id, Delivery::Received),
            }
            results.push(IngestResult {
                event_id: Some(event_id),
                sequence_num: Some(seq),
            });
        }
        self.recompute_state(&mut g);
        Ok(results)
    }

    fn audit_answer(
        &self,
        p: &Pending,
        who: &Principal,
        device: Option<&Device>,
        answer: &Value,
    ) -> std::io::Result<()> {
        let resp = &answer["response"];
        let body = resp.get("response").cloned().unwrap_or(Value::Null);
        let decision = answer_decision(resp);
        let mut record = json!({
            "at": now_rfc3339(),
            "session_id": self.id,
            "request_id": p.request_id,
            "subtype": p.subtype,
            "tool_name": p.tool_name,
            "tool_use_id": p.tool_use_id,
            "input": p.input,
            "who": who.audit_json(),
            "decision": decision,
            "updated_input": body.get("updatedInput"),
            "updated_permissions": body.get("updatedPermissions"),
            "message": body.get("message").or_else(|| resp.get("error")),
            "interrupt": body.get("interrupt"),
            // An elicitation's form values, a dialog's result.
            "content": body.get("content"),
            "result": body.get("result"),
        });
        // Answered on a device (a notification's Allow / Deny): who acted, and where.
        if let Some(d) = device {
            record["who"]["device"] = json!(d);
        }
        self.ctx.audit.record(&record)
    }

    // ---------------------------------------------------------------- lifecycle

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

    pub fn agent_running(&self) -> bool {
        self.agent
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .is_some_and(|c| !c.has_exited())
    }
}

/// What an answer decided: allow / deny, an elicitation's action, `error`, or `answered`.
fn answer_decision(resp: &Value) -> String {
    let body = resp.get("response");
    let field = |k: &str| body.and_then(|b| b.get(k)).and_then(Value::as_str);
    if resp.get("subtype").and_then(Value::as_str) == Some("error") {
        "error".to_owned()
    } else if let Some(b) = field("behavior") {
        b.to_owned()
    } else if let Some(a) = field("action") {
        a.to_owned()
    } else {
        "answered".to_owned()
    }
}

/// What notifications call a session: its title, else its working directory's last component.
fn session_label(meta: &SessionMeta) -> String {
    match meta.title.as_deref().map(str::trim) {
        Some(t) if !t.is_empty() => t.to_owned(),
        _ => std::path::Path::new(&meta.cwd)
            .file_name()
            .map_or_else(|| meta.cwd.clone(), |n| n.to_string_lossy().into_owned()),
    }
}

fn remember_uuid(g: &mut Inner, uuid: &str, event_id: &str, seq: u64) {
    if let Some(old) = g.posted.insert(uuid.to_owned()).evicted() {
        g.uuids.remove(&old);
    }
    g.uuids.insert(uuid.to_owned(), (event_id.to_owned(), seq));
}

impl AgentEvents for Session {
    fn on_line(&self, text: &str) {
        self.handle_worker_line(text);
    }

    fn on_undecodable(&self, error: &str, raw: &str) {
        self.relay_error(&format!("agent output could not be framed: {error}"), raw);
    }

    fn on_exit(&self, exit: ExitInfo) {
        let mut g = self.lock();
        if g.meta.state == SessionState::Ended {
            return;
        }
        g.stdin = None;
        let pending: Vec<Pending> = g.pending.drain(..).collect();
        for p in &pending {
            Self::remember_settled(&mut g, &p.request_id, "the agent exited".into());
            self.notify_resolved(&g, p, crate::push::Resolution::AgentExited);
        }
        // Died on its own: not stopped by the relay, not a restart or a failed spawn (`reason`).
        let abnormal = !g.stopping
            && exit.reason.is_none()
            && (exit.signal.is_some() || exit.exit_code.is_some_and(|c| c != 0));
        if abnormal {
            self.notify(
                &g,
                crate::push::Event::AgentExited {
                    exit_code: exit.exit_code,
                    signal: exit.signal,
                    stderr_tail: exit.stderr_tail.clone(),
                },
            );
        }
        g.deliveries.clear();
        // An ended session is read rarely (a transcript load): replays come from the store.
        g.recent = VecDeque::new();
        g.recent_bytes = 0;
        g.meta.state = SessionState::Ended;
        let payload = json!({
            "type": "system",
            "subtype": "session_state_changed",
            "state": "ended",
            "exit_code": exit.exit_code,
            "signal": exit.signal,
            "stderr_tail": exit.stderr_tail,
            "reason": exit.reason,
            "uuid": uuid::Uuid::new_v4().to_string(),
            "session_id": self.id,
            "relay_generated": true,
        });
        g.meta.exit = Some(exit);
        // Its process group was stopped before this report (agent::spawn's exit watcher).
        g.meta.agent_process = None;
        // Stands in for the worker (the SDK drops non-worker system events): source "worker",
        // marked `relay_generated`.
        if let Err(e) = self.append_with(
            &mut g,
            Source::Worker,
            "system",
            payload.to_string(),
            None,
            true,
        ) {
            tracing::error!(session = %self.id, error = %e, "event store failure");
        }
        self.save_meta(&g);
        drop(g);
        if let Some(tx) = &self.ctx.ended_tx {
            let _ = tx.send(self.id.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::Role;
    use crate::store::MemoryStore;

    struct Rig {
        session: Arc<Session>,
        stdin: mpsc::Receiver<Bytes>,
        store: Arc<MemoryStore>,
        audit_path: std::path::PathBuf,
        _dir: tempfile::TempDir,
    }

    fn controller() -> Principal {
        Principal {
            role: Role::Controller,
            token_id: "controller".into(),
            session_scope: None,
            login_id: None,
        }
    }

    fn rig(timeout: Option<Duration>, retention: Option<u64>) -> Rig {
        rig_with_audit(timeout, retention, None)
    }

    /// [`rig`] with the audit log at `audit_path` (default: a fresh file in the rig's tempdir).
    fn rig_with_audit(
        timeout: Option<Duration>,
        retention: Option<u64>,
        audit_path: Option<&std::path::Path>,
    ) -> Rig {
        let dir = tempfile::tempdir().unwrap();
        let audit_path = audit_path.map_or_else(|| dir.path().join("audit.jsonl"), Into::into);
        let store = Arc::new(MemoryStore::default());
        let ctx = Arc::new(SessionCtx {
            store: store.clone(),
            audit: Arc::new(AuditLog::open(&audit_path).unwrap()),
            permission_timeout: timeout,
            retention_events: retention,
            ended_tx: None,
            push: None,
            allow_bypass_permissions: false,
        });
        let meta = SessionMeta::new("cse_t".into(), "/tmp".into(), None, None, None);
        let session = Session::create(meta, ctx).unwrap();
        let (tx, stdin) = mpsc::channel(1 << 16);
        session.attach_agent(AgentHandle {
            stdin: tx,
            control: AgentControl::detached(),
        });
        Rig {
            session,
            stdin,
            store,
            audit_path,
            _dir: dir,
        }
    }

    fn drain(rx: &mut mpsc::Receiver<Bytes>) -> Vec<Value> {
        let mut out = Vec::new();
        while let Ok(b) = rx.try_recv() {
            let s = std::str::from_utf8(&b).unwrap();
            assert!(
                s.ends_with('\n') && s.matches('\n').count() == 1,
                "one line per write: {s:?}"
            );
            out.push(serde_json::from_str(s).unwrap());
        }
        out
    }

    fn can_use_tool(rid: &str) -> String {
        json!({"type":"control_request","request_id":rid,"request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"ls"},"tool_use_id":"toolu_1"}}).to_string()
    }

    fn answer(rid: &str, uuid: &str, command: &str) -> Value {
        json!({"type":"control_response","response":{"subtype":"success","request_id":rid,"response":{"behavior":"allow","updatedInput":{"command":command},"toolUseID":"toolu_1"}},"uuid":uuid})
    }

    fn payloads(r: &Rig) -> Vec<(u64, Source, Value)> {
        r.store
            .read_after("cse_t", 0, 10_000)
            .unwrap()
            .into_iter()
            .map(|e| (e.seq, e.source, serde_json::from_str(&e.payload).unwrap()))
            .collect()
    }

    #[tokio::test]
    async fn relay_initialize_is_sent_first_and_its_answer_kept_out_of_the_log() {
        let mut r = rig(None, None);
        let sent = drain(&mut r.stdin);
        assert_eq!(sent.len(), 1);
        assert_eq!(sent[0]["request"]["subtype"], "initialize");
        let rid = sent[0]["request_id"].as_str().unwrap();
        r.session.on_line(&json!({"type":"control_response","response":{"subtype":"success","request_id":rid,"response":{"models":[{"value":"m"}]}}}).to_string());
        assert_eq!(
            r.session.summary(true)["initialize"]["models"][0]["value"],
            "m"
        );
        assert!(payloads(&r).is_empty());
        // Someone else's initialize answer is an ordinary durable event.
        r.session.on_line(r#"{"type":"control_response","response":{"subtype":"success","request_id":"sdk1","response":{}}}"#);
        assert_eq!(payloads(&r).len(), 1);
    }

    #[tokio::test]
    async fn first_answer_wins_and_later_ones_change_nothing() {
        let mut r = rig(None, None);
        drain(&mut r.stdin);
        let who = controller();
        r.session.ingest(&who, vec![json!({"type":"user","message":{"role":"user","content":"hi"},"parent_tool_use_id":null,"session_id":"","uuid":"u-user"})]).unwrap();
        assert_eq!(r.session.state(), SessionState::Running);
        r.session.on_line(&can_use_tool("req-1"));
        assert_eq!(r.session.state(), SessionState::RequiresAction);
        assert_eq!(r.session.summary(false)["pending_permissions"], 1);
        let first = r
            .session
            .ingest(&who, vec![answer("req-1", "u-a", "echo edited")])
            .unwrap();
        let err = r
            .session
            .ingest(&who, vec![answer("req-1", "u-b", "rm -rf /")])
            .unwrap_err();
        assert_eq!(err.status, axum::http::StatusCode::CONFLICT);
        assert!(err.message.contains("answered first"), "{}", err.message);
        // A retry of the winner is idempotent.
        let retry = r
            .session
            .ingest(&who, vec![answer("req-1", "u-a", "echo edited")])
            .unwrap();
        assert_eq!(first, retry);
        let sent = drain(&mut r.stdin);
        assert_eq!(sent.len(), 2, "user + exactly one answer: {sent:?}");
        assert_eq!(sent[0]["uuid"], "u-user", "user messages keep their uuid");
        assert_eq!(
            sent[1]["response"]["response"]["updatedInput"]["command"],
            "echo edited"
        );
        assert!(
            sent[1].get("uuid").is_none(),
            "uuid stripped from control_* lines"
        );
        assert_eq!(r.session.state(), SessionState::Running);
        let log = payloads(&r);
        assert_eq!(
            log.iter().map(|e| e.0).collect::<Vec<_>>(),
            vec![1, 2, 3],
            "dense sequence"
        );
        assert_eq!(log[2].1, Source::Client);
        assert_eq!(log[2].2["uuid"], "u-a", "the stored echo keeps the uuid");
        r.session
            .on_line(r#"{"type":"result","subtype":"success","uuid":"x","session_id":"s"}"#);
        assert_eq!(r.session.state(), SessionState::Idle);
        let audit = std::fs::read_to_string(&r.audit_path).unwrap();
        let lines: Vec<Value> = audit
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0]["decision"], "allow");
        assert_eq!(lines[0]["updated_input"]["command"], "echo edited");
        assert_eq!(lines[0]["input"]["command"], "ls");
        assert_eq!(lines[0]["who"]["role"], "controller");
    }

    #[tokio::test]
    async fn an_answer_whose_audit_record_cannot_be_written_is_refused_and_not_forwarded() {
        // Every write to /dev/full fails (ENOSPC), like a full disk.
        let mut r = rig_with_audit(None, None, Some(std::path::Path::new("/dev/full")));
        r.session.on_line(&can_use_tool("req-1"));
        drain(&mut r.stdin);
        let before = payloads(&r).len();
        let err = r
            .session
            .ingest(&controller(), vec![answer("req-1", "u1", "rm -rf /")])
            .unwrap_err();
        assert_eq!(err.status, axum::http::StatusCode::INTERNAL_SERVER_ERROR);
        assert!(err.message.contains("audit log"), "{}", err.message);
        assert!(drain(&mut r.stdin).is_empty(), "nothing reached the agent");
        assert_eq!(payloads(&r).len(), before, "nothing stored");
        assert_eq!(
            r.session.summary(false)["pending_permissions"],
            1,
            "still waiting"
        );
    }

    #[tokio::test]
    async fn cancelled_prompt_cannot_be_answered() {
        let mut r = rig(None, None);
        r.session.on_line(&can_use_tool("req-2"));
        r.session
            .on_line(r#"{"type":"control_cancel_request","request_id":"req-2"}"#);
        assert_eq!(r.session.summary(false)["pending_permissions"], 0);
        let err = r
            .session
            .ingest(&controller(), vec![answer("req-2", "u", "x")])
            .unwrap_err();
        assert_eq!(err.status, axum::http::StatusCode::CONFLICT);
        assert!(err.message.contains("cancelled"), "{}", err.message);
        drain(&mut r.stdin);
        assert_eq!(payloads(&r).len(), 2);
    }

    #[tokio::test]
    async fn a_full_stdin_queue_refuses_the_whole_batch() {
        let r = rig(None, None);
        let (tx, mut stdin) = mpsc::channel(3);
        r.session.attach_agent(AgentHandle {
            stdin: tx,
            control: AgentControl::detached(),
        });
        // The relay's initialize takes one place: two are left.
        let who = controller();
        let before = payloads(&r).len();
        let err = r
            .session
            .ingest(&who, vec![user_msg("a"), user_msg("b"), user_msg("c")])
            .unwrap_err();
        assert_eq!(err.status, axum::http::StatusCode::SERVICE_UNAVAILABLE);
        assert!(err.message.contains("--max-stdin-queue"), "{}", err.message);
        assert_eq!(payloads(&r).len(), before, "nothing stored");
        r.session
            .ingest(&who, vec![user_msg("a"), user_msg("b")])
            .unwrap();
        assert!(r.session.ingest(&who, vec![user_msg("c")]).is_err());
        // A retry of something already applied needs no room.
        r.session.ingest(&who, vec![user_msg("a")]).unwrap();
        assert_eq!(drain(&mut stdin).len(), 3);
        r.session.ingest(&who, vec![user_msg("c")]).unwrap();
        assert_eq!(payloads(&r).len(), before + 3);
    }

    #[tokio::test]
    async fn an_unopened_session_holds_no_fanout_ring() {
        let r = rig(None, None);
        r.session.on_line(r#"{"type":"assistant","n":1}"#);
        assert!(!r.session.has_fanout(), "nobody subscribed yet");
        let mut sub = r.session.subscribe();
        assert!(r.session.has_fanout());
        r.session.on_line(r#"{"type":"assistant","n":2}"#);
        assert_eq!(sub.rx.try_recv().unwrap().seq, Some(2));
    }

    #[tokio::test]
    async fn bad_batches_change_nothing() {
        let mut r = rig(None, None);
        drain(&mut r.stdin);
        let who = controller();
        let good = json!({"type":"user","message":{"role":"user","content":"a"},"parent_tool_use_id":null,"session_id":"","uuid":"u1"});
        for bad in [
            json!("str"),
            json!({"no":"type"}),
            answer("nope", "u9", "x"),
        ] {
            let err = r.session.ingest(&who, vec![good.clone(), bad]).unwrap_err();
            assert!(err.status.is_client_error(), "{err}");
        }
        assert!(payloads(&r).is_empty());
        assert!(drain(&mut r.stdin).is_empty());
        let observer = Principal {
            role: Role::Observer,
            token_id: "o".into(),
            session_scope: None,
            login_id: None,
        };
        assert_eq!(
            r.session.ingest(&observer, vec![good]).unwrap_err().status,
            axum::http::StatusCode::FORBIDDEN
        );
        assert!(payloads(&r).is_empty());
    }

    #[tokio::test]
    async fn exit_ends_the_session_and_refuses_new_messages() {
        let mut r = rig(None, None);
        r.session.on_line(&can_use_tool("req-3"));
        r.session.on_exit(ExitInfo {
            exit_code: Some(3),
            signal: None,
            stderr_tail: "boom".into(),
            at: now_rfc3339(),
            reason: None,
        });
        assert_eq!(r.session.state(), SessionState::Ended);
        let log = payloads(&r);
        let last = &log.last().unwrap();
        assert_eq!(last.1, Source::Worker, "stands in for the worker");
        assert_eq!(last.2["relay_generated"], true);
        assert_eq!(last.2["subtype"], "session_state_changed");
        assert_eq!(last.2["state"], "ended");
        assert_eq!(last.2["exit_code"], 3);
        assert_eq!(last.2["stderr_tail"], "boom");
        let user = json!({"type":"user","message":{"role":"user","content":"a"},"parent_tool_use_id":null,"session_id":""});
        assert_eq!(
            r.session
                .ingest(&controller(), vec![user])
                .unwrap_err()
                .status,
            axum::http::StatusCode::GONE
        );
        assert_eq!(payloads(&r).len(), log.len());
        drain(&mut r.stdin);
    }

    #[tokio::test]
    async fn ephemeral_frames_are_broadcast_not_stored_and_garbage_is_surfaced() {
        let r = rig(None, None);
        let mut sub = r.session.subscribe();
        r.session
            .on_line(r#"{"type":"stream_event","event":{"type":"ping"}}"#);
        r.session
            .on_line(r#"{"type":"system","subtype":"thinking_tokens","estimated_tokens":3}"#);
        r.session.on_line(r#"{"type":"keep_alive"}"#);
        r.session.on_line("this is not json");
        let f1 = sub.rx.try_recv().unwrap();
        let f2 = sub.rx.try_recv().unwrap();
        let f3 = sub.rx.try_recv().unwrap();
        assert_eq!((f1.seq, f2.seq, f3.seq), (None, None, Some(1)));
        assert!(sub.rx.try_recv().is_err(), "keep_alive dropped");
        let log = payloads(&r);
        assert_eq!(log.len(), 1);
        assert_eq!(log[0].1, Source::Worker);
        assert_eq!(log[0].2["relay_generated"], true);
        assert_eq!(log[0].2["type"], "relay_error");
        assert_eq!(log[0].2["raw"], "this is not json");
    }

    #[tokio::test]
    async fn retention_prunes_but_keeps_pending_prompts() {
        let r = rig(None, Some(10));
        r.session.on_line(&can_use_tool("keep-me"));
        for i in 0..100 {
            r.session
                .on_line(&format!(r#"{{"type":"assistant","n":{i}}}"#));
        }
        let (first, last) = r.session.bounds();
        assert_eq!(last, 101);
        assert_eq!(first, 1, "the pending prompt at seq 1 pins the log");
        r.session
            .ingest(&controller(), vec![answer("keep-me", "u", "ls")])
            .unwrap();
        for i in 0..20 {
            r.session
                .on_line(&format!(r#"{{"type":"assistant","m":{i}}}"#));
        }
        let (first, last) = r.session.bounds();
        assert_eq!(last, 122);
        assert!(first > 100 && last + 1 - first >= 10, "first={first}");
        assert_eq!(r.store.bounds("cse_t").unwrap(), (first, last));
    }

    fn user_msg(uuid: &str) -> Value {
        json!({"type":"user","message":{"role":"user","content":"x"},"parent_tool_use_id":null,"session_id":"","uuid":uuid})
    }

    #[tokio::test]
    async fn a_retry_is_recognised_after_its_event_was_pruned() {
        let mut r = rig(None, Some(10));
        drain(&mut r.stdin);
        let who = controller();
        let first = r.session.ingest(&who, vec![user_msg("u-0")]).unwrap();
        for i in 1..50 {
            r.session
                .ingest(&who, vec![user_msg(&format!("u-{i}"))])
                .unwrap();
        }
        let (first_kept, last) = r.session.bounds();
        assert!(
            first_kept > 1,
            "u-0's event was pruned (first kept {first_kept})"
        );
        assert_eq!(r.store.find_client_uuid("cse_t", "u-0").unwrap(), None);
        assert_eq!(drain(&mut r.stdin).len(), 50);
        let retry = r.session.ingest(&who, vec![user_msg("u-0")]).unwrap();
        assert_eq!(retry, first, "the original result");
        assert_eq!(r.session.last_seq(), last, "nothing appended");
        assert!(drain(&mut r.stdin).is_empty(), "nothing forwarded twice");
    }

    #[tokio::test]
    async fn uuid_memory_is_bounded() {
        let mut r = rig(None, Some(10));
        let who = controller();
        for i in 0..=UUID_MEMORY {
            r.session
                .ingest(&who, vec![user_msg(&format!("u-{i}"))])
                .unwrap();
        }
        drain(&mut r.stdin);
        {
            let g = r.session.lock();
            assert_eq!(g.posted.len(), UUID_MEMORY);
            assert_eq!(g.uuids.len(), UUID_MEMORY, "map and set evict together");
            assert!(!g.uuids.contains_key("u-0"));
        }
        let last = r.session.last_seq();
        // The newest is still known; the oldest (pruned and forgotten) is treated as new.
        r.session
            .ingest(&who, vec![user_msg(&format!("u-{UUID_MEMORY}"))])
            .unwrap();
        assert_eq!(r.session.last_seq(), last);
        r.session.ingest(&who, vec![user_msg("u-0")]).unwrap();
        assert_eq!(r.session.last_seq(), last + 1);
    }

    #[tokio::test]
    async fn replays_come_from_memory_and_match_the_store() {
        let r = rig(None, Some(100));
        for i in 0..300 {
            r.session
                .on_line(&format!(r#"{{"type":"assistant","n":{i}}}"#));
        }
        let (first, last) = r.session.bounds();
        assert_eq!(last, 300);
        let from_memory = r.session.replay_after(first + 4, 7).unwrap();
        let from_store: Vec<Arc<Frame>> = r
            .store
            .read_after("cse_t", first + 4, 7)
            .unwrap()
            .iter()
            .map(Frame::durable)
            .collect();
        assert_eq!(from_memory.len(), 7);
        for (m, s) in from_memory.iter().zip(&from_store) {
            assert_eq!((m.seq, &m.sse), (s.seq, &s.sse));
        }
        {
            let g = r.session.lock();
            assert_eq!(
                g.recent.front().and_then(|f| f.seq),
                Some(first),
                "pruned frames left memory too"
            );
            assert_eq!(g.recent.len() as u64, last + 1 - first);
        }
        // Below the retained window: whatever the store still has (nothing older than `first`).
        let older = r.session.replay_after(0, 3).unwrap();
        assert_eq!(older.first().and_then(|f| f.seq), Some(first));
    }

    #[tokio::test]
    async fn followers_finish_after_the_exit_event() {
        let r = rig(None, None);
        r.session.on_line(r#"{"type":"assistant","n":1}"#);
        let (mut live, _) = crate::follow::Follower::new(r.session.clone(), 0);
        assert!(!live.finished());
        let batch = live.next_batch().await.unwrap();
        assert_eq!(batch.len(), 1);
        r.session.on_exit(ExitInfo {
            exit_code: Some(1),
            signal: None,
            stderr_tail: String::new(),
            at: now_rfc3339(),
            reason: None,
        });
        let batch = live.next_batch().await.unwrap();
        assert!(batch.last().unwrap().ends_session);
        assert!(live.finished(), "the exit event is the last durable event");
        // Joining an ended session: at the end → finished at once; from 0 → after the replay.
        let (at_end, _) = crate::follow::Follower::new(r.session.clone(), 2);
        assert!(at_end.finished());
        let (mut fresh, _) = crate::follow::Follower::new(r.session.clone(), 0);
        assert!(!fresh.finished());
        let all = fresh.next_batch().await.unwrap();
        assert_eq!(
            all.iter().map(|f| f.seq).collect::<Vec<_>>(),
            vec![Some(1), Some(2)]
        );
        assert!(fresh.finished());
    }

    /// Append, prune everything, crash (no clean close), restart: the next event's sequence number
    /// is still past every number ever handed out.
    #[tokio::test]
    async fn sequence_numbers_are_never_reused_after_a_crash_restart() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("relay.db");
        let ctx = |store: Arc<dyn EventStore>| {
            Arc::new(SessionCtx {
                store,
                audit: Arc::new(AuditLog::disabled()),
                permission_timeout: None,
                retention_events: None,
                ended_tx: None,
                push: None,
                allow_bypass_permissions: false,
            })
        };
        let store = Arc::new(crate::store::SqliteStore::open(&db).unwrap());
        let meta = SessionMeta::new("cse_r".into(), "/tmp".into(), None, None, None);
        let s = Session::create(meta, ctx(store.clone())).unwrap();
        for n in 0..5 {
            s.on_line(&format!(r#"{{"type":"assistant","n":{n}}}"#));
        }
        assert_eq!(s.last_seq(), 5);
        store.prune_before("cse_r", 6).unwrap();
        let meta = s.meta();
        std::mem::forget(s);
        std::mem::forget(store);
        let store = Arc::new(crate::store::SqliteStore::open(&db).unwrap());
        let s = Session::restore(meta, ctx(store.clone())).unwrap();
        // The restart's own exit event is the first new one.
        assert_eq!(
            s.last_seq(),
            6,
            "strictly after every earlier sequence number"
        );
        assert_eq!(store.bounds("cse_r").unwrap(), (6, 6));
    }

    #[tokio::test]
    async fn push_events_follow_prompts_turns_and_exits() {
        use crate::push::{Event, Resolution};
        let (push, mut rx) = crate::push::PushHandle::channel(64);
        let ctx = Arc::new(SessionCtx {
            store: Arc::new(MemoryStore::default()),
            audit: Arc::new(AuditLog::disabled()),
            permission_timeout: None,
            retention_events: None,
            ended_tx: None,
            push: Some(push),
            allow_bypass_permissions: false,
        });
        let meta = SessionMeta::new("cse_p".into(), "/home/me/project".into(), None, None, None);
        let s = Session::create(meta, ctx.clone()).unwrap();
        let (tx, _stdin) = mpsc::channel(64);
        s.attach_agent(AgentHandle {
            stdin: tx,
            control: AgentControl::detached(),
        });
        let who = controller();
        s.ingest(&who, vec![user_msg("u1")]).unwrap();
        s.on_line(&can_use_tool("r1"));
        s.on_line(&can_use_tool("r2"));
        s.ingest(&who, vec![answer("r1", "a1", "ls")]).unwrap();
        s.on_line(r#"{"type":"control_cancel_request","request_id":"r2"}"#);
        // Not a person's prompt: no notification.
        s.on_line(
            r#"{"type":"control_request","request_id":"m1","request":{"subtype":"mcp_message"}}"#,
        );
        s.on_line(r#"{"type":"result","subtype":"error_max_turns","total_cost_usd":0.5}"#);
        let mut got = Vec::new();
        while let Ok(e) = rx.try_recv() {
            assert_eq!(e.session_id, "cse_p");
            assert_eq!(e.session_label, "project");
            got.push(e.event);
        }
        assert_eq!(got.len(), 5, "{got:#?}");
        let Event::NeedsYou(p) = &got[0] else {
            panic!()
        };
        assert_eq!(
            (p.request_id.as_str(), p.tool_name.as_deref()),
            ("r1", Some("Bash"))
        );
        assert_eq!(p.input, Some(json!({"command": "ls"})));
        assert!(matches!(&got[1], Event::NeedsYou(p) if p.request_id == "r2"));
        assert!(
            matches!(&got[2], Event::Resolved { prompt, resolution: Resolution::Answered { decision, device: None }, others_pending: true }
            if prompt.request_id == "r1" && decision == "allow")
        );
        assert!(matches!(
            &got[3],
            Event::Resolved {
                resolution: Resolution::Withdrawn,
                others_pending: false,
                ..
            }
        ));
        let Event::TurnDone {
            duration,
            cost_usd,
            error,
        } = &got[4]
        else {
            panic!()
        };
        assert!(
            *duration < Duration::from_secs(5),
            "wall time since the turn started"
        );
        assert_eq!(
            (*cost_usd, error.as_deref()),
            (Some(0.5), Some("error_max_turns"))
        );

        // The agent dies with a prompt open: it is resolved, and the death reported.
        s.on_line(&can_use_tool("r3"));
        s.on_exit(ExitInfo {
            exit_code: Some(1),
            signal: None,
            stderr_tail: "boom".into(),
            at: now_rfc3339(),
            reason: None,
        });
        let _needs = rx.try_recv().unwrap();
        assert!(matches!(
            rx.try_recv().unwrap().event,
            Event::Resolved {
                resolution: Resolution::AgentExited,
                ..
            }
        ));
        assert!(matches!(
            rx.try_recv().unwrap().event,
            Event::AgentExited {
                exit_code: Some(1),
                ..
            }
        ));

        // Stopped by the relay: not news.
        let meta = SessionMeta::new(
            "cse_q".into(),
            "/tmp".into(),
            None,
            None,
            Some("Title".into()),
        );
        let s = Session::create(meta, ctx).unwrap();
        s.shutdown_agent(Duration::from_millis(1), Duration::from_millis(1))
            .await;
        s.on_exit(ExitInfo {
            exit_code: None,
            signal: Some(15),
            stderr_tail: String::new(),
            at: now_rfc3339(),
            reason: None,
        });
        assert!(rx.try_recv().is_err());
    }

    #[tokio::test]
    async fn unanswered_prompt_is_denied_by_the_relay_after_the_timeout() {
        let mut r = rig(Some(Duration::from_millis(50)), None);
        drain(&mut r.stdin);
        r.session.on_line(&can_use_tool("slow"));
        tokio::time::sleep(Duration::from_millis(300)).await;
        let sent = drain(&mut r.stdin);
        assert_eq!(sent.len(), 1);
        assert_eq!(sent[0]["response"]["response"]["behavior"], "deny");
        assert!(
            sent[0]["response"]["response"]["message"]
                .as_str()
                .unwrap()
                .contains("relay denied")
        );
        let log = payloads(&r);
        assert_eq!(log.last().unwrap().1, Source::Relay);
        assert_eq!(r.session.state(), SessionState::Running);
        let err = r
            .session
            .ingest(&controller(), vec![answer("slow", "late", "x")])
            .unwrap_err();
        assert!(err.message.contains("relay denied"), "{}", err.message);
        assert!(
            std::fs::read_to_string(&r.audit_path)
                .unwrap()
                .contains("\"timeout\"")
        );
    }
}
