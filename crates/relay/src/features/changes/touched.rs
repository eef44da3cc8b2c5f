//! Outside git: the files a session's own tools wrote (Write / Edit / MultiEdit / NotebookEdit
//! calls in its log that got a result other than an error), what each held before the session's
//! first write when the log says so (the CLI's `tool_use_result.originalFile`, or `type: "create"`
//! for a new file), and their state on disk now. The log is read incrementally: each request reads
//! only the events appended since the last one.

use std::collections::{BTreeMap, HashMap};
use std::path::{Component, Path, PathBuf};

use bridge_protocol::MessageType;
use serde_json::Value;

use super::{ChangedFile, DiffText, MAX_FILES, READ_CAP, Status};
use crate::core::session::Session;
use crate::edge::error::ApiError;

/// The tools whose calls write files, and the input field naming the file.
const WRITE_TOOLS: &[(&str, &str)] = &[
    ("Write", "file_path"),
    ("Edit", "file_path"),
    ("MultiEdit", "file_path"),
    ("NotebookEdit", "notebook_path"),
];
/// Largest earlier content kept per file (larger: the diff shows the file as added).
const BEFORE_CAP: usize = 1024 * 1024;
/// Calls waiting for their result that are remembered.
const PENDING_CAP: usize = 4096;

/// What a file held before the session first wrote it.
#[derive(Debug, Clone, PartialEq)]
enum Before {
    /// It did not exist.
    Absent,
    /// This text.
    Known(String),
    /// It existed, but the log does not say what it held.
    Unknown,
}

/// The scan of one session's log.
#[derive(Debug, Default)]
pub struct Scan {
    /// Events up to this sequence number are read.
    after: u64,
    /// Write-tool calls waiting for their result: tool_use_id → (tool, path relative to the cwd).
    pending: HashMap<String, (String, String)>,
    /// Files written, by path relative to the cwd.
    files: BTreeMap<String, Before>,
}

impl Scan {
    /// Reads the events appended since the last call.
    pub fn update(&mut self, session: &Session, cwd: &Path) -> Result<(), ApiError> {
        loop {
            let page = session.read_after(self.after, 500).map_err(|e| {
                ApiError::internal(format!("reading the session's log failed: {e}"))
            })?;
            let Some(last) = page.last() else {
                return Ok(());
            };
            self.after = last.seq;
            for e in &page {
                if let Ok(v) = serde_json::from_str::<Value>(&e.payload) {
                    self.on_frame(&v, cwd);
                }
            }
        }
    }

    fn on_frame(&mut self, v: &Value, cwd: &Path) {
        let content = v
            .pointer("/message/content")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        match MessageType::of(v) {
            Some(MessageType::Assistant) => {
                for block in content
                    .iter()
                    .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
                {
                    let name = block
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    let Some((_, field)) = WRITE_TOOLS.iter().find(|(n, _)| *n == name) else {
                        continue;
                    };
                    let (Some(id), Some(path)) = (
                        block.get("id").and_then(Value::as_str),
                        block
                            .pointer(&format!("/input/{field}"))
                            .and_then(Value::as_str),
                    ) else {
                        continue;
                    };
                    if let Some(rel) = inside(cwd, path)
                        && self.pending.len() < PENDING_CAP
                    {
                        self.pending.insert(id.to_owned(), (name.to_owned(), rel));
                    }
                }
            }
            Some(MessageType::User) => {
                let results: Vec<&Value> = content
                    .iter()
                    .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
                    .collect();
                for r in &results {
                    let Some((tool, rel)) = r
                        .get("tool_use_id")
                        .and_then(Value::as_str)
                        .and_then(|id| self.pending.remove(id))
                    else {
                        continue;
                    };
                    if r.get("is_error").and_then(Value::as_bool) == Some(true)
                        || self.files.contains_key(&rel)
                    {
                        continue;
                    }
                    // The CLI's structured result belongs to the frame's one tool result.
                    let detail = (results.len() == 1)
                        .then(|| v.get("tool_use_result"))
                        .flatten();
                    self.files.insert(rel, before_of(&tool, detail));
                }
            }
            _ => {}
        }
    }

    /// Whether the session's tools wrote `rel` (relative to the cwd).
    pub fn wrote(&self, rel: &str) -> bool {
        self.files.contains_key(rel)
    }

    /// The written files that differ from before, as they are on disk now. Blocking (run it off
    /// the runtime's threads). Reading contents stops once [`super::LIST_BUDGET`] is spent: the
    /// files after that are listed without line counts.
    pub fn changes(&self, cwd: &Path) -> (Vec<ChangedFile>, bool) {
        let started = std::time::Instant::now();
        let mut out = Vec::new();
        for (rel, before) in &self.files {
            if out.len() >= MAX_FILES {
                return (out, true);
            }
            // A file reached through a symlink out of the cwd is not listed.
            let Ok(full) = super::confined(cwd, rel) else {
                continue;
            };
            let meta = std::fs::symlink_metadata(&full).ok();
            let mut f = ChangedFile {
                path: rel.clone(),
                status: Status::Modified,
                from: None,
                insertions: None,
                deletions: None,
                binary: false,
                size: meta.as_ref().map(std::fs::Metadata::len),
                conflicted: false,
            };
            let Some(meta) = meta else {
                if *before == Before::Absent {
                    continue; // made and removed again: nothing changed
                }
                f.status = Status::Deleted;
                if let Before::Known(b) = before {
                    f.insertions = Some(0);
                    f.deletions = Some(super::count_lines(b.as_bytes()));
                }
                out.push(f);
                continue;
            };
            let in_budget = started.elapsed() < super::LIST_BUDGET;
            let now = (in_budget && meta.is_file() && meta.len() <= READ_CAP)
                .then(|| super::read_confined(cwd, &full).ok())
                .flatten();
            if let Some(bytes) = &now
                && super::looks_binary(bytes)
            {
                f.binary = true;
            }
            let text = now
                .filter(|_| !f.binary)
                .and_then(|b| String::from_utf8(b).ok());
            match before {
                Before::Absent => {
                    f.status = Status::Added;
                    if let Some(t) = &text {
                        f.insertions = Some(super::count_lines(t.as_bytes()));
                        f.deletions = Some(0);
                    }
                }
                Before::Known(b) => {
                    if text.as_deref() == Some(b.as_str()) {
                        continue; // back as it was
                    }
                    if let Some(t) = &text {
                        let d = similar::TextDiff::configure()
                            .timeout(std::time::Duration::from_secs(2))
                            .diff_lines(b.as_str(), t.as_str());
                        let (mut add, mut del) = (0, 0);
                        for op in d.ops() {
                            for c in d.iter_changes(op) {
                                match c.tag() {
                                    similar::ChangeTag::Insert => add += 1,
                                    similar::ChangeTag::Delete => del += 1,
                                    similar::ChangeTag::Equal => {}
                                }
                            }
                        }
                        f.insertions = Some(add);
                        f.deletions = Some(del);
                    }
                }
                Before::Unknown => {}
            }
            out.push(f);
        }
        (out, false)
    }

    /// The unified diff of one listed file (`full`: its confined path).
    pub fn diff(&self, cwd: &Path, file: &ChangedFile, full: &Path) -> Result<DiffText, ApiError> {
        let before = self
            .files
            .get(&file.path)
            .cloned()
            .unwrap_or(Before::Unknown);
        let meta = std::fs::symlink_metadata(full).ok();
        let now =
            match &meta {
                None => None,
                Some(m) if !m.is_file() => {
                    return Ok(note(
                        "not a regular file (a symlink or special file): not shown",
                    ));
                }
                Some(m) if m.len() > READ_CAP => {
                    return Ok(DiffText {
                        text: None,
                        truncated: true,
                        binary: false,
                        note: Some(format!(
                            "the file is larger than {} MiB: not shown",
                            READ_CAP / (1024 * 1024)
                        )),
                    });
                }
                Some(_) => Some(super::read_confined(cwd, full).map_err(|e| {
                    ApiError::not_found(format!("cannot read {:?}: {e}", file.path))
                })?),
            };
        if now.as_deref().is_some_and(super::looks_binary) {
            return Ok(DiffText {
                text: None,
                truncated: false,
                binary: true,
                note: None,
            });
        }
        let Some(now) = now.map(|b| String::from_utf8_lossy(&b).into_owned()) else {
            // Deleted.
            return Ok(match before {
                Before::Known(b) => unified(&file.path, Some(&b), None, None),
                _ => note("deleted; what it held before the session's writes is not in its log"),
            });
        };
        Ok(match before {
            Before::Known(b) => unified(&file.path, Some(&b), Some(&now), None),
            Before::Absent => unified(&file.path, None, Some(&now), None),
            Before::Unknown => unified(
                &file.path,
                None,
                Some(&now),
                Some(
                    "what the file held before the session's first write is not in its log: shown whole, as added",
                ),
            ),
        })
    }
}

fn note(text: &str) -> DiffText {
    DiffText {
        text: None,
        truncated: false,
        binary: false,
        note: Some(text.to_owned()),
    }
}

/// `old` → `new` as a unified diff with git-like headers (`None`: the file is absent on that side).
fn unified(path: &str, old: Option<&str>, new: Option<&str>, why: Option<&str>) -> DiffText {
    let a = old.map_or_else(|| "/dev/null".to_owned(), |_| format!("a/{path}"));
    let b = new.map_or_else(|| "/dev/null".to_owned(), |_| format!("b/{path}"));
    let d = similar::TextDiff::configure()
        .timeout(std::time::Duration::from_secs(2))
        .diff_lines(old.unwrap_or_default(), new.unwrap_or_default());
    let body = d
        .unified_diff()
        .context_radius(3)
        .header(&a, &b)
        .to_string();
    let (text, truncated) = super::cap_text(body);
    DiffText {
        text: Some(text),
        truncated,
        binary: false,
        note: why.map(str::to_owned),
    }
}

/// What a file held before the call `tool` that wrote it, from the CLI's structured result.
fn before_of(tool: &str, detail: Option<&Value>) -> Before {
    let original = detail.and_then(|d| d.get("originalFile"));
    match original {
        Some(Value::String(s)) if s.len() <= BEFORE_CAP => return Before::Known(s.clone()),
        Some(Value::String(_)) => return Before::Unknown,
        _ => {}
    }
    let kind = detail.and_then(|d| d.get("type")).and_then(Value::as_str);
    match (tool, kind) {
        (_, Some("create")) => Before::Absent,
        // An edit needs the file to exist; a Write without `create` replaced one.
        _ => Before::Unknown,
    }
}

/// `path` (absolute, or relative to `cwd`) relative to `cwd`, if it lies inside it (lexically;
/// symlinks are checked when the file is read).
fn inside(cwd: &Path, path: &str) -> Option<String> {
    let p = Path::new(path);
    let joined: PathBuf = if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    };
    let mut norm = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                norm.pop();
            }
            Component::CurDir => {}
            other => norm.push(other.as_os_str()),
        }
    }
    let rel = norm.strip_prefix(cwd).ok()?;
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    (!parts.is_empty()).then(|| parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_inside_the_cwd_only() {
        let cwd = Path::new("/w/p");
        assert_eq!(inside(cwd, "/w/p/a/b.txt").as_deref(), Some("a/b.txt"));
        assert_eq!(inside(cwd, "a/./b.txt").as_deref(), Some("a/b.txt"));
        assert_eq!(inside(cwd, "/w/p/a/../c").as_deref(), Some("c"));
        assert_eq!(inside(cwd, "/w/p/../q/x"), None);
        assert_eq!(inside(cwd, "/etc/passwd"), None);
        assert_eq!(inside(cwd, "/w/p"), None);
    }

    #[test]
    fn the_first_successful_write_says_what_was_before() {
        let cwd = Path::new("/w");
        let mut s = Scan::default();
        let call = |id: &str, name: &str, path: &str| {
            json!({"type":"assistant","message":{"content":[
                {"type":"tool_use","id":id,"name":name,"input":{"file_path":path}}]}})
        };
        let result = |id: &str, err: bool, detail: Value| {
            json!({"type":"user","message":{"content":[
                {"type":"tool_result","tool_use_id":id,"is_error":err}]},"tool_use_result":detail})
        };
        s.on_frame(&call("1", "Write", "/w/new.txt"), cwd);
        s.on_frame(
            &result("1", false, json!({"type":"create","originalFile":null})),
            cwd,
        );
        s.on_frame(&call("2", "Edit", "/w/old.txt"), cwd);
        s.on_frame(&result("2", false, json!({"originalFile":"before\n"})), cwd);
        s.on_frame(&call("3", "Edit", "/w/old.txt"), cwd);
        s.on_frame(&result("3", false, json!({"originalFile":"later\n"})), cwd);
        s.on_frame(&call("4", "Write", "/w/denied.txt"), cwd);
        s.on_frame(&result("4", true, Value::Null), cwd);
        s.on_frame(&call("5", "Read", "/w/read.txt"), cwd);
        s.on_frame(&result("5", false, Value::Null), cwd);
        s.on_frame(&call("6", "Write", "/elsewhere/x"), cwd);
        s.on_frame(&result("6", false, json!({"type":"create"})), cwd);
        assert_eq!(s.files.len(), 2, "{:?}", s.files);
        assert_eq!(s.files["new.txt"], Before::Absent);
        assert_eq!(s.files["old.txt"], Before::Known("before\n".into()));
    }

    #[test]
    fn unified_diffs_have_git_headers() {
        let d = unified("a.txt", Some("x\ny\n"), Some("x\nz\n"), None);
        let t = d.text.unwrap();
        assert!(t.starts_with("--- a/a.txt\n+++ b/a.txt\n@@"), "{t}");
        assert!(t.contains("-y\n+z\n"), "{t}");
        let d = unified("n.txt", None, Some("new\n"), None);
        assert!(d.text.unwrap().starts_with("--- /dev/null\n+++ b/n.txt\n"));
    }
}
