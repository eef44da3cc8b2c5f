//! Worktree mode's git side: each session gets its own worktree on its own branch
//! (`bridge/<id prefix>`), and archiving never destroys work: a worktree with uncommitted changes
//! or commits its base branch does not have is kept unless the user discards it.

use std::path::Path;

use crate::core::error::Error;
use crate::core::record::Worktree;

/// The branch of session `id`: `bridge/` and the first 12 hex digits of its id.
pub fn branch_name(id: &str) -> String {
    let hex = id.strip_prefix("cse_").unwrap_or(id);
    format!("bridge/{}", &hex[..hex.len().min(12)])
}

async fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    let out = tokio::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .await
        .map_err(|e| format!("cannot run git: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_owned())
    }
}

/// `git worktree add -b bridge/<id> <path>` from the repository's current commit; the base is the
/// branch checked out in `repo` (or that commit when it is detached).
pub async fn add(repo: &Path, path: &Path, id: &str) -> Result<Worktree, Error> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| Error::internal(format!("cannot create {}: {e}", parent.display())))?;
    }
    let refuse = |e: String| {
        Error::invalid(format!(
            "git worktree add failed in {} (worktree mode needs --cwd inside a git repository with a commit): {e}",
            repo.display()
        ))
    };
    let head = git(repo, &["rev-parse", "--verify", "HEAD"])
        .await
        .map_err(refuse)?;
    let base = git(repo, &["symbolic-ref", "--quiet", "--short", "HEAD"])
        .await
        .unwrap_or_else(|_| head.clone());
    let branch = branch_name(id);
    let path_s = path.display().to_string();
    git(repo, &["worktree", "add", "-b", &branch, &path_s, &head])
        .await
        .map_err(refuse)?;
    Ok(Worktree {
        repo: repo.display().to_string(),
        path: path_s,
        branch: Some(branch),
        base: Some(base),
    })
}

/// Why the worktree must be kept (`None`: nothing would be lost by removing it).
pub async fn keep_reason(wt: &Worktree) -> Option<String> {
    let path = Path::new(&wt.path);
    if !path.exists() {
        return None;
    }
    let status = match git(path, &["status", "--porcelain"]).await {
        Ok(s) => s,
        Err(e) => return Some(format!("its state is unknown (git status failed: {e})")),
    };
    if !status.is_empty() {
        return Some("uncommitted changes".into());
    }
    // Ignored files (a `.env`, local settings, build output) are not in git: removing the worktree
    // would delete them with it, so it is kept until the user discards it knowingly.
    match git(path, &["status", "--porcelain", "--ignored"]).await {
        Ok(s) => {
            let ignored: Vec<&str> = s.lines().filter_map(|l| l.strip_prefix("!! ")).collect();
            if let Some(first) = ignored.first() {
                return Some(format!(
                    "{} ignored file(s) git does not keep (such as {first})",
                    ignored.len()
                ));
            }
        }
        Err(e) => return Some(format!("its state is unknown (git status failed: {e})")),
    }
    let base = wt.base.as_deref()?;
    match git(path, &["rev-list", "--count", &format!("{base}..HEAD")]).await {
        Ok(n) if n == "0" => None,
        Ok(n) => Some(format!("{n} commit(s) not merged into {base}")),
        Err(e) => Some(format!("cannot compare it with {base}: {e}")),
    }
}

/// Removes the worktree and its branch.
pub async fn remove(wt: &Worktree) {
    let repo = Path::new(&wt.repo);
    match git(repo, &["worktree", "remove", "--force", &wt.path]).await {
        Ok(_) => tracing::info!(path = %wt.path, "worktree removed"),
        Err(e) => tracing::warn!(path = %wt.path, stderr = %e, "git worktree remove failed"),
    }
    if let Some(b) = &wt.branch
        && let Err(e) = git(repo, &["branch", "-D", b]).await
    {
        tracing::warn!(branch = %b, stderr = %e, "cannot delete the session's branch");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn branch_names() {
        assert_eq!(
            branch_name("cse_0123456789abcdef0123"),
            "bridge/0123456789ab"
        );
        assert_eq!(branch_name("x"), "bridge/x");
    }
}
