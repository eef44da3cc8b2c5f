//! The records the relay persists about a session — its state, how its agent ended, its worktree, its
//! agent process, its link to Claude Code's own sessions — shared by the live session
//! ([`crate::core::session`]) and the event store ([`crate::core::store`]) without either depending on the other.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::core::util::now_rfc3339;

/// A process as the kernel names it: its pid and its start time (clock ticks after boot, field 22 of
/// `/proc/<pid>/stat`). A pid alone can be reused; the pair cannot. (`ProcId::of` lives in
/// [`crate::core::agent`], which reads `/proc`.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcId {
    pub pid: u32,
    pub start_time: u64,
}

pub use bridge_protocol::SessionState;
/// How the agent ended; the relay's REST shape ([`bridge_protocol::api`]) is also the record's.
pub use bridge_protocol::api::ExitInfo;
/// How a relay session relates to Claude Code's own sessions (kept in its record, listed as `cli`).
pub use bridge_protocol::api::{CliLink, ForkedFrom};

/// The activity a `system/session_state_changed` from the CLI sets: `idle`, `running` or
/// `requires_action` (only the relay ends a session; a value it does not know changes nothing).
pub(crate) fn state_from_cli(s: &str) -> Option<SessionState> {
    match SessionState::from(s) {
        s @ (SessionState::Idle | SessionState::Running | SessionState::RequiresAction) => Some(s),
        _ => None,
    }
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
    pub agent_process: Option<ProcId>,
    /// Archived, but its worktree was kept, and why ("uncommitted changes", "2 commit(s) not
    /// merged into main").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree_kept: Option<String>,
    /// Its Claude Code session (id from `system/init`), and whether it resumed or forked one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cli: Option<CliLink>,
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
