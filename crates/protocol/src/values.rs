//! Open value sets: the values the CLI 2.1.332 documents, plus `Other(String)` for new ones.
//! Each serializes back to exactly the string it was read from.

use crate::util::open_enum;

open_enum! {
    /// `PermissionMode`. The CLI also accepts `manual` as an input alias for `default`; it is kept as
    /// `Other("manual")` (see [`PermissionMode::normalized`]).
    pub enum PermissionMode {
        Default = "default",
        AcceptEdits = "acceptEdits",
        BypassPermissions = "bypassPermissions",
        Plan = "plan",
        DontAsk = "dontAsk",
        Auto = "auto",
    }
}

impl PermissionMode {
    /// Maps the CLI's input alias `manual` to [`PermissionMode::Default`]; other values unchanged.
    pub fn normalized(self) -> Self {
        match self {
            Self::Other(alias) if alias == "manual" => Self::Default,
            other => other,
        }
    }
}

open_enum! {
    /// `BetaStopReason` (API `stop_reason`).
    pub enum StopReason {
        EndTurn = "end_turn",
        MaxTokens = "max_tokens",
        StopSequence = "stop_sequence",
        ToolUse = "tool_use",
        PauseTurn = "pause_turn",
        Compaction = "compaction",
        Refusal = "refusal",
        ModelContextWindowExceeded = "model_context_window_exceeded",
    }
}

open_enum! {
    /// `result.subtype`.
    pub enum ResultSubtype {
        Success = "success",
        ErrorDuringExecution = "error_during_execution",
        ErrorMaxTurns = "error_max_turns",
        ErrorMaxBudgetUsd = "error_max_budget_usd",
        ErrorMaxStructuredOutputRetries = "error_max_structured_output_retries",
    }
}

open_enum! {
    /// `TerminalReason` on `result`.
    pub enum TerminalReason {
        BlockingLimit = "blocking_limit",
        RapidRefillBreaker = "rapid_refill_breaker",
        PromptTooLong = "prompt_too_long",
        ImageError = "image_error",
        ModelError = "model_error",
        ApiError = "api_error",
        MalformedToolUseExhausted = "malformed_tool_use_exhausted",
        AbortedStreaming = "aborted_streaming",
        AbortedTools = "aborted_tools",
        StopHookPrevented = "stop_hook_prevented",
        HookStopped = "hook_stopped",
        ToolDeferred = "tool_deferred",
        MaxTurns = "max_turns",
        BackgroundRequested = "background_requested",
        Completed = "completed",
        BudgetExhausted = "budget_exhausted",
        StructuredOutputRetryExhausted = "structured_output_retry_exhausted",
        ToolDeferredUnavailable = "tool_deferred_unavailable",
        TurnSetupFailed = "turn_setup_failed",
    }
}

open_enum! {
    /// `SDKAssistantMessageError` (on `assistant.error` and `system/api_retry.error`).
    pub enum AssistantMessageError {
        AuthenticationFailed = "authentication_failed",
        OauthOrgNotAllowed = "oauth_org_not_allowed",
        AccountOnHold = "account_on_hold",
        VerificationRequired = "verification_required",
        BillingError = "billing_error",
        RateLimit = "rate_limit",
        Overloaded = "overloaded",
        InvalidRequest = "invalid_request",
        ModelNotFound = "model_not_found",
        ServerError = "server_error",
        Unknown = "unknown",
        MaxOutputTokens = "max_output_tokens",
        CloudCredentialError = "cloud_credential_error",
    }
}

open_enum! {
    /// `PermissionBehavior` of a permission rule update.
    pub enum PermissionBehavior {
        Allow = "allow",
        Deny = "deny",
        Ask = "ask",
    }
}

open_enum! {
    /// `PermissionUpdateDestination`: where a permission update is stored.
    pub enum PermissionUpdateDestination {
        UserSettings = "userSettings",
        ProjectSettings = "projectSettings",
        LocalSettings = "localSettings",
        Session = "session",
        CliArg = "cliArg",
    }
}

open_enum! {
    /// `PermissionDecisionClassification` on a permission answer.
    pub enum PermissionDecisionClassification {
        UserTemporary = "user_temporary",
        UserPermanent = "user_permanent",
        UserReject = "user_reject",
    }
}

open_enum! {
    /// `decision_reason_type` on `can_use_tool` and `system/permission_denied`.
    pub enum DecisionReasonType {
        Rule = "rule",
        Mode = "mode",
        SubcommandResults = "subcommandResults",
        PermissionPromptTool = "permissionPromptTool",
        Hook = "hook",
        AsyncAgent = "asyncAgent",
        SandboxOverride = "sandboxOverride",
        WorkingDir = "workingDir",
        SafetyCheck = "safetyCheck",
        Classifier = "classifier",
        /// The documented value `"other"` (not to be confused with [`Self::Other`]).
        OtherReason = "other",
    }
}

open_enum! {
    /// `system/session_state_changed.state`. The relay adds `ended` when the agent exits.
    pub enum SessionState {
        Idle = "idle",
        Running = "running",
        RequiresAction = "requires_action",
        Ended = "ended",
    }
}

open_enum! {
    /// `command_lifecycle.state` (internal frame).
    pub enum CommandState {
        Queued = "queued",
        Started = "started",
        Completed = "completed",
        Cancelled = "cancelled",
        Discarded = "discarded",
        Refused = "refused",
    }
}

open_enum! {
    /// `system/status.status` when not `null`.
    pub enum StatusKind {
        Compacting = "compacting",
        Requesting = "requesting",
    }
}

open_enum! {
    /// `system/hook_response.outcome`.
    pub enum HookOutcome {
        Success = "success",
        Error = "error",
        Cancelled = "cancelled",
    }
}

open_enum! {
    /// Status of a background task (`system/task_notification.status`, `task_updated.patch.status`).
    pub enum TaskStatus {
        Pending = "pending",
        Running = "running",
        Completed = "completed",
        Failed = "failed",
        Stopped = "stopped",
        Killed = "killed",
        Paused = "paused",
    }
}

open_enum! {
    /// `system/informational.level`.
    pub enum InformationalLevel {
        Info = "info",
        Notice = "notice",
        Suggestion = "suggestion",
        Warning = "warning",
    }
}

open_enum! {
    /// `rate_limit_info.status` / `overageStatus`.
    pub enum RateLimitStatus {
        Allowed = "allowed",
        AllowedWarning = "allowed_warning",
        Rejected = "rejected",
    }
}

open_enum! {
    /// `FastModeState`.
    pub enum FastModeState {
        Off = "off",
        Cooldown = "cooldown",
        On = "on",
    }
}

open_enum! {
    /// `HookEvent`: the event a hook callback fires for.
    pub enum HookEvent {
        PreToolUse = "PreToolUse",
        PostToolUse = "PostToolUse",
        PostToolUseFailure = "PostToolUseFailure",
        PostToolBatch = "PostToolBatch",
        Notification = "Notification",
        UserPromptSubmit = "UserPromptSubmit",
        UserPromptExpansion = "UserPromptExpansion",
        SessionStart = "SessionStart",
        SessionEnd = "SessionEnd",
        Stop = "Stop",
        StopFailure = "StopFailure",
        SubagentStart = "SubagentStart",
        SubagentStop = "SubagentStop",
        PreCompact = "PreCompact",
        PostCompact = "PostCompact",
        PreModelSwitch = "PreModelSwitch",
        PostModelSwitch = "PostModelSwitch",
        PermissionRequest = "PermissionRequest",
        PermissionDenied = "PermissionDenied",
        Setup = "Setup",
        TeammateIdle = "TeammateIdle",
        TaskCreated = "TaskCreated",
        TaskCompleted = "TaskCompleted",
        Elicitation = "Elicitation",
        ElicitationResult = "ElicitationResult",
        ConfigChange = "ConfigChange",
        WorktreeCreate = "WorktreeCreate",
        WorktreeRemove = "WorktreeRemove",
        InstructionsLoaded = "InstructionsLoaded",
        CwdChanged = "CwdChanged",
        FileChanged = "FileChanged",
        DirectoryAdded = "DirectoryAdded",
        MessageDisplay = "MessageDisplay",
        PreSkillShellCommand = "PreSkillShellCommand",
    }
}

open_enum! {
    /// `ElicitationResponse.action`.
    pub enum ElicitationAction {
        Accept = "accept",
        Decline = "decline",
        Cancel = "cancel",
    }
}

open_enum! {
    /// `UserDialogResponse.behavior`.
    pub enum DialogBehavior {
        Completed = "completed",
        Cancelled = "cancelled",
    }
}
