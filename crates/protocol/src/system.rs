//! `type:"system"` messages, keyed by `subtype`.

mod session;
mod tasks;

pub use session::*;
pub use tasks::*;

use serde_json::{Map, Value};

use crate::util::tagged_union;

tagged_union! {
    /// A `system` message. Every public subtype (PROTOCOL.md §4.2) is typed; the internal subtypes
    /// a plain stdio session emits (§9, [`SystemMessage::INTERNAL_SUBTYPES`]) are kept whole in
    /// [`SystemMessage::Internal`]. Through [`crate::CliMessage`], any other subtype becomes
    /// [`crate::CliMessage::Unknown`].
    pub enum SystemMessage (tag = "subtype", body_of = "system") {
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
        self.envelope().uuid
    }

    /// The frame's `session_id`.
    pub fn session_id(&self) -> Option<&str> {
        self.envelope().session_id
    }

    /// The fields this crate does not model (the whole object for [`SystemMessage::Internal`];
    /// `None` when that is not an object).
    pub fn extra(&self) -> Option<&Map<String, Value>> {
        self.envelope().extra
    }

    /// What every subtype carries: `uuid`, `session_id` and the unmodelled fields, read with
    /// one match over the subtypes.
    pub fn envelope(&self) -> SystemEnvelope<'_> {
        macro_rules! pick {
            ($($variant:ident),+ $(,)?) => {
                match self {
                    $( Self::$variant(m) => SystemEnvelope {
                        uuid: Some(&m.uuid),
                        session_id: Some(&m.session_id),
                        extra: Some(&m.extra),
                    }, )+
                    Self::Internal(raw) => SystemEnvelope {
                        uuid: raw.get("uuid").and_then(Value::as_str),
                        session_id: raw.get("session_id").and_then(Value::as_str),
                        extra: raw.as_object(),
                    },
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
            SessionWritesLost,
        )
    }
}

/// The fields every `system` message shares ([`SystemMessage::envelope`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SystemEnvelope<'a> {
    /// `uuid`.
    pub uuid: Option<&'a str>,
    /// `session_id`.
    pub session_id: Option<&'a str>,
    /// The fields not modelled by the subtype's struct (for an internal subtype: the whole object).
    pub extra: Option<&'a Map<String, Value>>,
}
