//! The relay: configuration, stores, auth and the set of sessions. Shared by every handler.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::{mpsc, watch};

use crate::core::agent::{self, SIGTERM_GRACE, STDIN_CLOSE_GRACE, SpawnSpec};
use crate::core::audit::AuditLog;
use crate::core::auth::Auth;
use crate::core::config::{Config, SpawnMode};
use crate::core::error::{Error, Fault};
use crate::core::notice::PushHandle;
use crate::core::session::{Session, SessionCtx, SessionMeta};
use crate::core::store::{EventStore, SqliteStore};

/// A session to start: what `POST /v1/code/sessions` may set (its body,
/// [`bridge_protocol::api::NewSession`]), and what only the relay sets.
#[derive(Debug, Clone, Default)]
pub struct CreateSession {
    pub cwd: Option<String>,
    pub model: Option<String>,
    pub permission_mode: Option<String>,
    pub title: Option<String>,
    /// Continue a CLI session (`--resume`, fork); never from a request body.
    pub resume: Option<crate::core::agent::Resume>,
    /// Frames stored before the agent starts (the history of a resumed or forked CLI session).
    pub history: Vec<Value>,
    pub cli: Option<crate::core::record::CliLink>,
}

impl From<bridge_protocol::api::NewSession> for CreateSession {
    fn from(n: bridge_protocol::api::NewSession) -> Self {
        Self {
            cwd: n.cwd,
            model: n.model,
            permission_mode: n.permission_mode,
            title: n.title,
            ..Self::default()
        }
    }
}

pub struct Relay {
    pub config: Config,
    pub auth: Auth,
    /// Login rate limit and stream caps.
    pub limits: crate::core::limits::Limits,
    ctx: Arc<SessionCtx>,
    sessions: RwLock<HashMap<String, Arc<Session>>>,
    /// Flips to `true` when the relay should stop (single-session mode: its session ended).
    exit_tx: watch::Sender<bool>,
    /// Flips to `true` when the relay is shutting down: long-lived streams end.
    shutdown_tx: watch::Sender<bool>,
    single_session: RwLock<Option<String>>,
    /// Features plugged in from above, which this core does not name: scale-out through NATS
    /// (`crate::cluster::Cluster::of`), terminal sessions (`crate::features::hooks::live::Terminals::of`).
    pub plugs: crate::core::plugs::Plugs,
}

impl Relay {
    /// Opens (or creates) the data dir: `relay.db` (events, sessions, token hashes) and
    /// `audit.jsonl`. Sessions from a previous run come back; those whose process is gone are
    /// marked ended. `notices`: where sessions report what a person should be told of (Web Push:
    /// `crate::open` plugs it in).
    pub fn open(config: Config, notices: Option<PushHandle>) -> anyhow::Result<Arc<Relay>> {
        prepare_data_dir(&config.data_dir)?;
        let db = config.data_dir.join("relay.db");
        let store: Arc<dyn EventStore> = Arc::new(
            SqliteStore::open(&db)
                .map_err(|e| anyhow::anyhow!("cannot open {}: {e}", db.display()))?,
        );
        let auth =
            Auth::open(&db).map_err(|e| anyhow::anyhow!("cannot open {}: {e}", db.display()))?;
        let audit = Arc::new(AuditLog::open(&config.data_dir.join("audit.jsonl"))?);
        Self::with_parts(config, store, auth, audit, notices)
    }

    /// Builds a relay from explicit parts (tests use a memory store).
    pub fn with_parts(
        config: Config,
        store: Arc<dyn EventStore>,
        auth: Auth,
        audit: Arc<AuditLog>,
        notices: Option<PushHandle>,
    ) -> anyhow::Result<Arc<Relay>> {
        let (ended_tx, ended_rx) = mpsc::unbounded_channel();
        let ctx = Arc::new(SessionCtx {
            store: store.clone(),
            audit,
            permission_timeout: config.permission_timeout,
            retention_events: config.retention_events,
            ended_tx: Some(ended_tx),
            push: notices,
            allow_bypass_permissions: config.allow_bypass_permissions,
        });
        let mut sessions = HashMap::new();
        for meta in store.load_sessions()? {
            let s = Session::restore(meta, ctx.clone())?;
            sessions.insert(s.id.clone(), s);
        }
        let relay = Arc::new(Relay {
            limits: crate::core::limits::Limits::new(config.quotas.max_streams_per_principal),
            config,
            auth,
            ctx,
            sessions: RwLock::new(sessions),
            exit_tx: watch::channel(false).0,
            shutdown_tx: watch::channel(false).0,
            single_session: RwLock::new(None),
            plugs: crate::core::plugs::Plugs::default(),
        });
        tokio::spawn(watch_ended(Arc::downgrade(&relay), ended_rx));
        if let Some(age) = relay.config.retention_age {
            relay.sweep_retention(age);
            tokio::spawn(retention_loop(Arc::downgrade(&relay), age));
        }
        Ok(relay)
    }

    pub fn get(&self, id: &str) -> Option<Arc<Session>> {
        self.sessions
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(id)
            .cloned()
    }

    /// Adds a session run elsewhere (a scale-out mirror, [`crate::cluster`]); one already known wins.
    /// What sessions share (a session made outside [`Self::create_session`] needs it).
    pub fn session_ctx(&self) -> Arc<SessionCtx> {
        self.ctx.clone()
    }

    pub fn adopt(&self, s: Arc<Session>) -> Arc<Session> {
        self.sessions
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .entry(s.id.clone())
            .or_insert(s)
            .clone()
    }

    /// Drops a scale-out mirror ([`crate::cluster`]) from the sessions, if `s` is still the one
    /// listed under its id (it is read again from NATS when next asked for).
    pub fn forget_mirror(&self, s: &Arc<Session>) {
        let mut sessions = self.sessions.write().unwrap_or_else(|p| p.into_inner());
        if sessions.get(&s.id).is_some_and(|x| Arc::ptr_eq(x, s)) {
            sessions.remove(&s.id);
        }
    }

    /// Sessions, oldest first.
    pub fn list(&self) -> Vec<Arc<Session>> {
        let mut v: Vec<(String, Arc<Session>)> = self
            .sessions
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .map(|s| (s.meta().created_at, s.clone()))
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.id.cmp(&b.1.id)));
        v.into_iter().map(|(_, s)| s).collect()
    }

    /// Resolves once the relay wants to exit on its own (single-session mode).
    pub fn exit_requested(&self) -> watch::Receiver<bool> {
        self.exit_tx.subscribe()
    }

    pub fn shutdown_signal(&self) -> watch::Receiver<bool> {
        self.shutdown_tx.subscribe()
    }

    pub fn single_session_id(&self) -> Option<String> {
        self.single_session
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Starts the one session of `single-session` mode.
    pub async fn start_single_session(&self) -> Result<Arc<Session>, Error> {
        let s = self.spawn_session(CreateSession::default()).await?;
        *self
            .single_session
            .write()
            .unwrap_or_else(|p| p.into_inner()) = Some(s.id.clone());
        Ok(s)
    }

    /// `POST /v1/code/sessions`.
    pub async fn create_session(&self, req: CreateSession) -> Result<Arc<Session>, Error> {
        if self.config.spawn_mode == SpawnMode::SingleSession {
            return Err(Error::conflict(
                "single_session_mode",
                format!(
                    "the relay runs in single-session mode with session {:?}; restart it with --spawn-mode same-dir or worktree to create sessions",
                    self.single_session_id().unwrap_or_default()
                ),
            ));
        }
        let live = self.list().iter().filter(|s| s.agent_running()).count();
        if live >= self.config.quotas.max_sessions {
            return Err(Error::new(
                Fault::TooMany,
                "too_many_sessions",
                format!(
                    "{live} sessions already have a running agent, the most this relay allows \
                     (--max-sessions {}); archive one (POST /v1/code/sessions/{{id}}/archive) or start \
                     the relay with a larger --max-sessions",
                    self.config.quotas.max_sessions
                ),
            ));
        }
        self.spawn_session(req).await
    }

    /// `DELETE /v1/code/sessions/{id}`: removes the session, its events and its record. A session
    /// whose agent still runs must be archived first, unless `force` (its agent is then stopped).
    pub async fn delete_session(&self, id: &str, force: bool) -> Result<(), Error> {
        let session = self.get(id).ok_or_else(|| Error::unknown_session(id))?;
        if self.single_session_id().as_deref() == Some(id) {
            return Err(Error::conflict(
                "single_session_mode",
                format!("session {id} is the relay's single session; stop the relay instead"),
            ));
        }
        let meta = session.meta();
        if session.agent_running() || meta.state != crate::core::session::SessionState::Ended {
            if !meta.archived && !force {
                return Err(Error::conflict(
                    "session_running",
                    format!(
                        "session {id} is running: archive it first (POST /v1/code/sessions/{id}/archive), \
                         or delete it with ?force=1 to stop its agent"
                    ),
                ));
            }
            // Its exit event is written before this returns, so nothing lands after the delete.
            session
                .shutdown_agent(STDIN_CLOSE_GRACE, SIGTERM_GRACE)
                .await;
        }
        self.remove(id)?;
        tracing::info!(session = %id, "session deleted");
        Ok(())
    }

    fn remove(&self, id: &str) -> Result<(), Error> {
        self.sessions
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .remove(id);
        self.ctx.store.delete_session(id)?;
        Ok(())
    }

    /// Deletes the archived sessions (agent gone) last active more than `age` ago (--retention-days).
    pub fn sweep_retention(&self, age: Duration) {
        let now = time::OffsetDateTime::now_utc();
        let Ok(age) = time::Duration::try_from(age) else {
            return;
        };
        for s in self.list() {
            let meta = s.meta();
            let last = time::OffsetDateTime::parse(
                &meta.last_activity_at,
                &time::format_description::well_known::Rfc3339,
            );
            let old = last.is_ok_and(|t| now - t > age);
            if meta.archived && old && !s.agent_running() {
                match self.remove(&meta.id) {
                    Ok(()) => {
                        tracing::info!(session = %meta.id, last_activity = %meta.last_activity_at, "archived session deleted (--retention-days)")
                    }
                    Err(e) => {
                        tracing::error!(session = %meta.id, error = %e, "cannot delete an expired session")
                    }
                }
            }
        }
    }

    async fn spawn_session(&self, req: CreateSession) -> Result<Arc<Session>, Error> {
        if let Some(m) = &req.permission_mode {
            crate::core::validate::permission_mode(m, self.config.allow_bypass_permissions)?;
        }
        if let Some(m) = &req.model {
            crate::core::validate::model(m)?;
        }
        let id = format!("cse_{}", uuid::Uuid::new_v4().simple());
        let base = match &req.cwd {
            Some(c) => PathBuf::from(c),
            None => self.config.cwd.clone(),
        };
        let base = std::fs::canonicalize(&base)
            .ok()
            .filter(|p| p.is_dir())
            .ok_or_else(|| {
                Error::invalid(format!(
                    "cwd {:?} is not an existing directory",
                    base.display()
                ))
            })?;
        // A resumed or forked CLI session runs where it ran (its transcript is keyed by its cwd).
        let (cwd, worktree) = if self.config.spawn_mode == SpawnMode::Worktree && req.cli.is_none()
        {
            let path = self.config.data_dir.join("worktrees").join(&id);
            let wt = crate::core::worktree::add(&base, &path, &id).await?;
            (path, Some(wt))
        } else {
            (base, None)
        };
        let model = req.model.or_else(|| self.config.default_model.clone());
        let permission_mode = req
            .permission_mode
            .or_else(|| self.config.default_permission_mode.clone());
        let mut meta = SessionMeta::new(
            id.clone(),
            cwd.display().to_string(),
            model.clone(),
            permission_mode.clone(),
            req.title,
        );
        meta.worktree = worktree;
        meta.cli = req.cli;
        let session = Session::create(meta, self.ctx.clone())?;
        for frame in &req.history {
            crate::core::agent::AgentEvents::on_line(session.as_ref(), &frame.to_string());
        }
        self.sessions
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id.clone(), session.clone());
        let spec = SpawnSpec {
            session_id: id.clone(),
            cwd,
            model,
            permission_mode,
            stdin_queue: self.config.quotas.max_stdin_queue,
            resume: req.resume,
            claude_config_dir: (self.config.claude_config_dir
                != crate::core::config::default_config_dir())
            .then(|| self.config.claude_config_dir.clone()),
        };
        match agent::spawn(self.config.launcher.as_ref(), &spec, session.clone()) {
            Ok(handle) => session.attach_agent(handle),
            Err(e) => {
                let msg = format!(
                    "cannot start the agent {:?}: {e}",
                    self.config.launcher.describe()
                );
                tracing::error!(session = %id, "{msg}");
                crate::core::agent::AgentEvents::on_exit(
                    session.as_ref(),
                    crate::core::session::ExitInfo {
                        exit_code: None,
                        signal: None,
                        stderr_tail: String::new(),
                        at: crate::core::util::now_rfc3339(),
                        reason: Some(msg.clone()),
                    },
                );
                return Err(Error::new(
                    Fault::Upstream,
                    "agent_spawn_failed",
                    format!("{msg}; check --claude / PATH"),
                ));
            }
        }
        Ok(session)
    }

    /// `POST /v1/code/sessions/{id}/archive`: hides the session, stops its agent, and removes its
    /// worktree unless that would lose work (uncommitted changes, commits not in the base branch)
    /// and `discard_worktree` is not set. Answers why the worktree is kept, as it stands now; the
    /// decision is made again once the agent has stopped (the session summary shows it).
    pub async fn archive(
        self: &Arc<Self>,
        id: &str,
        discard_worktree: bool,
    ) -> Result<(Arc<Session>, Option<String>), Error> {
        let session = self.get(id).ok_or_else(|| Error::unknown_session(id))?;
        let wt = session.meta().worktree;
        let kept_now = match &wt {
            Some(wt) if !discard_worktree => crate::core::worktree::keep_reason(wt).await,
            _ => None,
        };
        let first = session.set_archived();
        if (first || discard_worktree)
            && let Some(wt) = wt
        {
            session.set_worktree_kept(kept_now.clone());
            let s = session.clone();
            tokio::spawn(async move {
                s.shutdown_agent(STDIN_CLOSE_GRACE, SIGTERM_GRACE).await;
                let kept = match discard_worktree {
                    true => None,
                    false => crate::core::worktree::keep_reason(&wt).await,
                };
                match &kept {
                    Some(why) => {
                        tracing::info!(session = %s.id, path = %wt.path, %why, "worktree kept on archive")
                    }
                    None => crate::core::worktree::remove(&wt).await,
                }
                s.set_worktree_kept(kept);
            });
        } else if first {
            let s = session.clone();
            tokio::spawn(async move { s.shutdown_agent(STDIN_CLOSE_GRACE, SIGTERM_GRACE).await });
        }
        Ok((session, kept_now))
    }

    /// Ends every SSE/WebSocket stream (first step of a shutdown).
    pub fn begin_shutdown(&self) {
        let _ = self.shutdown_tx.send(true);
    }

    /// Stops every agent (stdin close → SIGTERM → SIGKILL), in parallel, and ends the streams.
    pub async fn shutdown(&self) {
        self.begin_shutdown();
        let sessions = self.list();
        let tasks: Vec<_> = sessions
            .into_iter()
            .filter(|s| s.agent_running())
            .map(|s| {
                tokio::spawn(
                    async move { s.shutdown_agent(STDIN_CLOSE_GRACE, SIGTERM_GRACE).await },
                )
            })
            .collect();
        for t in tasks {
            let _ = t.await;
        }
    }

    /// The relay's sessions as the list shows them (`origin: "relay"`).
    pub fn summaries(
        &self,
        archived: Archived,
        scope: Option<&str>,
    ) -> Vec<bridge_protocol::api::SessionSummary> {
        self.list()
            .into_iter()
            .filter(|s| scope.is_none_or(|sc| sc == s.id))
            .map(|s| s.summary())
            .filter(|v| {
                !v.archived
                    || match archived {
                        Archived::All => true,
                        Archived::WorktreeKept => v.worktree_kept.is_some(),
                        Archived::None => false,
                    }
            })
            .map(|mut v| {
                // A terminal session followed through hooks is Claude Code's own.
                v.origin = Some(if v.cli.as_ref().is_some_and(|c| c.terminal) {
                    bridge_protocol::api::Origin::Cli
                } else {
                    bridge_protocol::api::Origin::Relay
                });
                v
            })
            .collect()
    }
}

/// Which archived sessions a listing includes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Archived {
    None,
    /// Those whose worktree was kept (`?kept_worktrees=1`).
    WorktreeKept,
    All,
}

async fn watch_ended(relay: std::sync::Weak<Relay>, mut rx: mpsc::UnboundedReceiver<String>) {
    while let Some(id) = rx.recv().await {
        let Some(relay) = relay.upgrade() else { return };
        if relay.single_session_id().as_deref() == Some(id.as_str()) {
            tracing::info!(session = %id, "the single session ended; the relay stops");
            // Let subscribers receive the ended event first.
            tokio::time::sleep(Duration::from_millis(500)).await;
            let _ = relay.exit_tx.send(true);
        }
    }
}

async fn retention_loop(relay: std::sync::Weak<Relay>, age: Duration) {
    loop {
        tokio::time::sleep(Duration::from_secs(3600)).await;
        let Some(relay) = relay.upgrade() else { return };
        relay.sweep_retention(age);
    }
}

/// Creates the data dir (owner-only) if it is missing.
pub fn prepare_data_dir(dir: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)
        .map_err(|e| anyhow::anyhow!("cannot create data dir {}: {e}", dir.display()))?;
    restrict_permissions(dir);
    Ok(())
}

fn restrict_permissions(dir: &Path) {
    use std::os::unix::fs::PermissionsExt as _;
    if let Err(e) = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)) {
        tracing::warn!(dir = %dir.display(), error = %e, "cannot restrict data dir permissions");
    }
}
