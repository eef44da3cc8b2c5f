//! The relay's changes API: what changed in a session's working directory, and one file's diff
//! (`GET /v1/code/sessions/{id}/changes`, `…/changes/diff?path=`). Read-only; observers may call it.

use serde::Deserialize;

use super::{NetError, enc, request_json};

/// One changed file.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct ChangedFile {
    /// Relative to the session's working directory.
    pub path: String,
    /// `modified`, `added`, `deleted`, `renamed`, `untracked` (others shown as they come).
    pub status: String,
    /// A rename's old path.
    #[serde(default)]
    pub from: Option<String>,
    /// Lines added, when known.
    #[serde(default)]
    pub insertions: Option<u64>,
    /// Lines removed, when known.
    #[serde(default)]
    pub deletions: Option<u64>,
    /// Binary content (named, never shown).
    #[serde(default)]
    pub binary: bool,
    /// Bytes on disk (None when deleted).
    #[serde(default)]
    pub size: Option<u64>,
    /// An unresolved merge conflict.
    #[serde(default)]
    pub conflicted: bool,
}

/// `GET …/changes`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct ChangeList {
    /// `git` (git status in the repository) or `tools` (the files the session's tools wrote).
    pub source: String,
    /// The checked-out branch (git).
    #[serde(default)]
    pub branch: Option<String>,
    /// The changed files.
    pub files: Vec<ChangedFile>,
    /// More files changed than listed.
    #[serde(default)]
    pub truncated: bool,
}

/// `GET …/changes/diff?path=`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct FileDiff {
    /// The file.
    pub path: String,
    /// As in the list.
    pub status: String,
    /// Binary content: no diff.
    #[serde(default)]
    pub binary: bool,
    /// The diff was cut at the relay's size cap.
    #[serde(default)]
    pub truncated: bool,
    /// The unified diff (None: binary, or nothing to show; `note` says why).
    #[serde(default)]
    pub diff: Option<String>,
    /// Why the diff is missing or partial.
    #[serde(default)]
    pub note: Option<String>,
}

/// The changed files of session `id`.
pub async fn list(id: &str) -> Result<ChangeList, NetError> {
    let v = request_json(
        "GET",
        &format!("/v1/code/sessions/{}/changes", enc(id)),
        None,
    )
    .await?;
    serde_json::from_value(v).map_err(|e| NetError::Decode(e.to_string()))
}

/// The diff of `path` (as listed) in session `id`.
pub async fn diff(id: &str, path: &str) -> Result<FileDiff, NetError> {
    let url = format!(
        "/v1/code/sessions/{}/changes/diff?path={}",
        enc(id),
        enc(path)
    );
    let v = request_json("GET", &url, None).await?;
    serde_json::from_value(v).map_err(|e| NetError::Decode(e.to_string()))
}
