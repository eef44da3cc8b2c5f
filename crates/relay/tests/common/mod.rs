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
mod console;
pub mod nats;
mod process;
pub mod push_service;
mod steps;
pub mod transcripts;

pub use console::*;
pub use process::*;
pub use steps::*;

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
    /// More arguments, in order.
    pub fn args(mut self, args: &[&str]) -> Self {
        self.args.extend(args.iter().map(|a| a.to_string()));
        self
    }
    /// Serves the console from `dir` (`--static-dir`).
    pub fn static_dir(mut self, dir: &'a Path) -> Self {
        self.static_dir = Some(dir);
        self
    }
    /// No arguments at all (not even `--demo`): the caller names the agent.
    pub fn bare(data_dir: &'a Path) -> Self {
        Opts {
            args: vec![],
            ..Opts::demo(data_dir)
        }
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

    /// The one-time login code in the login URL the relay printed.
    pub fn login_code(&self) -> String {
        self.console_url.split("#login=").nth(1).unwrap().to_owned()
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
        self.create_session_with(json!({})).await
    }

    /// A session made with `body` (`cwd`, `model`, …); 201 expected.
    pub async fn create_session_with(&self, body: Value) -> String {
        let r = post_json(self, "/v1/code/sessions", TOKEN, body).await;
        assert_eq!(
            r.status(),
            201,
            "create session: {}",
            r.text().await.unwrap()
        );
        r.json::<Value>().await.unwrap()["session_id"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    /// `POST /v1/observer-tokens` with `body` (`session_id`, `expires_in_secs`, …) as the
    /// controller: the minted record (`token`, `id`, …); 201 expected.
    pub async fn mint_observer(&self, body: Value) -> Value {
        let r = post_json(self, "/v1/observer-tokens", TOKEN, body).await;
        assert_eq!(r.status(), 201);
        r.json().await.unwrap()
    }

    pub async fn post(&self, sid: &str, token: &str, payload: Value) -> reqwest::Response {
        post_json(
            self,
            &format!("/v1/code/sessions/{sid}/events"),
            token,
            json!({"session_id": sid, "events": [{"payload": payload}]}),
        )
        .await
    }

    /// `GET path` with a bearer token: the response, whatever its status.
    pub async fn get(&self, path: &str, token: &str) -> reqwest::Response {
        send(http().get(self.url(path)).bearer_auth(token)).await
    }

    /// `GET path` with no credentials: the body as text, whatever the status.
    pub async fn get_text(&self, path: &str) -> String {
        let r = send(http().get(self.url(path))).await;
        r.text().await.unwrap()
    }

    /// `POST path` with a bearer token and no body: the response, whatever its status.
    pub async fn post_empty(&self, path: &str, token: &str) -> reqwest::Response {
        send(http().post(self.url(path)).bearer_auth(token)).await
    }

    /// `POST /v1/code/sessions/{sid}/archive` as the controller: the status.
    pub async fn archive(&self, sid: &str) -> u16 {
        self.post_empty(&format!("/v1/code/sessions/{sid}/archive"), TOKEN)
            .await
            .status()
            .as_u16()
    }

    /// [`Self::mint_observer`], just the token.
    pub async fn observer_token(&self, body: Value) -> String {
        self.mint_observer(body).await["token"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    /// The sessions listed at `GET /v1/code/sessions` for `token`.
    pub async fn sessions(&self, token: &str) -> Vec<Value> {
        get_json(&self.url("/v1/code/sessions"), token).await["sessions"]
            .as_array()
            .unwrap()
            .clone()
    }

    /// The session's `last_sequence_num`.
    pub async fn last_seq(&self, sid: &str) -> u64 {
        self.session(sid).await["last_sequence_num"]
            .as_u64()
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
        self.ask(sid, "run it").await
    }

    /// Sends `sid` the prompt `text` as the controller (200 expected).
    pub async fn say(&self, sid: &str, text: &str) {
        assert_eq!(self.post(sid, TOKEN, user(text)).await.status(), 200);
    }

    /// Follows `sid` and sends the prompt `text` (200 expected): the stream, from before the prompt.
    pub async fn prompt(&self, sid: &str, text: &str) -> Sse {
        let sse = self.sse(sid, None).await;
        self.say(sid, text).await;
        sse
    }

    /// Follows `sid`, sends the prompt `text` and waits for the permission the agent asks: the
    /// stream (for what comes next) and the `can_use_tool` frame.
    pub async fn ask(&self, sid: &str, text: &str) -> (Sse, Frame) {
        let mut sse = self.prompt(sid, text).await;
        let ask = sse.until_one("can_use_tool", is_can_use_tool).await;
        (sse, ask)
    }

    /// Polls the session until its `state` is `state` (within [`T`]).
    pub async fn wait_state(&self, sid: &str, state: &str) {
        let deadline = Instant::now() + T;
        while self.session(sid).await["state"] != state {
            assert!(
                Instant::now() < deadline,
                "session {sid} never became {state}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
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

/// `POST /v1/auth/login` with `token` (a token or a login code): the answer, whatever it is.
pub async fn login_response(relay: &RelayProc, token: &str) -> reqwest::Response {
    send(
        http()
            .post(relay.url("/v1/auth/login"))
            .json(&json!({ "token": token })),
    )
    .await
}

/// `POST /v1/auth/login` with `token` (a token or a login code): the status, and on success
/// (cookie header value, login secret, login id).
pub async fn try_login(relay: &RelayProc, token: &str) -> (u16, Option<(String, String, String)>) {
    let r = login_response(relay, token).await;
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
    send(http().post(relay.url(path)).bearer_auth(token).json(&body)).await
}

/// Sends a request; panics only when there is no answer at all.
pub async fn send(req: reqwest::RequestBuilder) -> reqwest::Response {
    req.send().await.unwrap()
}

/// Sends `req` (a `POST` to any base URL) with an empty JSON body; 201 expected: the answer.
pub async fn created(req: reqwest::RequestBuilder) -> Value {
    let r = send(req.json(&json!({}))).await;
    assert_eq!(r.status(), 201);
    r.json().await.unwrap()
}

/// Sends `req` (a `POST …/v1/auth/login`, to any base URL) with the controller token; 200
/// expected: the answer's `Set-Cookie` header and the login secret.
pub async fn token_login(req: reqwest::RequestBuilder) -> (String, String) {
    let r = send(req.json(&json!({ "token": TOKEN }))).await;
    assert_eq!(r.status(), 200);
    let set = r.headers()["set-cookie"].to_str().unwrap().to_owned();
    let secret = r.json::<Value>().await.unwrap()["login_secret"]
        .as_str()
        .unwrap()
        .to_owned();
    (set, secret)
}

/// Sends `req` signed in as a console login: its cookie header value and its login secret.
pub async fn with_login(
    req: reqwest::RequestBuilder,
    cookie: &str,
    secret: &str,
) -> reqwest::Response {
    send(
        req.header("cookie", cookie)
            .header("x-bridge-login", secret),
    )
    .await
}

/// A demo relay in a fresh data directory with one session: the directory (kept while the relay
/// runs), the relay and the session id.
pub async fn demo_session() -> (tempfile::TempDir, RelayProc, String) {
    demo_session_with(&[]).await
}

/// Polls `GET /v1/code/sessions` (every 100 ms, for up to `within`) until an entry matches
/// `pick`: that entry. Panics saying `what` and showing the last list otherwise.
pub async fn wait_listed(
    relay: &RelayProc,
    within: Duration,
    what: &str,
    pick: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = Instant::now() + within;
    loop {
        let list = get_json(&relay.url("/v1/code/sessions"), TOKEN).await;
        if let Some(s) = list["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| pick(s))
        {
            return s.clone();
        }
        assert!(Instant::now() < deadline, "{what}: {list}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The ids in a `GET /v1/code/sessions` answer, in its order.
pub fn listed_ids(list: &Value) -> Vec<&str> {
    strings_of(list, "sessions", "id")
}

/// The string `field` of each object in the array `v[array]`, in its order.
pub fn strings_of<'a>(v: &'a Value, array: &str, field: &str) -> Vec<&'a str> {
    v[array]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|o| o[field].as_str())
        .collect()
}

/// The last line of the audit log in `data_dir`.
pub fn last_audit_entry(data_dir: &Path) -> Value {
    let audit = std::fs::read_to_string(data_dir.join("audit.jsonl")).unwrap();
    serde_json::from_str(audit.lines().last().unwrap()).unwrap()
}

/// `n` fresh temporary directories.
pub fn tempdirs(n: usize) -> Vec<tempfile::TempDir> {
    (0..n).map(|_| tempfile::tempdir().unwrap()).collect()
}

/// How many of the stored `events` are a client's answer to the request `rid`.
pub fn client_answers(events: &[Value], rid: &str) -> usize {
    events
        .iter()
        .filter(|e| {
            e["source"] == "client"
                && e["payload"]["type"] == "control_response"
                && e["payload"]["response"]["request_id"] == rid
        })
        .count()
}

/// `s` percent-encoded for a query string (unreserved characters kept).
pub fn url_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// `POST /v1/auth/logout` with the login cookie `cookie` (no login secret).
pub async fn logout(relay: &RelayProc, cookie: &str) -> reqwest::Response {
    send(
        http()
            .post(relay.url("/v1/auth/logout"))
            .header("cookie", cookie),
    )
    .await
}

/// The entry of session `id` in a `GET /v1/code/sessions` answer (panics, showing the list, when
/// it is not there).
pub fn find_session(list: &Value, id: &str) -> Value {
    list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == id)
        .cloned()
        .unwrap_or_else(|| panic!("{id} not listed: {list}"))
}

/// A demo relay started with the extra arguments `args` in a fresh data directory: the directory
/// (kept while the relay runs) and the relay.
pub fn demo_relay(args: &[&str]) -> (tempfile::TempDir, RelayProc) {
    let dir = tempfile::tempdir().unwrap();
    let relay = RelayProc::start(Opts::demo(dir.path()).args(args));
    (dir, relay)
}

/// Runs `bridge-relay --demo --data-dir <data_dir> ARGS` with the controller token `token` in the
/// environment (none when `None`) and no NATS URL there; it must refuse to start: what it printed.
pub fn refused_start(data_dir: &Path, args: &[&str], token: Option<&str>) -> std::process::Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_bridge-relay"));
    cmd.args(["--demo", "--data-dir"])
        .arg(data_dir)
        .args(args)
        .env_remove("BRIDGE_RELAY_TOKEN")
        .env_remove("BRIDGE_NATS_URL")
        .stdin(Stdio::null());
    if let Some(t) = token {
        cmd.env("BRIDGE_RELAY_TOKEN", t);
    }
    let out = cmd.output().unwrap();
    assert!(
        !out.status.success(),
        "{args:?} must be refused; stderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A fresh one-time login code, minted with the controller token.
pub async fn mint_login_code(relay: &RelayProc) -> String {
    let r = relay.post_empty("/v1/auth/login-codes", TOKEN).await;
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

/// Makes `repo` (its files already there) a repository with everything committed (`initial`).
pub fn git_commit_all(repo: &Path) {
    git(repo, &["init", "-q"]);
    git(repo, &["add", "."]);
    git(repo, &["commit", "-qm", "initial"]);
}

pub fn http() -> reqwest::Client {
    reqwest::Client::builder().timeout(T).build().unwrap()
}

pub async fn get_json(url: &str, token: &str) -> Value {
    let r = send(http().get(url).bearer_auth(token)).await;
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

    /// The first frame `stop` matches (the ones before it are dropped). Panics on timeout.
    pub async fn until_one(&mut self, what: &str, stop: impl Fn(&Frame) -> bool) -> Frame {
        self.until(what, stop).await.pop().unwrap()
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

/// Two answers to the permission `rid`, raced (`ra` carrying the command tagged `tags.0`, `rb`
/// `tags.1`): exactly one is taken, the other refused with a 409 `request_not_pending` naming
/// `rid`. The tag of the one taken.
pub async fn race_winner<'a>(
    ra: reqwest::Response,
    rb: reqwest::Response,
    rid: &str,
    tags: (&'a str, &'a str),
) -> &'a str {
    let (sa, sb) = (ra.status().as_u16(), rb.status().as_u16());
    let mut statuses = [sa, sb];
    statuses.sort_unstable();
    assert_eq!(statuses, [200, 409], "exactly one wins");
    let loser = if sa == 409 { ra } else { rb };
    let err: Value = loser.json().await.unwrap();
    assert_eq!(err["error"]["type"], "request_not_pending", "{err}");
    assert!(err["error"]["message"].as_str().unwrap().contains(rid));
    if sa == 200 { tags.0 } else { tags.1 }
}

/// The `sequence_num` of each stored event in `events`.
pub fn seqs_of(events: &[Value]) -> Vec<u64> {
    events
        .iter()
        .map(|e| e["sequence_num"].as_u64().unwrap())
        .collect()
}

/// Asserts that `r` is a 429 whose message names `flag` (the limit to raise).
pub async fn assert_limited(r: reqwest::Response, flag: &str) {
    assert_eq!(r.status(), 429);
    let body: Value = r.json().await.unwrap();
    assert!(
        body["error"]["message"].as_str().unwrap().contains(flag),
        "{body}"
    );
}

/// Asserts that `ids` are dense from 1 (`what` says why they must be).
pub fn assert_dense(ids: &[u64], what: &str) {
    assert_eq!(ids, (1..=ids.len() as u64).collect::<Vec<_>>(), "{what}");
}

/// The relay's `session_state_changed` to `ended` (the agent process is gone).
pub fn is_ended(f: &Frame) -> bool {
    is_type(f, "system") && f.payload()["state"] == "ended"
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

/// The real Claude Code CLI, pinned as the fake model's real-CLI tests pin it (one file for both).
#[path = "../../../fake-model/tests/common/claude.rs"]
mod claude;
pub use claude::claude_or_skip;
