//! The changes panel's REST shapes: what changed in a session's working directory
//! (`GET /v1/code/sessions/{id}/changes`) and one file's diff (`…/changes/diff?path=`), and the
//! other small answers both sides read: `GET /v1/me`, `POST …/archive`.

use serde::{Deserialize, Serialize};

use super::WorktreeInfo;
use crate::util::open_enum;

open_enum! {
    /// What happened to a file, compared with `HEAD` (git) or with before the session wrote it.
    pub enum ChangeStatus {
        Modified = "modified",
        Added = "added",
        Deleted = "deleted",
        Renamed = "renamed",
        Untracked = "untracked",
    }
}

open_enum! {
    /// Where a listing came from.
    pub enum ChangeSource {
        /// `git status` in the repository holding the session's working directory.
        Git = "git",
        /// The session's own file tools (the working directory is not in a git repository).
        Tools = "tools",
    }
}

/// One changed file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangedFile {
    /// Relative to the session's working directory, `/`-separated.
    pub path: String,
    pub status: ChangeStatus,
    /// A rename's old path (relative to the working directory; absent when it was outside it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// Lines added and removed, when known (not for binary files).
    #[serde(default)]
    pub insertions: Option<u64>,
    #[serde(default)]
    pub deletions: Option<u64>,
    /// Binary content (named, never shown).
    #[serde(default)]
    pub binary: bool,
    /// Bytes on disk now (None when deleted).
    #[serde(default)]
    pub size: Option<u64>,
    /// An unresolved merge conflict (git).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub conflicted: bool,
}

/// `GET …/changes`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangeList {
    #[serde(default)]
    pub session_id: String,
    /// The session's working directory on the relay's machine.
    #[serde(default)]
    pub cwd: String,
    pub source: ChangeSource,
    /// The checked-out branch (git; None when detached).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    pub files: Vec<ChangedFile>,
    /// More files changed than listed.
    #[serde(default)]
    pub truncated: bool,
    /// When this was computed (RFC 3339): consoles asking at once share one computation.
    #[serde(default)]
    pub computed_at: String,
}

/// `GET …/changes/diff?path=`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileDiff {
    pub path: String,
    /// As in the list.
    pub status: ChangeStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// Binary content: no diff.
    #[serde(default)]
    pub binary: bool,
    #[serde(default)]
    pub size: Option<u64>,
    #[serde(default)]
    pub insertions: Option<u64>,
    #[serde(default)]
    pub deletions: Option<u64>,
    /// The diff was cut at the relay's size cap.
    #[serde(default)]
    pub truncated: bool,
    /// The unified diff (None: binary, or nothing to show; `note` says why).
    #[serde(default)]
    pub diff: Option<String>,
    /// Why the diff is missing or partial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// `GET /v1/me`: who the caller is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Me {
    /// `controller` or `observer`.
    pub role: String,
    /// The one session an observer token (or a scoped login) is limited to.
    #[serde(default)]
    pub session_id: Option<String>,
}

impl Me {
    /// Anything but the controller (an unknown role is treated as the lesser one).
    pub fn is_observer(&self) -> bool {
        self.role != "controller"
    }
}

/// The answer of `POST /v1/code/sessions/{id}/archive`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArchiveAnswer {
    #[serde(default)]
    pub session_id: String,
    #[serde(default)]
    pub archived: bool,
    /// Why the session's worktree was kept (None: removed, or no worktree).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree_kept: Option<String>,
    /// Where it is, when kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<WorktreeInfo>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shapes_read_what_they_write_and_keep_unknown_values() {
        let f: ChangedFile = serde_json::from_value(json!({
            "path": "a.rs", "status": "copied", "insertions": 3, "deletions": null,
            "binary": false, "size": 10
        }))
        .unwrap();
        assert_eq!(f.status, ChangeStatus::Other("copied".into()));
        let back = serde_json::to_value(&f).unwrap();
        assert_eq!(back["status"], "copied");
        assert!(back.get("conflicted").is_none() && back.get("from").is_none());
        let l: ChangeList =
            serde_json::from_value(json!({"source": "git", "files": [back]})).unwrap();
        assert_eq!(
            (l.source, l.files.len(), l.truncated),
            (ChangeSource::Git, 1, false)
        );
        let d: FileDiff =
            serde_json::from_value(json!({"path": "x", "status": "deleted", "diff": null}))
                .unwrap();
        assert_eq!(
            (d.status, d.diff, d.note),
            (ChangeStatus::Deleted, None, None)
        );
        let me: Me =
            serde_json::from_value(json!({"role": "observer", "session_id": "cse_1"})).unwrap();
        assert!(me.is_observer());
        assert_eq!(
            serde_json::to_value(ArchiveAnswer::default()).unwrap(),
            json!({"session_id": "", "archived": false}),
            "no worktree: nothing said of one"
        );
    }
}
