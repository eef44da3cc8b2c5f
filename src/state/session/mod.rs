//! [`Session`]: the transcript model, applied one frame at a time. This file holds the model and its
//! accessors; each concern that changes it lives in a module of its own.

mod apply;
mod assistant;
mod control;
mod decode;
mod local;
mod result;
mod rows;
mod snapshot;
mod stream;
mod system;
mod tools;
mod user;

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use crate::state::agent_info::{AgentInfo, InfoKind};
use crate::state::item::{
    Block, Item, ItemKind, Key, RawRow, SendState, SystemKind, SystemRow, ToolCall, UserMsg,
    UserOrigin,
};
use crate::state::prompt::{Notice, Prompt, SettledBy};
use crate::state::tasks::TaskList;

use bridge_protocol::api::SessionDetail;
/// Who wrote a frame, as the relay's envelope says (`source`: worker, client or relay; the network
/// layer reads anything else as the worker). The session state shown in the header (`data-state`;
/// [`Session::state`] is never `Other`). Both are bridge-protocol's, shared with the relay.
pub use bridge_protocol::{SessionState, api::Source};
pub use control::prompt_of_frame;
pub use decode::{Decoded, Frame, Raw};

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

    /// The same from a typed command (`system/commands_changed`).
    fn from_protocol(c: &bridge_protocol::SlashCommand) -> Option<Self> {
        let name = c.name.trim_start_matches('/').to_string();
        (!name.is_empty() && !name.starts_with("__")).then(|| SlashCommand {
            name,
            description: c.description.clone(),
            argument_hint: c.argument_hint.clone(),
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
    /// It runs in a terminal, followed live through Claude Code's hooks (`cli.terminal`): its
    /// model, mode and interrupt are the terminal's; a message waits for its turn to end.
    pub terminal: bool,
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
    /// Keys of the assistant rows that may be streaming (every row marked `streaming` is here), so
    /// closing them does not walk the whole transcript on every new message or result.
    streaming_rows: Vec<Key>,
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

    /// Whether the prompt `request_id` was answered or withdrawn (here or elsewhere), as far as
    /// this model has seen.
    pub fn is_settled(&self, request_id: &str) -> bool {
        self.settled.contains_key(request_id)
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

    /// Seeds state from the relay's session detail (`GET /v1/code/sessions/{id}`).
    pub fn set_detail(&mut self, detail: &SessionDetail) {
        let d = &detail.summary;
        if let Some(m) = &d.model {
            self.info.model.get_or_insert_with(|| m.clone());
        }
        if let Some(m) = &d.permission_mode {
            self.info.permission_mode.get_or_insert_with(|| m.clone());
        }
        if let Some(c) = &d.cwd {
            self.info.cwd.get_or_insert_with(|| c.clone());
        }
        if d.cli.as_ref().is_some_and(|c| c.terminal) {
            self.info.terminal = true;
        }
        match d.state {
            SessionState::Ended => self.ended = true,
            // Once frames are applied they say whether a turn runs: a detail read meanwhile (a
            // retried read, a gateway's registry a moment behind) may be older than the `result`
            // that ended the turn, and would leave the header on "running" for good.
            SessionState::Running if self.order.is_empty() => self.turn_running = true,
            _ => {}
        }
        if detail.initialize.is_object() {
            self.set_initialize(&detail.initialize);
        }
        self.bump();
    }

    /// Seeds state from a session object given as JSON: read as a [`SessionDetail`] (the fields it
    /// lacks — `id`, a state — are not needed here, so a partial object such as
    /// `{"state":"ended"}` works too).
    pub fn set_summary(&mut self, summary: &Value) {
        let mut v = summary.clone();
        if let Value::Object(m) = &mut v {
            m.entry("id")
                .or_insert_with(|| Value::String(String::new()));
        }
        match bridge_protocol::from_value_text::<SessionDetail>(&v) {
            Ok(d) => self.set_detail(&d),
            Err(e) => self.notice(format!("Could not read the session's details: {e}")),
        }
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
}
