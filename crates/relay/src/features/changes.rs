//! The changes panel's API: what changed in a session's working directory, read-only.
//!
//! Who sees what: the controller sees every change. An observer (any observer token, scoped or not)
//! sees tracked files and the files the session's own tools wrote, never other untracked files: an
//! untracked, non-ignored `.env` beside the code is not the session's work and not the observer's
//! to read.
//!
//! - `GET /v1/code/sessions/{id}/changes`: the changed files under the session's cwd (its worktree in
//!   worktree mode). Inside a git repository: `git status` (untracked files included) limited to the
//!   cwd, with `git diff --numstat` counts against `HEAD`. Elsewhere: the files the session's own
//!   tools wrote (Write / Edit / MultiEdit / NotebookEdit in its log) and their state on disk now.
//! - `GET /v1/code/sessions/{id}/changes/diff?path=…`: one of those files' unified diff.
//!
//! Confinement: a `path` must be relative without `..` (400), among the listed changes (404), and
//! resolve inside the cwd once symlinks are followed (404). Diffs are capped
//! ([`DIFF_CAP`], `truncated: true`); binary files are named, never dumped. Git runs with a timeout,
//! no pager, `GIT_OPTIONAL_LOCKS=0` and literal pathspecs, never through a shell. Each session's
//! listing is computed at most once per [`MIN_INTERVAL`] however many consoles ask (one computation
//! at a time, the others wait for it and share it), and reused for [`TTL`] while its log does not
//! move; once the log moved, the next request gets a listing made after it did.

mod git;
mod touched;

use std::collections::{HashMap, VecDeque};
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{Extension, Path as UrlPath, Query, State};
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;

use crate::core::auth::Principal;
use crate::core::session::Session;
use crate::edge::error::ApiError;
use crate::edge::extract::AppState;

/// Longest diff text returned; longer ones are cut at a line end and say `truncated: true`.
pub const DIFF_CAP: usize = 256 * 1024;
/// Most files listed; more say `truncated: true`.
pub const MAX_FILES: usize = 2000;
/// Largest file read to count lines, sniff for binary content or diff outside git.
pub const READ_CAP: u64 = 2 * 1024 * 1024;
/// Listings of one session are made at most this often.
pub const MIN_INTERVAL: Duration = Duration::from_millis(300);
/// A listing is reused this long while the session's log has not moved.
pub const TTL: Duration = Duration::from_secs(3);
/// The time one listing outside git may spend reading files (the rest are listed without counts).
pub const LIST_BUDGET: Duration = Duration::from_secs(3);
/// Diffs kept per session.
const DIFFS_KEPT: usize = 16;

/// The routes, merged into the API router.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/code/sessions/{id}/changes", get(list))
        .route("/v1/code/sessions/{id}/changes/diff", get(diff))
        .layer(Extension(Arc::new(Cache::default())))
}

/// The shapes are bridge-protocol's (the console reads the same ones); the status under its
/// old name here.
pub use bridge_protocol::api::{
    ChangeList, ChangeSource, ChangeStatus as Status, ChangedFile, FileDiff,
};

/// A listing and the repository it was read from (for its diffs).
#[derive(Debug, Clone)]
pub struct Listing {
    pub list: ChangeList,
    git: Option<git::Repo>,
}

#[derive(Default)]
struct Cache {
    sessions: Mutex<HashMap<String, Arc<tokio::sync::Mutex<Slot>>>>,
}

#[derive(Default)]
struct Slot {
    /// The last listing, when it was made and the log's last sequence number then.
    listing: Option<(Instant, u64, Arc<Listing>)>,
    /// The incremental scan of the log for the files the session's tools wrote.
    touched: touched::Scan,
    /// Recent diffs: path, when, the listing they were made from, the answer.
    diffs: VecDeque<(String, Instant, String, Arc<FileDiff>)>,
}

impl Cache {
    /// The session's slot; slots of sessions that are gone are dropped on the way.
    fn slot(&self, app: &AppState, id: &str) -> Arc<tokio::sync::Mutex<Slot>> {
        let mut map = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        if !map.contains_key(id) && map.len() >= 64 {
            map.retain(|k, _| app.get(k).is_some());
        }
        map.entry(id.to_owned()).or_default().clone()
    }
}

/// The session's cwd, canonical.
fn session_cwd(session: &Session) -> Result<PathBuf, ApiError> {
    let cwd = session.meta().cwd;
    std::fs::canonicalize(&cwd)
        .ok()
        .filter(|p| p.is_dir())
        .ok_or_else(|| {
            ApiError::not_found(format!(
                "the session's working directory {cwd:?} no longer exists"
            ))
        })
}

/// The listing, from the cache when fresh. The slot is held while computing: concurrent requests
/// wait for that one computation instead of starting their own.
async fn listing(
    app: &AppState,
    cache: &Cache,
    session: &Arc<Session>,
) -> Result<(Arc<Listing>, tokio::sync::OwnedMutexGuard<Slot>), ApiError> {
    let mut slot = cache.slot(app, &session.id).lock_owned().await;
    let now_seq = session.last_seq();
    if let Some((at, seq, l)) = &slot.listing {
        if *seq == now_seq && at.elapsed() < TTL {
            return Ok((l.clone(), slot));
        }
        // Never more often than MIN_INTERVAL: wait for it (holding the slot, so that everyone
        // waiting gets the one listing made after).
        let wait = MIN_INTERVAL.saturating_sub(at.elapsed());
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
    }
    let cwd = session_cwd(session)?;
    // The files the session's own tools wrote: the listing outside git, and what an observer may see
    // of the untracked files inside it (log and file reads: off the runtime's threads).
    blocking_scan(&mut slot.touched, {
        let session = session.clone();
        let cwd = cwd.clone();
        move |scan| scan.update(&session, &cwd)
    })
    .await??;
    let mut l = match git::Repo::find(&cwd).await? {
        Some(repo) => {
            let (files, truncated) = git::changes(&repo, &cwd).await?;
            Listing {
                list: ChangeList {
                    session_id: session.id.clone(),
                    cwd: cwd.display().to_string(),
                    source: ChangeSource::Git,
                    branch: repo.branch.clone(),
                    files,
                    truncated,
                    computed_at: String::new(),
                },
                git: Some(repo),
            }
        }
        None => {
            let (files, truncated) = blocking_scan(&mut slot.touched, {
                let cwd = cwd.clone();
                move |scan| scan.changes(&cwd)
            })
            .await?;
            Listing {
                list: ChangeList {
                    session_id: session.id.clone(),
                    cwd: cwd.display().to_string(),
                    source: ChangeSource::Tools,
                    branch: None,
                    files,
                    truncated,
                    computed_at: String::new(),
                },
                git: None,
            }
        }
    };
    l.list.computed_at = crate::core::util::now_rfc3339();
    let l = Arc::new(l);
    slot.listing = Some((Instant::now(), now_seq, l.clone()));
    Ok((l, slot))
}

/// Runs `f` on the session's scan on a blocking thread (the scan is moved there and back).
async fn blocking_scan<T: Send + 'static>(
    scan: &mut touched::Scan,
    f: impl FnOnce(&mut touched::Scan) -> T + Send + 'static,
) -> Result<T, ApiError> {
    let mut taken = std::mem::take(scan);
    let (back, out) = tokio::task::spawn_blocking(move || {
        let out = f(&mut taken);
        (taken, out)
    })
    .await
    .map_err(|e| ApiError::internal(format!("listing the changes failed: {e}")))?;
    *scan = back;
    Ok(out)
}

/// Whether `who` may see changed file `f`: the controller every one; an observer tracked files and
/// the untracked ones the session's tools wrote.
fn may_see(who: &Principal, slot: &Slot, f: &ChangedFile) -> bool {
    who.can_write() || f.status != Status::Untracked || slot.touched.wrote(&f.path)
}

async fn list(
    State(app): State<AppState>,
    Extension(cache): Extension<Arc<Cache>>,
    who: Principal,
    UrlPath(id): UrlPath<String>,
) -> Result<Json<ChangeList>, ApiError> {
    let session = app.visible_session(&who, &id)?;
    let (l, slot) = listing(&app, &cache, &session).await?;
    let mut list = l.list.clone();
    list.files.retain(|f| may_see(&who, &slot, f));
    Ok(Json(list))
}

#[derive(Deserialize)]
struct DiffQuery {
    path: Option<String>,
}

async fn diff(
    State(app): State<AppState>,
    Extension(cache): Extension<Arc<Cache>>,
    who: Principal,
    UrlPath(id): UrlPath<String>,
    Query(q): Query<DiffQuery>,
) -> Result<Json<FileDiff>, ApiError> {
    let session = app.visible_session(&who, &id)?;
    let Some(path) = q.path else {
        return Err(ApiError::bad_request(
            "missing ?path=: the file's path relative to the session's working directory, as GET …/changes lists it",
        ));
    };
    let rel = relative_path(&path)?;
    let (l, mut slot) = listing(&app, &cache, &session).await?;
    let Some(file) = l
        .list
        .files
        .iter()
        .find(|f| f.path == rel && may_see(&who, &slot, f))
        .cloned()
    else {
        return Err(ApiError::not_found(format!(
            "{rel:?} is not among this session's changes (GET /v1/code/sessions/{id}/changes lists them)"
        )));
    };
    if let Some((_, _, _, v)) = slot.diffs.iter().find(|(p, at, made_from, _)| {
        *p == rel && *made_from == l.list.computed_at && at.elapsed() < TTL
    }) {
        return Ok(Json((**v).clone()));
    }
    let cwd = session_cwd(&session)?;
    let full = confined(&cwd, &rel)?;
    let mut answer = FileDiff {
        path: file.path.clone(),
        status: file.status.clone(),
        from: file.from.clone(),
        binary: file.binary,
        size: file.size,
        insertions: file.insertions,
        deletions: file.deletions,
        truncated: false,
        diff: None,
        note: None,
    };
    if file.binary {
        answer.note = Some("binary file: not shown".into());
    } else {
        let d = match &l.git {
            Some(repo) => git::diff(repo, &cwd, &file).await?,
            None => {
                blocking_scan(&mut slot.touched, {
                    let (cwd, file, full) = (cwd.clone(), file.clone(), full.clone());
                    move |scan| scan.diff(&cwd, &file, &full)
                })
                .await??
            }
        };
        answer.truncated = d.truncated;
        answer.diff = d.text;
        answer.note = d.note;
        if d.binary {
            answer.binary = true;
            answer.diff = None;
            answer.note = Some("binary file: not shown".into());
        }
    }
    let v = Arc::new(answer);
    if slot.diffs.len() >= DIFFS_KEPT {
        slot.diffs.pop_front();
    }
    slot.diffs
        .push_back((rel, Instant::now(), l.list.computed_at.clone(), v.clone()));
    Ok(Json((*v).clone()))
}

/// A diff's text.
pub(crate) struct DiffText {
    pub text: Option<String>,
    pub truncated: bool,
    pub binary: bool,
    pub note: Option<String>,
}

/// `path` as a clean relative path (`/`-separated, no `.`), or 400: empty, absolute, `..`, NUL.
pub fn relative_path(path: &str) -> Result<String, ApiError> {
    if path.is_empty() {
        return Err(ApiError::bad_request("path is empty"));
    }
    if path.contains('\0') {
        return Err(ApiError::bad_request("path contains a NUL byte"));
    }
    let p = Path::new(path);
    if p.is_absolute() || path.starts_with('/') || path.starts_with('\\') {
        return Err(ApiError::bad_request(format!(
            "path {path:?} is absolute: give it relative to the session's working directory"
        )));
    }
    let mut parts = Vec::new();
    for c in p.components() {
        match c {
            Component::Normal(s) => parts.push(s.to_string_lossy().into_owned()),
            Component::CurDir => {}
            Component::ParentDir => {
                return Err(ApiError::bad_request(format!(
                    "path {path:?} contains `..`: only files inside the session's working directory can be read"
                )));
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(ApiError::bad_request(format!("path {path:?} is absolute")));
            }
        }
    }
    if parts.is_empty() {
        return Err(ApiError::bad_request(format!(
            "path {path:?} names no file"
        )));
    }
    Ok(parts.join("/"))
}

/// `cwd/rel` when it stays inside `cwd` once symlinks are followed (for a file that is gone: its
/// nearest existing ancestor), else 404 (nothing about the target is said).
pub fn confined(cwd: &Path, rel: &str) -> Result<PathBuf, ApiError> {
    let full = cwd.join(rel);
    let outside = || {
        ApiError::not_found(format!(
            "{rel:?} resolves outside the session's working directory (a symlink): not shown"
        ))
    };
    match std::fs::symlink_metadata(&full) {
        Ok(_) => match std::fs::canonicalize(&full) {
            Ok(real) if real.starts_with(cwd) => Ok(full),
            // A dangling or escaping symlink.
            _ => Err(outside()),
        },
        Err(_) => {
            let mut up = full.parent();
            while let Some(dir) = up {
                if let Ok(real) = std::fs::canonicalize(dir) {
                    return if real.starts_with(cwd) {
                        Ok(full)
                    } else {
                        Err(outside())
                    };
                }
                up = dir.parent();
            }
            Err(outside())
        }
    }
}

/// Reads `full` (at most [`READ_CAP`] bytes) only if the file opened is a regular file inside `cwd`:
/// the path is opened without following a final symlink and the opened file's own path (from
/// `/proc/self/fd`) is checked, so a directory or file swapped for a symlink after [`confined`]
/// looked is refused instead of read.
pub fn read_confined(cwd: &Path, full: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read as _;
    use std::os::fd::AsRawFd as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(full)?;
    let real = std::fs::read_link(format!("/proc/self/fd/{}", f.as_raw_fd()))?;
    if !real.starts_with(cwd) || !f.metadata()?.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            "it resolves outside the session's working directory",
        ));
    }
    let mut out = Vec::new();
    f.take(READ_CAP).read_to_end(&mut out)?;
    Ok(out)
}

/// Whether `bytes` look binary (a NUL in the first 8000 bytes, as git decides).
pub fn looks_binary(bytes: &[u8]) -> bool {
    bytes.iter().take(8000).any(|b| *b == 0)
}

/// Lines in a text (a last line without a newline counts).
pub fn count_lines(text: &[u8]) -> u64 {
    let n = text.iter().filter(|b| **b == b'\n').count() as u64;
    n + u64::from(!text.is_empty() && !text.ends_with(b"\n"))
}

/// Cuts `text` to [`DIFF_CAP`] at a line end; whether it did.
pub(crate) fn cap_text(mut text: String) -> (String, bool) {
    if text.len() <= DIFF_CAP {
        return (text, false);
    }
    let mut end = DIFF_CAP;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let end = text[..end].rfind('\n').map_or(end, |i| i + 1);
    text.truncate(end);
    (text, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_must_be_relative_and_inside() {
        assert_eq!(relative_path("a/./b.txt").unwrap(), "a/b.txt");
        assert_eq!(relative_path("./x").unwrap(), "x");
        for bad in ["", "/etc/passwd", "../x", "a/../../x", "a/..", ".", "a\0b"] {
            let e = relative_path(bad).unwrap_err();
            assert_eq!(e.status.as_u16(), 400, "{bad:?}");
        }
    }

    #[test]
    fn capped_text_ends_at_a_line() {
        let line = "x".repeat(99) + "\n";
        let (t, cut) = cap_text(line.repeat(DIFF_CAP / 100 + 10));
        assert!(cut);
        assert!(t.len() <= DIFF_CAP && t.ends_with('\n'));
        let (t, cut) = cap_text("short\n".into());
        assert!(!cut);
        assert_eq!(t, "short\n");
    }

    #[test]
    fn lines_and_binary() {
        assert_eq!(count_lines(b""), 0);
        assert_eq!(count_lines(b"a"), 1);
        assert_eq!(count_lines(b"a\nb\n"), 2);
        assert!(looks_binary(b"PNG\0\x01"));
        assert!(!looks_binary("é text".as_bytes()));
    }
}
