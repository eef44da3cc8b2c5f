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
    /// Parsed whole transcripts, newest use last, keyed by (path, size, modified): opening,
    /// resuming and forking the same session parse it once. Their files add up to at most
    /// [`PARSED_CACHE_BYTES`].
    parsed: Mutex<Vec<Parsed>>,
}

/// A parsed transcript: its path, size and time when read, and its lines.
type Parsed = (
    PathBuf,
    u64,
    SystemTime,
    std::sync::Arc<Vec<serde_json::Value>>,
);

/// The largest transcript the relay reads whole (to show, resume or fork it).
pub const MAX_WHOLE_BYTES: u64 = 64 * 1024 * 1024;
/// Parsed transcripts kept, in file bytes.
pub const PARSED_CACHE_BYTES: u64 = 96 * 1024 * 1024;

/// Why a whole transcript could not be read.
#[derive(Debug)]
pub enum WholeError {
    TooLarge(u64),
    Io(std::io::Error),
}

/// A CLI session id: a UUID, nothing else (it names a file; no path can be built from anything else).
pub fn valid_id(id: &str) -> bool {
    uuid::Uuid::try_parse(id).is_ok_and(|u| u.hyphenated().to_string() == id.to_ascii_lowercase())
        && id.len() == 36
}

impl Index {
    /// The relay's index of Claude Code's transcripts (`--claude-config-dir`), made on first use.
    pub fn of(relay: &crate::core::relay::Relay) -> std::sync::Arc<Index> {
        relay
            .plugs
            .get_or_init(|| Index::new(&relay.config.claude_config_dir))
    }

    /// An index of `<config_dir>/projects` (a missing directory lists nothing).
    pub fn new(config_dir: &Path) -> Self {
        Index {
            projects: config_dir.join("projects"),
            entries: Mutex::new(HashMap::new()),
            parsed: Mutex::new(Vec::new()),
        }
    }

    /// Every parsed line of transcript `t` (read whole, at most [`MAX_WHOLE_BYTES`], through
    /// [`open_no_follow`]), from the cache while the file's size and time have not changed.
    /// Blocking: run it off the runtime's threads.
    pub fn whole(
        &self,
        t: &Transcript,
    ) -> Result<std::sync::Arc<Vec<serde_json::Value>>, WholeError> {
        {
            let mut parsed = self.parsed.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(i) = parsed
                .iter()
                .position(|(p, size, m, _)| *p == t.path && *size == t.size && *m == t.modified)
            {
                let hit = parsed.remove(i);
                let lines = hit.3.clone();
                parsed.push(hit);
                return Ok(lines);
            }
        }
        let mut f = open_no_follow(&t.path).map_err(WholeError::Io)?;
        let md = f.metadata().map_err(WholeError::Io)?;
        if md.len() > MAX_WHOLE_BYTES {
            return Err(WholeError::TooLarge(md.len()));
        }
        let mut buf = Vec::with_capacity(md.len() as usize);
        // Read no more than the cap even if the file grows meanwhile.
        (&mut f)
            .take(MAX_WHOLE_BYTES + 1)
            .read_to_end(&mut buf)
            .map_err(WholeError::Io)?;
        if buf.len() as u64 > MAX_WHOLE_BYTES {
            return Err(WholeError::TooLarge(buf.len() as u64));
        }
        let lines = std::sync::Arc::new(parse::parse_lines(&String::from_utf8_lossy(&buf)));
        drop(buf);
        let modified = md.modified().unwrap_or(SystemTime::UNIX_EPOCH);
        let mut parsed = self.parsed.lock().unwrap_or_else(|p| p.into_inner());
        parsed.retain(|(p, ..)| *p != t.path);
        parsed.push((t.path.clone(), md.len(), modified, lines.clone()));
        while parsed.iter().map(|e| e.1).sum::<u64>() > PARSED_CACHE_BYTES && parsed.len() > 1 {
            parsed.remove(0);
        }
        Ok(lines)
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
            // A project directory that is a symlink is not followed (out of the projects dir).
            if !std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
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

/// Opens a transcript for reading without following a symlink in its place (a link swapped in
/// after the listing checked the path is refused, not read).
pub fn open_no_follow(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    if !f.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    Ok(f)
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
    let mut f = open_no_follow(path).ok()?;
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
    fn a_whole_transcript_is_parsed_once_until_it_changes_and_links_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let projects = dir.path().join("projects/-p");
        std::fs::create_dir_all(&projects).unwrap();
        let id = "27784601-dc95-46a5-9f01-072efd77a9f0";
        let path = projects.join(format!("{id}.jsonl"));
        let line = r#"{"type":"user","uuid":"u1","message":{"role":"user","content":"hi"}}"#;
        std::fs::write(&path, format!("{line}\n")).unwrap();
        let index = Index::new(dir.path());
        let t = index.find(id).expect("listed");
        let a = index.whole(&t).unwrap();
        let b = index.whole(&t).unwrap();
        assert!(
            std::sync::Arc::ptr_eq(&a, &b),
            "the second read is the cached parse"
        );
        assert_eq!(a.len(), 1);
        std::fs::write(&path, format!("{line}\n{line}\n")).unwrap();
        let t = index.find(id).unwrap();
        let c = index.whole(&t).unwrap();
        assert_eq!(c.len(), 2, "a changed file is read again");
        // A symlink swapped in after the listing is not read.
        let outside = dir.path().join("outside.jsonl");
        std::fs::write(&outside, format!("{line}\n{line}\n{line}\n")).unwrap();
        std::fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink(&outside, &path).unwrap();
        let swapped = Transcript { size: 3, ..t };
        assert!(matches!(index.whole(&swapped), Err(WholeError::Io(_))));
    }

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
