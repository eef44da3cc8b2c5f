//! `system` subtypes about background tasks and everything after them in PROTOCOL.md §4.2:
//! task lifecycle, thinking tokens, state changes, notifications, files, memory, elicitation,
//! permission denials.

use serde_json::{Number, Value};

use crate::control::SlashCommand;
use crate::extra::open_struct;
use crate::values::{DecisionReasonType, InformationalLevel, SessionState, TaskStatus};

open_struct! {
    /// `system/task_notification`: a background task ended.
    pub struct SystemTaskNotification {
        pub task_id: String,
        pub run_id: Option<String>,
        pub tool_use_id: Option<String>,
        pub status: TaskStatus,
        pub reason: Option<String>,
        pub output_file: String,
        pub summary: String,
        pub usage: Option<TaskUsage>,
        pub resource_links: Option<Vec<Value>>,
        pub skip_transcript: Option<bool>,
        pub ambient: Option<bool>,
        pub uuid: String,
        pub session_id: String,
    }

    /// Usage of a background task.
    pub struct TaskUsage {
        pub total_tokens: u64,
        pub tool_uses: u64,
        pub duration_ms: Number,
    }

    /// `system/task_started`: a subagent, background Bash or workflow task started.
    pub struct SystemTaskStarted {
        pub task_id: String,
        pub run_id: Option<String>,
        pub tool_use_id: Option<String>,
        pub description: String,
        pub subagent_type: Option<String>,
        pub is_backgrounded: Option<bool>,
        pub spawn_depth: Option<u64>,
        pub parent_task_id: Option<String>,
        pub task_type: Option<String>,
        pub workflow_name: Option<String>,
        pub prompt: Option<String>,
        pub skip_transcript: Option<bool>,
        pub ambient: Option<bool>,
        pub uuid: String,
        pub session_id: String,
    }

    /// `system/task_updated`.
    pub struct SystemTaskUpdated {
        pub task_id: String,
        pub run_id: Option<String>,
        pub patch: TaskPatch,
        pub uuid: String,
        pub session_id: String,
    }

    /// `task_updated.patch`.
    #[derive(Default)]
    pub struct TaskPatch {
        pub status: Option<TaskStatus>,
        pub description: Option<String>,
        pub end_time: Option<Number>,
        pub total_paused_ms: Option<Number>,
        pub error: Option<String>,
        pub is_backgrounded: Option<bool>,
    }

    /// `system/task_progress`.
    pub struct SystemTaskProgress {
        pub task_id: String,
        pub run_id: Option<String>,
        pub tool_use_id: Option<String>,
        pub description: String,
        pub subagent_type: Option<String>,
        pub usage: TaskUsage,
        pub last_tool_name: Option<String>,
        pub summary: Option<String>,
        pub uuid: String,
        pub session_id: String,
    }

    /// `system/background_tasks_changed`.
    pub struct SystemBackgroundTasksChanged {
        pub tasks: Vec<BackgroundTask>,
        pub uuid: String,
        pub session_id: String,
    }

    /// An entry of `background_tasks_changed.tasks`.
    pub struct BackgroundTask {
        pub task_id: String,
        pub run_id: Option<String>,
        pub task_type: String,
        pub subagent_type: Option<String>,
        pub description: String,
        pub parent_task_id: Option<String>,
        pub ambient: Option<bool>,
    }

    /// `system/thinking_tokens` (ephemeral): accompanies every `thinking_delta`.
    pub struct SystemThinkingTokens {
        pub estimated_tokens: u64,
        pub estimated_tokens_delta: i64,
        pub user_message_uuid: Option<String>,
        pub uuid: String,
        pub session_id: String,
    }

    /// `system/session_state_changed`. The relay also emits it with `state:"ended"`, `exit_code`,
    /// `signal` and `stderr_tail` (kept in `extra`) when the agent exits.
    pub struct SystemSessionStateChanged {
        pub state: SessionState,
        pub uuid: String,
        pub session_id: String,
    }

    /// `system/worker_shutting_down`.
    pub struct SystemWorkerShuttingDown {
        pub reason: String,
        pub uuid: String,
        pub session_id: String,
    }

    /// `system/commands_changed` (ephemeral).
    pub struct SystemCommandsChanged {
        pub commands: Vec<SlashCommand>,
        pub uuid: String,
        pub session_id: String,
    }

    /// `system/notification`.
    pub struct SystemNotification {
        pub key: String,
        pub text: String,
        pub priority: String,
        pub color: Option<String>,
        pub timeout_ms: Option<Number>,
        pub uuid: String,
        pub session_id: String,
    }

    /// `system/files_persisted`.
    pub struct SystemFilesPersisted {
        pub files: Vec<Value>,
        pub failed: Vec<Value>,
        pub processed_at: String,
        pub uuid: String,
        pub session_id: String,
    }

    /// `system/memory_recall`.
    pub struct SystemMemoryRecall {
        pub mode: String,
        pub memories: Vec<Value>,
        pub uuid: String,
        pub session_id: String,
    }

    /// `system/elicitation_complete`.
    pub struct SystemElicitationComplete {
        pub mcp_server_name: String,
        pub elicitation_id: String,
        pub uuid: String,
        pub session_id: String,
    }

    /// `system/permission_denied`: a tool call was denied without asking the client.
    pub struct SystemPermissionDenied {
        pub tool_name: String,
        pub tool_use_id: String,
        pub message: String,
        pub agent_id: Option<String>,
        pub decision_reason_type: Option<DecisionReasonType>,
        pub decision_reason: Option<String>,
        pub uuid: String,
        pub session_id: String,
    }

    /// `system/mirror_error`.
    pub struct SystemMirrorError {
        pub error: String,
        pub key: Value,
        pub uuid: String,
        pub session_id: String,
    }

    /// `system/informational`.
    pub struct SystemInformational {
        pub content: String,
        pub level: InformationalLevel,
        pub tool_use_id: Option<String>,
        pub prevent_continuation: Option<bool>,
        pub tag: Option<String>,
        pub uuid: String,
        pub session_id: String,
    }

    /// `system/session_writes_lost`.
    pub struct SystemSessionWritesLost {
        pub error_code: String,
        pub lost: Vec<String>,
        pub transcript_session_ids: Option<Vec<String>>,
        pub uuid: String,
        pub session_id: String,
    }
}
