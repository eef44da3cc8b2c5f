//! The rows of a transcript and the tool calls they hold.

use serde_json::Value;

/// Stable key of a transcript row (`u:<uuid>`, `a:<message id>`, `s:<uuid>` …). Rows are keyed by
/// it in the DOM, so a row that changes is updated in place, never duplicated.
pub type Key = String;

/// One transcript row.
#[derive(Clone, Debug, PartialEq)]
pub struct Item {
    /// Stable key.
    pub key: Key,
    /// Bumped (to the session's global revision) whenever this row or anything nested in it changes.
    pub rev: u64,
    /// `parent_tool_use_id`: the subagent tool call this row belongs under, if any.
    pub parent: Option<String>,
    /// What the row shows.
    pub kind: ItemKind,
}

impl Item {
    /// The `uuid` the row is known by on the wire (`data-uuid`), when it has one yet.
    pub fn uuid(&self) -> Option<&str> {
        match &self.kind {
            ItemKind::User(u) => Some(&u.uuid),
            ItemKind::Assistant(a) => a.uuid.as_deref(),
            ItemKind::System(s) => s.uuid.as_deref(),
            ItemKind::Result(r) => r.uuid.as_deref(),
            ItemKind::Raw(r) => r.uuid.as_deref(),
        }
    }

    /// `data-role`: `user`, `assistant`, `system`, `result` or `raw`.
    pub fn role(&self) -> &'static str {
        match &self.kind {
            ItemKind::User(_) => "user",
            ItemKind::Assistant(_) => "assistant",
            ItemKind::System(_) => "system",
            ItemKind::Result(_) => "result",
            ItemKind::Raw(_) => "raw",
        }
    }
}

/// The kinds of row.
#[derive(Clone, Debug, PartialEq)]
pub enum ItemKind {
    /// A prompt (typed here, by another controller, or replayed by the CLI) or a CLI-made user frame.
    User(UserMsg),
    /// One API message of the assistant, assembled from its streamed deltas and durable frames.
    Assistant(AssistantMsg),
    /// A system frame worth showing (init, compaction, retries, state changes …).
    System(SystemRow),
    /// A `result`: the turn footer.
    Result(ResultRow),
    /// A frame of a type this console does not know: shown as collapsed raw JSON, never dropped.
    Raw(RawRow),
}

/// Where a user row came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UserOrigin {
    /// A prompt from a person (this console, another controller, or a CLI replay of one).
    Prompt,
    /// A frame the CLI wrote itself (`[Request interrupted by user]`, max-tokens continuation …).
    Synthetic,
    /// A slash command or its output replayed by the CLI (`<local-command-stdout>` …).
    LocalCommand,
    /// The prompt a subagent was started with (nested under its tool call).
    SubagentPrompt,
}

/// Delivery state of a prompt typed in this console.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SendState {
    /// Shown at once, the POST has not answered yet.
    Pending,
    /// The relay accepted it; its echo has not come back yet.
    Sent,
    /// Its echo (same uuid) came back from the session: it is in the log.
    Confirmed,
    /// Sending failed; the composer offers a retry with the same uuid (retries are deduplicated).
    Failed(String),
}

impl SendState {
    /// `data-send-state` value.
    pub fn as_str(&self) -> &'static str {
        match self {
            SendState::Pending => "pending",
            SendState::Sent => "sent",
            SendState::Confirmed => "confirmed",
            SendState::Failed(_) => "failed",
        }
    }
}

/// A user row.
#[derive(Clone, Debug, PartialEq)]
pub struct UserMsg {
    /// The message uuid (the client's own for prompts).
    pub uuid: String,
    /// The text (for a coalesced replay, only this prompt's part).
    pub text: String,
    /// Its images.
    pub images: Vec<super::attachment::UserImage>,
    /// Where it came from.
    pub origin: UserOrigin,
    /// Delivery state.
    pub send: SendState,
    /// Last `command_lifecycle` state (`queued`, `started`, `completed`, `cancelled` …).
    pub lifecycle: Option<String>,
    /// The CLI answered this prompt together with the previous one (queued prompts are coalesced).
    pub coalesced: bool,
    /// `timestamp` of the CLI's replay, when there was one.
    pub timestamp: Option<String>,
}

/// One content block of an assistant message.
#[derive(Clone, Debug, PartialEq)]
pub enum Block {
    /// Markdown text.
    Text(String),
    /// Thinking text.
    Thinking(String),
    /// Redacted thinking (nothing to show but its presence).
    RedactedThinking,
    /// A tool call; the card is in [`crate::state::Session::tool`] under this id.
    ToolUse(String),
    /// Any other block type, kept whole.
    Other(Value),
}

/// A block and where it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Slot {
    /// Stream index (`content_block_start.index`), when it was streamed.
    pub index: Option<u64>,
    /// The durable `assistant` frame for this block has arrived (it replaced the streamed state).
    pub durable: bool,
    /// Still receiving deltas.
    pub open: bool,
    /// The block.
    pub block: Block,
}

/// An assistant message row.
#[derive(Clone, Debug, PartialEq)]
pub struct AssistantMsg {
    /// API message id (`msg_…`), shared by the per-block durable frames.
    pub message_id: String,
    /// uuid of the first durable frame (the row's `data-uuid`).
    pub uuid: Option<String>,
    /// Model that wrote it (`<synthetic>` for CLI-made error messages).
    pub model: Option<String>,
    /// Blocks in order.
    pub blocks: Vec<Slot>,
    /// Deltas are still arriving.
    pub streaming: bool,
    /// Stop reason, when known.
    pub stop_reason: Option<String>,
    /// `error` of a synthetic API-error message (`server_error`, `rate_limit` …).
    pub error: Option<String>,
}

/// State of a tool card.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToolStatus {
    /// Its input is still streaming in.
    Streaming,
    /// Waiting for a permission answer.
    PendingPermission,
    /// Allowed (or not needing permission) and not finished.
    Running,
    /// Finished without error.
    Done,
    /// Finished with an error result.
    Error,
    /// Permission was denied.
    Denied,
}

impl ToolStatus {
    /// `data-status` value.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolStatus::Streaming => "streaming",
            ToolStatus::PendingPermission => "pending-permission",
            ToolStatus::Running => "running",
            ToolStatus::Done => "done",
            ToolStatus::Error => "error",
            ToolStatus::Denied => "denied",
        }
    }
}

/// The result of a tool call.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolOutput {
    /// The tool_result content as text.
    pub text: String,
    /// `is_error`.
    pub is_error: bool,
    /// `tool_use_result` (structured output), when given.
    pub structured: Option<Value>,
}

/// Background-task information attached to a tool call (`system/task_*`).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct TaskInfo {
    /// Task id.
    pub task_id: String,
    /// Description.
    pub description: Option<String>,
    /// Last status (`running`, `completed`, `failed` …).
    pub status: Option<String>,
    /// Summary from `task_notification` / `task_progress`.
    pub summary: Option<String>,
}

/// A tool call card.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCall {
    /// `tool_use_id`.
    pub id: String,
    /// Tool name as on the wire (`Bash`, `Edit`, `Agent`, `mcp__server__tool` …).
    pub name: String,
    /// Key of the row that holds the card.
    pub owner: Key,
    /// The input as the model proposed it (durable frame, or the streamed JSON once complete).
    pub input: Value,
    /// Raw streamed `input_json_delta` text while it is incomplete.
    pub partial_json: String,
    /// `input` is complete.
    pub input_complete: bool,
    /// The input that actually ran, when a person edited it in the permission dialog.
    pub ran_input: Option<Value>,
    /// Status.
    pub status: ToolStatus,
    /// `tool_progress.elapsed_time_seconds`.
    pub progress_secs: Option<f64>,
    /// The result, once it came.
    pub output: Option<ToolOutput>,
    /// Permission request id, if one was asked.
    pub permission_request: Option<String>,
    /// Deny message, when denied.
    pub deny_message: Option<String>,
    /// Rows of the subagent this call started (frames with `parent_tool_use_id` = this id).
    pub children: Vec<Key>,
    /// Background task state.
    pub task: Option<TaskInfo>,
}

impl ToolCall {
    /// The input to show: what ran if it was edited, else the proposed input, else the best parse
    /// of the partial JSON streamed so far.
    pub fn display_input(&self) -> Value {
        if let Some(ran) = &self.ran_input {
            return ran.clone();
        }
        if self.input_complete || self.partial_json.is_empty() {
            return self.input.clone();
        }
        super::partial_json::repair(&self.partial_json).unwrap_or(Value::Object(Default::default()))
    }

    /// True when a person changed the input before allowing it.
    pub fn edited(&self) -> bool {
        self.ran_input.is_some()
    }
}

/// A shown system frame.
#[derive(Clone, Debug, PartialEq)]
pub struct SystemRow {
    /// Its uuid.
    pub uuid: Option<String>,
    /// What it says.
    pub kind: SystemKind,
}

/// Kinds of system row.
#[derive(Clone, Debug, PartialEq)]
pub enum SystemKind {
    /// `system/init` (shown for the first turn and whenever model, mode or cwd changed).
    Init {
        /// Model.
        model: String,
        /// Working directory.
        cwd: String,
        /// Tools.
        tools: Vec<String>,
        /// Permission mode.
        permission_mode: String,
        /// CLI version.
        version: String,
    },
    /// `system/compact_boundary`.
    CompactBoundary {
        /// `manual` or `auto`.
        trigger: String,
        /// Tokens before.
        pre_tokens: Option<u64>,
        /// Tokens after.
        post_tokens: Option<u64>,
    },
    /// `system/api_retry`.
    ApiRetry {
        /// Attempt number.
        attempt: u64,
        /// Max retries.
        max_retries: u64,
        /// Delay before the retry.
        delay_ms: u64,
        /// Error kind.
        error: String,
        /// HTTP status.
        status: Option<u64>,
    },
    /// `rate_limit_event`.
    RateLimit {
        /// `allowed`, `allowed_warning` or `rejected`.
        status: String,
        /// Which limit.
        limit_type: Option<String>,
        /// Reset time (unix seconds).
        resets_at: Option<f64>,
        /// Utilization 0..1.
        utilization: Option<f64>,
    },
    /// The session ended (relay: agent exit or crash).
    Ended {
        /// Exit code.
        exit_code: Option<i64>,
        /// Signal.
        signal: Option<i64>,
        /// Tail of stderr.
        stderr_tail: String,
    },
    /// `system/informational` and other short notices: a title, a body and a level.
    Notice {
        /// Short label (`informational`, `hook PreToolUse`, `task completed` …).
        title: String,
        /// Text.
        text: String,
        /// `info`, `notice`, `warning`, `error`.
        level: String,
    },
}

impl SystemKind {
    /// A [`SystemKind::Notice`].
    pub fn notice(title: impl Into<String>, text: String, level: &str) -> Self {
        SystemKind::Notice {
            title: title.into(),
            text,
            level: level.to_string(),
        }
    }
}

/// The turn footer.
#[derive(Clone, Debug, PartialEq)]
pub struct ResultRow {
    /// uuid.
    pub uuid: Option<String>,
    /// `success`, `error_during_execution`, …
    pub subtype: String,
    /// `is_error` (true also for API errors inside `success`).
    pub is_error: bool,
    /// `terminal_reason`.
    pub terminal_reason: Option<String>,
    /// `api_error_status`.
    pub api_error_status: Option<u64>,
    /// `duration_ms`.
    pub duration_ms: Option<f64>,
    /// `duration_api_ms`.
    pub duration_api_ms: Option<f64>,
    /// `num_turns`.
    pub num_turns: Option<u64>,
    /// Input tokens (incl. cache reads and writes); `None` when the result has no `usage` (the
    /// result that closes a replayed terminal session's history): unknown, not zero.
    pub input_tokens: Option<u64>,
    /// Output tokens (`None` as above).
    pub output_tokens: Option<u64>,
    /// Cost of this turn (USD).
    pub turn_cost: f64,
    /// The session's running total after this turn (USD).
    pub session_cost: f64,
    /// `errors` of an error result, or the `result` text of an error `success`.
    pub errors: Vec<String>,
    /// Number of `permission_denials`.
    pub denials: usize,
}

/// An unknown frame, kept whole.
#[derive(Clone, Debug, PartialEq)]
pub struct RawRow {
    /// uuid, if it had one.
    pub uuid: Option<String>,
    /// `type[/subtype]` label.
    pub label: String,
    /// The JSON, pretty-printed.
    pub json: String,
}
