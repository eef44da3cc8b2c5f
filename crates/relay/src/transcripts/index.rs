//! The index of transcripts under `<config dir>/projects/*/<session id>.jsonl`. Incremental: each file's
//! size and modification time are remembered, and only a new or changed file is read again, and only
//! its head and tail (never a whole multi-MB file) — a list of hundreds of big transcripts costs a
//! directory walk and a `stat` per file.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use super::parse::{self, Facts};

/// Bytes read from a file's start (more, up to [`HEAD_MAX`], while no prompt was found in it).
pub const HEAD_BYTES: u64 = 64 * 1024;
pub const HEAD_MAX: u64 = 1024 * 1024;
/// Bytes read from a file's end.
pub const TAIL_BYTES: u64 = 64 * 1024;

/// One transcript as the list shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Transcript {
    /// The CLI's session id (the file name's stem, a UUID).
    pub id: String,
    pub path: PathBuf,
    pub size: u64,
    pub modified: SystemTime,
    pub facts: Facts,
}

#[derive(Debug, Clone)]
struct Entry {
    size: u64,
    modified: SystemTime,
    /// Bytes of the head already read (the head's facts hold for as long as the file only grows).
    head_read: u64,
    head: Facts,
    tail: Facts,
}

/// Files read on the last refresh, for tests and the benchmark.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct RefreshStats {
    pub files: usize,
    pub read: usize,
}

pub struct Index {
    projects: PathBuf,
    entries: Mutex<HashMap<PathBuf, Entry>>,
}

/// A CLI session id: a UUID, nothing else (it names a file; no path can be built from anything else).
pub fn valid_id(id: &str) -> bool {
    uuid::Uuid::try_parse(id).is_ok_and(|u| u.hyphenated().to_string() == id.to_ascii_lowercase())
        && id.len() == 36
}

impl Index {
    /// An index of `<config_dir>/projects` (a missing directory lists nothing).
    pub fn new(config_dir: &Path) -> Self {
        Index {
            projects: config_dir.join("projects"),
            entries: Mutex::new(HashMap::new()),
        }
    }

    pub fn projects_dir(&self) -> &Path {
        &self.projects
    }

    /// Walks the projects dir, reads what is new or changed, forgets what is gone; returns every
    /// transcript with a conversation in it.
    pub fn refresh(&self) -> (Vec<Transcript>, RefreshStats) {
        let mut stats = RefreshStats::default();
        let mut seen = Vec::new();
        let mut seen_set = HashSet::new();
        for dir in read_dir(&self.projects) {
            if !dir.is_dir() {
                continue;
            }
            for path in read_dir(&dir) {
                let is_jsonl = path.extension().is_some_and(|e| e == "jsonl");
                let id_ok = path
                    .file_stem()
                    .and_then(|s| s.to_str())
                    .is_some_and(valid_id);
                if is_jsonl && id_ok {
                    seen_set.insert(path.clone());
                    seen.push(path);
                }
            }
        }
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries.retain(|p, _| seen_set.contains(p));
        let mut out = Vec::with_capacity(seen.len());
        for path in seen {
            // symlink_metadata: a link is not followed out of the projects dir.
            let Ok(md) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if !md.is_file() {
                continue;
            }
            stats.files += 1;
            let size = md.len();
            let modified = md.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            let fresh = entries
                .get(&path)
                .is_some_and(|e| e.size == size && e.modified == modified);
            if !fresh {
                stats.read += 1;
                let old = entries.remove(&path);
                match read_entry(&path, size, modified, old) {
                    Some(e) => {
                        entries.insert(path.clone(), e);
                    }
                    None => continue,
                }
            }
            let e = &entries[&path];
            let facts = merge(&e.head, &e.tail);
            if !facts.has_messages && facts.summary.is_none() {
                continue;
            }
            let id = path
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or_default()
                .to_owned();
            out.push(Transcript {
                id,
                path,
                size,
                modified,
                facts,
            });
        }
        (out, stats)
    }

    /// The transcript of CLI session `id` (refreshing the index), or `None`. `id` must be a UUID, and
    /// the file must lie inside the projects dir once symlinks are resolved.
    pub fn find(&self, id: &str) -> Option<Transcript> {
        if !valid_id(id) {
            return None;
        }
        let (all, _) = self.refresh();
        let t = all.into_iter().find(|t| t.id == id)?;
        let root = std::fs::canonicalize(&self.projects).ok()?;
        let real = std::fs::canonicalize(&t.path).ok()?;
        real.starts_with(&root).then_some(t)
    }
}

fn read_dir(dir: &Path) -> Vec<PathBuf> {
    match std::fs::read_dir(dir) {
        Ok(rd) => rd.filter_map(|e| e.ok().map(|e| e.path())).collect(),
        Err(_) => Vec::new(),
    }
}

/// Head facts (first prompt, first cwd, summaries written at the top by older CLIs) and tail facts
/// (latest branch, cwd, summary, last prompt, time): the tail's values win where both have one.
fn merge(head: &Facts, tail: &Facts) -> Facts {
    Facts {
        cwd: tail.cwd.clone().or_else(|| head.cwd.clone()),
        git_branch: tail.git_branch.clone().or_else(|| head.git_branch.clone()),
        summary: tail.summary.clone().or_else(|| head.summary.clone()),
        first_prompt: head.first_prompt.clone(),
        last_prompt: tail
            .last_prompt
            .clone()
            .or_else(|| head.last_prompt.clone()),
        last_timestamp: tail
            .last_timestamp
            .clone()
            .or_else(|| head.last_timestamp.clone()),
        has_messages: head.has_messages || tail.has_messages,
    }
}

fn read_entry(path: &Path, size: u64, modified: SystemTime, old: Option<Entry>) -> Option<Entry> {
    let mut f = File::open(path).ok()?;
    // A file that only grew keeps its head (its first prompt does not change).
    let keep_head = old
        .as_ref()
        .filter(|o| size >= o.size && o.head.first_prompt.is_some());
    let (head, head_read) = match keep_head {
        Some(o) => (o.head.clone(), o.head_read),
        None => {
            let mut want = HEAD_BYTES;
            loop {
                let n = want.min(size);
                let mut buf = vec![0; n as usize];
                f.seek(SeekFrom::Start(0)).ok()?;
                f.read_exact(&mut buf).ok()?;
                let mut facts = Facts::default();
                parse::scan(parse::head_lines(&buf, n == size), &mut facts);
                if facts.first_prompt.is_some() || n == size || want >= HEAD_MAX {
                    break (facts, n);
                }
                want *= 4;
            }
        }
    };
    let tail = if size <= head_read {
        head.clone()
    } else {
        let start = size.saturating_sub(TAIL_BYTES);
        let mut buf = vec![0; (size - start) as usize];
        f.seek(SeekFrom::Start(start)).ok()?;
        f.read_exact(&mut buf).ok()?;
        let mut facts = Facts::default();
        parse::scan(parse::tail_lines(&buf, start == 0), &mut facts);
        facts
    };
    Some(Entry {
        size,
        modified,
        head_read,
        head,
        tail,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_uuids_only() {
        assert!(valid_id("27784601-dc95-46a5-9f01-072efd77a9f0"));
        for bad in [
            "",
            "..",
            "../etc/passwd",
            "27784601-dc95-46a5-9f01-072efd77a9f0/../x",
            "27784601dc9546a59f01072efd77a9f0",
            "cse_27784601dc9546a59f01072efd77a9f0",
            "{27784601-dc95-46a5-9f01-072efd77a9f0}",
        ] {
            assert!(!valid_id(bad), "{bad}");
        }
    }
}
