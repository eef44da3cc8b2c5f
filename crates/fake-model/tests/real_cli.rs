//! The real Claude Code CLI (native linux-x64 build) against the fake model, over stdio stream-json.
//!
//! The binary comes from `scripts/install-claude.sh` (cached outside the repo). `CLAUDE_BIN=/path/to/claude`
//! selects another one (e.g. the latest version). When no binary is installed the tests print why and pass
//! without running.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use bridge_fake_model::Served;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::process::{Child, ChildStdin, Command};

use crate::common::claude::claude_or_skip;
use crate::common::messages_requests;

const TURN_TIMEOUT: Duration = Duration::from_secs(90);

struct Cli {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    /// Every frame the CLI wrote so far.
    frames: Vec<Value>,
    cwd: tempfile::TempDir,
    _home: tempfile::TempDir,
}

impl Cli {
    /// The fake model serving `scenario` (its JSON form) and the real CLI against it; `None` when
    /// the CLI is not installed (the test is skipped, saying so).
    async fn against(scenario: Value) -> Option<(bridge_fake_model::RunningFakeModel, Self)> {
        let bin = claude_or_skip()?;
        let fm = crate::common::start(scenario).await;
        let cli = Cli::spawn(&bin, &fm.base_url());
        Some((fm, cli))
    }

    fn spawn(bin: &PathBuf, base_url: &str) -> Self {
        let home = tempfile::tempdir().unwrap();
        let cwd = tempfile::tempdir().unwrap();
        let mut child = Command::new(bin)
            .args(bridge_protocol::build::STREAM_JSON_FLAGS)
            .args([
                // Explicit: 2.1.300 defaulted to `auto` mode, which accepts `touch` without a prompt.
                "--permission-mode",
                "default",
            ])
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", home.path())
            .env("ANTHROPIC_BASE_URL", base_url)
            .env("ANTHROPIC_API_KEY", "sk-ant-fake")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .current_dir(cwd.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn claude");
        let stdin = child.stdin.take();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Self {
            child,
            stdin,
            lines,
            frames: Vec::new(),
            cwd,
            _home: home,
        }
    }

    async fn send(&mut self, v: Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin
            .write_all(format!("{v}\n").as_bytes())
            .await
            .expect("write");
        stdin.flush().await.unwrap();
    }

    async fn user(&mut self, text: &str) {
        self.send(json!({
            "type": "user", "session_id": "", "parent_tool_use_id": null,
            "uuid": uuid::Uuid::new_v4().to_string(),
            "message": {"role": "user", "content": text},
        }))
        .await;
    }

    /// Read frames until `pred` holds for one (returned), failing on timeout or EOF.
    async fn until(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        let deadline = tokio::time::Instant::now() + TURN_TIMEOUT;
        loop {
            let line = tokio::time::timeout_at(deadline, self.lines.next_line())
                .await
                .unwrap_or_else(|_| panic!("timed out waiting for {what}; frames: {}", self.tail()))
                .expect("read stdout")
                .unwrap_or_else(|| {
                    panic!("CLI closed stdout before {what}; frames: {}", self.tail())
                });
            if line.trim().is_empty() {
                continue;
            }
            let v: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
            self.frames.push(v.clone());
            if pred(&v) {
                return v;
            }
            assert!(
                !is_result(&v),
                "the turn ended before {what}; frames: {}",
                self.tail()
            );
        }
    }

    fn tail(&self) -> String {
        self.frames
            .iter()
            .rev()
            .take(8)
            .map(|f| {
                let s = f.to_string();
                s.chars().take(300).collect::<String>()
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    async fn finish(mut self) -> (std::process::ExitStatus, tempfile::TempDir) {
        drop(self.stdin.take());
        let status = tokio::time::timeout(Duration::from_secs(30), self.child.wait())
            .await
            .expect("CLI exits after stdin closes")
            .unwrap();
        (status, self.cwd)
    }
}

fn is_can_use_tool(v: &Value) -> bool {
    v["type"] == "control_request" && v["request"]["subtype"] == "can_use_tool"
}

fn is_result(v: &Value) -> bool {
    v["type"] == "result"
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edited_bash_command_is_what_runs() {
    let Some((fm, mut cli)) = Cli::against(json!({
        "turns": [
            {"match": "create the marker", "blocks": [
                {"type": "thinking", "thinking": "A file is wanted."},
                {"type": "text", "chunks": ["I'll create ", "the marker."]},
                {"type": "tool_use", "name": "Bash", "pieces": 5,
                 "input": {"command": "touch original.txt", "description": "Create the marker"}}
            ]},
            {"match": "(Bash completed with no output)", "blocks": [{"type": "text", "text": "Created."}]}
        ],
        "default": {"blocks": [{"type": "text", "text": "unexpected request"}]}
    }))
    .await
    else {
        return;
    };
    cli.user("Please create the marker file").await;

    let ask = cli.until("can_use_tool", is_can_use_tool).await;
    let req = &ask["request"];
    assert_eq!(req["tool_name"], "Bash");
    assert_eq!(req["input"]["command"], "touch original.txt");
    let tool_use_id = req["tool_use_id"]
        .as_str()
        .expect("tool_use_id")
        .to_string();
    // The streamed tool_use reached the client before the prompt.
    assert!(
        cli.frames
            .iter()
            .any(|f| f["type"] == "stream_event"
                && f["event"]["delta"]["type"] == "input_json_delta")
    );
    assert!(cli.frames.iter().any(|f| f["type"] == "stream_event"
        && f["event"]["delta"]["type"] == "thinking_delta"));

    let mut edited = req["input"].clone();
    edited["command"] = json!("touch edited.txt");
    cli.send(json!({"type": "control_response", "response": {
        "subtype": "success", "request_id": ask["request_id"],
        "response": {"behavior": "allow", "updatedInput": edited, "toolUseID": tool_use_id}
    }}))
    .await;

    let tool_result = cli
        .until("the tool_result", |v| {
            v["type"] == "user"
                && v["message"]["content"][0]["type"] == "tool_result"
                && v["message"]["content"][0]["tool_use_id"] == tool_use_id.as_str()
        })
        .await;
    assert_eq!(tool_result["message"]["content"][0]["is_error"], false);
    let result = cli.until("result", is_result).await;
    assert_eq!(result["subtype"], "success");
    assert_eq!(result["is_error"], false);
    assert_eq!(result["result"], "Created.");
    assert!(result["usage"]["output_tokens"].as_u64().unwrap() > 0);
    let cwd = cli.cwd.path().to_path_buf();
    assert!(cwd.join("edited.txt").exists(), "the edited command ran");
    assert!(
        !cwd.join("original.txt").exists(),
        "the original command did not run"
    );
    let (status, _cwd) = cli.finish().await;
    assert!(status.success(), "CLI exit status {status}");

    let reqs = fm.model.requests();
    let msgs = messages_requests(&reqs);
    assert_eq!(msgs.len(), 2, "one request per model round");
    assert_eq!(msgs[0].served, Served::Turn { index: 0 });
    assert_eq!(msgs[1].served, Served::Turn { index: 1 });
    assert_eq!(msgs[0].stream, Some(true));
    assert!(
        msgs[0].headers.get("x-api-key").is_none()
            && !msgs[0].body.to_string().contains("sk-ant-fake")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deny_message_reaches_the_model_and_the_result() {
    let Some((fm, mut cli)) = Cli::against(json!({
        "turns": [
            {"match": "clean up", "blocks": [
                {"type": "tool_use", "name": "Bash",
                 "input": {"command": "touch should-not-exist.txt", "description": "Clean up"}}
            ]},
            {"match": "prefer-ls-7f3a", "blocks": [{"type": "text", "text": "Understood, I won't."}]}
        ]
    }))
    .await
    else {
        return;
    };
    cli.user("clean up please").await;
    let ask = cli.until("can_use_tool", is_can_use_tool).await;
    cli.send(json!({"type": "control_response", "response": {
        "subtype": "success", "request_id": ask["request_id"],
        "response": {"behavior": "deny", "message": "No: prefer-ls-7f3a", "interrupt": false,
                     "toolUseID": ask["request"]["tool_use_id"]}
    }}))
    .await;
    let result = cli.until("result", is_result).await;
    assert_eq!(result["result"], "Understood, I won't.");
    let denials = result["permission_denials"]
        .as_array()
        .expect("permission_denials");
    assert_eq!(denials.len(), 1, "{denials:?}");
    assert_eq!(denials[0]["tool_name"], "Bash");
    assert_eq!(
        denials[0]["tool_input"]["command"],
        "touch should-not-exist.txt"
    );
    let (_status, cwd) = cli.finish().await;
    assert!(!cwd.path().join("should-not-exist.txt").exists());

    let reqs = fm.model.requests();
    let msgs = messages_requests(&reqs);
    assert_eq!(msgs.len(), 2);
    let follow_up = msgs[1].last_user_text.as_deref().unwrap_or_default();
    assert!(
        follow_up.contains("prefer-ls-7f3a"),
        "the deny message is in the next request: {follow_up}"
    );
}
