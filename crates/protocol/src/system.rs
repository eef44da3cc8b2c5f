//! `type:"system"` messages, keyed by `subtype`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};

use crate::control::SlashCommand;
use crate::util::{present, tagged_union};
use crate::values::{
    AssistantMessageError, DecisionReasonType, FastModeState, HookEvent, HookOutcome,
    InformationalLevel, PermissionMode, SessionState, StatusKind, TaskStatus,
};

tagged_union! {
    /// A `system` message. Every public subtype (PROTOCOL.md §4.2) is typed; the internal subtypes
    /// a plain stdio session emits (§9, [`SystemMessage::INTERNAL_SUBTYPES`]) are kept whole in
    /// [`SystemMessage::Internal`]. Through [`crate::CliMessage`], any other subtype becomes
    /// [`crate::CliMessage::Unknown`].
    pub enum SystemMessage (tag = "subtype") {
        "init" => Init(SystemInit),
        "status" => Status(SystemStatus),
        "compact_boundary" => CompactBoundary(SystemCompactBoundary),
        "api_retry" => ApiRetry(SystemApiRetry),
        "control_request_progress" => ControlRequestProgress(SystemControlRequestProgress),
        "model_refusal_fallback" => ModelRefusalFallback(SystemModelRefusalFallback),
        "model_refusal_no_fallback" => ModelRefusalNoFallback(SystemModelRefusalNoFallback),
        "local_command_output" => LocalCommandOutput(SystemLocalCommandOutput),
        "hook_started" => HookStarted(SystemHookStarted),
        "hook_progress" => HookProgress(SystemHookProgress),
        "hook_response" => HookResponse(SystemHookResponse),
        "plugin_install" => PluginInstall(SystemPluginInstall),
        "task_notification" => TaskNotification(SystemTaskNotification),
        "task_started" => TaskStarted(SystemTaskStarted),
        "task_updated" => TaskUpdated(SystemTaskUpdated),
        "task_progress" => TaskProgress(SystemTaskProgress),
        "background_tasks_changed" => BackgroundTasksChanged(SystemBackgroundTasksChanged),
        "thinking_tokens" => ThinkingTokens(SystemThinkingTokens),
        "session_state_changed" => SessionStateChanged(SystemSessionStateChanged),
        "worker_shutting_down" => WorkerShuttingDown(SystemWorkerShuttingDown),
        "commands_changed" => CommandsChanged(SystemCommandsChanged),
        "notification" => Notification(SystemNotification),
        "files_persisted" => FilesPersisted(SystemFilesPersisted),
        "memory_recall" => MemoryRecall(SystemMemoryRecall),
        "elicitation_complete" => ElicitationComplete(SystemElicitationComplete),
        "permission_denied" => PermissionDenied(SystemPermissionDenied),
        "mirror_error" => MirrorError(SystemMirrorError),
        "informational" => Informational(SystemInformational),
        "session_writes_lost" => SessionWritesLost(SystemSessionWritesLost),
        _ => Internal,
    }
}

impl SystemMessage {
    /// Internal subtypes of the CLI's stdout union (PROTOCOL.md §9), recognised and kept whole.
    /// Any `ui_*` subtype is recognised too.
    pub const INTERNAL_SUBTYPES: &'static [&'static str] = &[
        "post_turn_summary",
        "task_summary",
        "session_metadata",
        "inherited_asks_settled",
        "late_allow_not_run",
        "code_change_published",
        "vcs_state_changed",
        "shell_cwd",
        "feedback_draft_queued",
        "cloud_session_delta",
        "dev_intent",
        "task_list_statuses",
        "session_title_changed",
        "turn_handoff_available",
        "turn_preempted",
        "peer_message_hold",
        "per_turn_effort_changed",
        "permission_check_status",
        "instruction_size_warning",
        "file_attachments_missing",
    ];

    /// Subtypes the relay does not store (they are high-frequency or superseded quickly).
    pub const EPHEMERAL_SUBTYPES: &'static [&'static str] = &[
        "thinking_tokens",
        "post_turn_summary",
        "task_summary",
        "commands_changed",
    ];

    /// `true` if `subtype` is a public or internal subtype this crate recognises.
    pub fn is_recognised_subtype(subtype: &str) -> bool {
        Self::KNOWN_TAGS.contains(&subtype)
            || Self::INTERNAL_SUBTYPES.contains(&subtype)
            || subtype.starts_with("ui_")
    }

    /// The `subtype` string.
    pub fn subtype(&self) -> &str {
        self.tag()
    }

    /// `true` for the subtypes the relay treats as ephemeral.
    pub fn is_ephemeral(&self) -> bool {
        Self::EPHEMERAL_SUBTYPES.contains(&self.subtype())
    }

    /// The frame's `uuid`.
    pub fn uuid(&self) -> Option<&str> {
        self.envelope_str("uuid")
    }

    /// The frame's `session_id`.
    pub fn session_id(&self) -> Option<&str> {
        self.envelope_str("session_id")
    }

    fn envelope_str(&self, key: &str) -> Option<&str> {
        macro_rules! pick {
            ($($variant:ident),+) => {
                match self {
                    $( Self::$variant(message) => Some(if key == "uuid" { &message.uuid } else { &message.session_id }), )+
                    Self::Internal(raw) => raw.get(key).and_then(Value::as_str),
                }
            };
        }
        pick!(
            Init,
            Status,
            CompactBoundary,
            ApiRetry,
            ControlRequestProgress,
            ModelRefusalFallback,
            ModelRefusalNoFallback,
            LocalCommandOutput,
            HookStarted,
            HookProgress,
            HookResponse,
            PluginInstall,
            TaskNotification,
            TaskStarted,
            TaskUpdated,
            TaskProgress,
            BackgroundTasksChanged,
            ThinkingTokens,
            SessionStateChanged,
            WorkerShuttingDown,
            CommandsChanged,
            Notification,
            FilesPersisted,
            MemoryRecall,
            ElicitationComplete,
            PermissionDenied,
            MirrorError,
            Informational,
            SessionWritesLost
        )
    }
}

/// `system/init`: sent at the start of every turn (tools, model, permission mode, …).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemInit {
    pub cwd: String,
    pub model: String,
    /// The permission mode in effect.
    #[serde(rename = "permissionMode")]
    pub permission_mode: PermissionMode,
    pub tools: Vec<String>,
    pub mcp_servers: Vec<McpServerInfo>,
    pub slash_commands: Vec<String>,
    #[serde(rename = "apiKeySource")]
    pub api_key_source: String,
    pub claude_code_version: String,
    pub output_style: String,
    pub skills: Vec<String>,
    pub plugins: Vec<PluginInfo>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agents: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub betas: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub terminal_slash_commands: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plugin_errors: Option<Vec<Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fast_mode_state: Option<FastModeState>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fast_mode_disabled_reason: Option<String>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub effort: Option<Option<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub view_mode: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<Vec<String>>,
    /// The prompts this turn answers (observed, internal).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_message_uuids: Option<Vec<String>>,
    pub uuid: String,
    pub session_id: String,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// An entry of `system/init.mcp_servers`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpServerInfo {
    pub name: String,
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// An entry of `system/init.plugins`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PluginInfo {
    pub name: String,
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `system/status`: `requesting` before each model request, `compacting`, or `null` with a new
/// `permissionMode` after `set_permission_mode`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemStatus {
    pub status: Option<StatusKind>,
    #[serde(rename = "permissionMode", skip_serializing_if = "Option::is_none")]
    pub permission_mode: Option<PermissionMode>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compact_result: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compact_error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_message_uuids: Option<Vec<String>>,
    pub uuid: String,
    pub session_id: String,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `system/compact_boundary`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemCompactBoundary {
    pub compact_metadata: CompactMetadata,
    pub uuid: String,
    pub session_id: String,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `compact_boundary.compact_metadata` (segment details stay in `extra`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompactMetadata {
    pub trigger: String,
    pub pre_tokens: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub post_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<Number>,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `system/api_retry`: the CLI is retrying a failed API request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemApiRetry {
    pub attempt: u64,
    pub max_retries: u64,
    pub retry_delay_ms: Number,
    pub error_status: Option<u16>,
    pub error: AssistantMessageError,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub no_response: Option<Value>,
    pub uuid: String,
    pub session_id: String,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `system/control_request_progress`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemControlRequestProgress {
    pub request_id: String,
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_retries: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_delay_ms: Option<Number>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub error_status: Option<Option<u16>>,
    pub uuid: String,
    pub session_id: String,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `system/model_refusal_fallback`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemModelRefusalFallback {
    pub trigger: String,
    pub direction: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    pub original_model: String,
    pub fallback_model: String,
    pub request_id: Option<String>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub api_refusal_category: Option<Option<String>>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub api_refusal_explanation: Option<Option<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retracted_message_uuids: Option<Vec<String>>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub refused_user_message_uuid: Option<Option<String>>,
    pub content: String,
    pub uuid: String,
    pub session_id: String,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `system/model_refusal_no_fallback`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemModelRefusalNoFallback {
    pub original_model: String,
    pub request_id: Option<String>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub api_refusal_category: Option<Option<String>>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub api_refusal_explanation: Option<Option<String>>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub refused_user_message_uuid: Option<Option<String>>,
    pub content: String,
    pub uuid: String,
    pub session_id: String,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `system/local_command_output`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemLocalCommandOutput {
    pub content: String,
    pub uuid: String,
    pub session_id: String,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `system/hook_started`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemHookStarted {
    pub hook_id: String,
    pub hook_name: String,
    pub hook_event: HookEvent,
    pub uuid: String,
    pub session_id: String,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `system/hook_progress`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemHookProgress {
    pub hook_id: String,
    pub hook_name: String,
    pub hook_event: HookEvent,
    pub stdout: String,
    pub stderr: String,
    pub output: String,
    pub uuid: String,
    pub session_id: String,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `system/hook_response`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemHookResponse {
    pub hook_id: String,
    pub hook_name: String,
    pub hook_event: HookEvent,
    pub output: String,
    pub stdout: String,
    pub stderr: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i64>,
    pub outcome: HookOutcome,
    pub uuid: String,
    pub session_id: String,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `system/plugin_install`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemPluginInstall {
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub uuid: String,
    pub session_id: String,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `system/task_notification`: a background task ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemTaskNotification {
    pub task_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    pub status: TaskStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub output_file: String,
    pub summary: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<TaskUsage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_links: Option<Vec<Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skip_transcript: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ambient: Option<bool>,
    pub uuid: String,
    pub session_id: String,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Usage of a background task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskUsage {
    pub total_tokens: u64,
    pub tool_uses: u64,
    pub duration_ms: Number,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `system/task_started`: a subagent, background Bash or workflow task started.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemTaskStarted {
    pub task_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    pub description: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subagent_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_backgrounded: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spawn_depth: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_task_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workflow_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skip_transcript: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ambient: Option<bool>,
    pub uuid: String,
    pub session_id: String,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `system/task_updated`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemTaskUpdated {
    pub task_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    pub patch: TaskPatch,
    pub uuid: String,
    pub session_id: String,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `task_updated.patch`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct TaskPatch {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<TaskStatus>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_time: Option<Number>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_paused_ms: Option<Number>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_backgrounded: Option<bool>,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `system/task_progress`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemTaskProgress {
    pub task_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    pub description: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subagent_type: Option<String>,
    pub usage: TaskUsage,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_tool_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    pub uuid: String,
    pub session_id: String,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `system/background_tasks_changed`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemBackgroundTasksChanged {
    pub tasks: Vec<BackgroundTask>,
    pub uuid: String,
    pub session_id: String,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// An entry of `background_tasks_changed.tasks`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BackgroundTask {
    pub task_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    pub task_type: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subagent_type: Option<String>,
    pub description: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_task_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ambient: Option<bool>,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `system/thinking_tokens` (ephemeral): accompanies every `thinking_delta`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemThinkingTokens {
    pub estimated_tokens: u64,
    pub estimated_tokens_delta: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_message_uuid: Option<String>,
    pub uuid: String,
    pub session_id: String,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `system/session_state_changed`. The relay also emits it with `state:"ended"`, `exit_code`,
/// `signal` and `stderr_tail` (kept in `extra`) when the agent exits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemSessionStateChanged {
    pub state: SessionState,
    pub uuid: String,
    pub session_id: String,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `system/worker_shutting_down`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemWorkerShuttingDown {
    pub reason: String,
    pub uuid: String,
    pub session_id: String,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `system/commands_changed` (ephemeral).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemCommandsChanged {
    pub commands: Vec<SlashCommand>,
    pub uuid: String,
    pub session_id: String,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `system/notification`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemNotification {
    pub key: String,
    pub text: String,
    pub priority: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub color: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<Number>,
    pub uuid: String,
    pub session_id: String,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `system/files_persisted`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemFilesPersisted {
    pub files: Vec<Value>,
    pub failed: Vec<Value>,
    pub processed_at: String,
    pub uuid: String,
    pub session_id: String,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `system/memory_recall`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemMemoryRecall {
    pub mode: String,
    pub memories: Vec<Value>,
    pub uuid: String,
    pub session_id: String,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `system/elicitation_complete`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemElicitationComplete {
    pub mcp_server_name: String,
    pub elicitation_id: String,
    pub uuid: String,
    pub session_id: String,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `system/permission_denied`: a tool call was denied without asking the client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemPermissionDenied {
    pub tool_name: String,
    pub tool_use_id: String,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision_reason_type: Option<DecisionReasonType>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision_reason: Option<String>,
    pub uuid: String,
    pub session_id: String,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `system/mirror_error`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemMirrorError {
    pub error: String,
    pub key: Value,
    pub uuid: String,
    pub session_id: String,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `system/informational`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemInformational {
    pub content: String,
    pub level: InformationalLevel,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prevent_continuation: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    pub uuid: String,
    pub session_id: String,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `system/session_writes_lost`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemSessionWritesLost {
    pub error_code: String,
    pub lost: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transcript_session_ids: Option<Vec<String>>,
    pub uuid: String,
    pub session_id: String,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}
