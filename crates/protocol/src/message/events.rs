//! The CLI's other stdout messages: stream events, tool progress, auth and rate-limit status,
//! suggestions, resets, goals, keep-alives, command lifecycle and environment updates.

use std::collections::BTreeMap;

use serde_json::{Number, Value};

use crate::extra::open_struct;
use crate::stream::{AbandonedBlocks, StreamEvent};
use crate::util::present;
use crate::values::{CommandState, RateLimitStatus};

open_struct! {
    /// `stream_event` (ephemeral): one Messages-API stream event.
    pub struct StreamEventMessage {
        pub event: StreamEvent,
        pub parent_tool_use_id: Option<String>,
        /// Internal, on every live frame: the `msg_…` id of the response.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub api_message_id: Option<String>,
        /// Internal, on a CLI-synthesised `message_stop` after a cut-short stream.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub abandoned_blocks: Option<AbandonedBlocks>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub ttft_ms: Option<Number>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub user_message_uuid: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub user_message_uuids: Option<Vec<String>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub resume_reason: Option<String>,
        pub uuid: String,
        pub session_id: String,
    }

    /// `tool_progress`.
    pub struct ToolProgressMessage {
        pub tool_use_id: String,
        pub tool_name: String,
        pub parent_tool_use_id: Option<String>,
        pub elapsed_time_seconds: Number,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub task_id: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub heartbeat: Option<bool>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub subagent_type: Option<String>,
        #[serde(
            default,
            deserialize_with = "present",
            skip_serializing_if = "Option::is_none"
        )]
        pub subagent_retry: Option<Value>,
        pub uuid: String,
        pub session_id: String,
    }

    /// `tool_use_summary`.
    pub struct ToolUseSummaryMessage {
        pub summary: String,
        pub preceding_tool_use_ids: Vec<String>,
        pub uuid: String,
        pub session_id: String,
    }

    /// `auth_status` (only with `--enable-auth-status`).
    pub struct AuthStatusMessage {
        #[serde(rename = "isAuthenticating")]
        pub is_authenticating: bool,
        pub output: Vec<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub error: Option<String>,
        pub uuid: String,
        pub session_id: String,
    }

    /// `rate_limit_event` (subscriber auth only).
    pub struct RateLimitEventMessage {
        pub rate_limit_info: RateLimitInfo,
        pub uuid: String,
        pub session_id: String,
    }

    /// `SDKRateLimitInfo` (the rarer overage fields stay in `extra`).
    pub struct RateLimitInfo {
        pub status: RateLimitStatus,
        #[serde(rename = "resetsAt", skip_serializing_if = "Option::is_none")]
        pub resets_at: Option<Number>,
        #[serde(rename = "rateLimitType", skip_serializing_if = "Option::is_none")]
        pub rate_limit_type: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub utilization: Option<Number>,
        #[serde(rename = "overageStatus", skip_serializing_if = "Option::is_none")]
        pub overage_status: Option<RateLimitStatus>,
        #[serde(rename = "overageResetsAt", skip_serializing_if = "Option::is_none")]
        pub overage_resets_at: Option<Number>,
        #[serde(
            rename = "overageDisabledReason",
            skip_serializing_if = "Option::is_none"
        )]
        pub overage_disabled_reason: Option<String>,
        #[serde(rename = "isUsingOverage", skip_serializing_if = "Option::is_none")]
        pub is_using_overage: Option<bool>,
        #[serde(rename = "surpassedThreshold", skip_serializing_if = "Option::is_none")]
        pub surpassed_threshold: Option<Number>,
    }

    /// `prompt_suggestion`.
    pub struct PromptSuggestionMessage {
        pub suggestion: String,
        pub uuid: String,
        pub session_id: String,
    }

    /// `conversation_reset` (`/clear`, plan-mode exit, …).
    pub struct ConversationResetMessage {
        pub new_conversation_id: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub trigger: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub user_message_uuid: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub timestamp: Option<String>,
        pub uuid: String,
        pub session_id: String,
    }

    /// `active_goal`.
    pub struct ActiveGoalMessage {
        pub value: Option<ActiveGoal>,
        pub uuid: String,
        pub session_id: String,
    }

    /// `active_goal.value`.
    pub struct ActiveGoal {
        pub condition: String,
        pub iterations: u64,
        pub set_at: Number,
        pub tokens_at_start: u64,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub last_reason: Option<String>,
    }

    /// `keep_alive` (either direction; ignore). May carry a `startup_mark`.
    #[derive(Default)]
    pub struct KeepAlive {
        #[serde(skip_serializing_if = "Option::is_none")]
        pub startup_mark: Option<String>,
    }

    /// `command_lifecycle` (internal): progress of a client `user` message that had a `uuid`.
    pub struct CommandLifecycleMessage {
        /// The client message `uuid`.
        pub command_uuid: String,
        pub state: CommandState,
        #[serde(
            default,
            deserialize_with = "present",
            skip_serializing_if = "Option::is_none"
        )]
        pub wakeup_source: Option<Value>,
        #[serde(
            default,
            deserialize_with = "present",
            skip_serializing_if = "Option::is_none"
        )]
        pub scheduled_for: Option<Value>,
        pub uuid: String,
        pub session_id: String,
    }

    /// `update_environment_variables` (client → CLI). Only allowlisted token variables are applied;
    /// with a `request_id` the CLI answers `{applied:[…]}`.
    #[derive(Default)]
    pub struct UpdateEnvironmentVariables {
        pub variables: BTreeMap<String, String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub request_id: Option<String>,
    }
}
