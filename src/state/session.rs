//! [`Session`]: the transcript model, applied one frame at a time.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::agent_info::{AgentInfo, InfoKind};
use super::item::{
    AssistantMsg, Block, Item, ItemKind, Key, RawRow, ResultRow, SendState, Slot, SystemKind,
    SystemRow, TaskInfo, ToolCall, ToolOutput, ToolStatus, UserMsg, UserOrigin,
};
use super::prompt::{Notice, Prompt, PromptKind, SettledBy};
use super::tasks::{self, TaskList};

/// Who wrote a frame, as the relay's envelope says (`source`: worker, client or relay; the network
/// layer reads anything else as the worker). The session state shown in the header (`data-state`;
/// [`Session::state`] is never `Other`). Both are bridge-protocol's, shared with the relay.
pub use bridge_protocol::{SessionState, api::Source};

/// Progress of an interrupt this console (or another controller) asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InterruptState {
    /// None asked for in this turn.
    None,
    /// Sent, not acknowledged yet.
    Requested,
    /// The CLI acknowledged it.
    Acknowledged,
    /// The CLI answered with an error.
    Failed(String),
}

/// A control request this console sent, remembered until its answer arrives.
#[derive(Clone, Debug, PartialEq)]
pub enum LocalRequest {
    /// `interrupt`.
    Interrupt,
    /// `set_model` (None = the default model).
    SetModel(Option<String>),
    /// `set_permission_mode`.
    SetPermissionMode(String),
    /// `initialize`.
    Initialize,
}

/// A model the session can switch to (`initialize.models`).
#[derive(Clone, Debug, PartialEq)]
pub struct ModelChoice {
    /// Value to send in `set_model`.
    pub value: String,
    /// Label.
    pub display_name: String,
    /// Description.
    pub description: String,
    /// The model id it stands for now (`resolvedModel`: `sonnet` → `claude-sonnet-5-5`).
    pub resolved_model: Option<String>,
}

/// A slash command the CLI offers (`initialize.commands`, `system/commands_changed`).
#[derive(Clone, Debug, PartialEq)]
pub struct SlashCommand {
    /// Name without the slash.
    pub name: String,
    /// What it does.
    pub description: String,
    /// Its arguments, e.g. `<file>` (may be empty).
    pub argument_hint: String,
}

impl SlashCommand {
    fn from_json(c: &Value) -> Option<Self> {
        let name = s(c, "name")?.trim_start_matches('/').to_string();
        // `__name` commands are the CLI's internals, not for people.
        (!name.is_empty() && !name.starts_with("__")).then(|| SlashCommand {
            name,
            description: s(c, "description").unwrap_or_default().to_string(),
            argument_hint: s(c, "argumentHint").unwrap_or_default().to_string(),
        })
    }
}

/// The commands to offer while `text` is a slash and the start of a command name (no space yet):
/// names starting with what was typed first, then names containing it; at most `limit`.
pub fn slash_matches<'a>(
    commands: &'a [SlashCommand],
    text: &str,
    limit: usize,
) -> Vec<&'a SlashCommand> {
    let Some(query) = text.strip_prefix('/') else {
        return vec![];
    };
    if query.chars().any(char::is_whitespace) {
        return vec![];
    }
    let query = query.to_lowercase();
    let mut starts: Vec<&SlashCommand> = Vec::new();
    let mut contains: Vec<&SlashCommand> = Vec::new();
    for c in commands {
        let name = c.name.to_lowercase();
        if name.starts_with(&query) {
            starts.push(c);
        } else if name.contains(&query) {
            contains.push(c);
        }
    }
    starts.extend(contains);
    starts.truncate(limit);
    starts
}

/// What is known about the running CLI.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct SessionInfo {
    /// Current model.
    pub model: Option<String>,
    /// Current permission mode.
    pub permission_mode: Option<String>,
    /// Working directory.
    pub cwd: Option<String>,
    /// CLI version.
    pub version: Option<String>,
    /// Tools from the last `system/init`.
    pub tools: Vec<String>,
    /// Models from the `initialize` response.
    pub models: Vec<ModelChoice>,
    /// The picker value this console last switched to (`set_model`), if any.
    pub model_choice: Option<String>,
    /// Slash commands.
    pub commands: Vec<SlashCommand>,
}

/// Rate-limit banner state.
#[derive(Clone, Debug, PartialEq)]
pub struct RateLimit {
    /// `allowed`, `allowed_warning`, `rejected`.
    pub status: String,
    /// Which limit.
    pub limit_type: Option<String>,
    /// Reset time (unix seconds).
    pub resets_at: Option<f64>,
}

#[derive(Clone, Debug, Default, PartialEq)]
struct Cost {
    /// Sum of totals of earlier CLI processes (the CLI's total restarts at 0 with a new process).
    base: f64,
    /// Last `total_cost_usd` seen.
    last_cli_total: f64,
    /// Running total for the session.
    total: f64,
}

/// The transcript model of one session. Pure: no I/O, no clock. Feed it every frame in order with
/// [`Session::apply_from`] (or [`Session::apply`] for a parsed CLI message); read it back through the
/// accessors. Applying the same durable frame twice changes nothing.
#[derive(Clone, Debug, Default)]
pub struct Session {
    observer: bool,
    /// Applying the history of a session being opened: prompts settled in it were never shown
    /// here, so settling them says nothing.
    replaying: bool,
    rev: u64,
    order_rev: u64,
    counter: u64,
    items: HashMap<Key, Item>,
    order: Vec<Key>,
    tools: HashMap<String, ToolCall>,
    seen: HashSet<String>,
    current_stream: Option<String>,
    prompts: Vec<Prompt>,
    settled: HashMap<String, SettledBy>,
    notices: Vec<Notice>,
    local_requests: HashMap<String, LocalRequest>,
    info: SessionInfo,
    last_init: Option<(String, String, String)>,
    turn_running: bool,
    ended: bool,
    interrupt: Option<InterruptState>,
    cost: Cost,
    rate_limit: Option<RateLimit>,
    suggestion: Option<String>,
    compacting: bool,
    applied: u64,
    tasks: TaskList,
    agent_info: AgentInfo,
}

fn s<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

fn u(v: &Value, key: &str) -> Option<u64> {
    v.get(key)
        .and_then(|x| x.as_u64().or_else(|| x.as_f64().map(|f| f.max(0.0) as u64)))
}

fn f(v: &Value, key: &str) -> Option<f64> {
    v.get(key).and_then(Value::as_f64)
}

/// Text of a message `content` (a string or an array of blocks), skipping tool results; and the
/// number of images.
fn content_text(content: &Value) -> (String, Vec<super::attachment::UserImage>) {
    match content {
        Value::String(t) => (t.clone(), Vec::new()),
        Value::Array(blocks) => {
            let mut text = String::new();
            let mut images = Vec::new();
            for b in blocks {
                match s(b, "type") {
                    Some("text") => {
                        if !text.is_empty() {
                            text.push('\n');
                        }
                        text.push_str(s(b, "text").unwrap_or_default());
                    }
                    Some("image") => images.push(super::attachment::UserImage::from_block(b)),
                    _ => {}
                }
            }
            (text, images)
        }
        _ => (String::new(), Vec::new()),
    }
}

/// Text of a `tool_result.content`.
pub fn tool_result_text(content: &Value) -> String {
    match content {
        Value::String(t) => t.clone(),
        Value::Array(blocks) => {
            let mut parts = Vec::new();
            for b in blocks {
                match s(b, "type") {
                    Some("text") => parts.push(s(b, "text").unwrap_or_default().to_string()),
                    Some("image") => parts.push("[image]".to_string()),
                    Some("tool_reference") => parts.push(format!(
                        "[tool: {}]",
                        s(b, "tool_name").or(s(b, "name")).unwrap_or("?")
                    )),
                    _ => parts.push(b.to_string()),
                }
            }
            parts.join("\n")
        }
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

impl Session {
    /// An empty session.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty session in observer mode (mirror only: nothing can be answered or sent).
    pub fn observer() -> Self {
        Session {
            observer: true,
            ..Self::default()
        }
    }

    // ------------------------------------------------------------------ accessors

    /// Observer mode.
    pub fn is_observer(&self) -> bool {
        self.observer
    }

    /// Switches observer mode.
    /// Whether the frames applied next are the history of a session being opened (no notices for
    /// prompts that were answered before this view saw them).
    pub fn set_replaying(&mut self, replaying: bool) {
        self.replaying = replaying;
    }

    pub fn set_observer(&mut self, observer: bool) {
        self.observer = observer;
        self.bump();
    }

    /// Global revision, bumped by every change.
    pub fn rev(&self) -> u64 {
        self.rev
    }

    /// Revision of the top-level row order.
    pub fn order_rev(&self) -> u64 {
        self.order_rev
    }

    /// Number of frames applied.
    pub fn applied(&self) -> u64 {
        self.applied
    }

    /// Keys of the top-level rows, in order.
    pub fn order(&self) -> &[Key] {
        &self.order
    }

    /// A row by key.
    pub fn item(&self, key: &str) -> Option<&Item> {
        self.items.get(key)
    }

    /// A row's revision (0 if it does not exist).
    pub fn item_rev(&self, key: &str) -> u64 {
        self.items.get(key).map_or(0, |i| i.rev)
    }

    /// A tool call by `tool_use_id`.
    pub fn tool(&self, id: &str) -> Option<&ToolCall> {
        self.tools.get(id)
    }

    /// Prompts waiting for an answer, oldest first (including ones answered here but unconfirmed).
    pub fn prompts(&self) -> &[Prompt] {
        &self.prompts
    }

    /// Prompts still needing an answer from this console, oldest first.
    pub fn open_prompts(&self) -> impl Iterator<Item = &Prompt> {
        self.prompts.iter().filter(|p| !p.answered_locally)
    }

    /// How a prompt was settled, if it was.
    pub fn settled(&self, request_id: &str) -> Option<&SettledBy> {
        self.settled.get(request_id)
    }

    /// Notices for the person (newest last).
    pub fn notices(&self) -> &[Notice] {
        &self.notices
    }

    /// Dismisses a notice.
    pub fn dismiss_notice(&mut self, id: u64) {
        self.notices.retain(|n| n.id != id);
        self.bump();
    }

    /// What is known about the CLI.
    pub fn info(&self) -> &SessionInfo {
        &self.info
    }

    /// The task list the task tools built (TaskCreate / TaskUpdate / TodoWrite …).
    pub fn tasks(&self) -> &TaskList {
        &self.tasks
    }

    /// Context usage and MCP servers, as last reported.
    pub fn agent_info(&self) -> &AgentInfo {
        &self.agent_info
    }

    /// This console is about to ask for context usage / MCP status with `request_id`.
    pub fn info_asked(&mut self, request_id: &str, kind: InfoKind) {
        self.agent_info.asked(request_id, kind);
    }

    /// Asking failed (not sent).
    pub fn info_ask_failed(&mut self, request_id: &str, error: &str) {
        self.agent_info.ask_failed(request_id, error);
        self.bump();
    }

    /// Running cost total in USD.
    pub fn cost_total(&self) -> f64 {
        self.cost.total
    }

    /// The interrupt's progress.
    pub fn interrupt_state(&self) -> InterruptState {
        self.interrupt.clone().unwrap_or(InterruptState::None)
    }

    /// Current rate-limit banner, when not plainly allowed.
    pub fn rate_limit(&self) -> Option<&RateLimit> {
        self.rate_limit.as_ref().filter(|r| r.status != "allowed")
    }

    /// Last prompt suggestion.
    pub fn suggestion(&self) -> Option<&str> {
        self.suggestion.as_deref()
    }

    /// Compaction in progress.
    pub fn compacting(&self) -> bool {
        self.compacting
    }

    /// The session state.
    pub fn state(&self) -> SessionState {
        if self.ended {
            SessionState::Ended
        } else if !self.prompts.is_empty() {
            SessionState::RequiresAction
        } else if self.turn_running {
            SessionState::Running
        } else {
            SessionState::Idle
        }
    }

    /// A prompt waits for this console (never in observer mode).
    pub fn needs_you(&self) -> bool {
        !self.observer && self.open_prompts().next().is_some()
    }

    /// Whether a turn is running (the interrupt button shows).
    pub fn turn_running(&self) -> bool {
        self.turn_running && !self.ended
    }

    // ------------------------------------------------------------------ outside facts

    /// Seeds state from the relay's session object (`GET /v1/code/sessions/{id}`).
    pub fn set_summary(&mut self, summary: &Value) {
        if let Some(m) = s(summary, "model") {
            self.info.model.get_or_insert_with(|| m.to_string());
        }
        if let Some(m) = s(summary, "permission_mode") {
            self.info
                .permission_mode
                .get_or_insert_with(|| m.to_string());
        }
        if let Some(c) = s(summary, "cwd") {
            self.info.cwd.get_or_insert_with(|| c.to_string());
        }
        match s(summary, "state").map(SessionState::from) {
            Some(SessionState::Ended) => self.ended = true,
            Some(SessionState::Running) => self.turn_running = true,
            _ => {}
        }
        if let Some(init) = summary.get("initialize").filter(|v| v.is_object()) {
            self.set_initialize(init);
        }
        self.bump();
    }

    /// Takes models, commands and the permission mode from an `initialize` response body.
    pub fn set_initialize(&mut self, body: &Value) {
        if let Some(models) = body.get("models").and_then(Value::as_array) {
            self.info.models = models
                .iter()
                .filter_map(|m| {
                    let value = s(m, "value")?.to_string();
                    Some(ModelChoice {
                        display_name: s(m, "displayName").unwrap_or(&value).to_string(),
                        description: s(m, "description").unwrap_or_default().to_string(),
                        resolved_model: s(m, "resolvedModel").map(str::to_string),
                        value,
                    })
                })
                .collect();
        }
        if let Some(cmds) = body.get("commands").and_then(Value::as_array) {
            self.info.commands = cmds.iter().filter_map(SlashCommand::from_json).collect();
        }
        if let Some(mode) = s(body, "current_permission_mode") {
            self.info.permission_mode = Some(mode.to_string());
        }
        if let Some(v) = s(body, "claude_code_version") {
            self.info.version = Some(v.to_string());
        }
        self.bump();
    }

    // ------------------------------------------------------------------ local actions

    /// Shows a prompt typed here at once, as pending.
    pub fn add_local_prompt(&mut self, uuid: &str, text: &str) {
        let key = format!("u:{uuid}");
        if self.items.contains_key(&key) {
            return;
        }
        let item = Item {
            key: key.clone(),
            rev: 0,
            parent: None,
            kind: ItemKind::User(UserMsg {
                uuid: uuid.to_string(),
                text: text.to_string(),
                images: Vec::new(),
                origin: UserOrigin::Prompt,
                send: SendState::Pending,
                lifecycle: None,
                coalesced: false,
                timestamp: None,
            }),
        };
        self.insert_item(item);
    }

    /// Records the outcome of sending a prompt (never downgrades a confirmed one).
    pub fn set_send_state(&mut self, uuid: &str, state: SendState) {
        let key = format!("u:{uuid}");
        if let Some(Item {
            kind: ItemKind::User(m),
            ..
        }) = self.items.get_mut(&key)
        {
            if m.send == SendState::Confirmed {
                return;
            }
            m.send = state;
            self.touch(&key);
        }
    }

    /// Shows the images of a prompt typed here (added with [`Self::add_local_prompt`]).
    pub fn set_local_images(&mut self, uuid: &str, images: Vec<super::attachment::UserImage>) {
        let key = format!("u:{uuid}");
        if let Some(Item {
            kind: ItemKind::User(m),
            ..
        }) = self.items.get_mut(&key)
        {
            m.images = images;
            self.touch(&key);
        }
    }

    /// The text of a prompt typed here (for a retry).
    pub fn local_prompt_text(&self, uuid: &str) -> Option<&str> {
        match self.items.get(&format!("u:{uuid}")) {
            Some(Item {
                kind: ItemKind::User(m),
                ..
            }) => Some(&m.text),
            _ => None,
        }
    }

    /// Remembers that this console sent a control request (interrupt, set_model …).
    pub fn local_request(&mut self, request_id: &str, req: LocalRequest) {
        if req == LocalRequest::Interrupt {
            self.interrupt = Some(InterruptState::Requested);
        }
        self.local_requests.insert(request_id.to_string(), req);
        self.bump();
    }

    /// Records that a local control request could not be sent.
    pub fn local_request_failed(&mut self, request_id: &str, error: &str) {
        if let Some(req) = self.local_requests.remove(request_id) {
            if req == LocalRequest::Interrupt {
                self.interrupt = Some(InterruptState::Failed(error.to_string()));
            }
            self.notice(format!("Request failed: {error}"));
        }
        self.bump();
    }

    /// This console sent an answer to a prompt (it leaves the open queue until confirmed).
    pub fn answer_locally(&mut self, request_id: &str) {
        if let Some(p) = self.prompts.iter_mut().find(|p| p.request_id == request_id) {
            p.answered_locally = true;
        }
        self.bump();
    }

    /// Sending an answer failed: the prompt is open again.
    pub fn answer_failed(&mut self, request_id: &str, error: &str) {
        if let Some(p) = self.prompts.iter_mut().find(|p| p.request_id == request_id) {
            p.answered_locally = false;
        }
        self.notice(format!("Your answer was not delivered: {error}"));
    }

    /// The relay refused an answer because the prompt was already settled (HTTP 409).
    pub fn answer_conflict(&mut self, request_id: &str) {
        if self.prompts.iter().any(|p| p.request_id == request_id) {
            self.settle(request_id, SettledBy::Other, None);
            self.notice(
                "This request was already answered elsewhere; your answer was not used.".into(),
            );
        }
    }

    // ------------------------------------------------------------------ applying frames

    /// Applies one frame written by the CLI.
    pub fn apply_value(&mut self, frame: &Value) {
        self.apply_from(Source::Worker, frame);
    }

    /// Applies a parsed CLI message (`bridge_protocol::CliMessage`, or anything that serializes to a
    /// frame).
    pub fn apply<M: serde::Serialize>(&mut self, msg: &M) {
        match serde_json::to_value(msg) {
            Ok(v) => self.apply_from(Source::Worker, &v),
            Err(e) => self.notice(format!("could not read a frame: {e}")),
        }
    }

    /// Applies one frame (a relay envelope's `payload`) with its `source`.
    pub fn apply_from(&mut self, source: Source, v: &Value) {
        self.applied += 1;
        let ty = s(v, "type").unwrap_or_default();
        match ty {
            "stream_event" => return self.on_stream_event(v),
            "keep_alive" => return,
            "control_request" => return self.on_control_request(source, v),
            "control_response" => return self.on_control_response(source, v),
            "control_cancel_request" => return self.on_cancel(v),
            "user" => return self.on_user(source, v),
            // Other things a client writes (env updates, keep-alives) show nothing.
            _ if source == Source::Client => return,
            _ => {}
        }
        if let Some(id) = s(v, "uuid")
            && !self.seen.insert(id.to_string())
        {
            return; // a redelivered durable frame
        }
        match ty {
            "assistant" => self.on_assistant(v),
            "result" => self.on_result(v),
            "system" => self.on_system(source, v),
            "tool_progress" => self.on_tool_progress(v),
            "tool_use_summary" => {
                let text = s(v, "summary").unwrap_or_default().to_string();
                self.push_system(
                    v,
                    SystemKind::Notice {
                        title: "summary".into(),
                        text,
                        level: "info".into(),
                    },
                );
            }
            "rate_limit_event" => self.on_rate_limit(v),
            "prompt_suggestion" => {
                self.suggestion = s(v, "suggestion").map(str::to_string);
                self.bump();
            }
            "conversation_reset" => {
                let trigger = s(v, "trigger").unwrap_or("reset");
                self.push_system(
                    v,
                    SystemKind::Notice {
                        title: "conversation reset".into(),
                        text: format!("The conversation was reset ({trigger})."),
                        level: "notice".into(),
                    },
                );
            }
            "active_goal" => {
                let text = v
                    .get("value")
                    .and_then(|g| s(g, "condition"))
                    .map_or_else(|| "Goal cleared.".to_string(), |c| format!("Goal: {c}"));
                self.push_system(
                    v,
                    SystemKind::Notice {
                        title: "goal".into(),
                        text,
                        level: "info".into(),
                    },
                );
            }
            "auth_status" => {
                let mut text: Vec<String> = v
                    .get("output")
                    .and_then(Value::as_array)
                    .map(|o| {
                        o.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_string)
                            .collect()
                    })
                    .unwrap_or_default();
                if let Some(e) = s(v, "error") {
                    text.push(e.to_string());
                }
                let level = if v.get("error").is_some() {
                    "error"
                } else {
                    "info"
                };
                self.push_system(
                    v,
                    SystemKind::Notice {
                        title: "authentication".into(),
                        text: text.join("\n"),
                        level: level.into(),
                    },
                );
            }
            "command_lifecycle" => self.on_lifecycle(v),
            "relay_error" => {
                let mut text = s(v, "error").unwrap_or("relay error").to_string();
                if let Some(raw) = s(v, "raw") {
                    text.push_str("\n\n");
                    text.extend(raw.chars().take(400));
                }
                self.push_system(
                    v,
                    SystemKind::Notice {
                        title: "relay error".into(),
                        text,
                        level: "error".into(),
                    },
                );
            }
            _ => self.push_raw(v),
        }
    }

    // ------------------------------------------------------------------ internals: rows

    fn bump(&mut self) {
        self.rev += 1;
    }

    fn next_id(&mut self) -> u64 {
        self.counter += 1;
        self.counter
    }

    fn notice(&mut self, text: String) {
        let id = self.next_id();
        self.notices.push(Notice { id, text });
        if self.notices.len() > 20 {
            self.notices.remove(0);
        }
        self.bump();
    }

    /// Marks a row (and the rows it is nested in) changed.
    fn touch(&mut self, key: &str) {
        self.rev += 1;
        let rev = self.rev;
        let mut key = key.to_string();
        for _ in 0..64 {
            let Some(item) = self.items.get_mut(&key) else {
                return;
            };
            item.rev = rev;
            match item.parent.as_ref().and_then(|p| self.tools.get(p)) {
                Some(tool) if tool.owner != key && tool.children.contains(&key) => {
                    key = tool.owner.clone()
                }
                _ => return,
            }
        }
    }

    fn touch_tool(&mut self, id: &str) {
        if let Some(owner) = self.tools.get(id).map(|t| t.owner.clone()) {
            self.touch(&owner);
        }
    }

    /// Inserts a new row at the end of its parent (a subagent tool call) or of the transcript.
    fn insert_item(&mut self, item: Item) {
        let key = item.key.clone();
        let parent = item.parent.clone();
        self.items.insert(key.clone(), item);
        let nested = match parent.as_ref().and_then(|p| self.tools.get_mut(p)) {
            Some(tool) if tool.owner != key => {
                tool.children.push(key.clone());
                true
            }
            _ => false,
        };
        if !nested {
            self.order.push(key.clone());
            self.order_rev += 1;
        }
        self.touch(&key);
    }

    fn remove_item(&mut self, key: &str) {
        let Some(item) = self.items.remove(key) else {
            return;
        };
        if let Some(tool) = item.parent.as_ref().and_then(|p| self.tools.get_mut(p))
            && let Some(pos) = tool.children.iter().position(|k| k == key)
        {
            tool.children.remove(pos);
            let owner = tool.owner.clone();
            self.touch(&owner);
            return;
        }
        if let Some(pos) = self.order.iter().position(|k| k == key) {
            self.order.remove(pos);
            self.order_rev += 1;
        }
        self.bump();
    }

    fn frame_key(&mut self, prefix: &str, v: &Value) -> Key {
        match s(v, "uuid") {
            Some(id) => format!("{prefix}:{id}"),
            None => format!("{prefix}:#{}", self.next_id()),
        }
    }

    fn push_system(&mut self, v: &Value, kind: SystemKind) {
        let key = self.frame_key("s", v);
        if self.items.contains_key(&key) {
            return;
        }
        let parent = s(v, "parent_tool_use_id").map(str::to_string);
        self.insert_item(Item {
            key,
            rev: 0,
            parent,
            kind: ItemKind::System(SystemRow {
                uuid: s(v, "uuid").map(str::to_string),
                kind,
            }),
        });
    }

    fn push_raw(&mut self, v: &Value) {
        let key = self.frame_key("r", v);
        if self.items.contains_key(&key) {
            return;
        }
        let ty = s(v, "type").unwrap_or("(no type)");
        let label = match s(v, "subtype").or_else(|| v.get("request").and_then(|r| s(r, "subtype")))
        {
            Some(sub) => format!("{ty}/{sub}"),
            None => ty.to_string(),
        };
        let json = serde_json::to_string_pretty(v).unwrap_or_default();
        self.insert_item(Item {
            key,
            rev: 0,
            parent: None,
            kind: ItemKind::Raw(RawRow {
                uuid: s(v, "uuid").map(str::to_string),
                label,
                json,
            }),
        });
    }

    // ------------------------------------------------------------------ internals: user

    fn on_user(&mut self, source: Source, v: &Value) {
        let content = v
            .get("message")
            .and_then(|m| m.get("content"))
            .unwrap_or(&Value::Null);
        if let Some(blocks) = content.as_array() {
            for b in blocks
                .iter()
                .filter(|b| s(b, "type") == Some("tool_result"))
            {
                self.on_tool_result(b, v);
            }
        }
        let (text, images) = content_text(content);
        if text.is_empty() && images.is_empty() {
            return;
        }
        let parent = s(v, "parent_tool_use_id").map(str::to_string);
        let is_replay = v.get("isReplay").and_then(Value::as_bool).unwrap_or(false);
        let synthetic = v
            .get("isSynthetic")
            .and_then(Value::as_bool)
            .unwrap_or(false)
            || text.starts_with("[Request interrupted");
        let origin = if parent.is_some() {
            UserOrigin::SubagentPrompt
        } else if synthetic {
            UserOrigin::Synthetic
        } else if text.contains("<local-command-") || text.starts_with("<command-name>") {
            UserOrigin::LocalCommand
        } else {
            UserOrigin::Prompt
        };
        let key = self.frame_key("u", v);
        let timestamp = s(v, "timestamp").map(str::to_string);
        let echo = is_replay || source == Source::Client;
        if let Some(Item {
            kind: ItemKind::User(m),
            ..
        }) = self.items.get_mut(&key)
        {
            if echo || source == Source::Worker {
                m.send = SendState::Confirmed;
            }
            if timestamp.is_some() {
                m.timestamp = timestamp;
            }
            if text != m.text && text.ends_with(&format!("\n{}", m.text)) {
                m.coalesced = true;
            }
            if m.images.is_empty() && !images.is_empty() {
                m.images = images;
            }
            self.touch(&key);
            return;
        }
        let mut text = text;
        let mut coalesced = false;
        if is_replay
            && origin == UserOrigin::Prompt
            && let Some(prev) = self.last_prompt_text()
            && let Some(rest) = text.strip_prefix(&format!("{prev}\n"))
            && !rest.is_empty()
        {
            text = rest.to_string();
            coalesced = true;
        }
        if origin == UserOrigin::Prompt && parent.is_none() && source != Source::Client {
            self.turn_running = true;
        }
        self.insert_item(Item {
            key,
            rev: 0,
            parent,
            kind: ItemKind::User(UserMsg {
                uuid: s(v, "uuid").unwrap_or_default().to_string(),
                text,
                images,
                origin,
                send: SendState::Confirmed,
                lifecycle: None,
                coalesced,
                timestamp,
            }),
        });
    }

    fn last_prompt_text(&self) -> Option<String> {
        self.order
            .iter()
            .rev()
            .find_map(|k| match self.items.get(k) {
                Some(Item {
                    kind: ItemKind::User(m),
                    ..
                }) if m.origin == UserOrigin::Prompt => Some(m.text.clone()),
                _ => None,
            })
    }

    fn on_lifecycle(&mut self, v: &Value) {
        let (Some(cmd), Some(state)) = (s(v, "command_uuid"), s(v, "state")) else {
            return;
        };
        let key = format!("u:{cmd}");
        if let Some(Item {
            kind: ItemKind::User(m),
            ..
        }) = self.items.get_mut(&key)
        {
            m.lifecycle = Some(state.to_string());
            if matches!(m.send, SendState::Pending | SendState::Sent) {
                m.send = SendState::Confirmed;
            }
            self.touch(&key);
        }
        if state == "started" {
            self.turn_running = true;
            self.bump();
        }
    }

    // ------------------------------------------------------------------ internals: tools

    fn ensure_tool(&mut self, id: &str, name: &str, owner: &str) -> &mut ToolCall {
        self.tools
            .entry(id.to_string())
            .or_insert_with(|| ToolCall {
                id: id.to_string(),
                name: name.to_string(),
                owner: owner.to_string(),
                input: Value::Object(Map::new()),
                partial_json: String::new(),
                input_complete: false,
                ran_input: None,
                status: ToolStatus::Streaming,
                progress_secs: None,
                output: None,
                permission_request: None,
                deny_message: None,
                children: Vec::new(),
                task: None,
            })
    }

    fn on_tool_result(&mut self, block: &Value, frame: &Value) {
        let Some(id) = s(block, "tool_use_id") else {
            return;
        };
        let text = tool_result_text(block.get("content").unwrap_or(&Value::Null));
        let is_error = block
            .get("is_error")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let rejected = frame
            .get("tool_result_meta")
            .and_then(Value::as_array)
            .is_some_and(|metas| {
                metas.iter().any(|m| {
                    s(m, "id") == Some(id)
                        && m.get("permission_decision").and_then(|d| s(d, "decision"))
                            == Some("reject")
                })
            });
        if !self.tools.contains_key(id) {
            // A result whose call we never saw (history cut short): give it a row of its own.
            let key = format!("a:orphan:{id}");
            let parent = s(frame, "parent_tool_use_id").map(str::to_string);
            self.ensure_tool(id, "tool", &key);
            self.insert_item(Item {
                key,
                rev: 0,
                parent,
                kind: ItemKind::Assistant(AssistantMsg {
                    message_id: String::new(),
                    uuid: None,
                    model: None,
                    blocks: vec![Slot {
                        index: None,
                        durable: true,
                        open: false,
                        block: Block::ToolUse(id.into()),
                    }],
                    streaming: false,
                    stop_reason: None,
                    error: None,
                }),
            });
        }
        let structured = frame.get("tool_use_result").cloned();
        let tool = self.tools.get_mut(id).expect("ensured above");
        tool.status = if !is_error {
            ToolStatus::Done
        } else if rejected || tool.status == ToolStatus::Denied || tool.deny_message.is_some() {
            if tool.deny_message.is_none() {
                tool.deny_message = Some(text.clone());
            }
            ToolStatus::Denied
        } else {
            ToolStatus::Error
        };
        tool.input_complete = true;
        tool.output = Some(ToolOutput {
            text,
            is_error,
            structured,
        });
        if tasks::is_task_tool(&tool.name)
            && let Some(o) = &tool.output
            && self.tasks.apply(
                &tool.name,
                &tool.display_input(),
                &o.text,
                o.structured.as_ref(),
                o.is_error,
            )
        {
            self.rev += 1;
        }
        let request = tool.permission_request.clone();
        // The tool ran (or was refused): whatever prompt it had is settled.
        if let Some(rid) = request
            && let Some(p) = self.prompts.iter().find(|p| p.request_id == rid)
        {
            let by = if p.answered_locally {
                SettledBy::Me
            } else {
                SettledBy::Other
            };
            self.settle(&rid, by, None);
        }
        self.touch_tool(id);
    }

    fn on_tool_progress(&mut self, v: &Value) {
        let Some(id) = s(v, "tool_use_id") else {
            return;
        };
        if let Some(tool) = self.tools.get_mut(id) {
            tool.progress_secs = f(v, "elapsed_time_seconds");
            if tool.status == ToolStatus::Streaming {
                tool.status = ToolStatus::Running;
            }
            self.touch_tool(id);
        }
    }

    // ------------------------------------------------------------------ internals: assistant

    fn ensure_assistant(&mut self, message_id: &str, parent: Option<String>) -> Key {
        let key = format!("a:{message_id}");
        if !self.items.contains_key(&key) {
            // A new API message closes any older one still marked streaming.
            self.close_streaming(parent.as_deref());
            self.insert_item(Item {
                key: key.clone(),
                rev: 0,
                parent,
                kind: ItemKind::Assistant(AssistantMsg {
                    message_id: message_id.to_string(),
                    uuid: None,
                    model: None,
                    blocks: Vec::new(),
                    streaming: false,
                    stop_reason: None,
                    error: None,
                }),
            });
        }
        key
    }

    fn assistant_mut(&mut self, key: &str) -> Option<&mut AssistantMsg> {
        match self.items.get_mut(key) {
            Some(Item {
                kind: ItemKind::Assistant(a),
                ..
            }) => Some(a),
            _ => None,
        }
    }

    /// Ends the streaming state of every assistant row (of one parent, or all).
    fn close_streaming(&mut self, parent: Option<&str>) {
        let keys: Vec<Key> = self
            .items
            .values()
            .filter(|i| matches!(&i.kind, ItemKind::Assistant(a) if a.streaming))
            .filter(|i| parent.is_none() || i.parent.as_deref() == parent)
            .map(|i| i.key.clone())
            .collect();
        for key in keys {
            if let Some(a) = self.assistant_mut(&key) {
                a.streaming = false;
                for slot in &mut a.blocks {
                    slot.open = false;
                }
            }
            self.touch(&key);
        }
    }

    fn on_assistant(&mut self, v: &Value) {
        let Some(msg) = v.get("message") else {
            return self.push_raw(v);
        };
        let uuid = s(v, "uuid").map(str::to_string);
        let message_id = s(msg, "id")
            .map(str::to_string)
            .or_else(|| uuid.clone())
            .unwrap_or_default();
        let parent = s(v, "parent_tool_use_id").map(str::to_string);
        if parent.is_none() {
            self.turn_running = true;
        }
        if parent.is_none()
            && let Some(usage) = msg.get("usage")
        {
            let tokens = [
                "input_tokens",
                "cache_read_input_tokens",
                "cache_creation_input_tokens",
                "output_tokens",
            ]
            .iter()
            .filter_map(|k| u(usage, k))
            .sum();
            self.agent_info.observe_usage(tokens);
        }
        let key = self.ensure_assistant(&message_id, parent);
        let mut new_tools: Vec<(String, String, Value)> = Vec::new();
        {
            let a = self.assistant_mut(&key).expect("ensured");
            if a.uuid.is_none() {
                a.uuid = uuid;
            }
            if let Some(m) = s(msg, "model") {
                a.model = Some(m.to_string());
            }
            if let Some(e) = s(v, "error") {
                a.error = Some(e.to_string());
            }
            if let Some(r) = s(msg, "stop_reason") {
                a.stop_reason = Some(r.to_string());
            }
            let blocks = msg
                .get("content")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            for b in &blocks {
                match s(b, "type").unwrap_or_default() {
                    "tool_use" | "server_tool_use" | "mcp_tool_use" => {
                        let id = s(b, "id").unwrap_or_default().to_string();
                        let name = s(b, "name").unwrap_or("tool").to_string();
                        match a
                            .blocks
                            .iter_mut()
                            .find(|sl| sl.block == Block::ToolUse(id.clone()))
                        {
                            Some(slot) => {
                                slot.durable = true;
                                slot.open = false;
                            }
                            None => a.blocks.push(Slot {
                                index: None,
                                durable: true,
                                open: false,
                                block: Block::ToolUse(id.clone()),
                            }),
                        }
                        new_tools.push((
                            id,
                            name,
                            b.get("input").cloned().unwrap_or(Value::Object(Map::new())),
                        ));
                    }
                    "text" => {
                        let text = s(b, "text").unwrap_or_default().to_string();
                        replace_or_push(&mut a.blocks, Block::Text(text), |bl| {
                            matches!(bl, Block::Text(_))
                        });
                    }
                    "thinking" => {
                        let text = s(b, "thinking").unwrap_or_default().to_string();
                        replace_or_push(&mut a.blocks, Block::Thinking(text), |bl| {
                            matches!(bl, Block::Thinking(_))
                        });
                    }
                    "redacted_thinking" => {
                        replace_or_push(&mut a.blocks, Block::RedactedThinking, |bl| {
                            matches!(bl, Block::RedactedThinking)
                        })
                    }
                    _ => {
                        let other = Block::Other(b.clone());
                        if !a.blocks.iter().any(|sl| sl.block == other) {
                            a.blocks.push(Slot {
                                index: None,
                                durable: true,
                                open: false,
                                block: other,
                            });
                        }
                    }
                }
            }
        }
        for (id, name, input) in new_tools {
            let tool = self.ensure_tool(&id, &name, &key);
            tool.name = name;
            tool.owner = key.clone();
            tool.input = input;
            tool.input_complete = true;
            tool.partial_json.clear();
            if tool.status == ToolStatus::Streaming {
                tool.status = ToolStatus::Running;
            }
        }
        self.touch(&key);
    }

    fn on_stream_event(&mut self, v: &Value) {
        let Some(ev) = v.get("event") else { return };
        let parent = s(v, "parent_tool_use_id").map(str::to_string);
        let et = s(ev, "type").unwrap_or_default();
        if et == "message_start" {
            let id = ev
                .get("message")
                .and_then(|m| s(m, "id"))
                .or_else(|| s(v, "api_message_id"))
                .map(str::to_string)
                .unwrap_or_else(|| format!("stream-{}", self.counter + 1));
            if parent.is_none() {
                self.turn_running = true;
            }
            let key = self.ensure_assistant(&id, parent);
            let model = ev
                .get("message")
                .and_then(|m| s(m, "model"))
                .map(str::to_string);
            if let Some(a) = self.assistant_mut(&key) {
                a.streaming = true;
                if model.is_some() {
                    a.model = model;
                }
            }
            self.current_stream = Some(id);
            self.touch(&key);
            return;
        }
        let Some(message_id) = s(v, "api_message_id")
            .map(str::to_string)
            .or_else(|| self.current_stream.clone())
        else {
            return;
        };
        let key = format!("a:{message_id}");
        let index = u(ev, "index");
        match et {
            "content_block_start" => {
                let Some(index) = index else { return };
                let key = self.ensure_assistant(&message_id, parent);
                let cb = ev.get("content_block").cloned().unwrap_or(Value::Null);
                let mut tool: Option<(String, String)> = None;
                let a = self.assistant_mut(&key).expect("ensured");
                if a.blocks.iter().any(|sl| sl.index == Some(index)) {
                    return;
                }
                a.streaming = true;
                let block = match s(&cb, "type").unwrap_or_default() {
                    "text" => Block::Text(s(&cb, "text").unwrap_or_default().to_string()),
                    "thinking" => {
                        Block::Thinking(s(&cb, "thinking").unwrap_or_default().to_string())
                    }
                    "redacted_thinking" => Block::RedactedThinking,
                    "tool_use" | "server_tool_use" | "mcp_tool_use" => {
                        let id = s(&cb, "id").unwrap_or_default().to_string();
                        tool = Some((id.clone(), s(&cb, "name").unwrap_or("tool").to_string()));
                        Block::ToolUse(id)
                    }
                    _ => Block::Other(cb.clone()),
                };
                if let Block::ToolUse(id) = &block
                    && a.blocks
                        .iter()
                        .any(|sl| sl.block == Block::ToolUse(id.clone()))
                {
                    return;
                }
                a.blocks.push(Slot {
                    index: Some(index),
                    durable: false,
                    open: true,
                    block,
                });
                if let Some((id, name)) = tool {
                    self.ensure_tool(&id, &name, &key);
                }
                self.touch(&key);
            }
            "content_block_delta" => {
                let Some(index) = index else { return };
                let Some(delta) = ev.get("delta") else { return };
                let Some(a) = self.assistant_mut(&key) else {
                    return;
                };
                let Some(slot) = a
                    .blocks
                    .iter_mut()
                    .find(|sl| sl.index == Some(index) && !sl.durable)
                else {
                    return;
                };
                match (s(delta, "type").unwrap_or_default(), &mut slot.block) {
                    ("text_delta", Block::Text(t)) => {
                        t.push_str(s(delta, "text").unwrap_or_default())
                    }
                    ("thinking_delta", Block::Thinking(t)) => {
                        t.push_str(s(delta, "thinking").unwrap_or_default())
                    }
                    ("input_json_delta", Block::ToolUse(id)) => {
                        let id = id.clone();
                        if let Some(tool) = self.tools.get_mut(&id)
                            && !tool.input_complete
                        {
                            tool.partial_json
                                .push_str(s(delta, "partial_json").unwrap_or_default());
                        }
                    }
                    _ => return,
                }
                self.touch(&key);
            }
            "content_block_stop" => {
                let Some(index) = index else { return };
                let Some(a) = self.assistant_mut(&key) else {
                    return;
                };
                let Some(slot) = a.blocks.iter_mut().find(|sl| sl.index == Some(index)) else {
                    return;
                };
                slot.open = false;
                if let Block::ToolUse(id) = &slot.block {
                    let id = id.clone();
                    if let Some(tool) = self.tools.get_mut(&id)
                        && !tool.input_complete
                    {
                        tool.input = if tool.partial_json.trim().is_empty() {
                            Value::Object(Map::new())
                        } else {
                            serde_json::from_str(&tool.partial_json).unwrap_or_else(|_| {
                                super::partial_json::repair(&tool.partial_json).unwrap_or_default()
                            })
                        };
                        tool.input_complete = true;
                        tool.partial_json.clear();
                        if tool.status == ToolStatus::Streaming {
                            tool.status = ToolStatus::Running;
                        }
                    }
                }
                self.touch(&key);
            }
            "message_delta" => {
                let reason = ev
                    .get("delta")
                    .and_then(|d| s(d, "stop_reason"))
                    .map(str::to_string);
                if let Some(a) = self.assistant_mut(&key)
                    && reason.is_some()
                {
                    a.stop_reason = reason;
                    self.touch(&key);
                }
            }
            "message_stop" => {
                let abandoned = v
                    .get("abandoned_blocks")
                    .or_else(|| ev.get("abandoned_blocks"));
                let mut target = key.clone();
                let mut from: Option<u64> = None;
                if let Some(ab) = abandoned {
                    from = u(ab, "from_block_index");
                    if let Some(id) = s(ab, "api_message_id") {
                        target = format!("a:{id}");
                    }
                }
                if let Some(from) = from {
                    self.abandon(&target, from);
                }
                if target != key {
                    self.finish_stream(&key);
                }
                self.finish_stream(&target);
                if self.current_stream.as_deref() == Some(&message_id) {
                    self.current_stream = None;
                }
            }
            _ => {}
        }
    }

    /// Drops streamed blocks (that no durable frame confirmed) from `from` on.
    fn abandon(&mut self, key: &str, from: u64) {
        let mut dropped_tools = Vec::new();
        let Some(a) = self.assistant_mut(key) else {
            return;
        };
        a.blocks.retain(|sl| {
            let drop = !sl.durable && sl.index.is_some_and(|i| i >= from);
            if drop && let Block::ToolUse(id) = &sl.block {
                dropped_tools.push(id.clone());
            }
            !drop
        });
        for id in dropped_tools {
            self.tools.remove(&id);
        }
        self.touch(key);
    }

    fn finish_stream(&mut self, key: &str) {
        let Some(a) = self.assistant_mut(key) else {
            return;
        };
        a.streaming = false;
        for slot in &mut a.blocks {
            slot.open = false;
        }
        // A streamed message that kept nothing (e.g. cut off at block 0 by a stream error) leaves no row.
        if a.blocks.is_empty() {
            self.remove_item(key);
        } else {
            self.touch(key);
        }
    }

    // ------------------------------------------------------------------ internals: result & system

    fn on_result(&mut self, v: &Value) {
        self.close_streaming(None);
        let total = f(v, "total_cost_usd").unwrap_or(0.0);
        let since: Option<f64> = v
            .get("model_usage_since_last_result")
            .and_then(Value::as_object)
            // Folded from +0.0: an empty map sums to -0.0, shown as "$-0.0000".
            .map(|m| {
                m.values()
                    .filter_map(|mu| f(mu, "costUSD"))
                    .fold(0.0, |a, b| a + b)
            });
        if total + 1e-12 < self.cost.last_cli_total {
            // A new CLI process: its total starts again from zero.
            self.cost.base += self.cost.last_cli_total;
            self.cost.last_cli_total = 0.0;
        }
        let turn_cost = since.unwrap_or((total - self.cost.last_cli_total).max(0.0));
        self.cost.last_cli_total = total;
        self.cost.total = self.cost.base + total;
        let usage = v.get("usage").cloned().unwrap_or(Value::Null);
        let input_tokens = u(&usage, "input_tokens").unwrap_or(0)
            + u(&usage, "cache_read_input_tokens").unwrap_or(0)
            + u(&usage, "cache_creation_input_tokens").unwrap_or(0);
        let is_error = v.get("is_error").and_then(Value::as_bool).unwrap_or(false);
        let subtype = s(v, "subtype").unwrap_or("success").to_string();
        let mut errors: Vec<String> = v
            .get("errors")
            .and_then(Value::as_array)
            .map(|e| {
                e.iter()
                    .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        if is_error
            && errors.is_empty()
            && let Some(r) = s(v, "result")
        {
            errors.push(r.to_string());
        }
        if let Some(ids) = v.get("user_message_uuids").and_then(Value::as_array) {
            for id in ids.iter().filter_map(Value::as_str) {
                let key = format!("u:{id}");
                if let Some(Item {
                    kind: ItemKind::User(m),
                    ..
                }) = self.items.get_mut(&key)
                    && m.send != SendState::Confirmed
                {
                    m.send = SendState::Confirmed;
                    self.touch(&key);
                }
            }
        }
        self.turn_running = false;
        self.interrupt = None;
        self.compacting = false;
        let key = self.frame_key("res", v);
        self.insert_item(Item {
            key,
            rev: 0,
            parent: None,
            kind: ItemKind::Result(ResultRow {
                uuid: s(v, "uuid").map(str::to_string),
                subtype,
                is_error,
                terminal_reason: s(v, "terminal_reason").map(str::to_string),
                api_error_status: u(v, "api_error_status"),
                duration_ms: f(v, "duration_ms"),
                duration_api_ms: f(v, "duration_api_ms"),
                num_turns: u(v, "num_turns"),
                input_tokens,
                output_tokens: u(&usage, "output_tokens").unwrap_or(0),
                turn_cost,
                session_cost: self.cost.total,
                errors,
                denials: v
                    .get("permission_denials")
                    .and_then(Value::as_array)
                    .map_or(0, Vec::len),
            }),
        });
    }

    fn on_rate_limit(&mut self, v: &Value) {
        let info = v.get("rate_limit_info").cloned().unwrap_or(Value::Null);
        let status = s(&info, "status").unwrap_or("allowed").to_string();
        let limit_type = s(&info, "rateLimitType").map(str::to_string);
        let resets_at = f(&info, "resetsAt");
        self.rate_limit = Some(RateLimit {
            status: status.clone(),
            limit_type: limit_type.clone(),
            resets_at,
        });
        self.push_system(
            v,
            SystemKind::RateLimit {
                status,
                limit_type,
                resets_at,
                utilization: f(&info, "utilization"),
            },
        );
    }

    fn on_system(&mut self, source: Source, v: &Value) {
        let sub = s(v, "subtype").unwrap_or_default();
        let text_of = |v: &Value| -> String {
            [
                "content", "text", "message", "reason", "error", "output", "summary",
            ]
            .iter()
            .find_map(|k| s(v, k))
            .unwrap_or_default()
            .to_string()
        };
        match sub {
            "init" => {
                let model = s(v, "model").unwrap_or_default().to_string();
                let cwd = s(v, "cwd").unwrap_or_default().to_string();
                let mode = s(v, "permissionMode").unwrap_or_default().to_string();
                let version = s(v, "claude_code_version").unwrap_or_default().to_string();
                let tools: Vec<String> = v
                    .get("tools")
                    .and_then(Value::as_array)
                    .map(|t| {
                        t.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_string)
                            .collect()
                    })
                    .unwrap_or_default();
                self.info.model = Some(model.clone());
                self.info.cwd = Some(cwd.clone());
                self.info.permission_mode = Some(mode.clone());
                self.info.version = Some(version.clone());
                self.info.tools.clone_from(&tools);
                self.turn_running = true;
                let sig = (model.clone(), mode.clone(), cwd.clone());
                if self.last_init.as_ref() != Some(&sig) {
                    self.last_init = Some(sig);
                    self.push_system(
                        v,
                        SystemKind::Init {
                            model,
                            cwd,
                            tools,
                            permission_mode: mode,
                            version,
                        },
                    );
                } else {
                    self.bump();
                }
            }
            "status" => {
                match s(v, "status") {
                    Some("requesting") => self.turn_running = true,
                    Some("compacting") => self.compacting = true,
                    _ => self.compacting = false,
                }
                if let Some(mode) = s(v, "permissionMode") {
                    self.info.permission_mode = Some(mode.to_string());
                }
                if s(v, "compact_result") == Some("failed") {
                    let text = s(v, "compact_error")
                        .unwrap_or("Compaction failed.")
                        .to_string();
                    self.push_system(
                        v,
                        SystemKind::Notice {
                            title: "compaction".into(),
                            text,
                            level: "error".into(),
                        },
                    );
                }
                self.bump();
            }
            "compact_boundary" => {
                let meta = v.get("compact_metadata").cloned().unwrap_or(Value::Null);
                self.push_system(
                    v,
                    SystemKind::CompactBoundary {
                        trigger: s(&meta, "trigger").unwrap_or("auto").to_string(),
                        pre_tokens: u(&meta, "pre_tokens"),
                        post_tokens: u(&meta, "post_tokens"),
                    },
                );
            }
            "api_retry" => self.push_system(
                v,
                SystemKind::ApiRetry {
                    attempt: u(v, "attempt").unwrap_or(0),
                    max_retries: u(v, "max_retries").unwrap_or(0),
                    delay_ms: u(v, "retry_delay_ms").unwrap_or(0),
                    error: s(v, "error").unwrap_or("unknown").to_string(),
                    status: u(v, "error_status"),
                },
            ),
            "session_state_changed" => match s(v, "state") {
                Some("ended") => {
                    self.ended = true;
                    self.turn_running = false;
                    self.close_streaming(None);
                    self.push_system(
                        v,
                        SystemKind::Ended {
                            exit_code: v.get("exit_code").and_then(Value::as_i64),
                            signal: v.get("signal").and_then(Value::as_i64),
                            stderr_tail: s(v, "stderr_tail").unwrap_or_default().to_string(),
                        },
                    );
                }
                Some("running") => {
                    self.turn_running = true;
                    self.bump();
                }
                Some("idle") => {
                    self.turn_running = false;
                    self.bump();
                }
                _ => self.bump(),
            },
            "informational" => {
                let level = s(v, "level").unwrap_or("info").to_string();
                self.push_system(
                    v,
                    SystemKind::Notice {
                        title: "information".into(),
                        text: text_of(v),
                        level,
                    },
                );
            }
            "permission_denied" => {
                if let Some(id) = s(v, "tool_use_id")
                    && let Some(tool) = self.tools.get_mut(id)
                {
                    tool.status = ToolStatus::Denied;
                    tool.deny_message = s(v, "message").map(str::to_string);
                    self.touch_tool(id);
                }
                let text = format!(
                    "{} was denied: {}",
                    s(v, "tool_name").unwrap_or("A tool"),
                    text_of(v)
                );
                self.push_system(
                    v,
                    SystemKind::Notice {
                        title: "permission denied".into(),
                        text,
                        level: "warning".into(),
                    },
                );
            }
            "task_started" | "task_progress" | "task_updated" | "task_notification" => {
                self.on_task(v, sub)
            }
            "hook_response" => {
                let name = s(v, "hook_name").or(s(v, "hook_event")).unwrap_or("hook");
                let outcome = s(v, "outcome").unwrap_or("success");
                let mut text = format!("{name}: {outcome}");
                let out = text_of(v);
                if !out.is_empty() {
                    text.push('\n');
                    text.push_str(&out);
                }
                let level = if outcome == "success" {
                    "info"
                } else {
                    "warning"
                };
                self.push_system(
                    v,
                    SystemKind::Notice {
                        title: "hook".into(),
                        text,
                        level: level.into(),
                    },
                );
            }
            "local_command_output"
            | "notification"
            | "worker_shutting_down"
            | "model_refusal_fallback"
            | "model_refusal_no_fallback"
            | "mirror_error"
            | "session_writes_lost"
            | "plugin_install" => {
                let level = match sub {
                    "local_command_output" | "plugin_install" => "info",
                    "notification" => s(v, "priority").map_or("info", |p| {
                        if p == "high" || p == "immediate" {
                            "warning"
                        } else {
                            "info"
                        }
                    }),
                    _ => "warning",
                };
                let mut text = text_of(v);
                if text.is_empty() {
                    text = sub.replace('_', " ");
                }
                self.push_system(
                    v,
                    SystemKind::Notice {
                        title: sub.replace('_', " "),
                        text,
                        level: level.into(),
                    },
                );
            }
            "commands_changed" => {
                if let Some(cmds) = v.get("commands").and_then(Value::as_array) {
                    self.info.commands = cmds.iter().filter_map(SlashCommand::from_json).collect();
                }
                self.bump();
            }
            // Known, nothing to show.
            "thinking_tokens"
            | "post_turn_summary"
            | "task_summary"
            | "background_tasks_changed"
            | "hook_started"
            | "hook_progress"
            | "control_request_progress"
            | "session_metadata"
            | "elicitation_complete"
            | "files_persisted"
            | "memory_recall"
            | "autocompact_state" => {}
            _ => {
                if source == Source::Relay && !sub.is_empty() {
                    let text = text_of(v);
                    self.push_system(
                        v,
                        SystemKind::Notice {
                            title: sub.replace('_', " "),
                            text,
                            level: "info".into(),
                        },
                    );
                } else {
                    self.push_raw(v);
                }
            }
        }
    }

    fn on_task(&mut self, v: &Value, sub: &str) {
        let task_id = s(v, "task_id").unwrap_or_default().to_string();
        let tool_id = s(v, "tool_use_id").map(str::to_string).or_else(|| {
            self.tools
                .values()
                .find(|t| t.task.as_ref().is_some_and(|k| k.task_id == task_id))
                .map(|t| t.id.clone())
        });
        let status = match sub {
            "task_started" | "task_progress" => Some("running".to_string()),
            "task_updated" => v
                .get("patch")
                .and_then(|p| s(p, "status"))
                .map(str::to_string),
            _ => s(v, "status").map(str::to_string),
        };
        let summary = s(v, "summary").map(str::to_string);
        let description = s(v, "description").map(str::to_string);
        if let Some(id) = tool_id.as_deref()
            && let Some(tool) = self.tools.get_mut(id)
        {
            let task = tool.task.get_or_insert_with(|| TaskInfo {
                task_id: task_id.clone(),
                ..TaskInfo::default()
            });
            if status.is_some() {
                task.status.clone_from(&status);
            }
            if summary.is_some() {
                task.summary.clone_from(&summary);
            }
            if description.is_some() {
                task.description.clone_from(&description);
            }
            self.touch_tool(id);
        }
        if sub == "task_notification" {
            let st = status.unwrap_or_else(|| "finished".into());
            let text = summary.unwrap_or_default();
            let level = if st == "completed" { "info" } else { "warning" };
            self.push_system(
                v,
                SystemKind::Notice {
                    title: format!("task {st}"),
                    text,
                    level: level.into(),
                },
            );
        } else if tool_id.is_none() && sub == "task_started" {
            let text = description.unwrap_or_default();
            self.push_system(
                v,
                SystemKind::Notice {
                    title: "task started".into(),
                    text,
                    level: "info".into(),
                },
            );
        } else {
            self.bump();
        }
    }

    // ------------------------------------------------------------------ internals: control

    fn on_control_request(&mut self, source: Source, v: &Value) {
        let Some(rid) = s(v, "request_id").map(str::to_string) else {
            return self.push_raw(v);
        };
        let req = v.get("request").cloned().unwrap_or(Value::Null);
        let sub = s(&req, "subtype").unwrap_or_default();
        if source == Source::Client {
            if let Some(kind) = InfoKind::from_subtype(sub) {
                self.agent_info.asked(&rid, kind);
            }
            // Another controller's request (or our own echo).
            if sub == "interrupt" && !self.local_requests.contains_key(&rid) {
                self.interrupt = Some(InterruptState::Requested);
                self.local_requests.insert(rid, LocalRequest::Interrupt);
                self.bump();
            }
            return;
        }
        let kind = match sub {
            "can_use_tool" => {
                let tool = s(&req, "tool_name").unwrap_or_default();
                if tool == "AskUserQuestion" {
                    PromptKind::Question
                } else if tool == "ExitPlanMode" {
                    PromptKind::PlanApproval
                } else if req
                    .get("requires_user_interaction")
                    .and_then(Value::as_bool)
                    == Some(true)
                    && req.get("input").and_then(|i| i.get("questions")).is_some()
                {
                    PromptKind::Question
                } else {
                    PromptKind::Permission
                }
            }
            "elicitation" => PromptKind::Elicitation,
            "request_user_dialog" => PromptKind::UserDialog,
            _ => {
                if let std::collections::hash_map::Entry::Vacant(e) = self.settled.entry(rid) {
                    e.insert(SettledBy::Other);
                    self.push_raw(v);
                }
                return;
            }
        };
        if self.settled.contains_key(&rid) || self.prompts.iter().any(|p| p.request_id == rid) {
            return;
        }
        let tool_use_id = s(&req, "tool_use_id").map(str::to_string);
        let (tool_name, input) = match kind {
            PromptKind::Elicitation => (
                s(&req, "mcp_server_name")
                    .unwrap_or("MCP server")
                    .to_string(),
                req.get("requested_schema").cloned().unwrap_or(Value::Null),
            ),
            PromptKind::UserDialog => (
                s(&req, "dialog_kind").unwrap_or("dialog").to_string(),
                req.get("payload").cloned().unwrap_or(Value::Null),
            ),
            _ => (
                s(&req, "tool_name").unwrap_or("tool").to_string(),
                req.get("input")
                    .cloned()
                    .unwrap_or(Value::Object(Map::new())),
            ),
        };
        let prompt = Prompt {
            request_id: rid.clone(),
            kind,
            tool_name,
            display_name: s(&req, "display_name").map(str::to_string),
            title: s(&req, "title").map(str::to_string),
            description: s(&req, "description")
                .or_else(|| s(&req, "message"))
                .map(str::to_string),
            decision_reason: s(&req, "decision_reason").map(str::to_string),
            decision_reason_type: s(&req, "decision_reason_type").map(str::to_string),
            blocked_path: s(&req, "blocked_path").map(str::to_string),
            tool_use_id: tool_use_id.clone(),
            input,
            suggestions: req
                .get("permission_suggestions")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
            request: req.clone(),
            answered_locally: false,
        };
        self.prompts.push(prompt);
        if let Some(id) = tool_use_id.as_deref()
            && let Some(tool) = self.tools.get_mut(id)
        {
            tool.permission_request = Some(rid);
            if matches!(tool.status, ToolStatus::Streaming | ToolStatus::Running) {
                tool.status = ToolStatus::PendingPermission;
            }
            self.touch_tool(id);
        }
        self.bump();
    }

    fn settle(&mut self, request_id: &str, by: SettledBy, answer: Option<&Value>) {
        let Some(pos) = self.prompts.iter().position(|p| p.request_id == request_id) else {
            return;
        };
        let prompt = self.prompts.remove(pos);
        if by != SettledBy::Me && !prompt.answered_locally && !self.observer && !self.replaying {
            let what = prompt.display_name.as_deref().unwrap_or(&prompt.tool_name);
            let text = match by {
                SettledBy::Cancelled => format!("Claude Code withdrew the request for {what}."),
                _ => format!("The request for {what} was answered in another window."),
            };
            self.notice(text);
        }
        self.settled.insert(request_id.to_string(), by.clone());
        if prompt.kind == PromptKind::Elicitation {
            self.record_form_answer(&prompt, &by, answer);
        }
        if let Some(id) = prompt.tool_use_id.as_deref()
            && let Some(tool) = self.tools.get_mut(id)
        {
            let behavior = answer.and_then(|a| s(a, "behavior"));
            match behavior {
                Some("allow") => {
                    if tool.status == ToolStatus::PendingPermission {
                        tool.status = ToolStatus::Running;
                    }
                    if prompt.kind == PromptKind::Permission
                        && let Some(updated) = answer.and_then(|a| a.get("updatedInput"))
                        && updated.is_object()
                        && updated != &tool.input
                        && updated != &prompt.input
                    {
                        tool.ran_input = Some(updated.clone());
                    }
                }
                Some("deny") => {
                    if tool.output.is_none() {
                        tool.status = ToolStatus::Denied;
                    }
                    tool.deny_message = answer.and_then(|a| s(a, "message")).map(str::to_string);
                }
                _ => {
                    if tool.status == ToolStatus::PendingPermission {
                        tool.status = ToolStatus::Running;
                    }
                }
            }
            self.touch_tool(id);
        }
        self.bump();
    }

    fn on_control_response(&mut self, source: Source, v: &Value) {
        let Some(resp) = v.get("response") else {
            return;
        };
        let Some(rid) = s(resp, "request_id").map(str::to_string) else {
            return;
        };
        let ok = s(resp, "subtype") != Some("error");
        let body = resp.get("response").cloned().unwrap_or(Value::Null);
        if let Some(p) = self.prompts.iter().find(|p| p.request_id == rid) {
            let by = if p.answered_locally {
                SettledBy::Me
            } else {
                SettledBy::Other
            };
            if source == Source::Relay && !p.answered_locally && !self.observer {
                let msg = s(&body, "message")
                    .unwrap_or("no controller answered in time")
                    .to_string();
                self.notice(format!("The relay answered for you: {msg}"));
            }
            self.settle(&rid, by, Some(&body));
            return;
        }
        if self.settled.contains_key(&rid) {
            return; // the second echo of an answer
        }
        if self
            .agent_info
            .on_response(&rid, ok, &body, s(resp, "error"))
        {
            return self.bump();
        }
        if let Some(req) = self.local_requests.remove(&rid) {
            let error = s(resp, "error").unwrap_or("error").to_string();
            match req {
                LocalRequest::Interrupt => {
                    self.interrupt = Some(if ok {
                        InterruptState::Acknowledged
                    } else {
                        InterruptState::Failed(error.clone())
                    });
                }
                LocalRequest::SetModel(m) if ok => {
                    self.info.model_choice.clone_from(&m);
                    self.info.model = Some(
                        s(&body, "model")
                            .map(str::to_string)
                            .or(m)
                            .unwrap_or("default".into()),
                    );
                }
                LocalRequest::SetPermissionMode(m) if ok => {
                    self.info.permission_mode = Some(s(&body, "mode").map_or(m, str::to_string));
                }
                LocalRequest::Initialize if ok => self.set_initialize(&body),
                _ => {}
            }
            if !ok {
                self.notice(format!("The CLI refused a request: {error}"));
            }
            self.bump();
            return;
        }
        if ok && body.get("models").is_some() {
            self.set_initialize(&body);
        } else if let Some(mode) = s(&body, "mode") {
            self.info.permission_mode = Some(mode.to_string());
            self.bump();
        }
        // Remember answers to prompts not seen (yet), so a late request is not shown as open.
        if body.get("behavior").is_some() || body.get("action").is_some() {
            self.settled.insert(rid, SettledBy::Other);
        }
    }

    /// Keeps what was answered to an MCP form in the transcript (the tool's result need not say).
    fn record_form_answer(&mut self, prompt: &Prompt, by: &SettledBy, answer: Option<&Value>) {
        let key = format!("form:{}", prompt.request_id);
        if self.items.contains_key(&key) {
            return;
        }
        let action = answer.and_then(|a| s(a, "action"));
        let who = match by {
            SettledBy::Me => "You",
            _ if self.observer => "The controller",
            _ => "Another window",
        };
        let (text, level) = match (by, action) {
            (SettledBy::Cancelled, _) => (
                "Withdrawn by Claude Code before it was answered.".to_string(),
                "notice",
            ),
            (_, Some("accept")) => {
                let values = answer
                    .and_then(|a| a.get("content"))
                    .and_then(Value::as_object)
                    .map(|c| {
                        c.iter()
                            .map(|(k, v)| format!("{k} = {}", form_value(v)))
                            .collect::<Vec<_>>()
                            .join(", ")
                    })
                    .unwrap_or_default();
                if values.is_empty() {
                    (format!("{who} submitted the form."), "info")
                } else {
                    (format!("{who} submitted: {values}"), "info")
                }
            }
            (_, Some("decline")) => (format!("{who} declined to answer."), "notice"),
            (_, Some("cancel")) => (format!("{who} dismissed the form."), "notice"),
            _ => (format!("{who} answered."), "info"),
        };
        self.insert_item(Item {
            key,
            rev: 0,
            parent: None,
            kind: ItemKind::System(SystemRow {
                uuid: None,
                kind: SystemKind::Notice {
                    title: format!("form · {}", prompt.tool_name),
                    text,
                    level: level.into(),
                },
            }),
        });
    }

    fn on_cancel(&mut self, v: &Value) {
        let Some(rid) = s(v, "request_id") else {
            return;
        };
        let rid = rid.to_string();
        if self.prompts.iter().any(|p| p.request_id == rid) {
            self.settle(&rid, SettledBy::Cancelled, None);
        } else {
            self.settled.entry(rid).or_insert(SettledBy::Cancelled);
        }
    }

    // ------------------------------------------------------------------ snapshot

    /// A comparable description of everything the transcript shows (rows in order, nested rows,
    /// tool cards, pending prompts, state). Two sessions that show the same thing have equal snapshots,
    /// whatever their history (e.g. with or without the streamed deltas).
    pub fn snapshot(&self) -> Value {
        let rows: Vec<Value> = self
            .order
            .iter()
            .filter_map(|k| self.snapshot_item(k, 0))
            .collect();
        serde_json::json!({
            "rows": rows,
            "state": self.state().as_str(),
            "prompts": self.prompts.iter().map(|p| p.request_id.clone()).collect::<Vec<_>>(),
            "cost_total": self.cost.total,
            "model": self.info.model,
            "permission_mode": self.info.permission_mode,
        })
    }

    fn snapshot_item(&self, key: &str, depth: usize) -> Option<Value> {
        let item = self.items.get(key)?;
        if depth > 32 {
            return None;
        }
        Some(match &item.kind {
            ItemKind::User(m) => serde_json::json!({
                "role": "user", "uuid": m.uuid, "text": m.text, "origin": format!("{:?}", m.origin),
                "send": m.send.as_str(), "coalesced": m.coalesced,
            }),
            ItemKind::Assistant(a) => {
                let blocks: Vec<Value> = a
                    .blocks
                    .iter()
                    .map(|sl| match &sl.block {
                        Block::Text(t) => serde_json::json!({"text": t}),
                        Block::Thinking(t) => serde_json::json!({"thinking": t}),
                        Block::RedactedThinking => serde_json::json!({"redacted_thinking": true}),
                        Block::Other(v) => serde_json::json!({"other": v}),
                        Block::ToolUse(id) => match self.tools.get(id) {
                            Some(t) => serde_json::json!({
                                "tool": t.name, "id": t.id, "status": t.status.as_str(),
                                "input": t.display_input(), "edited": t.edited(),
                                "output": t.output.as_ref().map(|o| (&o.text, o.is_error)),
                                "deny_message": t.deny_message,
                                "children": t.children.iter().filter_map(|c| self.snapshot_item(c, depth + 1)).collect::<Vec<_>>(),
                            }),
                            None => serde_json::json!({"tool_missing": id}),
                        },
                    })
                    .collect();
                serde_json::json!({
                    "role": "assistant", "uuid": a.uuid, "message_id": a.message_id, "streaming": a.streaming,
                    "error": a.error, "blocks": blocks,
                })
            }
            ItemKind::System(sr) => {
                serde_json::json!({"role": "system", "uuid": sr.uuid, "kind": format!("{:?}", sr.kind)})
            }
            ItemKind::Result(r) => serde_json::json!({
                "role": "result", "uuid": r.uuid, "subtype": r.subtype, "is_error": r.is_error,
                "turn_cost": r.turn_cost, "session_cost": r.session_cost, "errors": r.errors,
            }),
            ItemKind::Raw(r) => {
                serde_json::json!({"role": "raw", "uuid": r.uuid, "label": r.label})
            }
        })
    }
}

/// Puts a durable block in place of the streamed block it completes (the open one of the same kind,
/// else the first unconfirmed one of that kind), or appends it.
fn replace_or_push(blocks: &mut Vec<Slot>, block: Block, same_kind: impl Fn(&Block) -> bool) {
    let pos = blocks
        .iter()
        .position(|sl| !sl.durable && sl.open && same_kind(&sl.block))
        .or_else(|| {
            blocks
                .iter()
                .position(|sl| !sl.durable && same_kind(&sl.block))
        });
    match pos {
        Some(i) => {
            let slot = &mut blocks[i];
            slot.block = block;
            slot.durable = true;
            slot.open = false;
        }
        None => blocks.push(Slot {
            index: None,
            durable: true,
            open: false,
            block,
        }),
    }
}

/// A form value as a person reads it: text as is (cut at 200 characters), yes / no, numbers, else JSON.
fn form_value(v: &Value) -> String {
    let text = match v {
        Value::String(t) => t.clone(),
        Value::Bool(true) => "yes".into(),
        Value::Bool(false) => "no".into(),
        other => other.to_string(),
    };
    if text.chars().count() > 200 {
        format!("{}…", text.chars().take(200).collect::<String>())
    } else {
        text
    }
}
