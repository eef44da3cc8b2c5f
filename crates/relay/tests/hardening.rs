//! Hardening (issue 13, "Processes and durability") over real HTTP: the `bridge-relay` binary on
//! 127.0.0.1:0.

use crate::common::*;

/// Every page and API answer carries the security headers; the console's inline loader is allowed
/// by hash, never by `'unsafe-inline'`.
#[tokio::test]
async fn every_answer_carries_the_security_headers() {
    let dir = tempfile::tempdir().unwrap();
    let www = dir.path().join("www");
    std::fs::create_dir_all(&www).unwrap();
    let loader = "\nimport init from '/app.js';\nawait init();\n";
    std::fs::write(
        www.join("index.html"),
        format!("<!doctype html><head><script type=\"module\">{loader}</script></head>"),
    )
    .unwrap();
    let mut o = Opts::demo(dir.path());
    o.static_dir = Some(&www);
    let relay = RelayProc::start(o);
    let c = http();
    for (path, status) in [
        ("/", 200),
        ("/s/cse_x", 200),
        ("/healthz", 200),
        ("/v1/me", 401),
        ("/v1/nope", 404),
    ] {
        let r = c.get(relay.url(path)).send().await.unwrap();
        assert_eq!(r.status(), status, "{path}");
        let h = r.headers();
        assert_eq!(h["x-content-type-options"], "nosniff", "{path}");
        assert_eq!(h["referrer-policy"], "no-referrer", "{path}");
        let csp = h["content-security-policy"].to_str().unwrap();
        for d in [
            "default-src 'self'",
            "script-src 'self' 'wasm-unsafe-eval' 'sha256-",
            "connect-src 'self'",
            "frame-ancestors 'self'",
            "base-uri 'none'",
            "form-action 'self'",
            "object-src 'none'",
        ] {
            assert!(csp.contains(d), "{path}: {d} missing in {csp}");
        }
        let script_src = csp.split(';').find(|d| d.contains("script-src")).unwrap();
        assert!(!script_src.contains("unsafe-inline"), "{csp}");
    }
    let r = send(c.get(relay.url("/")).header("Host", "evil.example")).await;
    assert_eq!(r.status(), 403);
    assert_eq!(r.headers()["x-content-type-options"], "nosniff");
}

async fn create(relay: &RelayProc, body: serde_json::Value) -> (u16, serde_json::Value) {
    let r = post_json(relay, "/v1/code/sessions", TOKEN, body).await;
    (r.status().as_u16(), r.json().await.unwrap_or_default())
}

fn set_mode(mode: &str) -> serde_json::Value {
    serde_json::json!({"type": "control_request", "request_id": format!("r_{mode}"),
        "request": {"subtype": "set_permission_mode", "mode": mode}})
}

/// `permission_mode` and `model` are checked; `bypassPermissions` needs the relay's permission.
#[tokio::test]
async fn permission_mode_and_model_are_validated_and_bypass_needs_the_flag() {
    use serde_json::json;
    let (_dir, relay) = demo_relay(&[]);
    let (status, body) = create(&relay, json!({"permission_mode": "bypassPermissions"})).await;
    assert_eq!(status, 403, "{body}");
    assert!(
        has_text(&body["error"]["message"], "--allow-bypass-permissions"),
        "{body}"
    );
    for bad in [
        json!({"permission_mode": "yolo"}),
        json!({"model": "--dangerously-skip-permissions"}),
        json!({"model": ""}),
        json!({"model": "x".repeat(201)}),
    ] {
        assert_eq!(create(&relay, bad.clone()).await.0, 400, "{bad}");
    }
    let sid = relay
        .create_session_with(json!({"permission_mode": "plan", "model": "opus[1m]"}))
        .await;
    let set_model = json!({"type": "control_request", "request_id": "r_m",
        "request": {"subtype": "set_model", "model": "a b"}});
    for (message, status) in [
        (set_mode("bypassPermissions"), 403),
        (set_mode("nope"), 400),
        (set_model, 400),
        (set_mode("acceptEdits"), 200),
    ] {
        let r = relay.post(&sid, TOKEN, message.clone()).await;
        assert_eq!(r.status(), status, "{message}");
    }

    let (_dir2, allowed) = demo_relay(&["--allow-bypass-permissions"]);
    let sid = allowed
        .create_session_with(json!({"permission_mode": "bypassPermissions"}))
        .await;
    assert_eq!(
        allowed
            .post(&sid, TOKEN, set_mode("bypassPermissions"))
            .await
            .status(),
        200
    );
}

/// An agent that starts a background `sleep` (as a tool's background command would), records its
/// own pid and the sleep's, reads stdin until it closes, then keeps running.
fn background_agent(dir: &std::path::Path) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt as _;
    let script = dir.join("agent.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\nsleep 1000 &\necho $! > \"$MARK_DIR/bg.pid\"\necho $$ > \"$MARK_DIR/agent.pid\"\n\
         cat > /dev/null\nexec sleep 1000\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

fn script_relay<'a>(
    data: &'a std::path::Path,
    script: &std::path::Path,
    marks: &std::path::Path,
) -> Opts<'a> {
    let mut o = Opts::demo(data);
    o.args = vec!["--claude".into(), script.display().to_string()];
    o.env("MARK_DIR", &marks.display().to_string())
}

/// Archiving stops the agent's whole process group: its background processes go too.
#[tokio::test]
async fn archive_stops_the_background_processes_of_the_agent() {
    let dir = tempfile::tempdir().unwrap();
    let script = background_agent(dir.path());
    let relay = RelayProc::start(script_relay(dir.path(), &script, dir.path()));
    let sid = relay.create_session().await;
    let bg = read_pid(&dir.path().join("bg.pid")).await;
    let agent = read_pid(&dir.path().join("agent.pid")).await;
    assert!(alive(bg) && alive(agent));
    assert_eq!(relay.archive(&sid).await, 200);
    assert!(gone_within(agent, 15).await, "the agent was stopped");
    assert!(
        gone_within(bg, 5).await,
        "its background sleep was stopped too"
    );
}

/// A relay killed with SIGKILL leaves its agent running; the next start on the same data dir stops
/// it (and its process group).
#[tokio::test]
async fn a_restart_after_a_crash_stops_the_agents_left_behind() {
    let dir = tempfile::tempdir().unwrap();
    let script = background_agent(dir.path());
    let mut relay = RelayProc::start(script_relay(dir.path(), &script, dir.path()));
    relay.create_session().await;
    let bg = read_pid(&dir.path().join("bg.pid")).await;
    let agent = read_pid(&dir.path().join("agent.pid")).await;
    relay.kill();
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(
        alive(agent) && alive(bg),
        "a crashed relay leaves its agent behind"
    );
    let _next = RelayProc::start(script_relay(dir.path(), &script, dir.path()));
    assert!(
        gone_within(agent, 5).await,
        "the leftover agent was stopped"
    );
    assert!(gone_within(bg, 5).await, "and its background sleep");
}

/// Worktree mode: each session works on its own branch, and archiving keeps a worktree holding
/// uncommitted changes or unmerged commits (the answer and the session say why) unless discarded.
#[tokio::test]
async fn archiving_a_worktree_never_destroys_work() {
    use serde_json::json;
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let git = |cwd: &std::path::Path, args: &[&str]| -> String {
        let out = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(cwd)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    git(&repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("README"), "hi").unwrap();
    git(&repo, &["add", "README"]);
    git(&repo, &["commit", "-q", "-m", "init"]);
    let data = dir.path().join("data");
    let mut o = Opts::demo(&data);
    o.args.extend([
        "--spawn-mode".into(),
        "worktree".into(),
        "--cwd".into(),
        repo.display().to_string(),
    ]);
    let relay = RelayProc::start(o);
    let archive = async |sid: &str, body: serde_json::Value| -> serde_json::Value {
        let r = post_json(
            &relay,
            &format!("/v1/code/sessions/{sid}/archive"),
            TOKEN,
            body,
        )
        .await;
        assert_eq!(r.status(), 200);
        r.json().await.unwrap()
    };
    let settled = async |sid: &str, path: &str, exists: bool| -> serde_json::Value {
        for _ in 0..200 {
            let s = relay.session(sid).await;
            if s["state"] == "ended" && std::path::Path::new(path).exists() == exists {
                return s;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        panic!("{sid}: worktree {path} should exist: {exists}");
    };
    let mut sessions = Vec::new();
    for _ in 0..4 {
        let sid = relay.create_session().await;
        let cwd = relay.session(&sid).await["cwd"]
            .as_str()
            .unwrap()
            .to_owned();
        let branch = git(std::path::Path::new(&cwd), &["branch", "--show-current"]);
        assert!(branch.starts_with("bridge/"), "its own branch: {branch}");
        sessions.push((sid, cwd, branch));
    }
    let branches = git(&repo, &["branch", "--list", "bridge/*"]);
    assert_eq!(branches.lines().count(), 4, "{branches}");

    // Uncommitted work: kept, and said so.
    let (a, cwd_a, _) = &sessions[0];
    std::fs::write(std::path::Path::new(cwd_a).join("notes.txt"), "work").unwrap();
    let answer = archive(a, json!({})).await;
    assert_eq!(answer["worktree_kept"], "uncommitted changes", "{answer}");
    assert_eq!(
        answer["worktree"]["path"],
        cwd_a.as_str(),
        "where: {answer}"
    );
    assert_eq!(
        answer["worktree"]["branch"],
        sessions[0].2.as_str(),
        "{answer}"
    );
    let s = settled(a, cwd_a, true).await;
    assert_eq!(s["worktree_kept"], "uncommitted changes", "{s}");

    // Committed but not merged into main: kept.
    let (b, cwd_b, _) = &sessions[1];
    let wt_b = std::path::Path::new(cwd_b);
    std::fs::write(wt_b.join("feature.txt"), "work").unwrap();
    git(wt_b, &["add", "feature.txt"]);
    git(wt_b, &["commit", "-q", "-m", "feature"]);
    let answer = archive(b, json!({})).await;
    assert_eq!(
        answer["worktree_kept"], "1 commit(s) not merged into main",
        "{answer}"
    );
    settled(b, cwd_b, true).await;

    // Nothing to lose: removed with its branch.
    let (c, cwd_c, branch_c) = &sessions[2];
    let answer = archive(c, json!({})).await;
    assert!(answer.get("worktree_kept").is_none(), "{answer}");
    let s = settled(c, cwd_c, false).await;
    assert!(s.get("worktree_kept").is_none(), "{s}");
    assert!(git(&repo, &["branch", "--list", branch_c]).is_empty());

    // Only an ignored file (a `.env`): removing the worktree would delete it, so it is kept.
    let (d, cwd_d, _) = &sessions[3];
    std::fs::create_dir_all(repo.join(".git/info")).unwrap();
    std::fs::write(repo.join(".git/info/exclude"), ".env\n").unwrap();
    std::fs::write(std::path::Path::new(cwd_d).join(".env"), "KEY=value\n").unwrap();
    let answer = archive(d, json!({})).await;
    assert_eq!(
        answer["worktree_kept"], "1 ignored file(s) git does not keep (such as .env)",
        "{answer}"
    );
    settled(d, cwd_d, true).await;
    assert!(std::path::Path::new(cwd_d).join(".env").exists());

    // The list shows the archived sessions whose worktree was kept only when asked to.
    let listed = async |query: &str| -> Vec<String> {
        let r = relay.get(&format!("/v1/code/sessions{query}"), TOKEN).await;
        let v: serde_json::Value = r.json().await.unwrap();
        let mut ids: Vec<String> = v["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["id"].as_str().unwrap().to_owned())
            .collect();
        ids.sort();
        ids
    };
    let mut kept = vec![a.clone(), b.clone(), d.clone()];
    kept.sort();
    assert_eq!(listed("").await, Vec::<String>::new());
    assert_eq!(listed("?kept_worktrees=1").await, kept);
    assert_eq!(listed("?include_archived=1").await.len(), 4);

    // Discarded on purpose: removed even with work in it.
    archive(a, json!({"discard_worktree": true})).await;
    let s = settled(a, cwd_a, false).await;
    assert!(s.get("worktree_kept").is_none(), "{s}");
    let mut left = vec![b.clone(), d.clone()];
    left.sort();
    assert_eq!(listed("?kept_worktrees=1").await, left);
}

/// A cursor past the end of the log is refused explicitly on every read path (it used to skip
/// every event silently until the log caught up with it).
#[tokio::test]
async fn a_cursor_past_the_end_of_the_log_is_refused() {
    use futures::StreamExt as _;
    use tokio_tungstenite::tungstenite::Message;
    use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
    let (_dir, relay, sid) = demo_session().await;
    let r = relay.post(&sid, TOKEN, user("hi")).await;
    let last = r.json::<serde_json::Value>().await.unwrap()["results"][0]["sequence_num"]
        .as_u64()
        .unwrap();
    let beyond = last + 1000;

    let sse = relay.sse(&sid, Some(beyond)).await;
    assert_eq!(sse.status, 400);
    for path in [
        format!("/v1/code/sessions/{sid}/events/stream?from_sequence_num={beyond}"),
        format!("/v1/code/sessions/{sid}/events?after={beyond}"),
    ] {
        let r = relay.get(&path, TOKEN).await;
        assert_eq!(r.status(), 400, "{path}");
        let body: serde_json::Value = r.json().await.unwrap();
        assert_eq!(body["error"]["type"], "cursor_beyond_end", "{body}");
    }

    let url = format!(
        "ws://{}/v1/code/sessions/{sid}/ws?envelope=1&from_sequence_num={beyond}",
        relay.addr
    );
    let mut req = url.into_client_request().unwrap();
    req.headers_mut()
        .insert("authorization", format!("Bearer {TOKEN}").parse().unwrap());
    let (mut ws, _) = tokio_tungstenite::connect_async(req).await.unwrap();
    let close = loop {
        match tokio::time::timeout(T, ws.next()).await.unwrap() {
            Some(Ok(Message::Close(c))) => break c.unwrap(),
            Some(Ok(_)) => continue,
            other => panic!("expected a close frame, got {other:?}"),
        }
    };
    assert_eq!(u16::from(close.code), 4400, "{close:?}");
    assert!(close.reason.starts_with("cursor_beyond_end"), "{close:?}");
    let _ = ws.close(None).await;

    // The end itself is fine.
    let ok = relay.sse(&sid, Some(last)).await;
    assert_eq!(ok.status, 200);
}

/// A connection that trickles its request headers (slowloris) is closed once the header-read time
/// is spent; ordinary requests, streams and WebSockets are served as before.
#[tokio::test]
async fn a_connection_that_never_finishes_its_headers_is_closed() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let (_dir, relay) = demo_relay(&["--header-read-timeout-secs", "1"]);
    let mut slow = tokio::net::TcpStream::connect(relay.addr).await.unwrap();
    slow.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        .await
        .unwrap();
    let t0 = std::time::Instant::now();
    let mut buf = [0u8; 1024];
    let read = tokio::time::timeout(std::time::Duration::from_secs(8), async {
        loop {
            // Keep trickling: one byte every 300 ms never completes the headers.
            match tokio::time::timeout(std::time::Duration::from_millis(300), slow.read(&mut buf))
                .await
            {
                Ok(r) => return r,
                Err(_) => {
                    if slow.write_all(b"a").await.is_err() {
                        return Ok(0);
                    }
                }
            }
        }
    })
    .await
    .expect("the relay closed the connection");
    let n = read.unwrap_or(0);
    let answer = String::from_utf8_lossy(&buf[..n]).to_string();
    assert!(n == 0 || answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(
        t0.elapsed() < std::time::Duration::from_secs(5),
        "{:?}",
        t0.elapsed()
    );
    // The relay still serves.
    let r = http().get(relay.url("/healthz")).send().await.unwrap();
    assert_eq!(r.status(), 200);
}
