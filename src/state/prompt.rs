//! Prompts the CLI is waiting on: permission requests and dialogs.

use serde_json::Value;

/// What kind of answer a prompt needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PromptKind {
    /// `can_use_tool` for an ordinary tool: allow (with an editable input) or deny.
    Permission,
    /// `can_use_tool` for `AskUserQuestion` (or any `requires_user_interaction` ask): choices.
    Question,
    /// `can_use_tool` for `ExitPlanMode`: the plan, approve to leave plan mode.
    PlanApproval,
    /// `elicitation` from an MCP server: a form from its schema.
    Elicitation,
    /// `request_user_dialog`.
    UserDialog,
}

/// A pending prompt.
#[derive(Clone, Debug, PartialEq)]
pub struct Prompt {
    /// `request_id` of the control request.
    pub request_id: String,
    /// Kind.
    pub kind: PromptKind,
    /// Tool name (`can_use_tool`), MCP server (`elicitation`) or dialog kind.
    pub tool_name: String,
    /// `display_name`, `title`, `description`, when given.
    pub display_name: Option<String>,
    /// `title`.
    pub title: Option<String>,
    /// `description`.
    pub description: Option<String>,
    /// `decision_reason`.
    pub decision_reason: Option<String>,
    /// `decision_reason_type`.
    pub decision_reason_type: Option<String>,
    /// `blocked_path`.
    pub blocked_path: Option<String>,
    /// `tool_use_id`.
    pub tool_use_id: Option<String>,
    /// The tool input (or elicitation schema / dialog payload).
    pub input: Value,
    /// `permission_suggestions` (raw `PermissionUpdate` objects).
    pub suggestions: Vec<Value>,
    /// The whole `request` object.
    pub request: Value,
    /// This console sent an answer that has not been confirmed yet.
    pub answered_locally: bool,
}

/// Who settled a prompt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SettledBy {
    /// This console.
    Me,
    /// Another controller (or a relay policy) answered first.
    Other,
    /// The CLI withdrew it (`control_cancel_request`).
    Cancelled,
}

/// A short notice for the person, e.g. that a dialog closed because someone else answered.
#[derive(Clone, Debug, PartialEq)]
pub struct Notice {
    /// Increasing id (to dismiss).
    pub id: u64,
    /// Text.
    pub text: String,
}
