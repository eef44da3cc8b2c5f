//! The changes panel's API (`GET /v1/code/sessions/{id}/changes` and `…/changes/diff?path=`)
//! against the real relay binary: a git repository with every kind of change, confinement (`..`,
//! absolute paths, symlinks out of the cwd), the size cap, a directory outside git where the
//! session's own tool calls say what changed, observers, unknown sessions, and shared computation.

use std::path::Path;

use crate::common::*;
use serde_json::{Value, json};

fn write(path: &Path, content: impl AsRef<[u8]>) {
    if let Some(p) = path.parent() {
        std::fs::create_dir_all(p).unwrap();
    }
    std::fs::write(path, content).unwrap();
}

async fn create_in(relay: &RelayProc, cwd: &Path, extra: Value) -> String {
    let mut body = json!({"cwd": cwd.display().to_string()});
    body.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    relay.create_session_with(body).await
}

async fn get(relay: &RelayProc, path: &str, token: &str) -> (u16, Value) {
    let r = relay.get(path, token).await;
    let status = r.status().as_u16();
    let text = r.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

async fn diff(relay: &RelayProc, sid: &str, path: &str, token: &str) -> (u16, Value) {
    get(
        relay,
        &format!(
            "/v1/code/sessions/{sid}/changes/diff?path={}",
            url_encode(path)
        ),
        token,
    )
    .await
}

fn by_path(list: &Value) -> std::collections::BTreeMap<String, Value> {
    list["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| (f["path"].as_str().unwrap().to_owned(), f.clone()))
        .collect()
}

/// `<root>/repo`: a repository holding `file` (with `content`), committed.
fn committed(root: &Path, file: &str, content: &str) -> std::path::PathBuf {
    let repo = root.join("repo");
    write(&repo.join(file), content);
    git_commit_all(&repo);
    repo
}

/// A repository whose `proj/` is the session's cwd, with every kind of change in it, a change
/// outside it, and a secret outside the repository that a symlink points to.
fn repo_with_changes(root: &Path) -> std::path::PathBuf {
    let repo = root.join("repo");
    let proj = repo.join("proj");
    write(&proj.join("modified.txt"), "one\ntwo\nthree\n");
    write(&proj.join("deleted.txt"), "going away\n");
    write(&proj.join("old name.txt"), "renamed content\nline 2\n");
    write(&proj.join("image.bin"), b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR");
    write(&proj.join("same.txt"), "unchanged\n");
    write(&repo.join("other/outside.txt"), "not in the cwd\n");
    git_commit_all(&repo);
    write(&proj.join("modified.txt"), "one\nTWO\nthree\nfour\n");
    std::fs::remove_file(proj.join("deleted.txt")).unwrap();
    git(&proj, &["mv", "old name.txt", "new name.txt"]);
    write(&proj.join("staged.txt"), "staged\n");
    git(&proj, &["add", "staged.txt"]);
    write(&proj.join("dir/untracked.txt"), "u1\nu2\nu3\n");
    write(
        &proj.join("image.bin"),
        b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\x01\x02",
    );
    write(&proj.join("new.bin"), b"\0\x01\x02binary");
    write(
        &repo.join("other/outside.txt"),
        "changed, but not in the cwd\n",
    );
    write(&root.join("secret.txt"), "TOP-SECRET-CONTENT\n");
    std::os::unix::fs::symlink(root.join("secret.txt"), proj.join("escape.txt")).unwrap();
    std::os::unix::fs::symlink(root, proj.join("escape-dir")).unwrap();
    proj
}

/// [`repo_with_changes`] under a fresh directory and a demo relay (data in `<dir>/data`) with a
/// session in its `proj/`: the directory, the relay and the session id.
async fn session_in_repo() -> (tempfile::TempDir, RelayProc, String) {
    let dir = tempfile::tempdir().unwrap();
    let proj = repo_with_changes(dir.path());
    let relay = RelayProc::start(Opts::demo(&dir.path().join("data")));
    let sid = create_in(&relay, &proj, json!({})).await;
    (dir, relay, sid)
}

#[tokio::test]
async fn a_git_repository_lists_every_kind_of_change_with_diffs() {
    let (_dir, relay, sid) = session_in_repo().await;

    let (status, list) = get(&relay, &format!("/v1/code/sessions/{sid}/changes"), TOKEN).await;
    assert_eq!(status, 200, "{list}");
    assert_eq!(list["source"], "git");
    assert_eq!(list["branch"], "main");
    assert_eq!(list["truncated"], false);
    let files = by_path(&list);
    let kinds: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, f)| (p.as_str(), f["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        kinds,
        vec![
            ("deleted.txt", "deleted"),
            ("dir/untracked.txt", "untracked"),
            ("escape-dir", "untracked"),
            ("escape.txt", "untracked"),
            ("image.bin", "modified"),
            ("modified.txt", "modified"),
            ("new name.txt", "renamed"),
            ("new.bin", "untracked"),
            ("staged.txt", "added"),
        ],
        "{list:#}"
    );
    let m = &files["modified.txt"];
    assert_eq!(
        (m["insertions"].as_u64(), m["deletions"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!(m["binary"], false);
    assert_eq!(m["size"], 19);
    assert_eq!(files["new name.txt"]["from"], "old name.txt");
    assert_eq!(files["dir/untracked.txt"]["insertions"], 3);
    assert_eq!(files["deleted.txt"]["size"], Value::Null);
    assert_eq!(files["deleted.txt"]["deletions"], 1);
    assert_eq!(files["image.bin"]["binary"], true);
    assert_eq!(files["new.bin"]["binary"], true);
    assert_eq!(files["image.bin"]["insertions"], Value::Null);

    // Diffs.
    let (s, d) = diff(&relay, &sid, "modified.txt", TOKEN).await;
    assert_eq!(s, 200, "{d}");
    let text = d["diff"].as_str().unwrap();
    assert!(text.contains("-two\n+TWO\n"), "{text}");
    assert!(text.contains("+four\n"), "{text}");
    assert_eq!(d["truncated"], false);
    let (_, d) = diff(&relay, &sid, "dir/untracked.txt", TOKEN).await;
    let text = d["diff"].as_str().unwrap();
    assert!(
        text.contains("+u1\n+u2\n+u3\n"),
        "untracked shows as all added: {text}"
    );
    let (_, d) = diff(&relay, &sid, "deleted.txt", TOKEN).await;
    assert!(d["diff"].as_str().unwrap().contains("-going away\n"), "{d}");
    let (_, d) = diff(&relay, &sid, "new name.txt", TOKEN).await;
    assert_eq!(d["status"], "renamed");
    assert!(
        d["diff"]
            .as_str()
            .unwrap()
            .contains("rename from old name.txt"),
        "{d}"
    );
    let (_, d) = diff(&relay, &sid, "staged.txt", TOKEN).await;
    assert!(d["diff"].as_str().unwrap().contains("+staged\n"), "{d}");
    for bin in ["image.bin", "new.bin"] {
        let (s, d) = diff(&relay, &sid, bin, TOKEN).await;
        assert_eq!(s, 200);
        assert_eq!(d["binary"], true, "{d}");
        assert_eq!(
            d["diff"],
            Value::Null,
            "binary files are named, never dumped: {d}"
        );
    }
    // A path given as `./x` is the same file.
    let (s, d) = diff(&relay, &sid, "./modified.txt", TOKEN).await;
    assert_eq!((s, d["path"].as_str()), (200, Some("modified.txt")));
}

#[tokio::test]
async fn paths_out_of_the_cwd_are_refused_without_content() {
    let (dir, relay, sid) = session_in_repo().await;
    let cases: &[(&str, u16)] = &[
        ("../other/outside.txt", 400),
        ("dir/../../other/outside.txt", 400),
        ("..", 400),
        ("/etc/passwd", 400),
        (&*dir.path().join("secret.txt").display().to_string(), 400),
        ("", 400),
        // Listed (an untracked symlink), but it resolves outside the cwd.
        ("escape.txt", 404),
        ("escape-dir", 404),
        ("escape-dir/secret.txt", 404),
        // Inside, but not a change.
        ("same.txt", 404),
        ("nope.txt", 404),
    ];
    for (path, want) in cases {
        let (s, body) = diff(&relay, &sid, path, TOKEN).await;
        assert_eq!(s, *want, "{path:?}: {body}");
        let text = body.to_string();
        assert!(
            !text.contains("TOP-SECRET-CONTENT"),
            "{path:?} leaked: {text}"
        );
        assert!(!text.contains("not in the cwd"), "{path:?} leaked: {text}");
        assert_eq!(body["type"], "error", "{path:?}: {body}");
    }
    // Without `path`.
    let (s, _) = get(
        &relay,
        &format!("/v1/code/sessions/{sid}/changes/diff"),
        TOKEN,
    )
    .await;
    assert_eq!(s, 400);
    // The list never names what lies outside the cwd.
    let (_, list) = get(&relay, &format!("/v1/code/sessions/{sid}/changes"), TOKEN).await;
    assert!(!list.to_string().contains("outside.txt"), "{list}");
}

#[tokio::test]
async fn a_huge_diff_is_cut_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let repo = committed(dir.path(), "README", "hi\n");
    let line = "x".repeat(79) + "\n";
    write(&repo.join("huge.txt"), line.repeat(20_000)); // 1.6 MB
    let relay = RelayProc::start(Opts::demo(&dir.path().join("data")));
    let sid = create_in(&relay, &repo, json!({})).await;
    let (_, list) = get(&relay, &format!("/v1/code/sessions/{sid}/changes"), TOKEN).await;
    assert_eq!(by_path(&list)["huge.txt"]["size"], 1_600_000);
    let (s, d) = diff(&relay, &sid, "huge.txt", TOKEN).await;
    assert_eq!(s, 200);
    assert_eq!(d["truncated"], true);
    let text = d["diff"].as_str().unwrap();
    assert!(
        text.len() <= 256 * 1024 && text.len() > 200 * 1024,
        "{}",
        text.len()
    );
    assert!(text.ends_with('\n'));
}

/// A scenario whose one turn writes a new file, edits another, writes outside the cwd, and
/// writes through a symlink out of it (the demo agent simulates the tools; the test makes the
/// matching changes on disk).
fn tools_scenario(path: &Path) {
    let s = json!({"name": "writes", "replies": [{"steps": [
        {"type": "tool_use", "name": "Write", "input": {"file_path": "{cwd}/made.txt", "content": "made\n"}},
        {"type": "tool_use", "name": "Edit", "input": {"file_path": "{cwd}/edited.txt", "old_string": "a", "new_string": "b"}},
        {"type": "tool_use", "name": "Write", "input": {"file_path": "{cwd}/../elsewhere.txt", "content": "x"}},
        {"type": "tool_use", "name": "Write", "input": {"file_path": "{cwd}/link/inside-link.txt", "content": "x"}},
        {"type": "tool_use", "name": "Write", "input": {"file_path": "{cwd}/never.txt", "content": "x"}},
        {"type": "text", "text": "done"}
    ]}]});
    std::fs::write(path, s.to_string()).unwrap();
}

#[tokio::test]
async fn outside_git_the_files_the_sessions_tools_wrote_are_listed() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    let outside = dir.path().join("outside");
    write(&outside.join("inside-link.txt"), "OUTSIDE-CONTENT\n");
    write(&work.join("edited.txt"), "b\n");
    write(
        &work.join("untouched.txt"),
        "the session never wrote this\n",
    );
    std::os::unix::fs::symlink(&outside, work.join("link")).unwrap();
    let scenario = dir.path().join("scenario.json");
    tools_scenario(&scenario);
    let relay = RelayProc::start(
        Opts::demo(&dir.path().join("data"))
            .arg("--demo-scenario")
            .arg(scenario.to_str().unwrap()),
    );
    let sid = create_in(&relay, &work, json!({"permission_mode": "acceptEdits"})).await;

    let (s, list) = get(&relay, &format!("/v1/code/sessions/{sid}/changes"), TOKEN).await;
    assert_eq!(s, 200, "{list}");
    assert_eq!(list["source"], "tools");
    assert_eq!(list["files"], json!([]), "nothing written yet: {list}");

    let mut sse = relay.prompt(&sid, "write the files").await;
    sse.until("result", is_result).await;
    // What the (simulated) writes did on disk.
    write(&work.join("made.txt"), "made\n");

    // The log moved: the cached listing is not reused.
    let (_, list) = get(&relay, &format!("/v1/code/sessions/{sid}/changes"), TOKEN).await;
    let files = by_path(&list);
    assert_eq!(
        files.keys().map(String::as_str).collect::<Vec<_>>(),
        vec!["edited.txt", "made.txt"],
        "outside the cwd, through a symlink out of it, and never on disk are left out: {list:#}"
    );
    assert_eq!(files["made.txt"]["status"], "added");
    assert_eq!(files["made.txt"]["insertions"], 1);
    assert_eq!(files["edited.txt"]["status"], "modified");
    assert!(!list.to_string().contains("OUTSIDE"));

    let (s, d) = diff(&relay, &sid, "made.txt", TOKEN).await;
    assert_eq!(s, 200, "{d}");
    assert_eq!(
        d["diff"],
        "--- /dev/null\n+++ b/made.txt\n@@ -0,0 +1 @@\n+made\n"
    );
    // The demo's Edit result carries no `originalFile`: shown whole, as added, and it says why.
    let (_, d) = diff(&relay, &sid, "edited.txt", TOKEN).await;
    assert!(d["diff"].as_str().unwrap().contains("+b\n"), "{d}");
    assert!(
        d["note"].as_str().unwrap().contains("not in its log"),
        "{d}"
    );
    for p in ["untouched.txt", "link/inside-link.txt", "never.txt"] {
        let (s, body) = diff(&relay, &sid, p, TOKEN).await;
        assert_eq!(s, 404, "{p}: {body}");
        assert!(!body.to_string().contains("OUTSIDE-CONTENT"));
    }
}

#[tokio::test]
async fn observers_read_unknown_sessions_are_404_and_consoles_share_one_computation() {
    let dir = tempfile::tempdir().unwrap();
    let proj = repo_with_changes(dir.path());
    let relay = RelayProc::start(Opts::demo(&dir.path().join("data")));
    let sid = create_in(&relay, &proj, json!({})).await;
    let other = create_in(&relay, &proj, json!({})).await;
    let observer = relay.observer_token(json!({"session_id": sid})).await;

    let (s, list) = get(
        &relay,
        &format!("/v1/code/sessions/{sid}/changes"),
        &observer,
    )
    .await;
    assert_eq!(s, 200, "{list}");
    assert!(by_path(&list).contains_key("modified.txt"));
    let (s, d) = diff(&relay, &sid, "modified.txt", &observer).await;
    assert_eq!(s, 200);
    assert!(d["diff"].as_str().unwrap().contains("+TWO"));
    // Scoped to its session.
    let (s, _) = get(
        &relay,
        &format!("/v1/code/sessions/{other}/changes"),
        &observer,
    )
    .await;
    assert_eq!(s, 403);
    // No credentials, no session.
    let r = http()
        .get(relay.url(&format!("/v1/code/sessions/{sid}/changes")))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    let (s, body) = get(&relay, "/v1/code/sessions/cse_nope/changes", TOKEN).await;
    assert_eq!(
        (s, body["error"]["type"].as_str()),
        (404, Some("not_found_error"))
    );
    let (s, _) = diff(&relay, "cse_nope", "modified.txt", TOKEN).await;
    assert_eq!(s, 404);

    // Ten consoles asking at once get one computation.
    let url = format!("/v1/code/sessions/{other}/changes");
    let answers = futures::future::join_all((0..10).map(|_| get(&relay, &url, TOKEN))).await;
    let stamps: std::collections::BTreeSet<String> = answers
        .iter()
        .map(|(s, v)| {
            assert_eq!(*s, 200);
            v["computed_at"].as_str().unwrap().to_owned()
        })
        .collect();
    assert_eq!(stamps.len(), 1, "{stamps:?}");
}

#[tokio::test]
async fn observers_see_tracked_files_and_what_the_session_wrote_never_other_untracked_files() {
    let dir = tempfile::tempdir().unwrap();
    let proj = repo_with_changes(dir.path());
    write(&proj.join(".env"), "API_KEY=TOP-SECRET-ENV\n");
    let scenario = dir.path().join("scenario.json");
    let s = json!({"name": "writes", "replies": [{"steps": [
        {"type": "tool_use", "name": "Write", "input": {"file_path": "{cwd}/made.txt", "content": "made\n"}},
        {"type": "text", "text": "done"}
    ]}]});
    std::fs::write(&scenario, s.to_string()).unwrap();
    let relay = RelayProc::start(
        Opts::demo(&dir.path().join("data"))
            .arg("--demo-scenario")
            .arg(scenario.to_str().unwrap()),
    );
    let sid = create_in(&relay, &proj, json!({"permission_mode": "acceptEdits"})).await;
    let mut sse = relay.prompt(&sid, "write it").await;
    sse.until("result", is_result).await;
    write(&proj.join("made.txt"), "made\n");

    let scoped = relay.observer_token(json!({"session_id": sid})).await;
    let unscoped = relay.observer_token(json!({"session_id": null})).await;
    let url = format!("/v1/code/sessions/{sid}/changes");
    let (_, all) = get(&relay, &url, TOKEN).await;
    let all = by_path(&all);
    assert!(
        all.contains_key(".env") && all.contains_key("dir/untracked.txt"),
        "the controller sees every change: {all:?}"
    );
    for observer in [&scoped, &unscoped] {
        let (s, list) = get(&relay, &url, observer).await;
        assert_eq!(s, 200, "{list}");
        let files = by_path(&list);
        for seen in [
            "modified.txt",
            "deleted.txt",
            "new name.txt",
            "staged.txt",
            "made.txt",
        ] {
            assert!(files.contains_key(seen), "{seen}: {list:#}");
        }
        for hidden in [".env", "dir/untracked.txt", "new.bin", "escape.txt"] {
            assert!(!files.contains_key(hidden), "{hidden}: {list:#}");
            let (s, body) = diff(&relay, &sid, hidden, observer).await;
            assert_eq!(s, 404, "{hidden}: {body}");
        }
        assert!(!list.to_string().contains("TOP-SECRET"));
        let (s, d) = diff(&relay, &sid, "made.txt", observer).await;
        assert_eq!(s, 200, "{d}");
        assert!(d["diff"].as_str().unwrap().contains("+made"), "{d}");
    }
    let (s, d) = diff(&relay, &sid, ".env", TOKEN).await;
    assert_eq!(s, 200);
    assert!(d["diff"].as_str().unwrap().contains("TOP-SECRET-ENV"));
}

#[tokio::test]
async fn a_repositorys_filter_and_diff_drivers_never_run() {
    let dir = tempfile::tempdir().unwrap();
    let repo = committed(dir.path(), "f.txt", "a\n");
    let marker = dir.path().join("ran");
    let m = marker.display().to_string();
    git(
        &repo,
        &[
            "config",
            "filter.evil.clean",
            &format!("touch {m}-clean; cat"),
        ],
    );
    git(
        &repo,
        &[
            "config",
            "filter.evil.smudge",
            &format!("touch {m}-smudge; cat"),
        ],
    );
    git(
        &repo,
        &[
            "config",
            "filter.evil.process",
            &format!("touch {m}-process; false"),
        ],
    );
    git(
        &repo,
        &[
            "config",
            "filter.other.dots.process",
            &format!("touch {m}-dots; false"),
        ],
    );
    git(
        &repo,
        &[
            "config",
            "diff.evil.textconv",
            &format!("touch {m}-textconv; cat"),
        ],
    );
    write(
        &repo.join(".gitattributes"),
        "* filter=evil diff=evil\n*.md filter=other.dots\n",
    );
    write(&repo.join(".git/info/attributes"), "* filter=evil\n");
    write(&repo.join("f.txt"), "a\nb\n");
    write(&repo.join("new.md"), "new\n");
    let relay = RelayProc::start(Opts::demo(&dir.path().join("data")));
    let sid = create_in(&relay, &repo, json!({})).await;
    let (s, list) = get(&relay, &format!("/v1/code/sessions/{sid}/changes"), TOKEN).await;
    assert_eq!(s, 200, "{list}");
    let files = by_path(&list);
    assert_eq!(files["f.txt"]["status"], "modified", "{list:#}");
    for p in ["f.txt", "new.md", ".gitattributes"] {
        let (s, d) = diff(&relay, &sid, p, TOKEN).await;
        assert_eq!(s, 200, "{p}: {d}");
    }
    let ran: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("ran"))
        .collect();
    assert!(ran.is_empty(), "the repository's drivers ran: {ran:?}");
    // The drivers do run for git itself here: the test would catch them.
    std::process::Command::new("git")
        .args(["diff", "HEAD", "--no-ext-diff", "--no-textconv"])
        .current_dir(&repo)
        .output()
        .unwrap();
    assert!(
        std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .any(|e| e.file_name().to_string_lossy().starts_with("ran")),
        "a plain git diff runs the planted driver"
    );
}
