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

impl Prompt {
    /// One line about it, for a notification or an embedding host's badge: "Bash: ls -la" (the
    /// command or file path, at most 200 characters), else "Bash waits for your answer.".
    pub fn summary(&self) -> String {
        let what = self.display_name.as_deref().unwrap_or(&self.tool_name);
        let detail = match crate::format::field(&self.input, "command") {
            "" => crate::format::field(&self.input, "file_path"),
            c => c,
        };
        if detail.is_empty() {
            format!("{what} waits for your answer.")
        } else {
            format!("{what}: {}", detail.chars().take(200).collect::<String>())
        }
    }
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

/// The plan an ExitPlanMode prompt asks to approve. The real CLI (2.1.332) sends the permission request
/// with an empty `input`; the plan is in the model's `tool_use` block (`proposed`, found by
/// `tool_use_id`), or only in the plan file the CLI names. `None` when neither says anything.
pub fn plan_text(input: &Value, proposed: Option<&Value>) -> Option<String> {
    let plan_in = |v: &Value| {
        v.get("plan")
            .and_then(Value::as_str)
            .filter(|p| !p.trim().is_empty())
            .map(str::to_string)
    };
    if let Some(p) = plan_in(input).or_else(|| proposed.and_then(plan_in)) {
        return Some(p);
    }
    [Some(input), proposed]
        .into_iter()
        .flatten()
        .find_map(|v| v.get("planFilePath").and_then(Value::as_str))
        .map(|path| format!("The plan is in `{path}`."))
}

#[cfg(test)]
mod tests {
    use super::{Prompt, PromptKind, plan_text};
    use serde_json::{Value, json};

    fn bash(display_name: Option<&str>, input: Value) -> Prompt {
        Prompt {
            request_id: "r1".into(),
            kind: PromptKind::Permission,
            tool_name: "Bash".into(),
            display_name: display_name.map(Into::into),
            title: None,
            description: None,
            decision_reason: None,
            decision_reason_type: None,
            blocked_path: None,
            tool_use_id: None,
            input,
            suggestions: Vec::new(),
            request: Value::Null,
            answered_locally: false,
        }
    }

    #[test]
    fn a_summary_names_the_tool_and_its_command_or_file() {
        let cases = [
            (
                None,
                json!({"command": "ls -la"}),
                "Bash: ls -la".to_string(),
            ),
            (
                None,
                json!({"file_path": "/a/b.rs"}),
                "Bash: /a/b.rs".to_string(),
            ),
            (
                Some("Run it"),
                json!({"command": "make"}),
                "Run it: make".to_string(),
            ),
            (None, json!({}), "Bash waits for your answer.".to_string()),
            (
                None,
                json!({"command": "x".repeat(300)}),
                format!("Bash: {}", "x".repeat(200)),
            ),
        ];
        for (name, input, want) in cases {
            assert_eq!(bash(name, input.clone()).summary(), want, "{input}");
        }
    }

    #[test]
    fn the_plan_comes_from_the_request_then_the_tool_use_then_the_plan_file() {
        let proposed = json!({"plan": "# From the model"});
        assert_eq!(
            plan_text(&json!({"plan": "# In the request"}), Some(&proposed)).as_deref(),
            Some("# In the request")
        );
        // What the real CLI sends: an empty input.
        assert_eq!(
            plan_text(&json!({}), Some(&proposed)).as_deref(),
            Some("# From the model")
        );
        assert_eq!(
            plan_text(&json!({"plan": "  "}), Some(&proposed)).as_deref(),
            Some("# From the model")
        );
        assert_eq!(
            plan_text(&json!({"planFilePath": "/h/.claude/plans/p.md"}), None).as_deref(),
            Some("The plan is in `/h/.claude/plans/p.md`.")
        );
        assert_eq!(plan_text(&json!({}), None), None);
    }
}
