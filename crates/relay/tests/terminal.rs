//! Terminal sessions, live (issue 28): a Claude Code session started in a terminal posts its HTTP
//! hooks to `POST /v1/hooks`; the relay follows it as a session of its own. Here the "terminal"
//! is scripted (hook posts shaped as CLI 2.1.332 sends them — `terminal_cli.rs` checks the real CLI's — and transcript
//! lines appended to the file the hooks name); `terminal_cli.rs` runs the real CLI.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::*;

/// A scripted Claude Code session: its id, cwd and transcript under `<config>/projects/`.
#[derive(Clone)]
pub struct FakeTerminal {
    pub id: String,
    pub cwd: PathBuf,
    pub transcript: PathBuf,
    url: String,
    token: String,
}

impl FakeTerminal {
    pub fn new(relay: &RelayProc, config: &Path, cwd: &Path, token: &str) -> Self {
        let id = uuid::Uuid::new_v4().to_string();
        let slug = cwd.display().to_string().replace(['/', '.'], "-");
        let dir = config.join("projects").join(slug);
        std::fs::create_dir_all(&dir).unwrap();
        FakeTerminal {
            transcript: dir.join(format!("{id}.jsonl")),
            id,
            cwd: cwd.to_owned(),
            url: relay.url("/v1/hooks"),
            token: token.to_owned(),
        }
    }

    fn input(&self, event: &str, extra: Value) -> Value {
        let mut v = json!({
            "hook_event_name": event,
            "session_id": self.id,
            "transcript_path": self.transcript.display().to_string(),
            "cwd": self.cwd.display().to_string(),
            "permission_mode": "default",
        });
        if let (Some(o), Some(e)) = (v.as_object_mut(), extra.as_object()) {
            o.extend(e.clone());
        }
        v
    }

    /// Posts one hook event; the answer's status and body.
    pub async fn hook(&self, event: &str, extra: Value) -> (u16, Value) {
        let r = http()
            .post(&self.url)
            .bearer_auth(&self.token)
            .json(&self.input(event, extra))
            .timeout(Duration::from_secs(60))
            .send()
            .await
            .unwrap();
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    /// Appends transcript lines as the CLI writes them.
    pub fn append(&self, lines: &[Value]) {
        use std::io::Write as _;
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.transcript)
            .unwrap();
        for l in lines {
            writeln!(f, "{l}").unwrap();
        }
    }

    pub fn prompt_line(&self, text: &str) -> Value {
        json!({"type": "user", "isSidechain": false, "uuid": uuid::Uuid::new_v4().to_string(),
               "parentUuid": null, "sessionId": self.id, "cwd": self.cwd.display().to_string(),
               "timestamp": "2026-12-04T03:00:00.000Z",
               "message": {"role": "user", "content": text}})
    }

    pub fn answer_line(&self, text: &str) -> Value {
        json!({"type": "assistant", "isSidechain": false, "uuid": uuid::Uuid::new_v4().to_string(),
               "parentUuid": null, "sessionId": self.id,
               "message": {"id": format!("msg_{}", uuid::Uuid::new_v4().simple()), "type": "message",
                           "role": "assistant", "model": "claude-sonnet-4-5",
                           "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
                           "usage": {"input_tokens": 1, "output_tokens": 1}}})
    }
}

/// A demo relay reading Claude Code's config from a temp dir: (the dir, the relay, the config dir,
/// a working directory).
fn relay_with_config() -> (tempfile::TempDir, RelayProc, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("claude-config");
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let work = work.canonicalize().unwrap();
    let relay = RelayProc::start(
        Opts::demo(&dir.path().join("data"))
            .arg("--claude-config-dir")
            .arg(config.to_str().unwrap()),
    );
    (dir, relay, config, work)
}

/// `PUT /v1/hooks/settings` with `token`: the status.
async fn put_settings(relay: &RelayProc, token: &str, send_to_phone: bool, wait_secs: u64) -> u16 {
    http()
        .put(relay.url("/v1/hooks/settings"))
        .bearer_auth(token)
        .json(&json!({"send_to_phone": send_to_phone, "wait_secs": wait_secs}))
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

pub async fn mint_hook(relay: &RelayProc) -> (String, String) {
    let r = post_json(relay, "/v1/hooks/credentials", TOKEN, json!({})).await;
    assert_eq!(r.status(), 201);
    let v: Value = r.json().await.unwrap();
    (
        v["id"].as_str().unwrap().to_owned(),
        v["token"].as_str().unwrap().to_owned(),
    )
}

/// The relay session following CLI session `cli_id`, once listed.
pub async fn terminal_session(relay: &RelayProc, cli_id: &str) -> Value {
    let what = format!("terminal session {cli_id} never listed");
    wait_listed(relay, Duration::from_secs(10), &what, |s| {
        s["cli"]["session_id"] == cli_id && s["cli"]["terminal"] == true
    })
    .await
}

/// Waits for an event of `sid` matching `f`; its payload.
pub async fn wait_event(
    relay: &RelayProc,
    sid: &str,
    what: &str,
    f: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let ev = relay.events(sid, 0).await;
        if let Some(e) = ev["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| &e["payload"])
            .find(|p| f(p))
        {
            return e.clone();
        }
        assert!(Instant::now() < deadline, "no {what} in {sid}: {ev}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn a_terminal_session_is_followed_answered_and_continued_through_its_hooks() {
    let (_dir, relay, config, work) = relay_with_config();
    let (hook_id, hook_token) = mint_hook(&relay).await;

    // The hook credential does hook events and nothing else; nothing else does hook events.
    for path in ["/v1/code/sessions", "/v1/credentials", "/v1/me"] {
        let r = relay.get(path, &hook_token).await;
        assert_eq!(r.status(), 401, "{path} with a hook credential");
    }
    let (status, _) = try_login(&relay, &hook_token).await;
    assert_eq!(status, 401, "a login with a hook credential");
    let term = FakeTerminal::new(&relay, &config, &work, &hook_token);
    for bad in [TOKEN, "brh_guess", ""] {
        let r = post_json(
            &relay,
            "/v1/hooks",
            bad,
            term.input("UserPromptSubmit", json!({"prompt": "x"})),
        )
        .await;
        assert_eq!(r.status(), 401, "hook posted with {bad:?}");
    }
    let status = get_json(&relay.url("/v1/credentials"), TOKEN).await;
    assert!(
        status["credentials"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["id"] == hook_id.as_str() && c["role"] == "hook"),
        "{status}"
    );
    // Malformed inputs are refused, clearly.
    for (bad, why) in [
        (
            json!({"session_id": term.id, "cwd": "/"}),
            "hook_event_name",
        ),
        (
            json!({"hook_event_name": "Stop", "session_id": "../../x", "cwd": "/"}),
            "session id",
        ),
        (
            json!({"hook_event_name": "Stop", "session_id": term.id, "cwd": "relative"}),
            "absolute",
        ),
    ] {
        let r = post_json(&relay, "/v1/hooks", &hook_token, bad).await;
        assert_eq!(r.status(), 400);
        assert!(r.text().await.unwrap().contains(why), "{why}");
    }

    // First hook: the session is listed by itself, as Claude Code's, running.
    term.append(&[term.prompt_line("make a file please")]);
    let (s, a) = term
        .hook("UserPromptSubmit", json!({"prompt": "make a file please"}))
        .await;
    assert_eq!((s, a), (200, json!({})));
    let listed = terminal_session(&relay, &term.id).await;
    assert_eq!(listed["origin"], "cli");
    let sid = listed["id"].as_str().unwrap().to_owned();
    assert!(sid.starts_with("cse_"));
    assert_eq!(relay.session(&sid).await["state"], "running");
    // Its transcript is followed: a line appended reaches the session within a second.
    wait_event(&relay, &sid, "the prompt", |p| {
        p["message"]["content"] == "make a file please"
    })
    .await;
    let t0 = Instant::now();
    term.append(&[term.answer_line("I will touch a file.")]);
    wait_event(&relay, &sid, "the answer", |p| {
        p["type"] == "assistant" && p["message"]["content"][0]["text"] == "I will touch a file."
    })
    .await;
    assert!(t0.elapsed() < Duration::from_secs(1), "{:?}", t0.elapsed());

    // A permission prompt: the same dialog, held until answered here, with the input edited.
    let asked = json!({"tool_name": "Bash", "tool_input": {"command": "touch original.txt", "description": "make a file"},
        "permission_suggestions": [{"type": "setMode", "mode": "acceptEdits", "destination": "session"}]});
    let hook = {
        let t = term.clone();
        let asked = asked.clone();
        tokio::spawn(async move { t.hook("PermissionRequest", asked).await })
    };
    let req = wait_event(&relay, &sid, "the prompt", |p| {
        p["type"] == "control_request"
    })
    .await;
    assert_eq!(req["request"]["subtype"], "can_use_tool");
    assert_eq!(req["request"]["tool_name"], "Bash");
    assert_eq!(req["request"]["input"]["command"], "touch original.txt");
    assert_eq!(
        req["request"]["permission_suggestions"][0]["mode"],
        "acceptEdits"
    );
    assert_eq!(relay.session(&sid).await["state"], "requires_action");
    assert_eq!(
        terminal_session(&relay, &term.id).await["pending_permissions"],
        1
    );
    let rid = req["request_id"].as_str().unwrap();
    let edited = json!({"command": "touch edited.txt", "description": "make a file"});
    let mut answer = allow(rid, "", edited.clone());
    answer["response"]["response"]["updatedPermissions"] = json!([{"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "touch:*"}], "behavior": "allow", "destination": "session"}]);
    let r = relay.post(&sid, TOKEN, answer).await;
    assert!(r.status().is_success(), "{}", r.status());
    let (s, a) = hook.await.unwrap();
    assert_eq!(s, 200);
    let d = &a["hookSpecificOutput"];
    assert_eq!(d["hookEventName"], "PermissionRequest");
    assert_eq!(d["decision"]["behavior"], "allow");
    assert_eq!(d["decision"]["updatedInput"], edited);
    assert_eq!(
        d["decision"]["updatedPermissions"][0]["rules"][0]["ruleContent"],
        "touch:*"
    );
    // The first answer won: a second one is refused.
    let r = relay
        .post(&sid, TOKEN, allow(rid, "", edited.clone()))
        .await;
    assert_eq!(r.status(), 409);

    // Answered at the terminal: a PostToolUse of that tool and input settles the prompt here.
    let asked2 = json!({"tool_name": "Bash", "tool_input": {"command": "ls"}});
    let hook = {
        let t = term.clone();
        let asked2 = asked2.clone();
        tokio::spawn(async move { t.hook("PermissionRequest", asked2).await })
    };
    let req2 = wait_event(&relay, &sid, "the second prompt", |p| {
        p["type"] == "control_request" && p["request"]["input"]["command"] == "ls"
    })
    .await;
    let (s, _) = term
        .hook("PostToolUse", json!({"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_response": {"stdout": ""}, "tool_use_id": "toolu_1"}))
        .await;
    assert_eq!(s, 200);
    let (_, a) = hook.await.unwrap();
    assert_eq!(
        a,
        json!({}),
        "settled at the terminal: no decision from here"
    );
    wait_event(&relay, &sid, "the cancel", |p| {
        p["type"] == "control_cancel_request" && p["request_id"] == req2["request_id"]
    })
    .await;
    assert_eq!(relay.session(&sid).await["state"], "running");

    // A message from the console waits for the turn to end and continues it through Stop.
    let mut msg = user("now also list the files");
    msg["uuid"] = json!("console-follow-up-1");
    assert!(relay.post(&sid, TOKEN, msg).await.status().is_success());
    let (_, a) = term
        .hook(
            "Stop",
            json!({"stop_hook_active": false, "last_assistant_message": "Done."}),
        )
        .await;
    assert_eq!(
        a,
        json!({"decision": "block", "reason": "now also list the files"})
    );
    wait_event(&relay, &sid, "the follow-up, sent", |p| {
        p["type"] == "user" && p["uuid"] == "console-follow-up-1" && p["isReplay"] == true
    })
    .await;
    // The next Stop ends the turn: a result, idle.
    let (_, a) = term
        .hook(
            "Stop",
            json!({"stop_hook_active": true, "last_assistant_message": "Listed."}),
        )
        .await;
    assert_eq!(a, json!({}));
    wait_event(&relay, &sid, "the result", |p| {
        p["type"] == "result" && p["result"] == "Listed."
    })
    .await;
    assert_eq!(relay.session(&sid).await["state"], "idle");
    // Interrupting or switching the model is the terminal's: a clear error, nothing breaks.
    let interrupt = control_request("int-1", "interrupt");
    assert!(
        relay
            .post(&sid, TOKEN, interrupt)
            .await
            .status()
            .is_success()
    );
    let e = wait_event(&relay, &sid, "the refusal", |p| {
        p["type"] == "control_response" && p["response"]["request_id"] == "int-1"
    })
    .await;
    assert!(has_text(&e["response"]["error"], "terminal"), "{e}");

    // Observers: like the transcripts — a plain observer neither lists nor reads it.
    let plain = relay.observer_token(json!({"session_id": null})).await;
    let list = get_json(&relay.url("/v1/code/sessions"), &plain).await;
    assert!(!list.to_string().contains(&sid), "{list}");
    let r = relay
        .get(&format!("/v1/code/sessions/{sid}/events"), &plain)
        .await;
    assert_eq!(r.status(), 403);
    let scoped = relay.observer_token(json!({"session_id": sid})).await;
    let r = relay
        .get(&format!("/v1/code/sessions/{sid}/events"), &scoped)
        .await;
    assert_eq!(
        r.status(),
        200,
        "an observer token minted for this session reads it"
    );

    // The switch off: prompts are not held (the terminal asks at once).
    let r = put_settings(&relay, TOKEN, false, 30).await;
    assert_eq!(r, 200);
    let r = put_settings(&relay, &plain, true, 30).await;
    assert_eq!(r, 403, "an observer changes no setting");
    let t0 = Instant::now();
    let (_, a) = term.hook("PermissionRequest", asked.clone()).await;
    assert_eq!(a, json!({}));
    assert!(t0.elapsed() < Duration::from_secs(2));
    let st: Value = relay
        .get("/v1/hooks", &hook_token)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        (st["ok"].clone(), st["send_to_phone"].clone()),
        (json!(true), json!(false))
    );

    // The session ends with its terminal.
    let (_, a) = term
        .hook("SessionEnd", json!({"reason": "prompt_input_exit"}))
        .await;
    assert_eq!(a, json!({}));
    let deadline = Instant::now() + Duration::from_secs(5);
    while relay.session(&sid).await["state"] != "ended" {
        assert!(Instant::now() < deadline, "never ended");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Revoked: the credential posts nothing more.
    let r = http()
        .delete(relay.url(&format!("/v1/credentials/{hook_id}")))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success());
    let (s, _) = term
        .hook("UserPromptSubmit", json!({"prompt": "again"}))
        .await;
    assert_eq!(s, 401);
}

/// A prompt nobody here answers goes back to the terminal after the wait; a request the CLI drops
/// (Esc at the terminal, its own timeout) leaves the console at once.
#[tokio::test]
async fn an_unanswered_or_dropped_terminal_prompt_goes_back_to_the_terminal() {
    let (_dir, relay, config, work) = relay_with_config();
    let (_, hook_token) = mint_hook(&relay).await;
    let r = put_settings(&relay, TOKEN, true, 1).await;
    assert_eq!(r, 200);
    let term = FakeTerminal::new(&relay, &config, &work, &hook_token);
    let t0 = Instant::now();
    let (_, a) = term
        .hook(
            "PermissionRequest",
            json!({"tool_name": "Bash", "tool_input": {"command": "date"}}),
        )
        .await;
    assert_eq!(a, json!({}), "no decision after the wait");
    assert!(t0.elapsed() >= Duration::from_secs(1) && t0.elapsed() < Duration::from_secs(5));
    let sid = terminal_session(&relay, &term.id).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let req = wait_event(&relay, &sid, "the prompt", |p| {
        p["type"] == "control_request"
    })
    .await;
    wait_event(&relay, &sid, "its cancel", |p| {
        p["type"] == "control_cancel_request" && p["request_id"] == req["request_id"]
    })
    .await;

    // Dropped by the CLI: the request ends, the prompt leaves the console.
    let r = put_settings(&relay, TOKEN, true, 60).await;
    assert_eq!(r, 200);
    let dropped = http()
        .post(relay.url("/v1/hooks"))
        .bearer_auth(&hook_token)
        .json(&term.input(
            "PermissionRequest",
            json!({"tool_name": "Bash", "tool_input": {"command": "uptime"}}),
        ))
        .timeout(Duration::from_millis(700))
        .send()
        .await;
    assert!(dropped.is_err(), "the relay held it");
    let req = wait_event(&relay, &sid, "the second prompt", |p| {
        p["type"] == "control_request" && p["request"]["input"]["command"] == "uptime"
    })
    .await;
    wait_event(&relay, &sid, "its cancel", |p| {
        p["type"] == "control_cancel_request" && p["request_id"] == req["request_id"]
    })
    .await;
    assert_eq!(
        terminal_session(&relay, &term.id).await["pending_permissions"],
        0
    );
}

/// In a cluster: the hooks go to the node that runs agents on the CLI's machine; the terminal
/// session shows on every gateway, and an answer given on a gateway reaches the waiting hook. A
/// gateway refuses hooks (it hosts nothing), clearly.
#[tokio::test]
async fn in_a_cluster_a_terminal_prompt_is_answered_through_a_gateway() {
    use crate::common::cluster::node_opts;
    use crate::common::nats::NatsServer;
    let nats = NatsServer::start();
    let dirs = tempdirs(2);
    let config = dirs[0].path().join("claude-config");
    let work = dirs[0].path().canonicalize().unwrap();
    let agents = RelayProc::start(
        node_opts(&nats.url, &dirs[0].path().join("data"), "agents", "host1")
            .arg("--claude-config-dir")
            .arg(config.to_str().unwrap()),
    );
    let gw = RelayProc::start(node_opts(&nats.url, dirs[1].path(), "gateway", "gwa"));
    let r = post_json(&gw, "/v1/hooks/credentials", TOKEN, json!({})).await;
    assert_eq!(r.status(), 409);
    assert!(r.text().await.unwrap().contains("runs agents"));
    let (_, hook_token) = mint_hook(&agents).await;
    let term = FakeTerminal::new(&agents, &config, &work, &hook_token);
    term.append(&[term.prompt_line("cluster prompt")]);
    let (s, _) = term
        .hook("UserPromptSubmit", json!({"prompt": "cluster prompt"}))
        .await;
    assert_eq!(s, 200);
    // Listed on the gateway, from the registry.
    let s = wait_listed(
        &gw,
        Duration::from_secs(20),
        "not listed on the gateway",
        |s| s["cli"]["session_id"] == term.id.as_str(),
    )
    .await;
    assert_eq!(s["cli"]["terminal"], true);
    let sid = s["id"].as_str().unwrap().to_owned();
    let hook = {
        let t = term.clone();
        tokio::spawn(async move {
            t.hook(
                "PermissionRequest",
                json!({"tool_name": "Bash", "tool_input": {"command": "touch a"}}),
            )
            .await
        })
    };
    let req = wait_event(&gw, &sid, "the prompt on the gateway", |p| {
        p["type"] == "control_request"
    })
    .await;
    let rid = req["request_id"].as_str().unwrap();
    let r = gw
        .post(&sid, TOKEN, allow(rid, "", json!({"command": "touch b"})))
        .await;
    assert!(r.status().is_success(), "{}", r.text().await.unwrap());
    let (_, a) = tokio::time::timeout(Duration::from_secs(20), hook)
        .await
        .expect("the hook was answered")
        .unwrap();
    assert_eq!(
        a["hookSpecificOutput"]["decision"]["updatedInput"]["command"],
        "touch b"
    );
    // And a gateway refuses the hooks themselves.
    let r = post_json(&gw, "/v1/hooks", &hook_token, term.input("Stop", json!({}))).await;
    assert!(r.status() == 401 || r.status() == 409, "{}", r.status());
}

/// A hook credential cannot make sessions without bound: 64 terminal sessions at once, then 429.
#[tokio::test]
async fn terminal_sessions_are_bounded() {
    let (_dir, relay, config, work) = relay_with_config();
    let (_, hook_token) = mint_hook(&relay).await;
    for i in 0..64 {
        let t = FakeTerminal::new(&relay, &config, &work, &hook_token);
        let (s, _) = t.hook("SessionStart", json!({})).await;
        assert_eq!(s, 200, "terminal {i}");
    }
    let t = FakeTerminal::new(&relay, &config, &work, &hook_token);
    let (s, body) = t.hook("SessionStart", json!({})).await;
    assert_eq!(s, 429, "{body}");
    assert!(body.to_string().contains("64 terminal sessions"), "{body}");
    // One ends: room for the next.
    let first =
        get_json(&relay.url("/v1/code/sessions"), TOKEN).await["sessions"][0]["cli"]["session_id"]
            .as_str()
            .unwrap()
            .to_owned();
    let ended = FakeTerminal {
        id: first,
        ..t.clone()
    };
    assert_eq!(ended.hook("SessionEnd", json!({})).await.0, 200);
    assert_eq!(t.hook("SessionStart", json!({})).await.0, 200);
}
