//! Host-only requests through a scale-out gateway (issue 14): the changes panel
//! (`GET …/changes`, `…/changes/diff?path=`), fork and rewind of a session another node runs read
//! that node's disk or talk to its agent, so a gateway forwards them to the host over NATS and
//! returns its answer as is: same statuses and bodies as the host, rights decided on the gateway
//! (and again on the host, as the gateway's caller), confinement as on a single relay, and a clear
//! 503 when the host or NATS cannot be reached.
//!
//! One NATS server, one `agents` node and one `gateway` (`--demo`). The harness is written here
//! until the shared one (`tests/common/cluster.rs`) lands.

use std::path::Path;

use crate::common::cluster::{create_through_with, node, with_agents};
use crate::common::nats::NatsServer;
use crate::common::*;
use serde_json::{Value, json};

struct Cluster {
    nats: NatsServer,
    agents: RelayProc,
    gw: RelayProc,
    _dirs: Vec<tempfile::TempDir>,
}

fn cluster() -> Cluster {
    let (nats, dirs, agents) = with_agents(2);
    let gw = node(&nats, dirs[1].path(), "gateway", "gwb");
    Cluster {
        nats,
        agents,
        gw,
        _dirs: dirs,
    }
}

/// A session in `cwd` made through the gateway (placed on host1 once its heartbeat is seen).
async fn create_through(gw: &RelayProc, cwd: &Path) -> String {
    let (sid, v) = create_through_with(gw, json!({ "cwd": cwd.display().to_string() })).await;
    assert_eq!(v["host"], "host1", "{v}");
    sid
}

/// A repository whose `proj/` is the session's cwd: a modified file, an untracked one, a change
/// outside the cwd, and an untracked symlink to a secret outside the repository.
fn repo(root: &Path) -> std::path::PathBuf {
    let repo = root.join("repo");
    let proj = repo.join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::create_dir_all(repo.join("other")).unwrap();
    std::fs::write(proj.join("modified.txt"), "one\ntwo\nthree\n").unwrap();
    std::fs::write(repo.join("other/outside.txt"), "x\n").unwrap();
    git_commit_all(&repo);
    std::fs::write(proj.join("modified.txt"), "one\nTWO\nthree\nfour\n").unwrap();
    std::fs::write(proj.join("new.txt"), "n1\nn2\n").unwrap();
    std::fs::write(repo.join("other/outside.txt"), "not in the cwd\n").unwrap();
    std::fs::write(root.join("secret.txt"), "TOP-SECRET-CONTENT\n").unwrap();
    std::os::unix::fs::symlink(root.join("secret.txt"), proj.join("escape.txt")).unwrap();
    proj
}

async fn send(req: reqwest::RequestBuilder) -> (u16, Value) {
    let r = req.send().await.unwrap();
    let status = r.status().as_u16();
    let text = r.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

async fn get(relay: &RelayProc, path: &str, token: &str) -> (u16, Value) {
    send(http().get(relay.url(path)).bearer_auth(token)).await
}

async fn post(relay: &RelayProc, path: &str, token: &str, body: Value) -> (u16, Value) {
    send(http().post(relay.url(path)).bearer_auth(token).json(&body)).await
}

fn diff_path(sid: &str, path: &str) -> String {
    let q: String = url_encode(path);
    format!("/v1/code/sessions/{sid}/changes/diff?path={q}")
}

/// A listing without the time it was computed (each answer may be a fresh computation).
fn listing(mut v: Value) -> Value {
    v.as_object_mut()
        .expect("a listing")
        .remove("computed_at")
        .expect("computed_at");
    v
}

/// The changes panel of a session host1 runs, read through the gateway, is what host1 serves:
/// the listing and each diff, for the controller and for an observer; confinement as on a single
/// relay (`..` and absolute paths 400, a symlink out of the cwd 404, nothing of the secret shown);
/// a scoped observer of another session and a caller without credentials are refused on the
/// gateway.
#[tokio::test]
async fn changes_and_diffs_through_a_gateway_are_the_hosts() {
    let c = cluster();
    let dir = tempfile::tempdir().unwrap();
    let proj = repo(dir.path());
    let sid = create_through(&c.gw, &proj).await;
    let changes = format!("/v1/code/sessions/{sid}/changes");

    let (s, on_host) = get(&c.agents, &changes, TOKEN).await;
    assert_eq!(s, 200, "{on_host}");
    let (s, on_gw) = get(&c.gw, &changes, TOKEN).await;
    assert_eq!(s, 200, "{on_gw}");
    assert_eq!(listing(on_gw.clone()), listing(on_host.clone()));
    let mut paths = strings_of(&on_gw, "files", "path");
    paths.sort_unstable();
    assert_eq!(paths, ["escape.txt", "modified.txt", "new.txt"], "{on_gw}");
    for file in ["modified.txt", "new.txt"] {
        let (s, d) = get(&c.gw, &diff_path(&sid, file), TOKEN).await;
        assert_eq!(s, 200, "{d}");
        assert_eq!(d, get(&c.agents, &diff_path(&sid, file), TOKEN).await.1);
    }
    let (_, d) = get(&c.gw, &diff_path(&sid, "modified.txt"), TOKEN).await;
    assert!(d["diff"].as_str().unwrap().contains("-two\n+TWO\n"), "{d}");

    // An observer of this session reads the host's answer for an observer through the gateway:
    // tracked files only here (the untracked new.txt and escape.txt are not the session's work).
    let minted = c.gw.mint_observer(json!({ "session_id": sid })).await;
    let obs = minted["token"].as_str().unwrap();
    let (s, as_obs) = get(&c.gw, &changes, obs).await;
    assert_eq!(s, 200, "{as_obs}");
    let mut for_obs = on_host.clone();
    for_obs["files"]
        .as_array_mut()
        .unwrap()
        .retain(|f| f["status"] != "untracked");
    assert_eq!(listing(as_obs), listing(for_obs));
    let (s, d) = get(&c.gw, &diff_path(&sid, "modified.txt"), obs).await;
    assert_eq!((s, d["diff"].as_str().is_some()), (200, true), "{d}");
    let (s, d) = get(&c.gw, &diff_path(&sid, "new.txt"), obs).await;
    assert_eq!(s, 404, "an untracked file the session did not write: {d}");

    // Confinement: the host's answers, statuses and all; nothing of what lies outside.
    let secret = dir.path().join("secret.txt").display().to_string();
    let cases: &[(&str, u16)] = &[
        ("../other/outside.txt", 400),
        ("..", 400),
        (&secret, 400),
        ("/etc/passwd", 400),
        ("escape.txt", 404),
        ("nope.txt", 404),
    ];
    for (path, want) in cases {
        let (s, body) = get(&c.gw, &diff_path(&sid, path), TOKEN).await;
        assert_eq!(s, *want, "{path:?}: {body}");
        assert_eq!(body["type"], "error", "{path:?}: {body}");
        let text = body.to_string();
        assert!(!text.contains("TOP-SECRET"), "{path:?} leaked: {text}");
        assert!(!text.contains("not in the cwd"), "{path:?} leaked: {text}");
        assert_eq!(
            (s, body),
            get(&c.agents, &diff_path(&sid, path), TOKEN).await,
            "{path:?}: the host's own answer"
        );
    }
    let (s, body) = get(&c.gw, &format!("{changes}/diff"), TOKEN).await;
    assert_eq!(s, 400, "no ?path=: {body}");

    // Refused on the gateway.
    let other_sid = create_through(&c.gw, dir.path()).await;
    let other = c.gw.mint_observer(json!({ "session_id": other_sid })).await;
    let (s, body) = get(&c.gw, &changes, other["token"].as_str().unwrap()).await;
    assert_eq!(s, 403, "{body}");
    let (s, body) = send(http().get(c.gw.url(&changes))).await;
    assert_eq!(s, 401, "{body}");
    let (s, body) = get(&c.gw, "/v1/code/sessions/cse_nope/changes", TOKEN).await;
    assert_eq!(s, 404, "{body}");
}

/// Fork and rewind of a session host1 runs, through the gateway: an observer is refused on the
/// gateway (403), the controller gets host1's own answers (the demo agent writes no transcript:
/// 409 `no_transcript`; a malformed rewind: 400), and a fork's status and body equal the host's.
#[tokio::test]
async fn fork_and_rewind_through_a_gateway_answer_as_the_host() {
    let c = cluster();
    let dir = tempfile::tempdir().unwrap();
    let sid = create_through(&c.gw, dir.path()).await;
    let base = format!("/v1/code/sessions/{sid}");
    let minted = c.gw.mint_observer(json!({ "session_id": sid })).await;
    let obs = minted["token"].as_str().unwrap();
    for tail in ["/fork", "/rewind"] {
        let (s, body) = post(&c.gw, &format!("{base}{tail}"), obs, json!({})).await;
        assert_eq!(s, 403, "{tail}: {body}");
    }
    let fork = post(&c.gw, &format!("{base}/fork"), TOKEN, json!({})).await;
    assert_eq!(fork.0, 409, "{}", fork.1);
    assert_eq!(fork.1["error"]["type"], "no_transcript", "{}", fork.1);
    assert_eq!(
        fork,
        post(&c.agents, &format!("{base}/fork"), TOKEN, json!({})).await
    );
    let bad = json!({ "user_message_id": "" });
    let rewind = post(&c.gw, &format!("{base}/rewind"), TOKEN, bad.clone()).await;
    assert_eq!(rewind.0, 400, "{}", rewind.1);
    assert_eq!(
        rewind,
        post(&c.agents, &format!("{base}/rewind"), TOKEN, bad).await
    );
}

/// The session's host gone, then NATS: the gateway says so (503 `cluster_unavailable`, naming the
/// host or NATS) instead of 404 or a hang.
#[tokio::test]
async fn host_down_or_nats_down_is_a_clear_503() {
    let mut c = cluster();
    let dir = tempfile::tempdir().unwrap();
    let sid = create_through(&c.gw, dir.path()).await;
    let changes = format!("/v1/code/sessions/{sid}/changes");
    let (s, body) = get(&c.gw, &changes, TOKEN).await;
    assert_eq!(s, 200, "{body}");

    c.agents.kill();
    let started = std::time::Instant::now();
    let (s, body) = get(&c.gw, &changes, TOKEN).await;
    assert_eq!(s, 503, "{body}");
    assert_eq!(body["error"]["type"], "cluster_unavailable", "{body}");
    let msg = body["error"]["message"].as_str().unwrap();
    assert!(msg.contains("host1"), "{msg}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "answered at once: {:?}",
        started.elapsed()
    );

    c.nats.stop();
    let (s, body) = get(&c.gw, &diff_path(&sid, "x"), TOKEN).await;
    assert_eq!(s, 503, "{body}");
    assert_eq!(body["error"]["type"], "cluster_unavailable", "{body}");
    assert!(
        body["error"]["message"].as_str().unwrap().contains("NATS"),
        "{body}"
    );
}
