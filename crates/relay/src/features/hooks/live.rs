//! Terminal sessions, live: a `claude` started in a terminal (outside the relay) reports through
//! its HTTP hooks (`POST /v1/hooks`, see [`super::api`]), and each such session becomes a relay
//! session (`cli.terminal`, listed with `origin: "cli"`) that the console shows like any other:
//!
//! * its transcript (`transcript_path`, confined to `--claude-config-dir`'s `projects/`) is
//!   followed: every line appended becomes the frame the CLI would have written on stdout;
//! * a `PermissionRequest` becomes a `can_use_tool` prompt of that session (the same dialog, "Needs
//!   you", push): the hook waits for the first answer — from the console, a notification, or the
//!   terminal itself (a later `PostToolUse`, `Stop` or `UserPromptSubmit` of that session, or the
//!   CLI dropping the request) — for at most [`HookSettings::wait_secs`], then leaves the prompt
//!   to the terminal;
//! * messages written in the console wait for the running turn to end and go to Claude through
//!   the `Stop` hook (`decision: block`, the message as the reason);
//! * `Stop` ends the turn (a `result`: `turn_done` push with the usual rules), `SessionEnd` ends
//!   the session.
//!
//! In place of an agent process the session gets a [`Bridge`]: what the session writes to the
//! agent's stdin (answers, messages, control requests) arrives here.

use std::collections::{HashMap, VecDeque};
use std::io::{Read as _, Seek as _};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

use crate::core::agent::{AgentControl, AgentEvents as _, AgentHandle};
use crate::core::session::{ExitInfo, Session};

/// How often a followed transcript is checked for new lines.
pub const FOLLOW_EVERY: Duration = Duration::from_millis(200);
/// A transcript read from its start when first seen only up to this size; past it, from its last
/// this many bytes (the console shows its start as the transcript's, through "Show earlier").
pub const HISTORY_BYTES: u64 = 8 << 20;
/// The longest a hook may hold a permission prompt (`wait_secs` is capped to this): the hook's own
/// timeout, as `hooks install` writes it, is 30 s more.
pub const MAX_WAIT_SECS: u64 = 300;
/// Messages queued for a terminal session's next `Stop`.
const MAX_QUEUED: usize = 32;
/// How long a `Stop` waits for the console's messages already posted to reach the queue.
const FLUSH_WAIT: Duration = Duration::from_secs(2);
/// Terminal sessions followed at once: a hook credential cannot make sessions without bound.
pub const MAX_TERMINALS: usize = 64;
/// Prompts one terminal session may have waiting here at once (more are left to the terminal).
const MAX_WAITING: usize = 16;

/// Why a terminal session could not be followed.
#[derive(Debug)]
pub enum MakeError {
    /// [`MAX_TERMINALS`] are followed already.
    TooMany,
    /// Its relay session could not be recorded.
    Store,
}

/// The controller's choices for terminal sessions (`GET`/`PUT /v1/hooks/settings`), kept in
/// `<data dir>/hooks.json`.
pub use bridge_protocol::api::HookSettings;

fn default_settings() -> HookSettings {
    HookSettings {
        send_to_phone: true,
        // An interactive terminal shows its own dialog meanwhile (checked with CLI 2.1.332): the
        // person there answers as usual; the wait only bounds a headless (`-p`) run.
        wait_secs: MAX_WAIT_SECS,
    }
}

/// What the `PermissionRequest` hook answers.
#[derive(Debug)]
pub enum Verdict {
    /// The answer from here, as the hook's `decision`.
    Decision(Value),
    /// Nobody here answered (in time, or the switch is off, or it was answered at the terminal):
    /// `{}`, the CLI asks at the terminal (or already did).
    Terminal,
}

struct Waiter {
    request_id: String,
    tool_name: String,
    input: Value,
    tx: oneshot::Sender<Verdict>,
}

/// One terminal session and its relay session.
pub struct Terminal {
    pub cli_id: String,
    pub session: Arc<Session>,
    /// Stands for the agent process: exits when the terminal session ends or is no longer
    /// followed (archived, deleted, the relay stopping).
    control: Arc<AgentControl>,
    state: Mutex<TermState>,
    /// The followed transcript; one read at a time ([`Terminal::pump`]).
    follow: tokio::sync::Mutex<Option<Follow>>,
    /// What the session writes to (its stand-in agent's stdin): [`Terminal::flush_input`] sends
    /// a marker after whatever it holds.
    input: Mutex<Option<mpsc::Sender<Bytes>>>,
}

#[derive(Default)]
struct TermState {
    /// Prompts waiting for an answer, oldest first.
    waiting: VecDeque<Waiter>,
    /// Messages from the console for the next `Stop`: (uuid, text).
    queued: VecDeque<(Option<String>, String)>,
    turn_started: Option<Instant>,
    /// Told once the bridge has handled everything written before [`FLUSH`].
    flushes: Vec<oneshot::Sender<()>>,
}

/// Not a line a session writes (those are JSON): the bridge's marker for [`Terminal::flush_input`].
const FLUSH: &[u8] = b"\0flush";

/// Every live terminal session, by Claude Code session id.
pub struct Terminals {
    by_cli: Mutex<HashMap<String, Arc<Terminal>>>,
    settings: Mutex<HookSettings>,
    settings_path: PathBuf,
    /// `<claude config dir>/projects`: the only place a transcript is followed from.
    projects: PathBuf,
}

impl Terminals {
    /// The relay's terminal sessions (made on first use).
    pub fn of(relay: &crate::core::relay::Relay) -> Arc<Terminals> {
        relay
            .plugs
            .get_or_init(|| Terminals::new(&relay.config.data_dir, &relay.config.claude_config_dir))
    }

    pub fn new(data_dir: &Path, claude_config_dir: &Path) -> Self {
        let settings_path = data_dir.join("hooks.json");
        let settings = std::fs::read(&settings_path)
            .ok()
            .and_then(|b| serde_json::from_slice::<HookSettings>(&b).ok())
            .unwrap_or_else(default_settings);
        Self {
            by_cli: Mutex::new(HashMap::new()),
            settings: Mutex::new(settings),
            settings_path,
            projects: claude_config_dir.join("projects"),
        }
    }

    pub fn settings(&self) -> HookSettings {
        self.settings
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Saves new settings (`wait_secs` capped to [`MAX_WAIT_SECS`]).
    pub fn set_settings(&self, mut s: HookSettings) -> std::io::Result<HookSettings> {
        s.wait_secs = s.wait_secs.clamp(1, MAX_WAIT_SECS);
        let text = serde_json::to_vec_pretty(&s).unwrap_or_default();
        crate::core::util::write_private(&self.settings_path, &text)?;
        *self.settings.lock().unwrap_or_else(|p| p.into_inner()) = s.clone();
        Ok(s)
    }

    pub fn get(&self, cli_id: &str) -> Option<Arc<Terminal>> {
        self.by_cli
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(cli_id)
            .cloned()
    }

    /// The terminal session `cli_id`, made with `make` (which creates its relay session) when it is
    /// new or its earlier relay session ended.
    pub fn get_or_make(
        &self,
        cli_id: &str,
        make: impl FnOnce() -> Option<Arc<Session>>,
    ) -> Result<(Arc<Terminal>, bool), MakeError> {
        let mut map = self.by_cli.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(t) = map.get(cli_id)
            && t.session.agent_running()
        {
            return Ok((t.clone(), false));
        }
        map.retain(|_, t| t.session.agent_running());
        if map.len() >= MAX_TERMINALS {
            return Err(MakeError::TooMany);
        }
        let session = make().ok_or(MakeError::Store)?;
        let t = Arc::new(Terminal {
            cli_id: cli_id.to_owned(),
            session,
            control: AgentControl::detached(),
            state: Mutex::new(TermState::default()),
            follow: tokio::sync::Mutex::new(None),
            input: Mutex::new(None),
        });
        map.insert(cli_id.to_owned(), t.clone());
        Ok((t, true))
    }

    pub fn forget(&self, cli_id: &str) {
        self.by_cli
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(cli_id);
    }

    /// `path` when it is a transcript under `projects/` (a `.jsonl` file, no `..`, not through a
    /// symlink), else `None`: a hook names the file, the relay only follows Claude Code's own.
    pub fn confine(&self, path: &str) -> Option<PathBuf> {
        let p = Path::new(path);
        if !p.is_absolute()
            || p.extension().and_then(|e| e.to_str()) != Some("jsonl")
            || p.components()
                .any(|c| matches!(c, std::path::Component::ParentDir))
        {
            return None;
        }
        let projects = std::fs::canonicalize(&self.projects).ok()?;
        let dir = std::fs::canonicalize(p.parent()?).ok()?;
        if !dir.starts_with(&projects) || dir == projects {
            return None;
        }
        let file = dir.join(p.file_name()?);
        // The file itself may not be a symlink (it may not exist yet: the CLI writes it soon).
        match std::fs::symlink_metadata(&file) {
            Ok(m) if m.file_type().is_symlink() => None,
            _ => Some(file),
        }
    }
}

impl Terminal {
    /// Connects the relay session to this terminal: a bridge in place of an agent process.
    pub fn attach(self: &Arc<Self>) {
        let (tx, rx) = mpsc::channel::<Bytes>(64);
        *self.input.lock().unwrap_or_else(|p| p.into_inner()) = Some(tx.clone());
        self.session.attach_agent(AgentHandle {
            stdin: tx,
            control: self.control.clone(),
        });
        tokio::spawn(bridge(Arc::downgrade(self), rx));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, TermState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Follows `path` (already confined) from now on, once.
    pub async fn follow(self: &Arc<Self>, path: PathBuf) {
        {
            let mut f = self.follow.lock().await;
            if f.is_some() {
                return;
            }
            *f = Some(Follow {
                path,
                offset: 0,
                first: true,
                partial: Vec::new(),
            });
        }
        tokio::spawn(follow(Arc::downgrade(self)));
    }

    /// Reads what was appended to the transcript since the last read and emits it. Each hook
    /// event does this first, so what the CLI wrote before it (the tool call a prompt is about,
    /// the last answer of a turn) is shown before what the event adds.
    pub async fn pump(&self) {
        let mut guard = self.follow.lock().await;
        let Some(f) = guard.as_mut() else { return };
        let (path, from, first) = (f.path.clone(), f.offset, f.first);
        let read = tokio::task::spawn_blocking(move || read_from(&path, from, first)).await;
        let Ok(Ok((bytes, start, end))) = read else {
            return;
        };
        if start != f.offset {
            // Started past the history cap (or the file was replaced): a new line start.
            f.partial.clear();
        }
        let skip_first_line = f.first && start > 0;
        f.first = false;
        f.offset = end;
        f.partial.extend_from_slice(&bytes);
        let mut lines: Vec<Vec<u8>> = Vec::new();
        while let Some(i) = f.partial.iter().position(|b| *b == b'\n') {
            let rest = f.partial.split_off(i + 1);
            let mut line = std::mem::replace(&mut f.partial, rest);
            line.pop();
            lines.push(line);
        }
        for (i, line) in lines.iter().enumerate() {
            if i == 0 && skip_first_line {
                continue;
            }
            if let Some(frame) = serde_json::from_slice::<Value>(line)
                .ok()
                .filter(|v| v.get("isSidechain").and_then(Value::as_bool) != Some(true))
                .filter(|v| !is_hook_bookkeeping(v))
                .and_then(|v| crate::features::transcripts::parse::to_frame(&v))
            {
                self.emit(&frame);
            }
        }
    }

    /// A frame from the terminal (as the CLI would have written it).
    pub fn emit(&self, frame: &Value) {
        self.session.on_line(&frame.to_string());
    }

    fn state_frame(&self, state: &str) -> Value {
        json!({"type": "system", "subtype": "session_state_changed", "state": state,
               "session_id": self.cli_id, "uuid": uuid::Uuid::new_v4().to_string()})
    }

    /// `UserPromptSubmit`: a turn starts (a prompt still waiting was answered at the terminal).
    pub fn turn_started(&self) {
        self.settle_all("a new prompt was sent at the terminal");
        self.lock().turn_started = Some(Instant::now());
        self.emit(&self.state_frame("running"));
    }

    /// `PermissionRequest`: the prompt shows here and waits for the first answer; `None` when it
    /// is not held (the switch is off).
    pub fn ask(
        &self,
        input: &Value,
        settings: &HookSettings,
    ) -> Option<(String, oneshot::Receiver<Verdict>)> {
        if !settings.send_to_phone || self.lock().waiting.len() >= MAX_WAITING {
            return None;
        }
        let tool_name = input
            .get("tool_name")
            .and_then(Value::as_str)
            .unwrap_or("tool")
            .to_owned();
        let tool_input = input.get("tool_input").cloned().unwrap_or(json!({}));
        let request_id = format!("hook_{}", uuid::Uuid::new_v4().simple());
        let (tx, rx) = oneshot::channel();
        {
            let mut st = self.lock();
            st.waiting.push_back(Waiter {
                request_id: request_id.clone(),
                tool_name: tool_name.clone(),
                input: tool_input.clone(),
                tx,
            });
        }
        // The hook names no tool use (CLI 2.1.332's `PermissionRequest`; `tests/terminal_cli.rs`
        // runs the real CLI through these hooks): a stand-in id of its own.
        let mut request = json!({
            "subtype": "can_use_tool",
            "tool_name": tool_name,
            "input": tool_input,
            "tool_use_id": format!("toolu_{}", &request_id["hook_".len()..]),
            "decision_reason": "asked by Claude Code in a terminal",
        });
        if let Some(s) = input.get("permission_suggestions").filter(|s| s.is_array()) {
            request["permission_suggestions"] = s.clone();
        }
        self.emit(
            &json!({"type": "control_request", "request_id": request_id, "request": request}),
        );
        Some((request_id, rx))
    }

    /// The prompt `request_id` is no longer waiting here (answered at the terminal, timed out, the
    /// CLI dropped it): it leaves the console ("resolved" push) and its hook answers `{}`.
    pub fn settle(&self, request_id: &str) {
        let w = {
            let mut st = self.lock();
            let pos = st.waiting.iter().position(|w| w.request_id == request_id);
            pos.and_then(|p| st.waiting.remove(p))
        };
        if let Some(w) = w {
            let _ = w.tx.send(Verdict::Terminal);
            self.emit(&json!({"type": "control_cancel_request", "request_id": w.request_id}));
        }
    }

    fn settle_all(&self, why: &str) {
        let ids: Vec<String> = self
            .lock()
            .waiting
            .iter()
            .map(|w| w.request_id.clone())
            .collect();
        if !ids.is_empty() {
            tracing::debug!(session = %self.session.id, why, n = ids.len(), "terminal prompts settled");
        }
        for id in ids {
            self.settle(&id);
        }
    }

    /// `PostToolUse`: the oldest prompt for this tool and input ran — answered at the terminal (an
    /// answer from here has already left the queue).
    pub fn tool_ran(&self, input: &Value) {
        let tool = input.get("tool_name").and_then(Value::as_str);
        let tool_input = input.get("tool_input");
        let id = self
            .lock()
            .waiting
            .iter()
            .find(|w| Some(w.tool_name.as_str()) == tool && Some(&w.input) == tool_input)
            .map(|w| w.request_id.clone());
        if let Some(id) = id {
            self.settle(&id);
        }
    }

    /// Waits until the bridge has handled what the session wrote before now (a console message
    /// posted just before the hook arrives is queued before the hook's answer is made). At most
    /// [`FLUSH_WAIT`].
    pub async fn flush_input(&self) {
        let tx = self.input.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let Some(tx) = tx else { return };
        let (done, handled) = oneshot::channel();
        self.lock().flushes.push(done);
        // The channel may be full (a burst of console messages): the wait covers the send too.
        let _ = tokio::time::timeout(FLUSH_WAIT, async {
            if tx.send(Bytes::from_static(FLUSH)).await.is_ok() {
                let _ = handled.await;
            }
        })
        .await;
    }

    fn flushed(&self) {
        for done in std::mem::take(&mut self.lock().flushes) {
            let _ = done.send(());
        }
    }

    /// `Stop`: the turn ended. A message queued here continues it (the hook answers `block` with
    /// it as the reason, and it shows as sent); otherwise a `result` closes the turn.
    pub fn stopped(&self, input: &Value) -> Value {
        self.settle_all("the turn ended");
        let (queued, started) = {
            let mut st = self.lock();
            let q: Vec<(Option<String>, String)> = st.queued.drain(..).collect();
            let started = if q.is_empty() {
                st.turn_started.take()
            } else {
                st.turn_started = Some(Instant::now());
                None
            };
            (q, started)
        };
        if !queued.is_empty() {
            let mut reason = String::new();
            for (uuid, text) in &queued {
                if !reason.is_empty() {
                    reason.push_str("\n\n");
                }
                reason.push_str(text);
                // Shown as sent: the echo the CLI gives a message it takes (`isReplay`).
                self.emit(&json!({
                    "type": "user",
                    "message": {"role": "user", "content": text},
                    "parent_tool_use_id": null,
                    "session_id": self.cli_id,
                    "uuid": uuid.clone().unwrap_or_else(|| uuid::Uuid::new_v4().to_string()),
                    "isReplay": true,
                }));
            }
            return json!({"decision": "block", "reason": reason});
        }
        let mut result = json!({
            "type": "result",
            "subtype": "success",
            "is_error": false,
            "result": input.get("last_assistant_message").and_then(Value::as_str).unwrap_or_default(),
            "session_id": self.cli_id,
            "uuid": uuid::Uuid::new_v4().to_string(),
        });
        if let Some(t) = started {
            result["duration_ms"] = json!(t.elapsed().as_millis() as u64);
        }
        self.emit(&result);
        json!({})
    }

    /// `SessionEnd`: the terminal session is over.
    pub fn ended(&self, reason: Option<&str>) {
        self.finish(format!(
            "the Claude Code session in the terminal ended{}",
            reason.map(|r| format!(" ({r})")).unwrap_or_default()
        ));
    }

    /// The session ends here (a normal end: no `agent_exited` push); prompts still waiting go back
    /// to the terminal.
    fn finish(&self, reason: String) {
        self.settle_all("the session ended");
        self.session.on_exit(ExitInfo {
            exit_code: Some(0),
            signal: None,
            stderr_tail: String::new(),
            at: crate::core::util::now_rfc3339(),
            reason: Some(reason),
        });
        self.control.mark_exited();
    }

    /// What the session wrote to its "agent": an answer, a message, a control request.
    fn handle_input(&self, line: &[u8]) {
        let Ok(v) = serde_json::from_slice::<Value>(line) else {
            return;
        };
        match v.get("type").and_then(Value::as_str) {
            Some("control_response") => {
                let r = &v["response"];
                let Some(rid) = r.get("request_id").and_then(Value::as_str) else {
                    return;
                };
                let w = {
                    let mut st = self.lock();
                    let pos = st.waiting.iter().position(|w| w.request_id == rid);
                    pos.and_then(|p| st.waiting.remove(p))
                };
                if let Some(w) = w {
                    let decision = decision_of(r, &w.input);
                    let _ = w.tx.send(Verdict::Decision(decision));
                }
            }
            Some("control_request") => {
                let rid = v.get("request_id").and_then(Value::as_str).unwrap_or("");
                let subtype = v.pointer("/request/subtype").and_then(Value::as_str);
                let response = if subtype == Some("initialize") {
                    json!({"subtype": "success", "request_id": rid, "response": {"terminal": true}})
                } else {
                    json!({"subtype": "error", "request_id": rid, "error": format!(
                        "this session runs in a terminal: {} there (the relay follows it through Claude Code's hooks)",
                        match subtype {
                            Some("interrupt") => "interrupt it",
                            Some("set_model") => "switch its model",
                            Some("set_permission_mode") => "switch its permission mode",
                            _ => "do that",
                        }
                    )})
                };
                self.emit(&json!({"type": "control_response", "response": response}));
            }
            Some("user") => {
                let text = user_text(&v);
                if text.trim().is_empty() {
                    return;
                }
                let uuid = v.get("uuid").and_then(Value::as_str).map(str::to_owned);
                let mut st = self.lock();
                if st.queued.len() < MAX_QUEUED {
                    st.queued.push_back((uuid, text));
                } else {
                    tracing::warn!(session = %self.session.id, "terminal session: {MAX_QUEUED} messages already wait for its turn to end; one dropped");
                }
            }
            _ => {}
        }
    }
}

/// The CLI's record of the hooks it ran at the end of a turn (`system/stop_hook_summary`): in a
/// terminal session those are the relay's own hooks, written after every turn — not shown.
fn is_hook_bookkeeping(v: &Value) -> bool {
    v.get("type").and_then(Value::as_str) == Some("system")
        && v.get("subtype").and_then(Value::as_str) == Some("stop_hook_summary")
}

/// A message's text (its text blocks joined; images cannot go through a hook).
fn user_text(v: &Value) -> String {
    match v.pointer("/message/content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// A `can_use_tool` answer (the `response` of a `control_response`) as the `PermissionRequest`
/// hook's `decision`: allow (with the edited input, else the asked one, and the rules to add), or
/// deny (with the message, and `interrupt`).
pub fn decision_of(response: &Value, asked: &Value) -> Value {
    let ok = response.get("subtype").and_then(Value::as_str) == Some("success");
    let r = response.get("response").unwrap_or(&Value::Null);
    if ok && r.get("behavior").and_then(Value::as_str) == Some("allow") {
        let mut d = json!({
            "behavior": "allow",
            "updatedInput": r.get("updatedInput").filter(|u| u.is_object()).unwrap_or(asked),
        });
        if let Some(p) = r.get("updatedPermissions").filter(|p| p.is_array()) {
            d["updatedPermissions"] = p.clone();
        }
        return d;
    }
    let message = r
        .get("message")
        .and_then(Value::as_str)
        .or_else(|| response.get("error").and_then(Value::as_str))
        .unwrap_or("denied from Bridge Console");
    let mut d = json!({"behavior": "deny", "message": message});
    if r.get("interrupt").and_then(Value::as_bool) == Some(true) {
        d["interrupt"] = json!(true);
    }
    d
}

/// Reads what the session writes to its agent until the session drops the channel (archived,
/// deleted, the relay stopping): the terminal session is then no longer followed here.
async fn bridge(t: Weak<Terminal>, mut rx: mpsc::Receiver<Bytes>) {
    while let Some(line) = rx.recv().await {
        let Some(t) = t.upgrade() else { return };
        if line == FLUSH {
            t.flushed();
            continue;
        }
        for l in line.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            t.handle_input(l);
        }
    }
    if let Some(t) = t.upgrade() {
        t.finish("no longer followed by the relay (archived, or the relay stopped)".into());
    }
}

/// Follows a transcript: [`Terminal::pump`] every [`FOLLOW_EVERY`] until the session ends.
async fn follow(t: Weak<Terminal>) {
    loop {
        let Some(term) = t.upgrade() else { return };
        if !term.session.agent_running() {
            return;
        }
        term.pump().await;
        drop(term);
        tokio::time::sleep(FOLLOW_EVERY).await;
    }
}

/// How far a followed transcript was read.
struct Follow {
    path: PathBuf,
    offset: u64,
    /// The first read is to come (it starts at most [`HISTORY_BYTES`] before the end).
    first: bool,
    /// The start of a line not complete yet.
    partial: Vec<u8>,
}

/// The bytes of `path` from `offset` to its end (on the first read, at most its last
/// [`HISTORY_BYTES`]): (bytes, where they start, where they end). Opened without following a
/// symlink; a file that shrank is read again from its start.
fn read_from(path: &Path, offset: u64, first: bool) -> std::io::Result<(Vec<u8>, u64, u64)> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)?;
    let len = f.metadata()?.len();
    let mut start = if offset > len { 0 } else { offset };
    if first && len - start > HISTORY_BYTES {
        start = len - HISTORY_BYTES;
    }
    // At most 8 MB per read: a line longer than that arrives over several.
    let end = len.min(start + HISTORY_BYTES);
    let mut buf = vec![0u8; (end - start) as usize];
    f.seek(std::io::SeekFrom::Start(start))?;
    f.read_exact(&mut buf)?;
    Ok((buf, start, end))
}
