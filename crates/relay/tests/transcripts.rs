//! Claude Code's own sessions: the transcript parser over a real transcript (always), the incremental
//! index and its cost at scale (prints figures), the HTTP surface with the demo agent (listing, path
//! confinement, rights, resume), and resume / fork / rewind with the real CLI against the fake model
//! (skipped, saying so, when the CLI is not installed).

use std::path::Path;
use std::time::{Duration, Instant};

use crate::common::transcripts::*;
use crate::common::*;
use bridge_relay::features::transcripts::{Index, parse};
use serde_json::{Value, json};

const ALPHA: &str = "98828372-2247-4c75-aa76-51ba5929b62d";
const BETA_PARENT: &str = "ffb45159-ef25-48d0-b8fa-442cf35398de";
const TOOL_RESULT: &str = "497bf6ed-8f83-4f41-b4b2-89ede6794ac0";

#[test]
fn real_transcript_becomes_the_frames_the_console_renders() {
    let lines = parse::parse_lines(FIXTURE);
    let frames = parse::history(&lines, None);
    let prompts: Vec<&str> = frames
        .iter()
        .filter(|f| f["type"] == "user" && f["isReplay"] == true)
        .filter_map(|f| f["message"]["content"].as_str())
        .collect();
    assert_eq!(
        prompts,
        [
            "first prompt alpha",
            "please make the file beta",
            "please make the file epsilon"
        ]
    );
    let texts: Vec<&str> = frames
        .iter()
        .filter(|f| f["type"] == "assistant")
        .filter_map(|f| f["message"]["content"][0]["text"].as_str())
        .collect();
    assert_eq!(
        texts,
        [
            "OK.",
            "Writing it.",
            "Created a.txt.",
            "Writing it.",
            "Created a.txt."
        ]
    );
    let results = frames
        .iter()
        .filter(|f| f["type"] == "user" && f["message"]["content"][0]["type"] == "tool_result")
        .count();
    assert_eq!(results, 2, "tool results come through as user frames");
    for f in &frames {
        let ty = f["type"].as_str().unwrap();
        assert!(
            ["user", "assistant", "system", "result"].contains(&ty),
            "bookkeeping line leaked: {ty}"
        );
        assert_eq!(f["session_id"], FIXTURE_ID);
    }
    let result = &frames[frames.len() - 2];
    assert_eq!(result["type"], "result", "the last turn is closed");
    assert!(result["total_cost_usd"].as_f64().unwrap() > 0.0);
    assert!(
        result.get("duration_ms").is_none(),
        "no turn-done notification"
    );
    let last = frames.last().unwrap();
    assert_eq!(
        (last["subtype"].as_str(), last["state"].as_str()),
        (Some("session_state_changed"), Some("idle"))
    );
    // Forks: cut at the line before the prompt; none before the first; only prompts qualify.
    assert_eq!(
        parse::fork_point(&lines, BETA).unwrap().as_deref(),
        Some(BETA_PARENT)
    );
    assert_eq!(parse::fork_point(&lines, ALPHA).unwrap(), None);
    assert!(parse::fork_point(&lines, TOOL_RESULT).is_err());
    assert!(parse::fork_point(&lines, "nope").is_err());
    let cut = parse::history(&lines, Some(BETA_PARENT));
    let cut_prompts = cut.iter().filter(|f| f["isReplay"] == true).count();
    assert_eq!(
        cut_prompts, 1,
        "the fork keeps only what came before the prompt"
    );
    assert!(
        cut.iter()
            .any(|f| f["message"]["content"][0]["text"] == "OK.")
    );
}

#[test]
fn an_unknown_line_type_is_kept_raw() {
    let mut text = FIXTURE.to_owned();
    text.push_str(&format!(
        "{{\"type\":\"brand-new-kind\",\"uuid\":\"u-new\",\"parentUuid\":\"5c461a03-be9f-46cc-98f6-f72d4bc6acd7\",\"sessionId\":\"{FIXTURE_ID}\",\"x\":1}}\n"
    ));
    let frames = parse::history(&parse::parse_lines(&text), None);
    assert!(
        frames
            .iter()
            .any(|f| f["type"] == "brand-new-kind" && f["x"] == 1)
    );
}

#[test]
fn the_index_reads_only_new_or_changed_files_and_only_their_ends() {
    let dir = tempfile::tempdir().unwrap();
    let path = put(dir.path(), FIXTURE_CWD, FIXTURE_ID, FIXTURE);
    let index = Index::new(dir.path());
    let (list, stats) = index.refresh();
    assert_eq!((stats.files, stats.read), (1, 1));
    assert_eq!(list.len(), 1);
    let t = &list[0];
    assert_eq!(t.id, FIXTURE_ID);
    assert_eq!(t.facts.title().as_deref(), Some("first prompt alpha"));
    assert_eq!(t.facts.cwd.as_deref(), Some(FIXTURE_CWD));
    assert_eq!(t.facts.git_branch.as_deref(), Some("HEAD"));
    let (_, stats) = index.refresh();
    assert_eq!(stats.read, 0, "an unchanged file is not read again");
    // A summary appended later names the session.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    std::io::Write::write_all(
        &mut f,
        b"{\"type\":\"summary\",\"summary\":\"Make a.txt\",\"leafUuid\":\"x\"}\n",
    )
    .unwrap();
    drop(f);
    let (list, stats) = index.refresh();
    assert_eq!(stats.read, 1);
    assert_eq!(list[0].facts.title().as_deref(), Some("Make a.txt"));
    // Not a UUID, a subagent's file, a symlink: not listed.
    put(dir.path(), FIXTURE_CWD, "notes", FIXTURE);
    let outside = dir.path().join("outside.jsonl");
    std::fs::write(&outside, FIXTURE).unwrap();
    let link = dir
        .path()
        .join("projects/-tmp-h15x-work/00000000-0000-4000-8000-000000000001.jsonl");
    std::os::unix::fs::symlink(&outside, &link).unwrap();
    let (list, _) = index.refresh();
    assert_eq!(list.len(), 1);
    assert!(index.find("00000000-0000-4000-8000-000000000001").is_none());
    assert!(index.find("../outside").is_none());
    std::fs::remove_file(&path).unwrap();
    assert!(
        index.refresh().0.is_empty(),
        "a deleted file leaves the list"
    );
}

/// Not a timed assertion: prints what a cold index and a warm list cost for 300 transcripts of 5 MB.
/// The files have a real head and tail around a sparse middle (the index never reads the middle).
#[test]
fn benchmark_list_of_300_transcripts_of_5_mb() {
    const FILES: usize = 300;
    const SIZE: u64 = 5 * 1024 * 1024;
    let dir = tempfile::tempdir().unwrap();
    let head: String = FIXTURE.lines().take(40).map(|l| format!("{l}\n")).collect();
    let tail: String = {
        let all: Vec<&str> = FIXTURE.lines().collect();
        all[all.len() - 12..]
            .iter()
            .map(|l| format!("{l}\n"))
            .collect()
    };
    let t0 = Instant::now();
    for i in 0..FILES {
        let id = format!("00000000-0000-4000-8000-{i:012}");
        let cwd = format!("/work/project-{}", i % 25);
        let p = put(dir.path(), &cwd, &id, &head);
        let f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
        f.set_len(SIZE - tail.len() as u64).unwrap();
        drop(f);
        let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
        std::io::Write::write_all(&mut f, format!("\n{tail}").as_bytes()).unwrap();
    }
    let made = t0.elapsed();
    let index = Index::new(dir.path());
    let t1 = Instant::now();
    let (list, cold) = index.refresh();
    let cold_time = t1.elapsed();
    let t2 = Instant::now();
    let (list2, warm) = index.refresh();
    let warm_time = t2.elapsed();
    assert_eq!((list.len(), cold.read), (FILES, FILES));
    assert_eq!((list2.len(), warm.read), (FILES, 0));
    assert_eq!(list[0].facts.title().as_deref(), Some("first prompt alpha"));
    eprintln!(
        "transcript index: {FILES} files x {} MB (made in {:.2?}): cold index {:.1} ms, warm list {:.1} ms",
        SIZE / 1024 / 1024,
        made,
        cold_time.as_secs_f64() * 1e3,
        warm_time.as_secs_f64() * 1e3
    );
}

fn relay_with(config: &Path, data: &Path, work: &Path) -> RelayProc {
    RelayProc::start(
        Opts::demo(data)
            .arg("--claude-config-dir")
            .arg(config.to_str().unwrap())
            .arg("--cwd")
            .arg(work.to_str().unwrap()),
    )
}

#[tokio::test]
async fn cli_sessions_are_listed_opened_and_resumed_with_rights_and_confinement() {
    let dir = tempfile::tempdir().unwrap();
    // The real transcript, moved to a directory that exists here.
    let (config, work, work_s) = plant(dir.path(), FIXTURE_ID, "first prompt alpha");
    let outside = dir.path().join("secret.jsonl");
    std::fs::write(&outside, FIXTURE).unwrap();
    std::os::unix::fs::symlink(
        &outside,
        config.join(format!(
            "projects/{}/00000000-0000-4000-8000-000000000001.jsonl",
            work_s.replace(['/', '.'], "-")
        )),
    )
    .unwrap();
    let relay = relay_with(&config, &dir.path().join("data"), &work);
    let relay_sid = relay.create_session().await;
    // `POST /v1/code/cli-sessions/{FIXTURE_ID}/{action}` as the controller.
    let on_fixture =
        |action: &'static str, body: Value| cli_action(&relay, FIXTURE_ID, action, TOKEN, body);

    let list = relay.sessions(TOKEN).await;
    let cli: Vec<&Value> = list.iter().filter(|s| s["origin"] == "cli").collect();
    assert_eq!(cli.len(), 1, "{list:?}");
    assert_eq!(cli[0]["id"], FIXTURE_ID);
    assert_eq!(cli[0]["title"], "first prompt alpha");
    assert_eq!(cli[0]["cwd"], work_s);
    assert_eq!(cli[0]["git_branch"], "HEAD");
    assert!(
        list.iter()
            .any(|s| s["id"] == relay_sid.as_str() && s["origin"] == "relay")
    );
    // Newest first: the relay session just made comes before the transcript.
    assert_eq!(list[0]["id"], relay_sid.as_str());

    let detail = get_json(
        &relay.url(&format!("/v1/code/cli-sessions/{FIXTURE_ID}")),
        TOKEN,
    )
    .await;
    let frames = detail["frames"].as_array().unwrap();
    assert!(
        frames.iter().any(
            |f| f["isReplay"] == true && f["message"]["content"] == "please make the file beta"
        )
    );
    // Paged: the last `limit` frames before `before`; the pages put together are the whole history.
    let total = detail["frames_total"].as_u64().unwrap() as usize;
    assert_eq!(total, frames.len(), "a small transcript comes whole");
    assert_eq!(detail["frames_from"], 0);
    assert!(total >= 3, "{total} frames");
    let mut pages: Vec<Value> = Vec::new();
    let mut before = total;
    while before > 0 {
        let page = get_json(
            &relay.url(&format!(
                "/v1/code/cli-sessions/{FIXTURE_ID}?limit=2&before={before}"
            )),
            TOKEN,
        )
        .await;
        let got = page["frames"].as_array().unwrap();
        assert_eq!(page["frames_total"], total);
        assert_eq!(got.len(), before.min(2));
        assert_eq!(page["frames_from"], before - got.len());
        pages.splice(0..0, got.iter().cloned());
        before -= got.len();
    }
    assert_eq!(&pages, frames);

    // Confinement: only UUIDs name files, and a symlink out of the projects dir is not followed.
    for (bad, status) in [
        ("..%2F..%2Fsecret", 400),
        // The client resolves a bare `..` away: another path, answered 404.
        ("%2E%2E", 404),
        ("not-a-session", 400),
        ("00000000-0000-4000-8000-000000000001", 404),
        ("00000000-0000-4000-8000-000000000002", 404),
    ] {
        let r = cli_session(&relay, bad, TOKEN).await;
        assert_eq!(r.status().as_u16(), status, "{bad}");
        let body = r.text().await.unwrap();
        assert!(!body.contains("first prompt alpha"), "{bad}: {body}");
    }

    // Observers: the transcripts are the controller's. A plain observer token (unscoped too) neither
    // lists nor reads them; one minted with the transcripts scope reads, never resumes; a session-
    // scoped one sees only its session and cannot have the transcripts scope.
    let plain = relay.observer_token(json!({"session_id": null})).await;
    let list = get_json(&relay.url("/v1/code/sessions"), &plain).await;
    assert!(
        !list["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["origin"] == "cli"),
        "{list}"
    );
    let r = cli_session(&relay, FIXTURE_ID, &plain).await;
    assert_eq!(r.status(), 403);
    assert!(!r.text().await.unwrap().contains("first prompt alpha"));
    let r = post_json(
        &relay,
        "/v1/observer-tokens",
        TOKEN,
        json!({"session_id": relay_sid, "transcripts": true}),
    )
    .await;
    assert_eq!(r.status(), 400, "a scoped token with the transcripts scope");
    let obs = relay
        .observer_token(json!({"session_id": null, "transcripts": true}))
        .await;
    let list = get_json(&relay.url("/v1/code/sessions"), &obs).await;
    assert!(
        list["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["origin"] == "cli")
    );
    let r = cli_session(&relay, FIXTURE_ID, &obs).await;
    assert_eq!(r.status(), 200);
    for action in ["resume", "fork", "rewind"] {
        let r = cli_action(
            &relay,
            FIXTURE_ID,
            action,
            &obs,
            json!({"message_uuid": BETA, "user_message_id": BETA}),
        )
        .await;
        assert_eq!(r.status(), 403, "observer {action}");
    }
    let scoped = relay.observer_token(json!({"session_id": relay_sid})).await;
    let list = get_json(&relay.url("/v1/code/sessions"), &scoped).await;
    assert_eq!(list["sessions"].as_array().unwrap().len(), 1);
    let r = cli_session(&relay, FIXTURE_ID, &scoped).await;
    assert_eq!(r.status(), 403);

    // Rewinding a session that is not live is refused, saying why.
    let r = on_fixture("rewind", json!({"user_message_id": BETA})).await;
    assert_eq!(r.status(), 409);
    assert!(
        r.text()
            .await
            .unwrap()
            .contains("not running under the relay")
    );
    // A fork must start at a prompt.
    let r = on_fixture("fork", json!({"message_uuid": TOOL_RESULT})).await;
    assert_eq!(r.status(), 400);
    // The demo agent has no transcript: forking one of its sessions is refused clearly.
    let r = post_json(
        &relay,
        &format!("/v1/code/sessions/{relay_sid}/fork"),
        TOKEN,
        json!({"message_uuid": BETA}),
    )
    .await;
    assert_eq!(r.status(), 409);
    let text = r.text().await.unwrap();
    assert!(text.contains("transcript"), "{text}");

    // Resume (scripted with the demo agent): a relay session with the history first.
    let r = on_fixture("resume", json!({})).await;
    assert_eq!(r.status(), 201);
    let resumed: Value = r.json().await.unwrap();
    let sid = resumed["session_id"].as_str().unwrap().to_owned();
    assert_eq!(resumed["title"], "first prompt alpha");
    assert_eq!(resumed["cli"]["resumed"], FIXTURE_ID);
    let events = relay.events(&sid, 0).await;
    let payloads: Vec<&Value> = events["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["payload"])
        .collect();
    assert_eq!(payloads[0]["message"]["content"], "first prompt alpha");
    assert!(
        payloads
            .iter()
            .any(|p| p["message"]["content"][0]["text"] == "Created a.txt.")
    );
    // Now the relay runs it: listed once, as the relay's.
    let list = relay.sessions(TOKEN).await;
    assert!(!list.iter().any(|s| s["id"] == FIXTURE_ID), "listed twice");
    assert!(list.iter().any(|s| s["id"] == sid.as_str()));
    // Resuming again opens the same relay session.
    let again: Value = on_fixture("resume", json!({})).await.json().await.unwrap();
    assert_eq!(again["session_id"], sid.as_str());
    assert_eq!(again["already_running"], true);
}

/// What the relay (and the CLI run outside it) get: a temporary HOME, the fake model.
fn agent_env(home: &Path, base_url: &str) -> Vec<(&'static str, String)> {
    vec![
        ("HOME", home.display().to_string()),
        ("ANTHROPIC_BASE_URL", base_url.to_owned()),
        ("ANTHROPIC_API_KEY", "sk-ant-fake".to_owned()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".to_owned()),
        ("DISABLE_TELEMETRY", "1".to_owned()),
        ("DISABLE_AUTOUPDATER", "1".to_owned()),
    ]
}

async fn wait_result(relay: &RelayProc, sid: &str, after: u64) -> u64 {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let ev = relay.events(sid, after).await;
        let events = ev["events"].as_array().cloned().unwrap_or_default();
        if let Some(e) = events.iter().find(|e| e["payload"]["type"] == "result") {
            return e["sequence_num"].as_u64().unwrap_or(after);
        }
        assert!(
            Instant::now() < deadline,
            "no result in session {sid}: {events:?}"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

/// The texts of every message the fake model was sent in its last request.
fn last_request_texts(model: &bridge_fake_model::FakeModel) -> String {
    let reqs = model.requests();
    let last = reqs
        .iter()
        .rev()
        .find(|r| r.path.starts_with("/v1/messages") && !r.path.contains("count_tokens"))
        .expect("a messages request");
    last.body["messages"].to_string()
}

/// The real CLI writes a session outside the relay; the relay lists it, resumes it (the model gets
/// the earlier conversation), forks it before its second prompt (the model gets only what came
/// before), and rewinds files of a message of the resumed session (preview, then restore).
#[tokio::test]
async fn real_cli_session_is_listed_resumed_forked_and_rewound() {
    let Some(bin) = claude_or_skip() else {
        return;
    };
    let scenario = bridge_fake_model::Scenario::from_json(
        r#"{"turns": [
            {"match": "write the marker", "reuse": true, "blocks": [
                {"type": "text", "text": "Writing it."},
                {"type": "tool_use", "name": "Write", "input": {"file_path": "MARKER", "content": "one\ntwo\n"}}]},
            {"match": "File created", "reuse": true, "blocks": [{"type": "text", "text": "Marker written."}]}
        ], "default": {"blocks": [{"type": "text", "text": "Noted."}]}}"#,
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let work = dir.path().join("work");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    let work = work.canonicalize().unwrap();
    let marker = work.join("marker.txt");
    let scenario_text = serde_json::to_string(&scenario)
        .unwrap()
        .replace("MARKER", marker.to_str().unwrap());
    let model = bridge_fake_model::FakeModel::new(
        bridge_fake_model::Scenario::from_json(&scenario_text).unwrap(),
    );
    let fake = bridge_fake_model::RunningFakeModel::start(model.clone())
        .await
        .unwrap();
    let env = agent_env(&home, &fake.base_url());
    // Two turns in a terminal, outside the relay.
    let mut first_id = String::new();
    for (i, prompt) in ["remember the word papaya", "and also the word quince"]
        .iter()
        .enumerate()
    {
        let mut cmd = tokio::process::Command::new(&bin);
        cmd.arg("-p").arg(prompt).args(["--output-format", "json"]);
        if i > 0 {
            cmd.args(["--resume", &first_id]);
        }
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .current_dir(&work)
            .kill_on_drop(true);
        let out = tokio::time::timeout(Duration::from_secs(120), cmd.output())
            .await
            .expect("claude -p finished")
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        first_id = v["session_id"].as_str().unwrap().to_owned();
    }
    let config = home.join(".claude");
    let mut opts = Opts {
        args: vec![
            "--claude".into(),
            bin.display().to_string(),
            "--claude-config-dir".into(),
            config.display().to_string(),
            "--cwd".into(),
            work.display().to_string(),
            "--permission-mode".into(),
            "acceptEdits".into(),
        ],
        env: vec![],
        data_dir: &dir.path().join("data"),
        static_dir: None,
        token: Some(TOKEN),
        start_dir: None,
    };
    for (k, v) in &env {
        opts = opts.env(k, v);
    }
    let relay = RelayProc::start(opts);

    // Listed, with its title and cwd.
    let list = get_json(&relay.url("/v1/code/sessions"), TOKEN).await;
    let item = find_session(&list, &first_id);
    assert_eq!(item["origin"], "cli");
    assert_eq!(item["title"], "remember the word papaya");
    assert_eq!(item["cwd"], work.display().to_string());
    let detail = get_json(
        &relay.url(&format!("/v1/code/cli-sessions/{first_id}")),
        TOKEN,
    )
    .await;
    let prompts: Vec<Value> = detail["frames"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["isReplay"] == true)
        .cloned()
        .collect();
    assert_eq!(prompts.len(), 2, "{detail}");
    let second_uuid = prompts[1]["uuid"].as_str().unwrap().to_owned();

    // Resume: a message reaches the model with the earlier conversation.
    model.clear_requests();
    let r = cli_action(&relay, &first_id, "resume", TOKEN, json!({})).await;
    assert_eq!(r.status(), 201);
    let sid = r.json::<Value>().await.unwrap()["session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let seeded = relay.session(&sid).await["last_sequence_num"]
        .as_u64()
        .unwrap();
    let msg_uuid = uuid::Uuid::new_v4().to_string();
    let mut m = user("now write the marker please");
    m["uuid"] = msg_uuid.clone().into();
    assert!(relay.post(&sid, TOKEN, m).await.status().is_success());
    wait_result(&relay, &sid, seeded).await;
    let sent = last_request_texts(&model);
    assert!(sent.contains("papaya") && sent.contains("quince"), "{sent}");
    assert!(marker.is_file());
    let list = get_json(&relay.url("/v1/code/sessions"), TOKEN).await;
    assert!(
        !list["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["id"] == first_id.as_str()),
        "the resumed session is listed once, as the relay's"
    );

    // Rewind: a preview, then the files are restored.
    let rewind_path = format!("/v1/code/sessions/{sid}/rewind");
    let rewind = |message: &str, dry_run: bool| {
        let body = json!({"user_message_id": message, "dry_run": dry_run});
        post_json(&relay, &rewind_path, TOKEN, body)
    };
    let r = rewind(&msg_uuid, true).await;
    assert_eq!(r.status(), 200);
    let preview: Value = r.json().await.unwrap();
    assert_eq!(preview["canRewind"], true, "{preview}");
    assert!(
        preview["filesChanged"].to_string().contains("marker.txt"),
        "{preview}"
    );
    assert!(marker.is_file(), "a dry run changes nothing");
    let r = rewind(&msg_uuid, false).await;
    assert_eq!(r.status(), 200);
    assert!(
        !marker.exists(),
        "the file the message created is gone again"
    );
    // A message with no checkpoint: the CLI says it cannot.
    let r: Value = rewind(&second_uuid, true).await.json().await.unwrap();
    assert_eq!(r["canRewind"], false, "{r}");

    // Fork before the second prompt: the model gets the first exchange only.
    model.clear_requests();
    let r = cli_action(
        &relay,
        &first_id,
        "fork",
        TOKEN,
        json!({"message_uuid": second_uuid}),
    )
    .await;
    assert_eq!(r.status(), 201);
    let fork: Value = r.json().await.unwrap();
    assert_eq!(fork["prompt"], "and also the word quince");
    let fsid = fork["session_id"].as_str().unwrap().to_owned();
    let seeded = relay.session(&fsid).await["last_sequence_num"]
        .as_u64()
        .unwrap();
    assert!(
        relay
            .post(&fsid, TOKEN, user("what came before?"))
            .await
            .status()
            .is_success()
    );
    wait_result(&relay, &fsid, seeded).await;
    let sent = last_request_texts(&model);
    assert!(sent.contains("papaya"), "{sent}");
    assert!(
        !sent.contains("quince") && !sent.contains("marker"),
        "{sent}"
    );
    let list = get_json(&relay.url("/v1/code/sessions"), TOKEN).await;
    let ids = listed_ids(&list);
    let at = ids.iter().position(|i| *i == fsid).expect("fork listed");
    assert!(at > 0, "{ids:?}");
    assert_eq!(
        list["sessions"][at]["cli"]["forked_from"]["id"],
        first_id.as_str()
    );
    // Its origin is the relay's now (resumed): the fork is listed right after that session.
    assert_eq!(ids[at - 1], sid, "{ids:?}");
}

#[tokio::test]
async fn transcript_reads_are_bounded_and_symlinked_project_dirs_are_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let (config, work, work_s) = plant(dir.path(), FIXTURE_ID, "first prompt alpha");
    // A project directory that is a symlink to a directory outside the projects dir.
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let hidden = "00000000-0000-4000-8000-0000000000aa";
    std::fs::write(
        elsewhere.join(format!("{hidden}.jsonl")),
        FIXTURE
            .replace(FIXTURE_ID, hidden)
            .replace("first prompt alpha", "SECRET PROMPT"),
    )
    .unwrap();
    std::os::unix::fs::symlink(&elsewhere, config.join("projects/-linked")).unwrap();
    // A transcript past the cap (sparse: its size is what counts).
    let big = "00000000-0000-4000-8000-0000000000bb";
    let p = put(
        &config,
        &work_s,
        big,
        &FIXTURE
            .replace(FIXTURE_CWD, &work_s)
            .replace(FIXTURE_ID, big),
    );
    std::fs::OpenOptions::new()
        .write(true)
        .open(&p)
        .unwrap()
        .set_len(100 * 1024 * 1024)
        .unwrap();
    let relay = relay_with(&config, &dir.path().join("data"), &work);

    let list = get_json(&relay.url("/v1/code/sessions"), TOKEN)
        .await
        .to_string();
    assert!(
        !list.contains(hidden) && !list.contains("SECRET PROMPT"),
        "{list}"
    );
    let r = cli_session(&relay, hidden, TOKEN).await;
    assert_eq!(r.status(), 404);

    // Twenty at once: each refused, none read whole.
    let answers = futures::future::join_all((0..20).map(|_| {
        http()
            .get(relay.url(&format!("/v1/code/cli-sessions/{big}")))
            .bearer_auth(TOKEN)
            .send()
    }))
    .await;
    for r in answers {
        let r = r.unwrap();
        assert_eq!(r.status(), 413);
        let body = r.text().await.unwrap();
        assert!(
            body.contains("100 MB") && body.contains("claude --resume"),
            "{body}"
        );
    }
    let r = cli_action(&relay, big, "resume", TOKEN, json!({})).await;
    assert_eq!(r.status(), 413);
    // The ordinary one still opens.
    let r = cli_session(&relay, FIXTURE_ID, TOKEN).await;
    assert_eq!(r.status(), 200);
}
