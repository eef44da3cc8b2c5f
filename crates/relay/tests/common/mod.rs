//! Test harness: the real `bridge-relay` binary on 127.0.0.1:0 (demo agent through the real
//! child-process path), an SSE client, and small HTTP helpers.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt as _;
use serde_json::{Value, json};

pub mod cluster;
pub mod nats;
pub mod push_service;
pub mod transcripts;

pub const TOKEN: &str = "test-controller-token-0123456789";
pub const T: Duration = Duration::from_secs(20);

pub struct RelayProc {
    child: Child,
    pub addr: SocketAddr,
    pub console_url: String,
    /// Every stdout line up to and including `listening on …`.
    pub banner: Vec<String>,
    pub data_dir: PathBuf,
    pub stderr: Arc<Mutex<String>>,
}

pub struct Opts<'a> {
    pub args: Vec<String>,
    pub env: Vec<(&'a str, String)>,
    pub data_dir: &'a Path,
    pub static_dir: Option<&'a Path>,
    pub token: Option<&'a str>,
    /// Start the relay in this directory, with no `--static-dir` (the default console lookup).
    pub start_dir: Option<&'a Path>,
}

impl<'a> Opts<'a> {
    pub fn demo(data_dir: &'a Path) -> Self {
        Opts {
            args: vec!["--demo".into()],
            env: vec![],
            data_dir,
            static_dir: None,
            token: Some(TOKEN),
            start_dir: None,
        }
    }
    pub fn arg(mut self, a: &str) -> Self {
        self.args.push(a.into());
        self
    }
    pub fn env(mut self, k: &'a str, v: &str) -> Self {
        self.env.push((k, v.into()));
        self
    }
}

impl RelayProc {
    pub fn start(o: Opts<'_>) -> RelayProc {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_bridge-relay"));
        cmd.arg("--bind")
            .arg("127.0.0.1:0")
            .arg("--data-dir")
            .arg(o.data_dir);
        let static_dir = o
            .static_dir
            .map(Path::to_path_buf)
            .unwrap_or_else(|| o.data_dir.join("no-static"));
        match o.start_dir {
            Some(dir) => {
                cmd.current_dir(dir);
            }
            None => {
                cmd.arg("--static-dir").arg(static_dir);
            }
        }
        cmd.args(&o.args);
        // Never the developer's own ~/.claude: its sessions would show in every list.
        if !o.args.iter().any(|a| a == "--claude-config-dir") {
            cmd.arg("--claude-config-dir")
                .arg(o.data_dir.join("claude-config"));
        }
        // The tests read the login URL from stdout (a pipe: it goes to a file otherwise).
        cmd.env("BRIDGE_PRINT_LOGIN_URL", "1");
        cmd.env("BRIDGE_DEMO_SPEED", "0")
            .env("BRIDGE_RELAY_LOG", "info,bridge_relay=debug");
        cmd.env_remove("BRIDGE_RELAY_TOKEN")
            .env_remove("BRIDGE_DEMO_SCENARIO");
        if let Some(t) = o.token {
            cmd.env("BRIDGE_RELAY_TOKEN", t);
        }
        for (k, v) in &o.env {
            cmd.env(k, v);
        }
        cmd.stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .stdin(Stdio::null());
        let mut child = cmd.spawn().expect("spawn bridge-relay");
        let stdout = child.stdout.take().unwrap();
        let stderr_pipe = child.stderr.take().unwrap();
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = stderr.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr_pipe).lines().map_while(Result::ok) {
                let mut s = sink.lock().unwrap();
                s.push_str(&line);
                s.push('\n');
            }
        });
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        // Owned by the guard from here on, so a failed start still kills and reaps the child.
        let mut relay = RelayProc {
            child,
            addr: "127.0.0.1:0".parse().unwrap(),
            console_url: String::new(),
            banner: Vec::new(),
            data_dir: o.data_dir.to_owned(),
            stderr,
        };
        let deadline = Instant::now() + T;
        loop {
            let line = rx
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                .unwrap_or_else(|_| {
                    panic!(
                        "relay did not print `listening on`; stderr:\n{}",
                        relay.stderr_text()
                    )
                });
            relay.banner.push(line.clone());
            if (line.starts_with("http://") || line.starts_with("https://"))
                && line.contains("#login=")
            {
                relay.console_url = line.clone();
            }
            if let Some(a) = line.strip_prefix("listening on ") {
                relay.addr = a.trim().parse().unwrap();
                return relay;
            }
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILL, no cleanup: what a crash looks like.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Waits for the relay to exit by itself.
    pub fn wait_exit(&mut self, d: Duration) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + d;
        while Instant::now() < deadline {
            if let Ok(Some(s)) = self.child.try_wait() {
                return Some(s);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        None
    }

    pub fn stderr_text(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    pub async fn create_session(&self) -> String {
        let r = http()
            .post(self.url("/v1/code/sessions"))
            .bearer_auth(TOKEN)
            .json(&json!({}))
            .send()
            .await
            .unwrap();
        assert_eq!(
            r.status(),
            201,
            "create session: {}",
            r.text().await.unwrap()
        );
        let v: Value = r.json().await.unwrap();
        v["session_id"].as_str().unwrap().to_owned()
    }

    /// A session made with `body` (`cwd`, `model`, …); 201 expected.
    pub async fn create_session_with(&self, body: Value) -> String {
        let r = http()
            .post(self.url("/v1/code/sessions"))
            .bearer_auth(TOKEN)
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 201, "{}", r.text().await.unwrap());
        r.json::<Value>().await.unwrap()["session_id"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    /// `POST /v1/observer-tokens` with `body` (`session_id`, `expires_in_secs`, …) as the
    /// controller: the minted record (`token`, `id`, …); 201 expected.
    pub async fn mint_observer(&self, body: Value) -> Value {
        let r = http()
            .post(self.url("/v1/observer-tokens"))
            .bearer_auth(TOKEN)
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 201);
        r.json().await.unwrap()
    }

    pub async fn post(&self, sid: &str, token: &str, payload: Value) -> reqwest::Response {
        http()
            .post(self.url(&format!("/v1/code/sessions/{sid}/events")))
            .bearer_auth(token)
            .json(&json!({"session_id": sid, "events": [{"payload": payload}]}))
            .send()
            .await
            .unwrap()
    }

    pub async fn session(&self, sid: &str) -> Value {
        get_json(&self.url(&format!("/v1/code/sessions/{sid}")), TOKEN).await
    }

    pub async fn events(&self, sid: &str, after: u64) -> Value {
        get_json(
            &self.url(&format!(
                "/v1/code/sessions/{sid}/events?after={after}&limit=10000"
            )),
            TOKEN,
        )
        .await
    }

    pub async fn sse(&self, sid: &str, last_event_id: Option<u64>) -> Sse {
        Sse::connect(
            &self.url(&format!("/v1/code/sessions/{sid}/events/stream")),
            TOKEN,
            last_event_id,
        )
        .await
    }

    /// Follows `sid`, sends the demo agent "run it" and waits for the Bash permission it asks:
    /// the stream (for what comes next) and the `can_use_tool` frame.
    pub async fn ask_bash(&self, sid: &str) -> (Sse, Frame) {
        let mut sse = self.sse(sid, None).await;
        self.post(sid, TOKEN, user("run it")).await;
        let ask = sse
            .until("can_use_tool", is_can_use_tool)
            .await
            .pop()
            .unwrap();
        (sse, ask)
    }
}

impl Drop for RelayProc {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Logs in with `token` (or a code): (cookie header value, login secret, login id).
pub async fn login(relay: &RelayProc, token: &str) -> (String, String, String) {
    let (status, ok) = try_login(relay, token).await;
    assert_eq!(status, 200);
    ok.unwrap()
}

/// `POST /v1/auth/login` with `token` (a token or a login code): the status, and on success
/// (cookie header value, login secret, login id).
pub async fn try_login(relay: &RelayProc, token: &str) -> (u16, Option<(String, String, String)>) {
    let r = http()
        .post(relay.url("/v1/auth/login"))
        .json(&json!({ "token": token }))
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    if status != 200 {
        return (status, None);
    }
    let cookie = r.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    let v: Value = r.json().await.unwrap();
    let field = |k: &str| v[k].as_str().unwrap().to_owned();
    (
        status,
        Some((cookie, field("login_secret"), field("login_id"))),
    )
}

/// `METHOD path` with a bearer token and an optional JSON body: the status and the answer (JSON,
/// or null).
pub async fn send_json(
    relay: &RelayProc,
    method: reqwest::Method,
    path: &str,
    token: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut req = http().request(method, relay.url(path)).bearer_auth(token);
    if let Some(b) = body {
        req = req.json(&b);
    }
    let r = req.send().await.unwrap();
    let status = r.status().as_u16();
    let text = r.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// `POST path` with a JSON body and a bearer token.
pub async fn post_json(
    relay: &RelayProc,
    path: &str,
    token: &str,
    body: Value,
) -> reqwest::Response {
    http()
        .post(relay.url(path))
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap()
}

/// A fresh one-time login code, minted with the controller token.
pub async fn mint_login_code(relay: &RelayProc) -> String {
    let r = http()
        .post(relay.url("/v1/auth/login-codes"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    r.json::<Value>().await.unwrap()["code"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// `git ARGS` in `dir` with a fixed identity and branch name; panics with git's stderr on failure.
pub fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args([
            "-c",
            "user.email=t@example.com",
            "-c",
            "user.name=t",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

pub fn http() -> reqwest::Client {
    reqwest::Client::builder().timeout(T).build().unwrap()
}

pub async fn get_json(url: &str, token: &str) -> Value {
    let r = http().get(url).bearer_auth(token).send().await.unwrap();
    assert!(r.status().is_success(), "GET {url}: {}", r.status());
    r.json().await.unwrap()
}

pub fn user(text: &str) -> Value {
    json!({"type":"user","message":{"role":"user","content":text},"parent_tool_use_id":null,"session_id":"","uuid":uuid::Uuid::new_v4().to_string()})
}

pub fn allow(request_id: &str, tool_use_id: &str, input: Value) -> Value {
    json!({"type":"control_response","response":{"subtype":"success","request_id":request_id,
        "response":{"behavior":"allow","updatedInput":input,"toolUseID":tool_use_id}},"uuid":uuid::Uuid::new_v4().to_string()})
}

/// Allows the permission `ask` (a `can_use_tool` frame) as asked: its input unchanged.
pub fn allow_as_asked(ask: &Frame) -> Value {
    let req = &ask.payload()["request"];
    allow(
        ask.payload()["request_id"].as_str().unwrap(),
        req["tool_use_id"].as_str().unwrap(),
        req["input"].clone(),
    )
}

/// One SSE frame.
#[derive(Debug, Clone)]
pub struct Frame {
    pub id: Option<u64>,
    pub event: String,
    pub data: Value,
}

impl Frame {
    pub fn payload(&self) -> &Value {
        &self.data["payload"]
    }
    pub fn ptype(&self) -> &str {
        self.payload()["type"].as_str().unwrap_or("")
    }
    pub fn source(&self) -> &str {
        self.data["source"].as_str().unwrap_or("")
    }
}

/// A minimal SSE client (spec-style parsing; comments recorded separately).
pub struct Sse {
    stream: futures::stream::BoxStream<'static, reqwest::Result<bytes::Bytes>>,
    buf: String,
    pub comments: Vec<String>,
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    /// The server ended the response.
    pub ended: bool,
}

impl Sse {
    pub async fn connect(url: &str, token: &str, last_event_id: Option<u64>) -> Sse {
        let client = reqwest::Client::builder().build().unwrap();
        let mut req = client
            .get(url)
            .bearer_auth(token)
            .header("accept", "text/event-stream");
        if let Some(id) = last_event_id {
            req = req.header("last-event-id", id.to_string());
        }
        let resp = tokio::time::timeout(Duration::from_secs(5), req.send())
            .await
            .expect("SSE headers must arrive at once")
            .unwrap();
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        Sse {
            stream: resp.bytes_stream().boxed(),
            buf: String::new(),
            comments: Vec::new(),
            status,
            headers,
            ended: false,
        }
    }

    fn parse_one(&mut self) -> Option<Option<Frame>> {
        let end = self.buf.find("\n\n")?;
        let block: String = self.buf.drain(..end + 2).collect();
        let (mut id, mut event, mut data) = (None, String::from("message"), Vec::new());
        for line in block.lines() {
            if let Some(c) = line.strip_prefix(':') {
                self.comments.push(c.trim().to_owned());
            } else if let Some(v) = line.strip_prefix("id: ") {
                id = Some(v.parse().unwrap());
            } else if let Some(v) = line.strip_prefix("event: ") {
                event = v.to_owned();
            } else if let Some(v) = line.strip_prefix("data: ") {
                data.push(v.to_owned());
            }
        }
        if data.is_empty() {
            return Some(None);
        }
        let data = serde_json::from_str(&data.join("\n")).expect("SSE data is JSON");
        Some(Some(Frame { id, event, data }))
    }

    /// The next frame with data, or `None` on timeout / end of stream.
    pub async fn next(&mut self, d: Duration) -> Option<Frame> {
        let deadline = tokio::time::Instant::now() + d;
        loop {
            while let Some(parsed) = self.parse_one() {
                if let Some(f) = parsed {
                    return Some(f);
                }
            }
            match tokio::time::timeout_at(deadline, self.stream.next()).await {
                Ok(Some(Ok(chunk))) => self.buf.push_str(std::str::from_utf8(&chunk).unwrap()),
                Ok(_) => {
                    self.ended = true;
                    return None;
                }
                Err(_) => return None,
            }
        }
    }

    /// Asserts that the server ends the response within `d` with no further frame.
    pub async fn expect_end(&mut self, d: Duration) {
        if let Some(f) = self.next(d).await {
            panic!("wanted the stream to end, got another frame: {f:#?}");
        }
        assert!(self.ended, "the stream was still open after {d:?}");
    }

    /// Frames until `stop` matches (inclusive). Panics on timeout.
    pub async fn until(&mut self, what: &str, stop: impl Fn(&Frame) -> bool) -> Vec<Frame> {
        let mut out = Vec::new();
        loop {
            let f = self
                .next(T)
                .await
                .unwrap_or_else(|| panic!("timed out waiting for {what}; got {out:#?}"));
            let done = stop(&f);
            out.push(f);
            if done {
                return out;
            }
        }
    }
}

pub fn is_durable(f: &Frame) -> bool {
    f.event == "client_event"
}

pub fn is_type(f: &Frame, ty: &str) -> bool {
    is_durable(f) && f.ptype() == ty
}

pub fn is_can_use_tool(f: &Frame) -> bool {
    is_type(f, "control_request") && f.payload()["request"]["subtype"] == "can_use_tool"
}

pub fn is_result(f: &Frame) -> bool {
    is_type(f, "result")
}

/// The text of the tool_result in a user frame, if any.
pub fn tool_result_text(f: &Frame) -> Option<String> {
    if !is_type(f, "user") {
        return None;
    }
    let content = f.payload()["message"]["content"].as_array()?;
    let block = content.iter().find(|b| b["type"] == "tool_result")?;
    Some(match &block["content"] {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    })
}

// ------------------------------------------------------------------ processes

/// Whether `pid` runs (a zombie waiting for its (new) parent to reap it counts as gone).
pub fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| Some(s[s.rfind(')')? + 2..].starts_with('Z')))
        .is_some_and(|zombie| !zombie)
}

/// The pid a process wrote to `path` (waits up to 10 s for it).
pub async fn read_pid(path: &Path) -> u32 {
    for _ in 0..200 {
        if let Some(pid) = std::fs::read_to_string(path)
            .ok()
            .and_then(|s| s.trim().parse().ok())
        {
            return pid;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{} was never written", path.display());
}

/// Whether `pid` is gone within `secs` seconds.
pub async fn gone_within(pid: u32, secs: u64) -> bool {
    for _ in 0..secs * 20 {
        if !alive(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

/// The Claude Code CLI version the real-CLI tests run (scripts/install-claude.sh installs it).
pub const PINNED: &str = "2.1.332";

/// The real CLI: `CLAUDE_BIN`, else the pinned version in the tool cache; `None` when missing.
pub fn claude_bin() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CLAUDE_BIN") {
        let p = PathBuf::from(p);
        return p.is_file().then_some(p);
    }
    let cache = std::env::var_os("BRIDGE_CACHE")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/bridge-console"))
        })?;
    let p = cache.join("claude").join(PINNED).join("package/claude");
    p.is_file().then_some(p)
}
