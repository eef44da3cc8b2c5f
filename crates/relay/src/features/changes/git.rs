//! The git side of the changes panel: `git status --porcelain=v2 -z` and `git diff` against `HEAD`,
//! run as a program (never a shell string) with a timeout, no pager, no optional locks, literal
//! pathspecs, no external diff drivers or text conversions, no filter drivers (every `filter.<name>`
//! the repository's config defines is emptied for the call: a repository's `.gitattributes` and
//! `.git/config` cannot make the relay run a command), and output read only up to a cap.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use axum::http::StatusCode;
use tokio::io::AsyncReadExt as _;

use super::{ChangedFile, DIFF_CAP, DiffText, MAX_FILES, READ_CAP, Status};
use crate::edge::error::ApiError;

/// Longest any one git command may run.
pub const GIT_TIMEOUT: Duration = Duration::from_secs(10);
/// Most bytes of `git status` / `--numstat` output read.
const LIST_CAP: usize = 8 * 1024 * 1024;

/// The repository holding a session's cwd.
#[derive(Debug, Clone)]
pub struct Repo {
    /// The cwd's path from the repository's top (`sub/dir/`, empty at the top).
    prefix: String,
    /// What changes are measured against: `HEAD`, or the empty tree before the first commit.
    base: String,
    pub branch: Option<String>,
    /// `-c filter.<name>.{clean,smudge,process}=` for every filter driver the config defines.
    neutral: Vec<String>,
}

struct Out {
    stdout: Vec<u8>,
    truncated: bool,
    ok: bool,
    code: Option<i32>,
    stderr: String,
}

/// Runs `git <args>` in `cwd`, reading at most `cap` bytes of its output.
async fn run<S: AsRef<OsStr>>(cwd: &Path, args: &[S], cap: usize) -> Result<Out, ApiError> {
    run_with(cwd, &[], args, cap).await
}

/// [`run`] in `repo`, its filter drivers emptied.
async fn run_in<S: AsRef<OsStr>>(
    repo: &Repo,
    cwd: &Path,
    args: &[S],
    cap: usize,
) -> Result<Out, ApiError> {
    run_with(cwd, &repo.neutral, args, cap).await
}

async fn run_with<S: AsRef<OsStr>>(
    cwd: &Path,
    config: &[String],
    args: &[S],
    cap: usize,
) -> Result<Out, ApiError> {
    let mut cmd = tokio::process::Command::new("git");
    cmd.arg("--no-pager")
        .arg("--literal-pathspecs")
        .args(["-c", "core.quotepath=off"])
        .args(["-c", "core.fsmonitor=false"])
        .args(["-c", "color.ui=false"])
        .args(["-c", "core.attributesFile=/dev/null"])
        .args(config)
        .args(args)
        .current_dir(cwd)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_PAGER", "cat")
        .env("PAGER", "cat")
        .env("LC_ALL", "C")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = cmd
        .spawn()
        .map_err(|e| ApiError::internal(format!("cannot run git: {e}")))?;
    let mut stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let work = async {
        let mut out = Vec::new();
        let mut err = Vec::new();
        let child = &mut child;
        let read_out = async {
            let r = (&mut stdout)
                .take(cap as u64 + 1)
                .read_to_end(&mut out)
                .await;
            if out.len() > cap {
                // Enough: git would block on a full pipe (and stderr never end) otherwise.
                let _ = child.start_kill();
            }
            r
        };
        let read_err = async { (&mut stderr).take(64 * 1024).read_to_end(&mut err).await };
        let (o, _) = tokio::join!(read_out, read_err);
        o.map_err(|e| ApiError::internal(format!("reading git's output failed: {e}")))?;
        let truncated = out.len() > cap;
        out.truncate(cap);
        let status = child
            .wait()
            .await
            .map_err(|e| ApiError::internal(format!("waiting for git failed: {e}")))?;
        Ok::<_, ApiError>(Out {
            stdout: out,
            truncated,
            ok: status.success(),
            code: status.code(),
            stderr: String::from_utf8_lossy(&err).trim().to_owned(),
        })
    };
    match tokio::time::timeout(GIT_TIMEOUT, work).await {
        Ok(r) => r,
        Err(_) => Err(ApiError::new(
            StatusCode::GATEWAY_TIMEOUT,
            "timeout_error",
            format!(
                "git took longer than {} s in the session's working directory; try again later",
                GIT_TIMEOUT.as_secs()
            ),
        )),
    }
}

fn failed(what: &str, o: &Out) -> ApiError {
    ApiError::internal(format!("git {what} failed: {}", o.stderr))
}

impl Out {
    /// The output of a run that succeeded; [`failed`] for `what` otherwise.
    fn checked(self, what: &str) -> Result<Out, ApiError> {
        if self.ok {
            Ok(self)
        } else {
            Err(failed(what, &self))
        }
    }
}

impl Repo {
    /// The repository holding `cwd` (None: not in one, or git is not installed).
    pub async fn find(cwd: &Path) -> Result<Option<Repo>, ApiError> {
        let o = match run(
            cwd,
            &["rev-parse", "--is-inside-work-tree", "--show-prefix"],
            64 * 1024,
        )
        .await
        {
            Ok(o) => o,
            Err(e) if e.status == StatusCode::INTERNAL_SERVER_ERROR => return Ok(None),
            Err(e) => return Err(e),
        };
        let text = String::from_utf8_lossy(&o.stdout);
        let mut lines = text.lines();
        if !o.ok || lines.next() != Some("true") {
            return Ok(None);
        }
        let prefix = lines.next().unwrap_or_default().to_owned();
        let head = run(
            cwd,
            &["rev-parse", "--verify", "--quiet", "HEAD^{commit}"],
            4096,
        )
        .await?;
        let base = if head.ok {
            "HEAD".to_owned()
        } else {
            // No commit yet: everything is measured against the empty tree.
            let t = run(cwd, &["hash-object", "-t", "tree", "/dev/null"], 4096)
                .await?
                .checked("hash-object")?;
            String::from_utf8_lossy(&t.stdout).trim().to_owned()
        };
        let b = run(cwd, &["symbolic-ref", "--quiet", "--short", "HEAD"], 4096).await?;
        let branch =
            b.ok.then(|| String::from_utf8_lossy(&b.stdout).trim().to_owned())
                .filter(|s| !s.is_empty());
        let neutral = filter_drivers(cwd)
            .await?
            .iter()
            .flat_map(|d| {
                ["clean", "smudge", "process"]
                    .into_iter()
                    .flat_map(move |k| ["-c".to_owned(), format!("filter.{d}.{k}=")])
            })
            .collect();
        Ok(Some(Repo {
            prefix,
            base,
            branch,
            neutral,
        }))
    }

    /// A path from `git status` (relative to the top) relative to the cwd, if inside it.
    fn local(&self, top_relative: &str) -> Option<String> {
        top_relative
            .strip_prefix(self.prefix.as_str())
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    }
}

/// The names of the filter drivers git's config defines for `cwd` (every scope, includes followed).
async fn filter_drivers(cwd: &Path) -> Result<Vec<String>, ApiError> {
    let o = run(
        cwd,
        &["config", "-z", "--name-only", "--get-regexp", r"^filter\."],
        256 * 1024,
    )
    .await?;
    // Exit 1: none defined.
    if !o.ok && o.code != Some(1) {
        return Err(failed("config", &o));
    }
    if o.truncated {
        return Err(ApiError::internal(
            "the repository's git config defines too many filter drivers to neutralize",
        ));
    }
    let mut names: Vec<String> = o
        .stdout
        .split(|b| *b == 0)
        .filter_map(|k| {
            let k = std::str::from_utf8(k).ok()?;
            let rest = k.strip_prefix("filter.")?;
            let (driver, _key) = rest.rsplit_once('.')?;
            (!driver.is_empty()).then(|| driver.to_owned())
        })
        .collect();
    names.sort();
    names.dedup();
    Ok(names)
}

/// The changed files under `cwd` (and whether the list was cut).
pub async fn changes(repo: &Repo, cwd: &Path) -> Result<(Vec<ChangedFile>, bool), ApiError> {
    let st = run_in(
        repo,
        cwd,
        &[
            "status",
            "--porcelain=v2",
            "-z",
            "--untracked-files=all",
            "--ignore-submodules=dirty",
            "--",
            ".",
        ],
        LIST_CAP,
    )
    .await?
    .checked("status")?;
    let mut truncated = st.truncated;
    let mut files = parse_status(repo, &st.stdout);
    let ns = run_in(
        repo,
        cwd,
        &[
            "diff",
            repo.base.as_str(),
            "--numstat",
            "-z",
            "-M",
            "--relative",
            "--no-ext-diff",
            "--no-textconv",
            "--",
            ".",
        ],
        LIST_CAP,
    )
    .await?
    .checked("diff --numstat")?;
    let counts = parse_numstat(&ns.stdout);
    for f in &mut files {
        let full = cwd.join(&f.path);
        let meta = std::fs::symlink_metadata(&full).ok();
        f.size = meta
            .as_ref()
            .filter(|_| f.status != Status::Deleted)
            .map(|m| m.len());
        match counts.get(&f.path) {
            Some(Some((add, del))) => {
                f.insertions = Some(*add);
                f.deletions = Some(*del);
            }
            Some(None) => f.binary = true,
            None if f.status == Status::Untracked => {
                // Only a regular file is read (a symlink is never followed here).
                if meta.is_some_and(|m| m.is_file() && m.len() <= READ_CAP)
                    && let Ok(bytes) = std::fs::read(&full)
                {
                    if super::looks_binary(&bytes) {
                        f.binary = true;
                    } else {
                        f.insertions = Some(super::count_lines(&bytes));
                        f.deletions = Some(0);
                    }
                }
            }
            None => {}
        }
    }
    if files.len() > MAX_FILES {
        files.truncate(MAX_FILES);
        truncated = true;
    }
    Ok((files, truncated))
}

/// `git status --porcelain=v2 -z` entries under the cwd.
fn parse_status(repo: &Repo, out: &[u8]) -> Vec<ChangedFile> {
    let mut fields = out
        .split(|b| *b == 0)
        .map(|f| String::from_utf8_lossy(f).into_owned());
    let mut files = Vec::new();
    while let Some(entry) = fields.next() {
        let kind = entry.split(' ').next().unwrap_or_default();
        let (xy, path, from, conflicted) = match kind {
            // `1 XY sub mH mI mW hH hI path`
            "1" => (field(&entry, 1), rest_after(&entry, 8), None, false),
            // `2 XY sub mH mI mW hH hI Xscore path` NUL `origPath`
            "2" => (
                field(&entry, 1),
                rest_after(&entry, 9),
                fields.next(),
                false,
            ),
            // `u XY sub m1 m2 m3 mW h1 h2 h3 path`
            "u" => (field(&entry, 1), rest_after(&entry, 10), None, true),
            "?" => ("??", rest_after(&entry, 1), None, false),
            _ => continue,
        };
        let Some(path) = path.and_then(|p| repo.local(p)) else {
            continue;
        };
        let b = xy.as_bytes();
        let (x, y) = (
            b.first().copied().unwrap_or(b'.'),
            b.get(1).copied().unwrap_or(b'.'),
        );
        let status = match kind {
            "?" => Status::Untracked,
            "2" => Status::Renamed,
            _ if x == b'D' || y == b'D' => Status::Deleted,
            _ if x == b'A' => Status::Added,
            _ => Status::Modified,
        };
        files.push(ChangedFile {
            path,
            status,
            from: from.and_then(|f| repo.local(&f)),
            insertions: None,
            deletions: None,
            binary: false,
            size: None,
            conflicted,
        });
    }
    files
}

fn field(entry: &str, i: usize) -> &str {
    entry.split(' ').nth(i).unwrap_or_default()
}

/// What follows the first `n` space-separated fields (a path may hold spaces).
fn rest_after(entry: &str, n: usize) -> Option<&str> {
    let mut rest = entry;
    for _ in 0..n {
        rest = rest.split_once(' ')?.1;
    }
    Some(rest)
}

/// `git diff --numstat -z` counts by (new) path; `None` for binary files.
fn parse_numstat(out: &[u8]) -> HashMap<String, Option<(u64, u64)>> {
    let mut fields = out
        .split(|b| *b == 0)
        .map(|f| String::from_utf8_lossy(f).into_owned());
    let mut counts = HashMap::new();
    while let Some(entry) = fields.next() {
        let mut parts = entry.splitn(3, '\t');
        let (Some(add), Some(del), Some(path)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        let path = if path.is_empty() {
            // A rename: old path and new path follow as their own fields.
            let _old = fields.next();
            match fields.next() {
                Some(p) => p,
                None => break,
            }
        } else {
            path.to_owned()
        };
        let n = match (add.parse::<u64>(), del.parse::<u64>()) {
            (Ok(a), Ok(d)) => Some((a, d)),
            _ => None,
        };
        counts.insert(path, n);
    }
    counts
}

/// The unified diff of one listed file: against the base (tracked), or as all added (untracked).
pub async fn diff(repo: &Repo, cwd: &Path, file: &ChangedFile) -> Result<DiffText, ApiError> {
    let o = if file.status == Status::Untracked {
        let meta = std::fs::symlink_metadata(cwd.join(&file.path)).ok();
        if meta.is_some_and(|m| !m.is_file()) {
            return Ok(DiffText {
                text: None,
                truncated: false,
                binary: false,
                note: Some("not a regular file (a symlink or special file): not shown".into()),
            });
        }
        run_in(
            repo,
            cwd,
            &[
                "diff",
                "--no-index",
                "--no-color",
                "--no-ext-diff",
                "--no-textconv",
                "--",
                "/dev/null",
                file.path.as_str(),
            ],
            DIFF_CAP + 1,
        )
        .await?
    } else {
        let mut args = vec![
            "diff",
            repo.base.as_str(),
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "-M",
            "--relative",
            "--",
        ];
        if let Some(from) = &file.from {
            args.push(from.as_str());
        }
        args.push(file.path.as_str());
        run_in(repo, cwd, &args, DIFF_CAP + 1).await?
    };
    // `--no-index` answers 1 when the files differ.
    let differ = o.code == Some(1) && o.stderr.is_empty();
    if !(o.ok || differ || o.truncated) {
        return Err(failed("diff", &o));
    }
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    if text
        .lines()
        .any(|l| l.starts_with("Binary files ") || l == "GIT binary patch")
    {
        return Ok(DiffText {
            text: None,
            truncated: false,
            binary: true,
            note: None,
        });
    }
    let (text, cut) = super::cap_text(text);
    Ok(DiffText {
        text: Some(text),
        truncated: cut || o.truncated,
        binary: false,
        note: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo(prefix: &str) -> Repo {
        Repo {
            prefix: prefix.into(),
            base: "HEAD".into(),
            branch: None,
            neutral: Vec::new(),
        }
    }

    #[test]
    fn status_entries_are_read_relative_to_the_cwd() {
        let out = b"1 .M N... 100644 100644 100644 aaaa bbbb sub/a file.txt\0\
2 R. N... 100644 100644 100644 aaaa aaaa R100 sub/new name\0sub/old\0\
1 D. N... 100644 000000 000000 aaaa 0000 sub/gone\0\
1 A. N... 000000 100644 100644 0000 aaaa sub/added\0\
u UU N... 100644 100644 100644 100644 a b c sub/conflict\0\
? sub/untracked\0? other/outside\0";
        let files = parse_status(&repo("sub/"), out);
        let got: Vec<_> = files
            .iter()
            .map(|f| {
                (
                    f.path.as_str(),
                    f.status.clone(),
                    f.from.as_deref(),
                    f.conflicted,
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                ("a file.txt", Status::Modified, None, false),
                ("new name", Status::Renamed, Some("old"), false),
                ("gone", Status::Deleted, None, false),
                ("added", Status::Added, None, false),
                ("conflict", Status::Modified, None, true),
                ("untracked", Status::Untracked, None, false),
            ]
        );
    }

    #[test]
    fn numstat_reads_renames_and_binary() {
        let out = b"3\t1\ta.txt\0-\t-\timg.png\x001\t0\t\0old\0new\0";
        let c = parse_numstat(out);
        assert_eq!(c["a.txt"], Some((3, 1)));
        assert_eq!(c["img.png"], None);
        assert_eq!(c["new"], Some((1, 0)));
        assert_eq!(c.len(), 3);
    }
}
