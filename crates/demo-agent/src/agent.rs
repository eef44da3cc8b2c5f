//! The agent engine: reads client frames from a channel, plays scenario turns, writes CLI frames.

use std::collections::VecDeque;
use std::io::{self, BufRead, Write};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use uuid::Uuid;

use crate::scenario::{Condition, Scenario, Step, Vars};
use crate::tools::{self, Decision, Rule};
use crate::{AgentExit, AgentOptions};

/// The version string the demo agent reports (`claude_code_version`).
pub const DEMO_VERSION: &str = "2.1.332-demo";

/// Permission modes the CLI accepts (`manual` is an alias of `default`).
pub const PERMISSION_MODES: &[&str] = &[
    "default",
    "acceptEdits",
    "bypassPermissions",
    "plan",
    "dontAsk",
    "auto",
];

/// Normalizes a permission mode name; `None` if the CLI would reject it.
pub fn normalize_mode(mode: &str) -> Option<&'static str> {
    if mode == "manual" {
        return Some("default");
    }
    PERMISSION_MODES.iter().copied().find(|m| *m == mode)
}

/// A model the demo agent offers in `initialize.models`.
#[derive(Debug, Clone, Copy)]
pub struct ModelDef {
    pub value: &'static str,
    pub resolved: &'static str,
    pub display_name: &'static str,
    pub description: &'static str,
    /// USD per million input / output tokens.
    pub price: (f64, f64),
}

/// The models listed by `initialize` (the first is the default).
pub const MODELS: &[ModelDef] = &[
    ModelDef {
        value: "default",
        resolved: "claude-sonnet-4-5",
        display_name: "Default (recommended)",
        description: "Use the default model (currently Sonnet 4.5) · demo · $3/$15 per Mtok",
        price: (3.0, 15.0),
    },
    ModelDef {
        value: "opus",
        resolved: "claude-opus-4-1",
        display_name: "Opus",
        description: "Opus 4.1 · Most capable for complex work · demo · $15/$75 per Mtok",
        price: (15.0, 75.0),
    },
    ModelDef {
        value: "sonnet",
        resolved: "claude-sonnet-4-5",
        display_name: "Sonnet",
        description: "Sonnet 4.5 · Best for everyday tasks · demo · $3/$15 per Mtok",
        price: (3.0, 15.0),
    },
    ModelDef {
        value: "haiku",
        resolved: "claude-haiku-4-5",
        display_name: "Haiku",
        description: "Haiku 4.5 · Fastest for quick answers · demo · $1/$5 per Mtok",
        price: (1.0, 5.0),
    },
];

/// Resolves an alias (`opus`, `default`, …) to a model id; other names pass through.
pub fn resolve_model(model: Option<&str>) -> String {
    let m = model.filter(|m| !m.is_empty()).unwrap_or("default");
    MODELS
        .iter()
        .find(|d| d.value == m)
        .map(|d| d.resolved.to_owned())
        .unwrap_or_else(|| m.to_owned())
}

/// List price (USD per Mtok in, out) for a model id.
pub fn model_price(model: &str) -> (f64, f64) {
    if let Some(d) = MODELS
        .iter()
        .find(|d| d.resolved == model || d.value == model)
    {
        return d.price;
    }
    if model.contains("opus") {
        (15.0, 75.0)
    } else if model.contains("haiku") {
        (1.0, 5.0)
    } else {
        (3.0, 15.0)
    }
}

/// USD cost of a token count at the model's list price (rounded to 1e-9).
pub fn cost_usd(model: &str, input_tokens: u64, output_tokens: u64) -> f64 {
    let (pi, po) = model_price(model);
    let c = (input_tokens as f64 * pi + output_tokens as f64 * po) / 1_000_000.0;
    (c * 1e9).round() / 1e9
}

fn tokens_for(chars: usize) -> u64 {
    chars.div_ceil(4) as u64
}

fn new_uuid() -> String {
    Uuid::new_v4().to_string()
}

fn hex_id(len: usize) -> String {
    let mut s = Uuid::new_v4().simple().to_string();
    s.push_str(&Uuid::new_v4().simple().to_string());
    s.truncate(len);
    s
}

fn now_iso() -> String {
    let fmt = time::macros::format_description!(
        "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
    );
    time::OffsetDateTime::now_utc()
        .format(&fmt)
        .unwrap_or_else(|_| "1970-01-01T00:00:00.000Z".to_owned())
}

/// What the stdin reader thread hands to the engine.
pub(crate) enum Inbound {
    Frame(Value),
    Malformed(String),
    Eof,
}

/// Reads NDJSON lines from `input` until EOF (or a read error), sending each to `tx`.
pub(crate) fn read_loop(mut input: impl BufRead, tx: Sender<Inbound>) {
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match input.read_until(b'\n', &mut buf) {
            Ok(0) => break,
            Ok(_) => {
                let line = String::from_utf8_lossy(&buf);
                let line = line.trim();
                if line.is_empty() {
                    continue;
                }
                let msg = match serde_json::from_str::<Value>(line) {
                    Ok(v) if v.is_object() => Inbound::Frame(v),
                    Ok(_) => Inbound::Malformed("not a JSON object".into()),
                    Err(e) => Inbound::Malformed(e.to_string()),
                };
                if tx.send(msg).is_err() {
                    return;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
    let _ = tx.send(Inbound::Eof);
}

/// Why a turn stopped early.
pub(crate) enum Abort {
    /// `interrupt` control request while streaming (or between steps).
    Interrupted,
    /// Stopped at a tool: interrupted prompt, or a deny with `interrupt: true`.
    InterruptedTools,
    /// stdin closed while the agent needed an answer.
    StdinClosed,
    /// Output failed, or the scenario crashed the agent.
    Fatal(anyhow::Error),
}

impl From<io::Error> for Abort {
    fn from(e: io::Error) -> Self {
        Abort::Fatal(e.into())
    }
}

type Flow<T> = Result<T, Abort>;

/// Something the running turn has to react to.
enum Event {
    Interrupt,
    Response { request_id: String, response: Value },
    Eof,
}

/// A `user` message waiting for its turn.
struct UserMsg {
    uuid: Option<String>,
    message: Value,
    parent_tool_use_id: Value,
    text: String,
    /// Its image blocks, described ("image/png, 12 KB").
    images: Vec<String>,
}

/// "image/png, 12 KB" for each `image` block of a user message's content (the size decoded from its
/// base64 data; a non-base64 source says which kind it is).
pub fn describe_images(content: &Value) -> Vec<String> {
    let Some(blocks) = content.as_array() else {
        return Vec::new();
    };
    blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("image"))
        .map(|b| {
            let source = b.get("source").unwrap_or(&Value::Null);
            let get = |k: &str| source.get(k).and_then(Value::as_str).unwrap_or_default();
            let media_type = match get("media_type") {
                "" => "unknown type",
                t => t,
            };
            match get("type") {
                "base64" => {
                    let data = get("data").trim_end_matches('=');
                    let bytes = data.len() * 3 / 4;
                    let size = if bytes < 1024 {
                        format!("{bytes} B")
                    } else if bytes < 1024 * 1024 {
                        format!("{} KB", (bytes + 512) / 1024)
                    } else {
                        format!("{:.1} MB", bytes as f64 / (1024.0 * 1024.0))
                    };
                    format!("{media_type}, {size}")
                }
                other => format!("{media_type}, {other} source"),
            }
        })
        .collect()
}

/// The API message being streamed.
struct OpenMsg {
    id: String,
    request_id: String,
    next_index: u32,
    out_chars: usize,
    input_tokens: u64,
    /// The last block was a tool_use: the next content block starts a new message.
    after_tool: bool,
    /// Allowed tools to run after `message_stop`.
    to_run: Vec<ToRun>,
    /// message_delta/message_stop already written.
    closed: bool,
}

struct ToRun {
    id: String,
    name: String,
    input: Value,
    output: Option<String>,
    is_error: bool,
    run_ms: u64,
    elicit: Option<Value>,
    source: &'static str,
    reason_type: Option<&'static str>,
}

/// A block being streamed (for interrupt clean-up).
struct OpenBlock {
    index: u32,
    kind: &'static str,
    partial: String,
}

struct Turn {
    uuids: Vec<String>,
    start: Instant,
    waited: Duration,
    context_chars: usize,
    input_tokens: u64,
    output_tokens: u64,
    thinking_tokens: u64,
    num_msgs: u32,
    denials: Vec<Value>,
    last_text: String,
    last_stop_reason: Value,
    last_outcome: Option<Condition>,
    last_tool_result: String,
    msg: Option<OpenMsg>,
    block: Option<OpenBlock>,
    first_assistant_sent: bool,
    model: String,
    ttft_ms: Option<u64>,
    message_ids: Vec<String>,
}

impl Turn {
    fn new(uuids: Vec<String>, model: String, context_chars: usize) -> Self {
        Turn {
            uuids,
            start: Instant::now(),
            waited: Duration::ZERO,
            context_chars,
            input_tokens: 0,
            output_tokens: 0,
            thinking_tokens: 0,
            num_msgs: 0,
            denials: Vec::new(),
            last_text: String::new(),
            last_stop_reason: Value::Null,
            last_outcome: None,
            last_tool_result: String::new(),
            msg: None,
            block: None,
            first_assistant_sent: false,
            model,
            ttft_ms: None,
            message_ids: Vec::new(),
        }
    }

    fn uuid_fields(&self, v: &mut Map<String, Value>, single: bool) {
        if let Some(first) = self.uuids.first() {
            if single {
                v.insert("user_message_uuid".into(), json!(first));
            }
            v.insert("user_message_uuids".into(), json!(self.uuids));
        }
    }
}

/// The agent: session state plus I/O.
pub(crate) struct Agent<W: Write> {
    out: W,
    rx: Receiver<Inbound>,
    scenario: Scenario,
    opts: AgentOptions,
    session_id: String,
    model: String,
    mode: String,
    rules: Vec<Rule>,
    queue: VecDeque<UserMsg>,
    stdin_closed: bool,
    in_turn: bool,
    result_index: u64,
    /// uuid of the last `assistant` / `user` frame written.
    last_message_uuid: Option<String>,
    /// Cost of every turn so far: like the real CLI, `result.total_cost_usd` is the process's running total.
    total_cost_usd: f64,
    /// The `can_use_tool` frame awaiting an answer (reported by a later `initialize`).
    pending_permission: Option<Value>,
    /// Context usage, MCP status and the task list (see [`crate::info`]).
    info: crate::info::Info,
}

impl<W: Write> Agent<W> {
    pub(crate) fn new(
        scenario: Scenario,
        opts: AgentOptions,
        rx: Receiver<Inbound>,
        out: W,
    ) -> Self {
        let session_id = opts.session_id.clone().unwrap_or_else(new_uuid);
        let model = resolve_model(opts.model.as_deref());
        let mode = normalize_mode(&opts.permission_mode)
            .unwrap_or("default")
            .to_owned();
        Agent {
            out,
            rx,
            scenario,
            opts,
            session_id,
            model,
            mode,
            rules: Vec::new(),
            queue: VecDeque::new(),
            stdin_closed: false,
            in_turn: false,
            result_index: 0,
            last_message_uuid: None,
            total_cost_usd: 0.0,
            pending_permission: None,
            info: crate::info::Info::default(),
        }
    }

    /// Serves until stdin closes and every queued turn is done.
    pub(crate) fn serve(mut self) -> anyhow::Result<()> {
        loop {
            if !self.queue.is_empty() {
                let batch: Vec<UserMsg> = self.queue.drain(..).collect();
                match self.run_turn(batch) {
                    Ok(()) => {}
                    Err(Abort::Fatal(e)) => return Err(e),
                    // run_turn handles these itself; nothing left to do.
                    Err(_) => {}
                }
                continue;
            }
            if self.stdin_closed {
                break;
            }
            let msg = match self.rx.recv() {
                Ok(m) => m,
                Err(_) => Inbound::Eof,
            };
            match self.handle(msg) {
                Ok(_) => {}
                Err(Abort::Fatal(e)) => return Err(e),
                Err(_) => {}
            }
        }
        self.out.flush()?;
        Ok(())
    }

    // ---------------------------------------------------------------- output

    fn emit(&mut self, v: &Value) -> io::Result<()> {
        if matches!(v["type"].as_str(), Some("assistant" | "user"))
            && let Some(u) = v["uuid"].as_str()
        {
            // What a compact boundary names as its logical parent.
            self.last_message_uuid = Some(u.to_owned());
        }
        let mut s = serde_json::to_string(v)?;
        // Like the CLI: keep every record on one physical line for every reader.
        if s.contains(['\u{2028}', '\u{2029}']) {
            s = s
                .replace('\u{2028}', "\\u2028")
                .replace('\u{2029}', "\\u2029");
        }
        s.push('\n');
        self.out.write_all(s.as_bytes())?;
        self.out.flush()
    }

    fn control_success(&mut self, request_id: &str, response: Value) -> io::Result<()> {
        self.emit(&json!({
            "type": "control_response",
            "response": {"subtype": "success", "request_id": request_id, "response": response}
        }))
    }

    fn control_error(
        &mut self,
        request_id: &str,
        error: &str,
        code: Option<&str>,
    ) -> io::Result<()> {
        let mut r = json!({"subtype": "error", "request_id": request_id, "error": error});
        if let Some(code) = code {
            r["error_code"] = json!(code);
        }
        self.emit(&json!({"type": "control_response", "response": r}))
    }

    fn lifecycle(&mut self, command_uuid: &str, state: &str) -> io::Result<()> {
        let v = json!({
            "type": "command_lifecycle",
            "command_uuid": command_uuid,
            "state": state,
            "uuid": new_uuid(),
            "session_id": self.session_id,
        });
        self.emit(&v)
    }

    fn status(&mut self, status: Value, uuids: Option<&[String]>) -> io::Result<()> {
        let mut v = json!({"type": "system", "subtype": "status", "status": status});
        if status.is_null() {
            v["permissionMode"] = json!(self.mode);
            v["uuid"] = json!(new_uuid());
            v["session_id"] = json!(self.session_id);
        } else {
            v["session_id"] = json!(self.session_id);
            v["uuid"] = json!(new_uuid());
        }
        if let Some(u) = uuids.filter(|u| !u.is_empty()) {
            v["user_message_uuids"] = json!(u);
        }
        self.emit(&v)
    }

    fn user_text_frame(&mut self, text: &str) -> io::Result<()> {
        let v = json!({
            "type": "user",
            "message": {"role": "user", "content": [{"type": "text", "text": text}]},
            "parent_tool_use_id": null,
            "session_id": self.session_id,
            "uuid": new_uuid(),
            "timestamp": now_iso(),
        });
        self.emit(&v)
    }

    fn initialize_response(&self) -> Value {
        let models: Vec<Value> = MODELS
            .iter()
            .map(|m| {
                json!({
                    "value": m.value,
                    "resolvedModel": m.resolved,
                    "displayName": m.display_name,
                    "description": m.description,
                    "supportsEffort": true,
                    "supportedEffortLevels": ["low", "medium", "high"],
                    "supportsAdaptiveThinking": true,
                    "supportsFastMode": false,
                    "supportsAutoMode": true,
                    "supportsThinkingOff": true
                })
            })
            .collect();
        json!({
            "commands": [
                {"name": "clear", "description": "Clear conversation history and free up context", "argumentHint": "", "builtin": true},
                {"name": "compact", "description": "Clear conversation history but keep a summary in context", "argumentHint": "<optional custom summarization instructions>", "builtin": true},
                {"name": "context", "description": "Visualize current context usage", "argumentHint": "", "builtin": true},
                {"name": "model", "description": "Set the AI model for Claude Code", "argumentHint": "[model]", "builtin": true},
                {"name": "usage", "description": "Show plan usage limits", "argumentHint": "", "aliases": ["cost"], "builtin": true},
                {"name": "review", "description": "Review a pull request (demo)", "argumentHint": "[pr]", "builtin": false}
            ],
            "agents": [
                {"name": "general-purpose", "description": "General-purpose agent for researching complex questions (demo)"},
                {"name": "Explore", "description": "Fast read-only search agent for locating code (demo)", "model": "inherit"}
            ],
            "output_style": "default",
            "available_output_styles": ["default", "Explanatory", "Learning"],
            "models": models,
            "account": {"tokenSource": "none", "apiKeySource": "none", "apiProvider": "firstParty"},
            "pid": std::process::id(),
            "claude_code_version": DEMO_VERSION,
            "current_permission_mode": self.mode,
            "hook_on_failure_supported": true,
            "analytics_disabled": true,
            "sandbox_enabled": false,
            "fast_mode_state": "off",
            "fast_mode_disabled_reason": "sdk_opt_in_required",
            "session_state": if self.pending_permission.is_some() { "requires_action" } else if self.in_turn { "running" } else { "idle" },
            "capabilities": ["ui_surface_v1"]
        })
    }

    fn init_frame(&mut self, uuids: &[String]) -> io::Result<()> {
        let mut v = json!({
            "type": "system",
            "subtype": "init",
            "cwd": self.opts.cwd,
            "session_id": self.session_id,
            "tools": ["Task", "AskUserQuestion", "Bash", "Edit", "Read", "Write", "WebFetch", "WebSearch", "NotebookEdit"],
            "mcp_servers": [],
            "model": self.model,
            "permissionMode": self.mode,
            "slash_commands": ["clear", "compact", "context", "model", "usage", "review"],
            "apiKeySource": "none",
            "claude_code_version": DEMO_VERSION,
            "output_style": "default",
            "agents": ["general-purpose", "Explore"],
            "skills": [],
            "plugins": [],
            "terminal_slash_commands": [],
            "capabilities": ["interrupt_receipt_v1", "msg_lifecycle_v1"],
            "analytics_disabled": true,
            "served_by_anthropic": false,
            "uuid": new_uuid(),
            "sandbox_enabled": false,
            "original_cwd": self.opts.cwd,
            "additional_directories": [],
            "fast_mode_state": "off",
            "fast_mode_disabled_reason": "sdk_opt_in_required",
            "view_mode": "default",
        });
        if !uuids.is_empty() {
            v["user_message_uuids"] = json!(uuids);
        }
        self.emit(&v)
    }

    // ---------------------------------------------------------------- input

    /// Handles one inbound frame. Control requests are answered here; what a running turn must react
    /// to is returned.
    fn handle(&mut self, msg: Inbound) -> Flow<Option<Event>> {
        let v = match msg {
            Inbound::Eof => {
                self.stdin_closed = true;
                return Ok(Some(Event::Eof));
            }
            Inbound::Malformed(err) => {
                eprintln!("bridge-demo-agent: ignoring a malformed input line: {err}");
                return Ok(None);
            }
            Inbound::Frame(v) => v,
        };
        let ty = v
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        match ty.as_str() {
            "user" => {
                self.enqueue_user(&v)?;
                Ok(None)
            }
            "control_request" => self.handle_control_request(&v),
            "control_response" => {
                if self.opts.replay_user_messages {
                    self.emit(&v)?;
                }
                let resp = v.get("response").cloned().unwrap_or(Value::Null);
                let request_id = resp
                    .get("request_id")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                Ok(Some(Event::Response {
                    request_id,
                    response: resp,
                }))
            }
            "update_environment_variables" => {
                if let Some(rid) = v.get("request_id").and_then(Value::as_str) {
                    const APPLIED: &[&str] = &[
                        "CLAUDE_CODE_SESSION_ACCESS_TOKEN",
                        "CLAUDE_CODE_OAUTH_TOKEN",
                        "CLAUDE_CODE_SESSIONS_OAUTH_TOKEN",
                    ];
                    let applied: Vec<&str> = v
                        .get("variables")
                        .and_then(Value::as_object)
                        .map(|o| {
                            APPLIED
                                .iter()
                                .copied()
                                .filter(|k| o.contains_key(*k))
                                .collect()
                        })
                        .unwrap_or_default();
                    let rid = rid.to_owned();
                    self.control_success(&rid, json!({ "applied": applied }))?;
                }
                Ok(None)
            }
            // We never have client-originated work in flight that could be withdrawn.
            "control_cancel_request" | "keep_alive" => Ok(None),
            other => {
                eprintln!("bridge-demo-agent: Ignoring unknown message type: {other}");
                Ok(None)
            }
        }
    }

    fn enqueue_user(&mut self, v: &Value) -> io::Result<()> {
        let uuid = v.get("uuid").and_then(Value::as_str).map(str::to_owned);
        let message = v
            .get("message")
            .cloned()
            .unwrap_or_else(|| json!({"role": "user", "content": ""}));
        let text = match message.get("content") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(blocks)) => blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
            _ => String::new(),
        };
        let images = message
            .get("content")
            .map(describe_images)
            .unwrap_or_default();
        if let Some(u) = &uuid {
            let u = u.clone();
            self.lifecycle(&u, "queued")?;
        }
        self.queue.push_back(UserMsg {
            uuid,
            message,
            parent_tool_use_id: v.get("parent_tool_use_id").cloned().unwrap_or(Value::Null),
            text,
            images,
        });
        Ok(())
    }

    fn handle_control_request(&mut self, v: &Value) -> Flow<Option<Event>> {
        let rid = v
            .get("request_id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let req = v.get("request").cloned().unwrap_or(Value::Null);
        let subtype = req
            .get("subtype")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        match subtype.as_str() {
            "initialize" => {
                let body = self.initialize_response();
                let pending: Vec<Value> = self.pending_permission.iter().cloned().collect();
                self.emit(&json!({
                    "type": "control_response",
                    "response": {
                        "subtype": "success",
                        "request_id": rid,
                        "response": body,
                        "pending_permission_requests": pending,
                        "pending_user_dialog_requests": []
                    }
                }))?;
                Ok(None)
            }
            "interrupt" => {
                let queued: Vec<String> =
                    self.queue.iter().filter_map(|m| m.uuid.clone()).collect();
                if req.get("cancel_queued").and_then(Value::as_bool) == Some(true) {
                    self.queue.clear();
                    for u in &queued {
                        self.lifecycle(u, "cancelled")?;
                    }
                    self.control_success(&rid, json!({"still_queued": [], "cancelled": queued}))?;
                } else {
                    self.control_success(&rid, json!({ "still_queued": queued }))?;
                }
                Ok(self.in_turn.then_some(Event::Interrupt))
            }
            "set_model" => {
                let requested = req.get("model").and_then(Value::as_str);
                self.model = resolve_model(requested);
                self.control_success(&rid, json!({}))?;
                if self.opts.replay_user_messages {
                    let text = format!(
                        "<local-command-stdout>Set model to {}</local-command-stdout>",
                        self.model
                    );
                    let frame = json!({
                        "type": "user",
                        "message": {"role": "user", "content": text},
                        "session_id": self.session_id,
                        "parent_tool_use_id": null,
                        "uuid": new_uuid(),
                        "timestamp": now_iso(),
                        "isReplay": true
                    });
                    self.emit(&frame)?;
                }
                Ok(None)
            }
            "set_permission_mode" => {
                let asked = req.get("mode").and_then(Value::as_str).unwrap_or_default();
                match normalize_mode(asked) {
                    Some(mode) => {
                        self.mode = mode.to_owned();
                        self.control_success(&rid, json!({ "mode": mode }))?;
                        self.status(Value::Null, None)?;
                    }
                    None => {
                        let msg = format!(
                            "Invalid permission mode: {asked:?} (expected one of {})",
                            PERMISSION_MODES.join(", ")
                        );
                        self.control_error(&rid, &msg, None)?;
                    }
                }
                Ok(None)
            }
            "set_max_thinking_tokens" => {
                self.control_success(&rid, json!({}))?;
                Ok(None)
            }
            "mcp_status" => {
                self.control_success(&rid, crate::info::Info::mcp_status())?;
                Ok(None)
            }
            "get_context_usage" => {
                let body = self.info.context_usage(&self.model);
                self.control_success(&rid, body)?;
                Ok(None)
            }
            other => {
                let msg = format!("Unsupported control request subtype: {other}");
                self.control_error(&rid, &msg, Some("unsupported_request"))?;
                Ok(None)
            }
        }
    }

    /// Waits `ms` (scaled by the speed factor) while answering control traffic. Returns early on
    /// interrupt. With speed 0 it only drains what is already waiting.
    fn pause(&mut self, ms: u64) -> Flow<()> {
        let dur = Duration::from_secs_f64((ms as f64 / 1000.0) * self.opts.speed.max(0.0));
        let deadline = Instant::now() + dur;
        loop {
            if self.stdin_closed {
                let now = Instant::now();
                if deadline > now {
                    std::thread::sleep(deadline - now);
                }
                return Ok(());
            }
            let now = Instant::now();
            let msg = if deadline <= now {
                match self.rx.try_recv() {
                    Ok(m) => m,
                    Err(TryRecvError::Empty) => return Ok(()),
                    Err(TryRecvError::Disconnected) => Inbound::Eof,
                }
            } else {
                match self.rx.recv_timeout(deadline - now) {
                    Ok(m) => m,
                    Err(RecvTimeoutError::Timeout) => return Ok(()),
                    Err(RecvTimeoutError::Disconnected) => Inbound::Eof,
                }
            };
            if let Some(Event::Interrupt) = self.handle(msg)? {
                return Err(Abort::Interrupted);
            }
        }
    }

    /// Blocks until the answer to `request_id` arrives.
    fn await_answer(&mut self, request_id: &str) -> Flow<Value> {
        loop {
            if self.stdin_closed {
                return Err(Abort::StdinClosed);
            }
            let msg = self.rx.recv().unwrap_or(Inbound::Eof);
            match self.handle(msg)? {
                Some(Event::Interrupt) => return Err(Abort::Interrupted),
                Some(Event::Eof) => return Err(Abort::StdinClosed),
                Some(Event::Response {
                    request_id: rid,
                    response,
                }) if rid == request_id => return Ok(response),
                _ => {}
            }
        }
    }

    // ---------------------------------------------------------------- turns

    fn run_turn(&mut self, batch: Vec<UserMsg>) -> Flow<()> {
        self.in_turn = true;
        let r = self.run_turn_inner(batch);
        self.in_turn = false;
        self.pending_permission = None;
        r
    }

    fn run_turn_inner(&mut self, batch: Vec<UserMsg>) -> Flow<()> {
        let uuids: Vec<String> = batch.iter().filter_map(|m| m.uuid.clone()).collect();
        for u in &uuids {
            self.lifecycle(u, "started")?;
        }
        if let [only] = batch.as_slice()
            && let Some(args) = only.text.trim().strip_prefix("/compact")
            && (args.is_empty() || args.starts_with(char::is_whitespace))
        {
            return self.compact(only, uuids, args.trim());
        }
        self.init_frame(&uuids)?;
        self.status(json!("requesting"), Some(&uuids))?;
        let text = batch
            .iter()
            .map(|m| m.text.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        if self.opts.replay_user_messages {
            self.replay(&batch, &text)?;
        }
        let mut turn = Turn::new(uuids, self.model.clone(), text.chars().count());
        let vars = Vars {
            cwd: self.opts.cwd.clone(),
            prompt: text.clone(),
            model: self.model.clone(),
        };
        let images: Vec<&String> = batch.iter().flat_map(|m| &m.images).collect();
        let mut steps = match self.scenario.select(&text) {
            Some(reply) => reply.expand(&vars),
            None => vec![Step::Text {
                text: format!(
                    "(demo agent: scenario {:?} has no reply matching this message)",
                    self.scenario.name
                ),
                repeat_text: None,
                chunk_chars: None,
                delay_ms: None,
                if_: None,
                repeat: None,
            }],
        };
        if !images.is_empty() {
            // The demo has no eyes, but says what arrived, so the console shows attachments working.
            let seen = images
                .iter()
                .map(|d| format!("I see an image ({d})."))
                .collect::<Vec<_>>()
                .join(" ");
            steps.insert(
                0,
                Step::Text {
                    text: format!("{seen}\n\n"),
                    repeat_text: None,
                    chunk_chars: None,
                    delay_ms: None,
                    if_: None,
                    repeat: None,
                },
            );
        }
        match self.play(&mut turn, steps) {
            Ok(()) => self.finish_success(&mut turn),
            Err(Abort::Interrupted) => self.finish_interrupted(&mut turn, false),
            Err(Abort::InterruptedTools | Abort::StdinClosed) => {
                self.finish_interrupted(&mut turn, true)
            }
            Err(e) => Err(e),
        }
    }

    /// `/compact`, as CLI 2.1.332 answers it (see the `bridge-capture-compact` fixture): `compacting`, the
    /// result status, a fresh `init`, the `compact_boundary`, the summary the conversation continues from
    /// (a synthetic user frame), the command's output and the command itself replayed, and a `success`
    /// result with no model turn (`num_turns: 0`, `local_command`).
    fn compact(&mut self, msg: &UserMsg, uuids: Vec<String>, args: &str) -> Flow<()> {
        let mut turn = Turn::new(uuids, self.model.clone(), 0);
        self.status(json!("compacting"), None)?;
        // Compaction is a local command: it finishes even if an interrupt arrives meanwhile (the
        // interrupt is answered), so the turn always ends with its result.
        if let Err(Abort::Fatal(e)) = self.pause(400) {
            return Err(Abort::Fatal(e));
        }
        let done = json!({"type": "system", "subtype": "status", "status": null, "compact_result": "success",
                          "session_id": self.session_id, "uuid": new_uuid()});
        self.emit(&done)?;
        self.init_frame(&[])?;
        // Plausible figures: the conversation grows with every turn.
        let pre_tokens = 12_000 + 1_500 * self.result_index;
        let post_tokens = 2_600u64.min(pre_tokens);
        let boundary = json!({
            "type": "system", "subtype": "compact_boundary", "session_id": self.session_id, "uuid": new_uuid(),
            "compact_metadata": {"trigger": "manual", "pre_tokens": pre_tokens, "post_tokens": post_tokens,
                                 "cumulative_dropped_tokens": pre_tokens - post_tokens,
                                 "duration_ms": turn.start.elapsed().as_millis() as u64},
        });
        let mut boundary = boundary;
        if let Some(parent) = &self.last_message_uuid {
            boundary["logical_parent_uuid"] = json!(parent);
        }
        self.emit(&boundary)?;
        // Shaped like the CLI's summary (several paragraphs), with the demo's own content.
        let instructions = if args.is_empty() {
            String::new()
        } else {
            format!("\nSummary instructions given: {args}\n")
        };
        let summary = format!(
            "This session is being continued from a previous conversation that ran out of context. \
             The summary below covers the earlier portion of the conversation.\n\n\
             Summary (demo agent):\n\
             1. The person tried Bridge Console with the scripted demo agent (scenario {:?}).\n\
             2. Every answer so far came from that scenario; no model was called.\n\
             3. {} turns completed before this compaction.\n{instructions}\n\
             Continue the conversation from where it left off without asking the user any further questions. \
             Resume directly — do not acknowledge the summary and do not recap what was happening.",
            self.scenario.name, self.result_index
        );
        let synthetic = json!({"type": "user", "message": {"role": "user", "content": summary},
            "session_id": self.session_id, "parent_tool_use_id": null, "uuid": new_uuid(),
            "timestamp": now_iso(), "isReplay": false, "isSynthetic": true});
        self.emit(&synthetic)?;
        if self.opts.replay_user_messages {
            let output = json!({"type": "user",
                "message": {"role": "user", "content": "<local-command-stdout>Compacted </local-command-stdout>"},
                "session_id": self.session_id, "parent_tool_use_id": null, "uuid": new_uuid(),
                "timestamp": now_iso(), "isReplay": true});
            self.emit(&output)?;
            let command = json!({"type": "user",
                "message": {"role": "user", "content": format!(
                    "<command-name>/compact</command-name>\n            <command-message>compact</command-message>\n            <command-args>{args}</command-args>")},
                "session_id": self.session_id, "parent_tool_use_id": null,
                "uuid": msg.uuid.clone().unwrap_or_else(new_uuid),
                "timestamp": now_iso(), "isReplay": true});
            self.emit(&command)?;
        }
        let mut result = self.result_frame(&turn, "success", "completed");
        if let Some(o) = result.as_object_mut() {
            for k in [
                "terminal_reason",
                "begun_message_ids",
                "ttft_ms",
                "api_error_status",
            ] {
                o.remove(k);
            }
            o.insert("result".into(), json!(""));
            o.insert("stop_reason".into(), Value::Null);
            o.insert("duration_api_ms".into(), json!(0));
            o.insert("local_command".into(), json!("compact"));
        }
        self.emit(&result)?;
        for u in std::mem::take(&mut turn.uuids) {
            self.lifecycle(&u, "completed")?;
        }
        Ok(())
    }

    fn replay(&mut self, batch: &[UserMsg], joined: &str) -> io::Result<()> {
        let n = batch.len();
        for (i, m) in batch.iter().enumerate() {
            let last = i + 1 == n;
            let message = if n > 1 && last {
                json!({"role": "user", "content": joined})
            } else {
                m.message.clone()
            };
            let mut v = json!({
                "type": "user",
                "message": message,
                "session_id": self.session_id,
                "parent_tool_use_id": m.parent_tool_use_id,
                "uuid": m.uuid.clone().unwrap_or_else(new_uuid),
            });
            if last {
                v["timestamp"] = json!(now_iso());
            }
            v["isReplay"] = json!(true);
            self.emit(&v)?;
        }
        Ok(())
    }

    fn play(&mut self, turn: &mut Turn, steps: Vec<Step>) -> Flow<()> {
        for step in steps {
            // A text/thinking block after tool calls belongs to the next model request: finish the current
            // message and run its tools first, so that `if` sees their outcome.
            if matches!(step, Step::Text { .. } | Step::Thinking { .. })
                && turn.msg.as_ref().is_some_and(|m| m.after_tool)
            {
                self.close_msg(turn)?;
            }
            if let Some(cond) = step.condition()
                && turn.last_outcome != Some(cond)
            {
                continue;
            }
            match step {
                Step::Pause { ms, .. } => self.pause(ms)?,
                Step::Crash { code, stderr } => {
                    self.out.flush()?;
                    return Err(Abort::Fatal(
                        AgentExit {
                            code,
                            message: stderr,
                        }
                        .into(),
                    ));
                }
                Step::Text {
                    text,
                    chunk_chars,
                    delay_ms,
                    ..
                } => {
                    let text = text.replace("{tool_result}", &turn.last_tool_result);
                    self.ensure_msg(turn, false)?;
                    self.stream_text_like(
                        turn,
                        "text",
                        &text,
                        None,
                        chunk_chars.unwrap_or(12),
                        delay_ms.unwrap_or(20),
                    )?;
                    turn.last_text = text;
                }
                Step::Thinking {
                    thinking,
                    signature,
                    chunk_chars,
                    delay_ms,
                    ..
                } => {
                    self.ensure_msg(turn, false)?;
                    let sig = signature.unwrap_or_else(|| format!("EqQBCkgIARAB{}", hex_id(48)));
                    self.stream_text_like(
                        turn,
                        "thinking",
                        &thinking,
                        Some(&sig),
                        chunk_chars.unwrap_or(16),
                        delay_ms.unwrap_or(15),
                    )?;
                }
                Step::ToolUse {
                    name,
                    input,
                    permission,
                    output,
                    is_error,
                    description,
                    blocked_path,
                    run_ms,
                    elicit,
                    delay_ms,
                    ..
                } => {
                    self.ensure_msg(turn, true)?;
                    let id = format!("toolu_{}", hex_id(20));
                    self.stream_tool_input(turn, &id, &name, &input, delay_ms.unwrap_or(30))?;
                    let decision =
                        tools::decide(&name, &input, permission, &self.mode, &self.rules);
                    let step = ToolStep {
                        id,
                        name,
                        input,
                        output,
                        is_error,
                        description,
                        blocked_path,
                        run_ms: run_ms.unwrap_or(150),
                        elicit,
                    };
                    self.tool_decision(turn, step, decision)?;
                }
            }
        }
        self.close_msg(turn)?;
        Ok(())
    }

    /// Opens an API message if none is open, or starts a new one after tool calls.
    fn ensure_msg(&mut self, turn: &mut Turn, is_tool: bool) -> Flow<()> {
        if let Some(m) = &turn.msg {
            if (is_tool || !m.after_tool) && !m.closed {
                return Ok(());
            }
            self.close_msg(turn)?;
        }
        if turn.num_msgs > 0 {
            self.status(json!("requesting"), Some(&turn.uuids.clone()))?;
        }
        let t0 = Instant::now();
        self.pause(300)?;
        let ttft = t0.elapsed().as_millis() as u64;
        turn.model = self.model.clone();
        let input_tokens = 12 + tokens_for(turn.context_chars);
        let msg = OpenMsg {
            id: format!("msg_{}", hex_id(24)),
            request_id: format!("req_{}", hex_id(24)),
            next_index: 0,
            out_chars: 0,
            input_tokens,
            after_tool: false,
            to_run: Vec::new(),
            closed: false,
        };
        let mut v = json!({
            "type": "stream_event",
            "event": {
                "type": "message_start",
                "message": {
                    "id": msg.id,
                    "type": "message",
                    "role": "assistant",
                    "model": turn.model,
                    "content": [],
                    "stop_reason": null,
                    "stop_sequence": null,
                    "usage": self.msg_usage(input_tokens)
                }
            },
            "session_id": self.session_id,
            "parent_tool_use_id": null,
            "uuid": new_uuid(),
            "ttft_ms": ttft,
            "thinking_display": "updates",
            "api_message_id": msg.id,
        });
        if turn.num_msgs == 0
            && let Some(o) = v.as_object_mut()
        {
            turn.uuid_fields(o, true);
        }
        v["owed_rows"] = json!([]);
        turn.num_msgs += 1;
        turn.input_tokens += input_tokens;
        self.info.message_tokens += input_tokens;
        turn.ttft_ms.get_or_insert(ttft);
        turn.message_ids.push(msg.id.clone());
        turn.msg = Some(msg);
        if self.opts.include_partial_messages {
            self.emit(&v)?;
        }
        Ok(())
    }

    fn msg_usage(&self, input_tokens: u64) -> Value {
        json!({
            "input_tokens": input_tokens,
            "output_tokens": 1,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0
        })
    }

    fn stream_event(&mut self, turn: &Turn, event: Value) -> io::Result<()> {
        if !self.opts.include_partial_messages {
            return Ok(());
        }
        let api_id = turn.msg.as_ref().map(|m| m.id.clone()).unwrap_or_default();
        let v = json!({
            "type": "stream_event",
            "event": event,
            "session_id": self.session_id,
            "parent_tool_use_id": null,
            "uuid": new_uuid(),
            "api_message_id": api_id,
        });
        self.emit(&v)
    }

    fn assistant(&mut self, turn: &mut Turn, block: Value) -> io::Result<()> {
        let Some(m) = &turn.msg else { return Ok(()) };
        let mut v = json!({
            "type": "assistant",
            "message": {
                "id": m.id,
                "type": "message",
                "role": "assistant",
                "model": turn.model,
                "content": [block],
                "stop_reason": null,
                "stop_sequence": null,
                "usage": self.msg_usage(m.input_tokens),
                "context_management": null
            },
            "parent_tool_use_id": null,
            "session_id": self.session_id,
            "uuid": new_uuid(),
            "timestamp": now_iso(),
            "request_id": m.request_id,
        });
        if !turn.first_assistant_sent
            && let Some(o) = v.as_object_mut()
        {
            turn.uuid_fields(o, true);
        }
        turn.first_assistant_sent = true;
        self.emit(&v)
    }

    fn begin_block(
        &mut self,
        turn: &mut Turn,
        kind: &'static str,
        content_block: Value,
    ) -> io::Result<u32> {
        let m = turn.msg.as_mut().expect("message open");
        let index = m.next_index;
        m.next_index += 1;
        m.after_tool = kind == "tool_use";
        turn.block = Some(OpenBlock {
            index,
            kind,
            partial: String::new(),
        });
        self.stream_event(
            turn,
            json!({"type": "content_block_start", "index": index, "content_block": content_block}),
        )?;
        Ok(index)
    }

    fn end_block(&mut self, turn: &mut Turn, index: u32, block: Value) -> io::Result<()> {
        self.assistant(turn, block)?;
        turn.block = None;
        self.stream_event(turn, json!({"type": "content_block_stop", "index": index}))
    }

    fn stream_text_like(
        &mut self,
        turn: &mut Turn,
        kind: &'static str,
        text: &str,
        signature: Option<&str>,
        chunk_chars: usize,
        delay_ms: u64,
    ) -> Flow<()> {
        let start_block = if kind == "thinking" {
            json!({"type": "thinking", "thinking": "", "signature": ""})
        } else {
            json!({"type": "text", "text": ""})
        };
        let index = self.begin_block(turn, kind, start_block)?;
        let mut estimated = 0u64;
        for piece in chunks(text, chunk_chars) {
            self.pause(delay_ms)?;
            if let Some(b) = turn.block.as_mut() {
                b.partial.push_str(&piece);
            }
            if let Some(m) = turn.msg.as_mut() {
                m.out_chars += piece.chars().count();
            }
            turn.context_chars += piece.chars().count();
            if kind == "thinking" {
                let delta_tokens = tokens_for(piece.chars().count()).max(1);
                estimated += delta_tokens;
                turn.thinking_tokens += delta_tokens;
                self.stream_event(
                    turn,
                    json!({"type": "content_block_delta", "index": index,
                           "delta": {"type": "thinking_delta", "thinking": piece, "estimated_tokens": estimated}}),
                )?;
                if self.opts.include_partial_messages {
                    let mut v = json!({
                        "type": "system",
                        "subtype": "thinking_tokens",
                        "estimated_tokens": estimated,
                        "estimated_tokens_delta": delta_tokens,
                    });
                    if let Some(u) = turn.uuids.first() {
                        v["user_message_uuid"] = json!(u);
                    }
                    v["uuid"] = json!(new_uuid());
                    v["session_id"] = json!(self.session_id);
                    self.emit(&v)?;
                }
            } else {
                self.stream_event(
                    turn,
                    json!({"type": "content_block_delta", "index": index,
                           "delta": {"type": "text_delta", "text": piece}}),
                )?;
            }
        }
        let block = if let Some(sig) = signature {
            self.stream_event(
                turn,
                json!({"type": "content_block_delta", "index": index,
                       "delta": {"type": "signature_delta", "signature": sig}}),
            )?;
            json!({"type": "thinking", "thinking": text, "signature": sig})
        } else {
            json!({"type": "text", "text": text})
        };
        self.end_block(turn, index, block)?;
        Ok(())
    }

    fn stream_tool_input(
        &mut self,
        turn: &mut Turn,
        id: &str,
        name: &str,
        input: &Value,
        delay_ms: u64,
    ) -> Flow<()> {
        let index = self.begin_block(
            turn,
            "tool_use",
            json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
        )?;
        let json_text = serde_json::to_string(input).map_err(|e| Abort::Fatal(e.into()))?;
        let len = json_text.chars().count();
        let pieces = (len / 24).clamp(3, 64);
        for piece in split_even(&json_text, pieces) {
            self.pause(delay_ms)?;
            if let Some(b) = turn.block.as_mut() {
                b.partial.push_str(&piece);
            }
            self.stream_event(
                turn,
                json!({"type": "content_block_delta", "index": index,
                       "delta": {"type": "input_json_delta", "partial_json": piece}}),
            )?;
        }
        if let Some(m) = turn.msg.as_mut() {
            m.out_chars += len;
        }
        turn.context_chars += len;
        let block = json!({"type": "tool_use", "id": id, "name": name, "input": tools::with_defaults(name, input)});
        self.end_block(turn, index, block)?;
        Ok(())
    }

    /// Writes message_delta + message_stop for the open message, then runs its allowed tools.
    fn close_msg(&mut self, turn: &mut Turn) -> Flow<()> {
        let Some(m) = turn.msg.as_mut() else {
            return Ok(());
        };
        if !m.closed {
            m.closed = true;
            let stop_reason = if m.after_tool { "tool_use" } else { "end_turn" };
            let out = tokens_for(m.out_chars).max(1);
            turn.output_tokens += out;
            turn.last_stop_reason = json!(stop_reason);
            self.stream_event(
                turn,
                json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null},
                       "usage": {"output_tokens": out}}),
            )?;
            self.stream_event(turn, json!({"type": "message_stop"}))?;
        }
        let to_run = std::mem::take(&mut turn.msg.as_mut().expect("open").to_run);
        let mut rest = to_run.into_iter();
        while let Some(t) = rest.next() {
            if let Err(e) = self.pause(t.run_ms) {
                // Put the unfinished tools back for the interrupt clean-up.
                let m = turn.msg.as_mut().expect("open");
                m.to_run.push(t);
                m.to_run.extend(rest);
                return Err(e);
            }
            let mut t = t;
            if let Some(form) = t.elicit.take() {
                match self.elicit(&t.name, form) {
                    Ok(text) => t.output = Some(text),
                    Err(Abort::Interrupted) => {
                        self.reject_result(turn, &t.id, REJECTED_TEXT, "user_abort")?;
                        let m = turn.msg.as_mut().expect("open");
                        m.to_run.extend(rest);
                        return Err(Abort::InterruptedTools);
                    }
                    Err(e) => return Err(e),
                }
            }
            self.run_tool(turn, t)?;
        }
        turn.msg = None;
        Ok(())
    }

    /// Asks the person through an `elicitation` control request, as the CLI does when an MCP server
    /// sends `elicitation/create` while its tool runs; returns the tool's result text. The CLI's own
    /// default when no answer can come (stdin closed) is `decline`.
    fn elicit(&mut self, tool: &str, form: Value) -> Flow<String> {
        let mut req = match form {
            Value::Object(m) => m,
            _ => serde_json::Map::new(),
        };
        req.insert("subtype".into(), json!("elicitation"));
        if !req.contains_key("mcp_server_name") {
            let server = tool
                .strip_prefix("mcp__")
                .and_then(|r| r.split("__").next())
                .unwrap_or("demo");
            req.insert("mcp_server_name".into(), json!(server));
        }
        req.entry("mode").or_insert(json!("form"));
        req.entry("message")
            .or_insert(json!("The tool needs an answer."));
        let request_id = new_uuid();
        self.emit(&json!({"type": "control_request", "request_id": request_id, "request": req}))?;
        let answer = match self.await_answer(&request_id) {
            Ok(r) => r,
            Err(Abort::StdinClosed) => json!({"response": {"action": "decline"}}),
            Err(Abort::Interrupted) => {
                self.emit(&json!({"type": "control_cancel_request", "request_id": request_id}))?;
                return Err(Abort::Interrupted);
            }
            Err(e) => return Err(e),
        };
        let body = answer.get("response").cloned().unwrap_or(json!({}));
        let action = body
            .get("action")
            .and_then(Value::as_str)
            .unwrap_or("decline");
        let content = body.get("content").cloned().unwrap_or(json!({}));
        Ok(format!("Elicitation {action}: {content}"))
    }

    fn run_tool(&mut self, turn: &mut Turn, t: ToRun) -> io::Result<()> {
        let run = if crate::info::is_task_tool(&t.name) && t.output.is_none() && !t.is_error {
            self.info.run_task_tool(&t.name, &t.input)
        } else {
            tools::simulate(
                &t.name,
                &t.input,
                t.output.as_deref(),
                t.is_error,
                &self.opts.cwd,
            )
        };
        let mut decision = json!({"decision": "accept", "source": t.source});
        if let Some(rt) = t.reason_type {
            decision["reason_type"] = json!(rt);
        }
        let v = json!({
            "type": "user",
            "message": {"role": "user", "content": [{
                "tool_use_id": t.id, "type": "tool_result", "content": run.content, "is_error": run.is_error
            }]},
            "parent_tool_use_id": null,
            "session_id": self.session_id,
            "uuid": new_uuid(),
            "timestamp": now_iso(),
            "tool_use_result": run.tool_use_result,
            "tool_result_meta": [{"id": t.id, "permission_decision": decision}]
        });
        turn.context_chars += run.content.chars().count();
        turn.last_tool_result = run.content;
        turn.last_outcome = Some(Condition::Allowed);
        self.emit(&v)
    }

    fn reject_result(
        &mut self,
        turn: &mut Turn,
        tool_id: &str,
        message: &str,
        source: &str,
    ) -> io::Result<()> {
        let v = json!({
            "type": "user",
            "message": {"role": "user", "content": [{
                "type": "tool_result", "content": message, "is_error": true, "tool_use_id": tool_id
            }]},
            "parent_tool_use_id": null,
            "session_id": self.session_id,
            "uuid": new_uuid(),
            "timestamp": now_iso(),
            "tool_use_result": format!("Error: {message}"),
            "tool_result_meta": [{"id": tool_id, "non_execution_kind": "permission-rule",
                                  "permission_decision": {"decision": "reject", "source": source}}]
        });
        turn.context_chars += message.chars().count();
        turn.last_tool_result = message.to_owned();
        turn.last_outcome = Some(Condition::Denied);
        self.emit(&v)
    }

    fn tool_decision(&mut self, turn: &mut Turn, step: ToolStep, decision: Decision) -> Flow<()> {
        match decision {
            Decision::Allow {
                source,
                reason_type,
            } => {
                let input = step.input.clone();
                self.schedule(turn, step, input, source, reason_type);
                Ok(())
            }
            Decision::Deny { message } => {
                turn.denials.push(denial(&step.name, &step.id, &step.input));
                self.reject_result(turn, &step.id, &message, "config")?;
                Ok(())
            }
            Decision::Ask => self.ask(turn, step),
        }
    }

    fn schedule(
        &mut self,
        turn: &mut Turn,
        step: ToolStep,
        input: Value,
        source: &'static str,
        reason_type: Option<&'static str>,
    ) {
        if let Some(m) = turn.msg.as_mut() {
            m.to_run.push(ToRun {
                id: step.id,
                name: step.name,
                input,
                output: step.output,
                is_error: step.is_error,
                run_ms: step.run_ms,
                elicit: step.elicit,
                source,
                reason_type,
            });
        }
    }

    fn ask(&mut self, turn: &mut Turn, step: ToolStep) -> Flow<()> {
        let cwd = self.opts.cwd.clone();
        let blocked = step
            .blocked_path
            .clone()
            .or_else(|| tools::default_blocked_path(&step.name, &step.input, &cwd));
        let (suggestions, reason_type) =
            tools::suggestions(&step.name, &step.input, &cwd, blocked.as_deref());
        let request_id = new_uuid();
        // The real CLI asks about ExitPlanMode with an empty input (the plan is in the tool_use block).
        let asked_input = if step.name == "ExitPlanMode" {
            json!({})
        } else {
            step.input.clone()
        };
        let mut req = json!({
            "subtype": "can_use_tool",
            "tool_name": step.name,
            "display_name": step.name,
            "input": asked_input,
        });
        // An MCP tool is named and attributed as the CLI does: `mcp__asker__ask_user` is "Ask User"
        // from the server "asker".
        if let Some((server, tool)) = step
            .name
            .strip_prefix("mcp__")
            .and_then(|rest| rest.split_once("__"))
        {
            req["display_name"] = json!(tools::title_case(tool));
            req["mcp_server"] = json!({"name": server, "source": "dynamic"});
        }
        let description = step.description.clone().or_else(|| {
            if step.name == "AskUserQuestion" {
                step.input
                    .pointer("/questions/0/question")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            } else {
                step.input
                    .get("description")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            }
        });
        if let Some(d) = description {
            req["description"] = json!(d);
        }
        if suggestions.as_array().is_some_and(|a| !a.is_empty()) {
            req["permission_suggestions"] = suggestions;
        }
        if let Some(b) = &blocked {
            req["blocked_path"] = json!(b);
        }
        let reason_type = reason_type.or((self.mode == "plan").then_some("mode"));
        if let Some(rt) = reason_type {
            req["decision_reason_type"] = json!(rt);
        }
        if matches!(step.name.as_str(), "AskUserQuestion" | "ExitPlanMode") {
            req["requires_user_interaction"] = json!(true);
        }
        req["tool_use_id"] = json!(step.id);
        let frame = json!({"type": "control_request", "request_id": request_id, "request": req});
        self.emit(&frame)?;
        self.pending_permission = Some(frame);
        let t0 = Instant::now();
        let answer = self.await_answer(&request_id);
        turn.waited += t0.elapsed();
        self.pending_permission = None;
        let response = match answer {
            Ok(r) => r,
            Err(Abort::Interrupted | Abort::StdinClosed) => {
                if !self.stdin_closed {
                    self.emit(
                        &json!({"type": "control_cancel_request", "request_id": request_id}),
                    )?;
                }
                self.reject_result(turn, &step.id, REJECTED_TEXT, "user_abort")?;
                return Err(Abort::InterruptedTools);
            }
            Err(e) => return Err(e),
        };
        let (behavior, body) = if response.get("subtype").and_then(Value::as_str) == Some("error") {
            let err = response
                .get("error")
                .and_then(Value::as_str)
                .unwrap_or("permission request failed");
            (
                "deny".to_owned(),
                json!({"behavior": "deny", "message": err}),
            )
        } else {
            let body = response.get("response").cloned().unwrap_or(json!({}));
            (
                body.get("behavior")
                    .and_then(Value::as_str)
                    .unwrap_or("deny")
                    .to_owned(),
                body,
            )
        };
        if behavior == "allow" {
            let input = body
                .get("updatedInput")
                .filter(|v| v.is_object() && step.name != "ExitPlanMode")
                .cloned()
                .unwrap_or_else(|| step.input.clone());
            if step.name == "ExitPlanMode" {
                // An approved plan leaves plan mode, announced as the real CLI does.
                self.mode = "default".to_owned();
                self.status(Value::Null, None)?;
            }
            let permanent = self.apply_updates(body.get("updatedPermissions"))?;
            let source = match body.get("decisionClassification").and_then(Value::as_str) {
                Some("user_permanent") => "user_permanent",
                Some(_) => "user_temporary",
                None if permanent => "user_permanent",
                None => "user_temporary",
            };
            self.schedule(turn, step, input, source, None);
            Ok(())
        } else {
            let message = body
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("Permission denied")
                .to_owned();
            turn.denials.push(denial(&step.name, &step.id, &step.input));
            self.reject_result(turn, &step.id, &message, "user_reject")?;
            if body.get("interrupt").and_then(Value::as_bool) == Some(true) {
                return Err(Abort::InterruptedTools);
            }
            Ok(())
        }
    }

    /// Applies `updatedPermissions`; returns whether any rule or mode change was recorded.
    fn apply_updates(&mut self, updates: Option<&Value>) -> io::Result<bool> {
        let Some(list) = updates.and_then(Value::as_array) else {
            return Ok(false);
        };
        let mut new_rules = Vec::new();
        let mut new_mode = None;
        for u in list {
            match u.get("type").and_then(Value::as_str) {
                Some("addRules") => {
                    let behavior = u.get("behavior").and_then(Value::as_str).unwrap_or("allow");
                    for r in u
                        .get("rules")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        let Some(tool) = r.get("toolName").and_then(Value::as_str) else {
                            // One malformed update makes the CLI ignore them all.
                            return Ok(false);
                        };
                        new_rules.push(Rule {
                            tool_name: tool.to_owned(),
                            rule_content: r
                                .get("ruleContent")
                                .and_then(Value::as_str)
                                .map(str::to_owned),
                            behavior: behavior.to_owned(),
                        });
                    }
                }
                Some("setMode") => {
                    let Some(mode) = u
                        .get("mode")
                        .and_then(Value::as_str)
                        .and_then(normalize_mode)
                    else {
                        return Ok(false);
                    };
                    new_mode = Some(mode);
                }
                Some(_) => {}
                None => return Ok(false),
            }
        }
        let changed = !new_rules.is_empty() || new_mode.is_some();
        self.rules.extend(new_rules);
        if let Some(mode) = new_mode
            && mode != self.mode
        {
            self.mode = mode.to_owned();
            self.status(Value::Null, None)?;
        }
        Ok(changed)
    }

    // ---------------------------------------------------------------- endings

    fn usage_value(&self, turn: &Turn) -> Value {
        json!({
            "input_tokens": turn.input_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": turn.output_tokens,
            "output_tokens_details": {"thinking_tokens": turn.thinking_tokens},
            "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
            "service_tier": "standard",
            "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0},
            "inference_geo": "",
            "iterations": [],
            "speed": "standard",
            "fallback_credit": null
        })
    }

    fn model_usage(&self, turn: &Turn, cost: f64) -> Value {
        if turn.num_msgs == 0 {
            return json!({});
        }
        let mut m = Map::new();
        m.insert(
            turn.model.clone(),
            json!({
                "inputTokens": turn.input_tokens,
                "outputTokens": turn.output_tokens,
                "cacheReadInputTokens": 0,
                "cacheCreationInputTokens": 0,
                "webSearchRequests": 0,
                "costUSD": cost,
                "contextWindow": 200000,
                "maxOutputTokens": 32000,
                "thinkingTokens": turn.thinking_tokens,
                "canonicalModel": turn.model,
                "provider": "firstParty",
                "costBasis": "list"
            }),
        );
        Value::Object(m)
    }

    fn result_frame(&mut self, turn: &Turn, subtype: &str, terminal_reason: &str) -> Value {
        let cost = cost_usd(&turn.model, turn.input_tokens, turn.output_tokens);
        let duration = turn.start.elapsed();
        let api = duration.saturating_sub(turn.waited);
        let success = subtype == "success";
        let mut v = json!({
            "type": "result",
            "subtype": subtype,
            "is_error": !success,
            "duration_ms": duration.as_millis() as u64,
            "duration_api_ms": api.as_millis() as u64,
            "num_turns": turn.num_msgs,
        });
        if success {
            v["result"] = json!(turn.last_text);
            v["stop_reason"] = turn.last_stop_reason.clone();
        } else {
            v["stop_reason"] = Value::Null;
        }
        v["session_id"] = json!(self.session_id);
        self.total_cost_usd += cost;
        v["total_cost_usd"] = json!(self.total_cost_usd);
        v["usage"] = self.usage_value(turn);
        v["modelUsage"] = self.model_usage(turn, cost);
        v["permission_denials"] = json!(turn.denials);
        if !success {
            v["errors"] = json!([]);
        }
        v["terminal_reason"] = json!(terminal_reason);
        v["fast_mode_state"] = json!("off");
        v["fast_mode_disabled_reason"] = json!("sdk_opt_in_required");
        v["api_error_status"] = Value::Null;
        if let Some(t) = turn.ttft_ms {
            v["ttft_ms"] = json!(t);
        }
        v["begun_message_ids"] = json!(turn.message_ids);
        v["uuid"] = json!(new_uuid());
        if let Some(o) = v.as_object_mut() {
            turn.uuid_fields(o, true);
        }
        v["queued_turn_count"] = json!(self.queue.len());
        v["result_index"] = json!(self.result_index);
        self.result_index += 1;
        v
    }

    fn finish_success(&mut self, turn: &mut Turn) -> Flow<()> {
        let v = self.result_frame(turn, "success", "completed");
        self.emit(&v)?;
        for u in turn.uuids.clone() {
            self.lifecycle(&u, "completed")?;
        }
        Ok(())
    }

    /// The clean-up frames the CLI writes after an interrupt, then the error result. `tools`: the turn was
    /// stopped at a tool (prompt interrupted, deny with `interrupt: true`) rather than while streaming.
    fn finish_interrupted(&mut self, turn: &mut Turn, tools: bool) -> Flow<()> {
        let mut tools = tools;
        if let Some(m) = turn.msg.take() {
            if m.closed {
                // Interrupted while the message's tools were running.
                tools = true;
            } else if tools {
                // The stream itself was complete: end the message normally, without running its tools.
                let out = tokens_for(m.out_chars).max(1);
                turn.output_tokens += out;
                turn.msg = Some(m);
                self.stream_event(
                    turn,
                    json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null},
                           "usage": {"output_tokens": out}}),
                )?;
                self.stream_event(turn, json!({"type": "message_stop"}))?;
            } else {
                turn.msg = Some(m);
                let api_id = turn.msg.as_ref().map(|m| m.id.clone()).unwrap_or_default();
                let mut from_index = turn.msg.as_ref().map_or(0, |m| m.next_index);
                if let Some(b) = turn.block.take() {
                    from_index = b.index;
                    if !b.partial.is_empty() && b.kind != "tool_use" {
                        let block = if b.kind == "thinking" {
                            json!({"type": "thinking", "thinking": b.partial, "signature": ""})
                        } else {
                            turn.last_text = b.partial.clone();
                            json!({"type": "text", "text": b.partial})
                        };
                        self.assistant(turn, block)?;
                        from_index = b.index + 1;
                    }
                    self.stream_event(
                        turn,
                        json!({"type": "content_block_stop", "index": b.index}),
                    )?;
                }
                let out = tokens_for(turn.msg.as_ref().map_or(0, |m| m.out_chars)).max(1);
                turn.output_tokens += out;
                self.stream_event(
                    turn,
                    json!({"type": "message_delta", "delta": {"stop_reason": null, "stop_sequence": null},
                           "usage": {"output_tokens": out}}),
                )?;
                self.stream_event(
                    turn,
                    json!({"type": "message_stop",
                           "abandoned_blocks": {"api_message_id": api_id, "from_block_index": from_index}}),
                )?;
            }
            let pending = turn.msg.take().map(|m| m.to_run).unwrap_or_default();
            for t in pending {
                self.reject_result(
                    turn,
                    &t.id,
                    "[Request interrupted by user for tool use]",
                    "user_abort",
                )?;
            }
        }
        let text = if tools {
            "[Request interrupted by user for tool use]"
        } else {
            "[Request interrupted by user]"
        };
        self.user_text_frame(text)?;
        let reason = if tools {
            "aborted_tools"
        } else {
            "aborted_streaming"
        };
        let v = self.result_frame(turn, "error_during_execution", reason);
        self.emit(&v)?;
        for u in turn.uuids.clone() {
            self.lifecycle(&u, "completed")?;
        }
        Ok(())
    }
}

const REJECTED_TEXT: &str = "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.";

struct ToolStep {
    id: String,
    name: String,
    input: Value,
    output: Option<String>,
    is_error: bool,
    description: Option<String>,
    blocked_path: Option<String>,
    run_ms: u64,
    elicit: Option<Value>,
}

fn denial(name: &str, id: &str, input: &Value) -> Value {
    json!({"tool_name": name, "tool_use_id": id, "tool_input": input})
}

/// Splits text into deltas of about `n` characters, preferring to cut after whitespace.
pub(crate) fn chunks(s: &str, n: usize) -> Vec<String> {
    let n = n.max(1);
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut count = 0;
    for ch in s.chars() {
        cur.push(ch);
        count += 1;
        if (count >= n && ch.is_whitespace()) || count >= 2 * n {
            out.push(std::mem::take(&mut cur));
            count = 0;
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Splits `s` into `parts` pieces of nearly equal character counts (fewer if `s` is short).
pub(crate) fn split_even(s: &str, parts: usize) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    let parts = parts.clamp(1, chars.len().max(1));
    let size = chars.len().div_ceil(parts).max(1);
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_rejoin_to_the_text() {
        let s = "Hello wörld, this is a ünïcode test with a veryveryveryverylongword in it.";
        for n in [1, 3, 12, 100] {
            let c = chunks(s, n);
            assert_eq!(c.concat(), s);
            assert!(c.iter().all(|p| p.chars().count() <= 2 * n));
        }
        assert!(chunks("", 5).is_empty());
    }

    #[test]
    fn split_even_rejoins() {
        let s = r#"{"command":"touch x","description":"d"}"#;
        let p = split_even(s, 3);
        assert_eq!(p.len(), 3);
        assert_eq!(p.concat(), s);
        assert_eq!(split_even("ab", 5).len(), 2);
    }

    #[test]
    fn cost_matches_the_real_capture() {
        // live capture: claude-sonnet-4-5, 24 in / 50 out -> 0.000822
        assert!((cost_usd("claude-sonnet-4-5", 24, 50) - 0.000822).abs() < 1e-12);
        assert!(cost_usd("claude-opus-4-1", 24, 50) > cost_usd("claude-haiku-4-5", 24, 50));
    }

    #[test]
    fn model_aliases_resolve() {
        assert_eq!(resolve_model(None), "claude-sonnet-4-5");
        assert_eq!(resolve_model(Some("opus")), "claude-opus-4-1");
        assert_eq!(resolve_model(Some("my-model")), "my-model");
        assert_eq!(normalize_mode("manual"), Some("default"));
        assert_eq!(normalize_mode("yolo"), None);
    }
}
