//! Terminal sessions with the real Claude Code CLI 2.1.332 (issue 28), started outside the relay
//! exactly as a person would after `bridge-relay hooks install`: in print mode the prompt is
//! answered through the relay with an edited command (the edited command ran on disk);
//! interactively in tmux, answered at the terminal first (the relay shows it settled) and then from
//! the relay (the terminal says the hook allowed it); with the relay stopped, the CLI finishes
//! unheld; `hooks uninstall` leaves the settings as they were.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::*;
use crate::terminal::terminal_session;

fn cli_env(home: &Path, base_url: &str) -> Vec<(&'static str, String)> {
    vec![
        ("HOME", home.display().to_string()),
        ("ANTHROPIC_BASE_URL", base_url.to_owned()),
        (
            "ANTHROPIC_API_KEY",
            "sk-ant-fake-terminal-0123456789".to_owned(),
        ),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".to_owned()),
        ("DISABLE_TELEMETRY", "1".to_owned()),
        ("DISABLE_AUTOUPDATER", "1".to_owned()),
    ]
}

/// `bridge-relay hooks …` as a person runs it (the controller token from the environment).
fn hooks_cmd(args: &[&str], home: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_bridge-relay"))
        .arg("hooks")
        .args(args)
        .env("HOME", home)
        .env_remove("CLAUDE_CONFIG_DIR")
        .env("BRIDGE_RELAY_TOKEN", TOKEN)
        .output()
        .unwrap()
}

/// `claude -p PROMPT` in `work`, in the background.
fn print_mode(
    bin: &Path,
    env: &[(&'static str, String)],
    work: &Path,
    prompt: &str,
) -> tokio::process::Child {
    tokio::process::Command::new(bin)
        .args([
            "-p",
            prompt,
            "--permission-mode",
            "default",
            "--output-format",
            "json",
        ])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .current_dir(work)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap()
}

/// The first prompt waiting in relay session `sid`: (request id, its input).
async fn pending(relay: &RelayProc, sid: &str) -> (String, Value) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let d = relay.session(sid).await;
        if let Some(p) = d["pending_requests"].as_array().and_then(|a| a.first()) {
            let rid = p["request_id"].as_str().unwrap().to_owned();
            let ev = relay.events(sid, 0).await;
            let req = ev["events"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| &e["payload"])
                .find(|p| p["request_id"] == rid.as_str())
                .cloned()
                .unwrap();
            return (rid, req["request"]["input"].clone());
        }
        assert!(Instant::now() < deadline, "no prompt in {sid}: {d}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn wait_for(what: &str, secs: u64, mut f: impl AsyncFnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !f().await {
        assert!(Instant::now() < deadline, "{what}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn tmux(args: &[&str]) -> String {
    let out = Command::new("tmux").args(args).output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The answer allowing the prompt `rid` with its command edited to `touch edited.txt`.
fn allow_edited(rid: &str) -> Value {
    allow(
        rid,
        "",
        json!({"command": "touch edited.txt", "description": "edited"}),
    )
}

#[tokio::test]
async fn the_real_cli_in_a_terminal_is_answered_here_and_there_through_installed_hooks() {
    let Some(bin) = claude_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let work = dir.path().join("work");
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    let work = work.canonicalize().unwrap();
    // A settings file of the person's own: kept as it is.
    let own = json!({"model": "claude-sonnet-4-5", "hooks": {"PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "true"}]}]}});
    let settings = home.join(".claude/settings.json");
    std::fs::write(&settings, serde_json::to_string_pretty(&own).unwrap()).unwrap();
    let scenario = bridge_fake_model::Scenario::from_json(
        r#"{"turns": [
            {"match": "make the file", "reuse": true, "blocks": [
                {"type": "text", "text": "Making it."},
                {"type": "tool_use", "name": "Bash", "input": {"command": "touch original.txt", "description": "make a file"}}]}
        ], "default": {"blocks": [{"type": "text", "text": "Done here."}]}}"#,
    )
    .unwrap();
    let fake =
        bridge_fake_model::RunningFakeModel::start(bridge_fake_model::FakeModel::new(scenario))
            .await
            .unwrap();
    let env = cli_env(&home, &fake.base_url());
    let mut relay = RelayProc::start(
        Opts::demo(&dir.path().join("data"))
            .arg("--claude-config-dir")
            .arg(home.join(".claude").to_str().unwrap()),
    );
    // Installed once, as the README says (the relay's URL found in its data dir).
    let data = relay.data_dir.display().to_string();
    let out = hooks_cmd(&["install", "--data-dir", &data], &home);
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !printed.contains("brh_") && !printed.contains(TOKEN),
        "a secret was printed: {printed}"
    );
    let written: Value = serde_json::from_slice(&std::fs::read(&settings).unwrap()).unwrap();
    assert_eq!(written["model"], "claude-sonnet-4-5");
    assert_eq!(
        written["hooks"]["PostToolUse"][0]["hooks"][0]["command"], "true",
        "the person's hook is kept"
    );
    assert!(written["hooks"]["PermissionRequest"].is_array());
    assert!(
        written
            .to_string()
            .contains(&format!("{}/v1/hooks", relay.url("").trim_end_matches('/'))),
        "{written}"
    );
    let out = hooks_cmd(&["status"], &home);
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(said.contains("the credential is valid"), "{said}");
    assert!(!said.contains("brh_"), "{said}");

    // Print mode: the prompt answered here, with an edited command.
    let mut cli = print_mode(&bin, &env, &work, "please make the file");
    let s = wait_listed(
        &relay,
        Duration::from_secs(60),
        "the terminal session never showed",
        |s| s["cli"]["terminal"] == true,
    )
    .await;
    let cli_id = s["cli"]["session_id"].as_str().unwrap().to_owned();
    let sid = terminal_session(&relay, &cli_id).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (rid, input) = pending(&relay, &sid).await;
    assert_eq!(input["command"], "touch original.txt");
    let r = relay.post(&sid, TOKEN, allow_edited(&rid)).await;
    assert!(r.status().is_success());
    let out = tokio::time::timeout(Duration::from_secs(120), cli.wait())
        .await
        .expect("claude -p finished")
        .unwrap();
    assert!(out.success());
    assert!(work.join("edited.txt").exists(), "the edited command ran");
    assert!(
        !work.join("original.txt").exists(),
        "the asked command did not"
    );
    // Its whole turn reached the session: the tool's result, the answer after it, the end.
    wait_for("the turn's end in the session", 10, async || {
        relay.session(&sid).await["state"] == "ended"
    })
    .await;
    let ev = relay.events(&sid, 0).await.to_string();
    assert!(
        ev.contains("tool_result") && ev.contains("Done here."),
        "{ev}"
    );
    assert!(
        !ev.contains("stop_hook_summary"),
        "the relay's own hooks are not news: {ev}"
    );
    std::fs::remove_file(work.join("edited.txt")).unwrap();

    // Interactive, in tmux: answered at the terminal first, then from here.
    let tmux_ok = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if tmux_ok {
        let key = "sk-ant-fake-terminal-0123456789";
        std::fs::write(
            home.join(".claude.json"),
            json!({"hasCompletedOnboarding": true,
                   "customApiKeyResponses": {"approved": [&key[key.len() - 20..]], "rejected": []},
                   "projects": {work.display().to_string(): {"hasTrustDialogAccepted": true}}})
            .to_string(),
        )
        .unwrap();
        let name = format!("bridge-terminal-{}", std::process::id());
        let mut cmd = format!(
            "env -i PATH={:?}",
            std::env::var("PATH").unwrap_or_default()
        );
        for (k, v) in &env {
            cmd.push_str(&format!(" {k}={v:?}"));
        }
        cmd.push_str(&format!(
            " {:?} --permission-mode default",
            bin.display().to_string()
        ));
        tmux(&[
            "new-session",
            "-d",
            "-s",
            &name,
            "-x",
            "160",
            "-y",
            "50",
            "-c",
            work.to_str().unwrap(),
            &cmd,
        ]);
        struct Kill(String);
        impl Drop for Kill {
            fn drop(&mut self) {
                let _ = Command::new("tmux")
                    .args(["kill-session", "-t", &self.0])
                    .output();
            }
        }
        let _kill = Kill(name.clone());
        wait_for("the CLI's prompt in tmux", 30, async || {
            tmux(&["capture-pane", "-t", &name, "-p"]).contains('❯')
        })
        .await;
        tmux(&["send-keys", "-t", &name, "please make the file", "Enter"]);
        let isid = {
            let deadline = Instant::now() + Duration::from_secs(60);
            loop {
                let list = get_json(&relay.url("/v1/code/sessions"), TOKEN).await;
                if let Some(s) = list["sessions"].as_array().unwrap().iter().find(|s| {
                    s["cli"]["terminal"] == true
                        && s["cli"]["session_id"] != cli_id.as_str()
                        && s["state"] != "ended"
                }) {
                    break s["id"].as_str().unwrap().to_owned();
                }
                assert!(
                    Instant::now() < deadline,
                    "the tmux session never showed: {list}"
                );
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        };
        let _ = pending(&relay, &isid).await;
        wait_for("the terminal's own dialog", 30, async || {
            tmux(&["capture-pane", "-t", &name, "-p"]).contains("Do you want to proceed?")
        })
        .await;
        // "1" (Yes) at the terminal; again while its dialog still shows (a key that came before the
        // dialog took input is lost).
        let mut last_key = Instant::now() - Duration::from_secs(10);
        wait_for(
            "the prompt settled here after the terminal's answer",
            30,
            async || {
                let screen = tmux(&["capture-pane", "-t", &name, "-p"]);
                if screen.contains("Do you want to proceed?")
                    && last_key.elapsed() > Duration::from_secs(2)
                {
                    tmux(&["send-keys", "-t", &name, "1"]);
                    last_key = Instant::now();
                }
                relay.session(&isid).await["pending_requests"]
                    .as_array()
                    .is_some_and(|a| a.is_empty())
            },
        )
        .await;
        wait_for("the terminal's command ran", 30, async || {
            work.join("original.txt").exists()
        })
        .await;
        // Again, answered here this time.
        wait_for("the turn ended", 30, async || {
            relay.session(&isid).await["state"] == "idle"
        })
        .await;
        tmux(&["send-keys", "-t", &name, "please make the file", "Enter"]);
        wait_for("a second prompt", 30, async || {
            relay.session(&isid).await["pending_requests"]
                .as_array()
                .is_some_and(|a| !a.is_empty())
        })
        .await;
        let (rid, _) = pending(&relay, &isid).await;
        let r = relay.post(&isid, TOKEN, allow_edited(&rid)).await;
        assert!(r.status().is_success());
        wait_for("the edited command ran", 30, async || {
            work.join("edited.txt").exists()
        })
        .await;
        wait_for("the terminal says the hook allowed it", 30, async || {
            tmux(&["capture-pane", "-t", &name, "-p"]).contains("Allowed by PermissionRequest hook")
        })
        .await;
    } else {
        eprintln!("tmux is missing: the interactive part was skipped (apt-get install tmux)");
    }

    // The relay stopped: the CLI is not held.
    relay.kill();
    let t0 = Instant::now();
    let mut cli = print_mode(&bin, &env, &work, "please make the file");
    let out = tokio::time::timeout(Duration::from_secs(60), cli.wait())
        .await
        .expect("claude -p was held by a stopped relay")
        .unwrap();
    assert!(out.success());
    assert!(t0.elapsed() < Duration::from_secs(30), "{:?}", t0.elapsed());

    // Uninstalled: the settings are the person's again (the credential's revocation is best effort
    // with the relay down).
    let out = hooks_cmd(&["uninstall"], &home);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let back: Value = serde_json::from_slice(&std::fs::read(&settings).unwrap()).unwrap();
    assert_eq!(back, own);
}
