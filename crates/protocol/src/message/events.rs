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
        #[serialize_always]
        pub parent_tool_use_id: Option<String>,
        /// Internal, on every live frame: the `msg_…` id of the response.
        pub api_message_id: Option<String>,
        /// Internal, on a CLI-synthesised `message_stop` after a cut-short stream.
        pub abandoned_blocks: Option<AbandonedBlocks>,
        pub ttft_ms: Option<Number>,
        pub user_message_uuid: Option<String>,
        pub user_message_uuids: Option<Vec<String>>,
        pub resume_reason: Option<String>,
        pub uuid: String,
        pub session_id: String,
    }

    /// `tool_progress`.
    pub struct ToolProgressMessage {
        pub tool_use_id: String,
        pub tool_name: String,
        #[serialize_always]
        pub parent_tool_use_id: Option<String>,
        pub elapsed_time_seconds: Number,
        pub task_id: Option<String>,
        pub heartbeat: Option<bool>,
        pub subagent_type: Option<String>,
        #[serde(default, deserialize_with = "present")]
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
        #[serde(rename = "resetsAt")]
        pub resets_at: Option<Number>,
        #[serde(rename = "rateLimitType")]
        pub rate_limit_type: Option<String>,
        pub utilization: Option<Number>,
        #[serde(rename = "overageStatus")]
        pub overage_status: Option<RateLimitStatus>,
        #[serde(rename = "overageResetsAt")]
        pub overage_resets_at: Option<Number>,
        #[serde(rename = "overageDisabledReason")]
        pub overage_disabled_reason: Option<String>,
        #[serde(rename = "isUsingOverage")]
        pub is_using_overage: Option<bool>,
        #[serde(rename = "surpassedThreshold")]
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
        pub trigger: Option<String>,
        pub user_message_uuid: Option<String>,
        pub timestamp: Option<String>,
        pub uuid: String,
        pub session_id: String,
    }

    /// `active_goal`.
    pub struct ActiveGoalMessage {
        #[serialize_always]
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
        pub last_reason: Option<String>,
    }

    /// `keep_alive` (either direction; ignore). May carry a `startup_mark`.
    #[derive(Default)]
    pub struct KeepAlive {
        pub startup_mark: Option<String>,
    }

    /// `command_lifecycle` (internal): progress of a client `user` message that had a `uuid`.
    pub struct CommandLifecycleMessage {
        /// The client message `uuid`.
        pub command_uuid: String,
        pub state: CommandState,
        #[serde(default, deserialize_with = "present")]
        pub wakeup_source: Option<Value>,
        #[serde(default, deserialize_with = "present")]
        pub scheduled_for: Option<Value>,
        pub uuid: String,
        pub session_id: String,
    }

    /// `update_environment_variables` (client → CLI). Only allowlisted token variables are applied;
    /// with a `request_id` the CLI answers `{applied:[…]}`.
    #[derive(Default)]
    pub struct UpdateEnvironmentVariables {
        pub variables: BTreeMap<String, String>,
        pub request_id: Option<String>,
    }
}
