//! Tool "simulation" and permission decisions. Nothing here touches the file system or runs a command.

use serde_json::{Value, json};

use crate::scenario::PermissionPolicy;

/// A permission rule added for the session through `updatedPermissions` (`addRules`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pub tool_name: String,
    /// `None`: the whole tool. `Some("npm run:*")`: a prefix. Otherwise an exact command / path.
    pub rule_content: Option<String>,
    /// `allow`, `deny` or `ask`.
    pub behavior: String,
}

impl Rule {
    /// Whether this rule covers a call of `name` with `input`.
    pub fn matches(&self, name: &str, input: &Value) -> bool {
        if self.tool_name != name {
            return false;
        }
        let Some(content) = &self.rule_content else {
            return true;
        };
        let subject = primary_subject(name, input);
        match content.strip_suffix(":*") {
            Some(prefix) => subject.starts_with(prefix),
            None => subject == *content,
        }
    }
}

/// The string a rule's `ruleContent` is compared with.
fn primary_subject(name: &str, input: &Value) -> String {
    let field = match name {
        "Bash" => "command",
        "Edit" | "Write" | "Read" | "MultiEdit" => "file_path",
        "NotebookEdit" => "notebook_path",
        "WebFetch" => "url",
        _ => return String::new(),
    };
    input
        .get(field)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// What happens to a tool call before it runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Runs without asking; `source`/`reason_type` go into `tool_result_meta.permission_decision`.
    Allow {
        source: &'static str,
        reason_type: Option<&'static str>,
    },
    /// A `can_use_tool` prompt is needed.
    Ask,
    /// Refused without asking (deny rule, `dontAsk` mode).
    Deny { message: String },
}

const EDIT_TOOLS: &[&str] = &["Edit", "Write", "MultiEdit", "NotebookEdit"];
const READ_ONLY_TOOLS: &[&str] = &[
    "Read",
    "Glob",
    "Grep",
    "LS",
    "WebSearch",
    "ToolSearch",
    "TaskGet",
    "TaskList",
    "ListAgents",
];
const READ_ONLY_COMMANDS: &[&str] = &[
    "echo", "ls", "pwd", "cat", "head", "tail", "wc", "date", "whoami", "true", "uname", "which",
];

fn is_read_only_command(cmd: &str) -> bool {
    if cmd.contains(['>', ';', '&', '|', '`', '$']) {
        return false;
    }
    let first = cmd.split_whitespace().next().unwrap_or_default();
    READ_ONLY_COMMANDS.contains(&first)
        || cmd.starts_with("git status")
        || cmd.starts_with("git log")
        || cmd.starts_with("git diff")
}

/// `ask_user` → `Ask User` (how the CLI shows an MCP tool's name).
pub(crate) fn title_case(name: &str) -> String {
    name.split(['_', '-'])
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().chain(c).collect::<String>())
                .unwrap_or_default()
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// What the real CLI answers an ExitPlanMode outside plan mode.
pub const NOT_IN_PLAN_MODE: &str = "<tool_use_error>You are not in plan mode. To enter plan mode, call the \
EnterPlanMode tool first. If your plan was already approved, continue with implementation.</tool_use_error>";

/// Decides whether `name(input)` may run, like the CLI does for the given permission mode.
pub fn decide(
    name: &str,
    input: &Value,
    policy: PermissionPolicy,
    mode: &str,
    rules: &[Rule],
) -> Decision {
    if name == "AskUserQuestion" {
        // Needs the user whatever the mode or rules.
        return Decision::Ask;
    }
    if name == "ExitPlanMode" {
        // As the real CLI: a person approves the plan, and only in plan mode.
        return if mode == "plan" {
            Decision::Ask
        } else {
            Decision::Deny {
                message: NOT_IN_PLAN_MODE.to_owned(),
            }
        };
    }
    if let Some(rule) = rules.iter().rev().find(|r| r.matches(name, input)) {
        match rule.behavior.as_str() {
            "allow" => {
                return Decision::Allow {
                    source: "session",
                    reason_type: Some("rule"),
                };
            }
            "deny" => {
                return Decision::Deny {
                    message: format!(
                        "Permission to use {name} has been denied by a permission rule."
                    ),
                };
            }
            _ => return Decision::Ask,
        }
    }
    if policy == PermissionPolicy::Allow {
        return Decision::Allow {
            source: "config",
            reason_type: None,
        };
    }
    if mode == "bypassPermissions" {
        return Decision::Allow {
            source: "config",
            reason_type: Some("mode"),
        };
    }
    if policy == PermissionPolicy::Default {
        let read_only = READ_ONLY_TOOLS.contains(&name)
            || (name == "Bash" && is_read_only_command(&primary_subject(name, input)));
        if read_only {
            return Decision::Allow {
                source: "config",
                reason_type: None,
            };
        }
    }
    if mode == "acceptEdits" && EDIT_TOOLS.contains(&name) {
        return Decision::Allow {
            source: "config",
            reason_type: Some("mode"),
        };
    }
    if mode == "dontAsk" {
        return Decision::Deny {
            message: format!(
                "Permission to use {name} has been denied because Claude Code is running in don't ask mode."
            ),
        };
    }
    Decision::Ask
}

fn join_path(cwd: &str, p: &str) -> String {
    if p.starts_with('/') {
        p.to_owned()
    } else {
        format!("{}/{}", cwd.trim_end_matches('/'), p)
    }
}

/// `blocked_path` for a prompt: the file a write-like Bash command or an out-of-cwd file tool touches.
pub fn default_blocked_path(name: &str, input: &Value, cwd: &str) -> Option<String> {
    match name {
        "Bash" => {
            let cmd = primary_subject(name, input);
            let mut words = cmd.split_whitespace();
            let first = words.next()?;
            if !["touch", "mkdir", "rm", "mv", "cp"].contains(&first) {
                return None;
            }
            let target = words.rfind(|w| !w.starts_with('-'))?;
            Some(join_path(cwd, target))
        }
        "Read" | "Edit" | "Write" | "MultiEdit" => {
            let p = primary_subject(name, input);
            let cwd_prefix = format!("{}/", cwd.trim_end_matches('/'));
            (!p.is_empty() && p.starts_with('/') && !p.starts_with(&cwd_prefix)).then_some(p)
        }
        _ => None,
    }
}

/// `permission_suggestions` the CLI offers with a prompt, plus the `decision_reason_type` if any.
pub fn suggestions(
    name: &str,
    input: &Value,
    cwd: &str,
    blocked_path: Option<&str>,
) -> (Value, Option<&'static str>) {
    let set_mode = json!({"type": "setMode", "mode": "acceptEdits", "destination": "session"});
    match name {
        "AskUserQuestion" => (json!([]), None),
        "Bash" => {
            let cmd = primary_subject(name, input);
            let compound = cmd.contains("&&") || cmd.contains(';') || cmd.contains('|');
            if compound && (cmd.contains("rm ") || cmd.contains("sudo ")) {
                return (json!([]), Some("subcommandResults"));
            }
            let mut v = vec![json!({
                "type": "addRules",
                "rules": [{"toolName": "Bash", "ruleContent": cmd}],
                "behavior": "allow",
                "destination": "localSettings"
            })];
            if blocked_path.is_some() {
                v.push(json!({"type": "addDirectories", "directories": [cwd], "destination": "session"}));
            }
            v.push(set_mode);
            (Value::Array(v), None)
        }
        n if EDIT_TOOLS.contains(&n) => (json!([set_mode]), None),
        "Read" => match blocked_path {
            Some(p) => {
                let dir = p
                    .rsplit_once('/')
                    .map(|(d, _)| d)
                    .filter(|d| !d.is_empty())
                    .unwrap_or("/");
                (
                    json!([{"type": "addDirectories", "directories": [dir], "destination": "session"}]),
                    Some("workingDir"),
                )
            }
            None => (json!([]), None),
        },
        _ => (
            json!([{
                "type": "addRules",
                "rules": [{"toolName": name}],
                "behavior": "allow",
                "destination": "localSettings"
            }]),
            None,
        ),
    }
}

/// The outcome of a simulated tool run.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolRun {
    /// `tool_result.content` text.
    pub content: String,
    pub is_error: bool,
    /// `tool_use_result` (the structured output).
    pub tool_use_result: Value,
}

/// `input[key]` when it is a string, else empty.
pub(crate) fn str_field<'a>(input: &'a Value, key: &str) -> &'a str {
    input.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn simulate_bash_output(cmd: &str, cwd: &str) -> String {
    let cmd = cmd.trim();
    if let Some(rest) = cmd.strip_prefix("echo ") {
        return rest.trim_matches(|c| c == '"' || c == '\'').to_owned();
    }
    match cmd.split_whitespace().next().unwrap_or_default() {
        "pwd" => cwd.to_owned(),
        "ls" => "Cargo.toml\nREADME.md\nsrc".to_owned(),
        "date" => "Mon Nov 30 12:00:00 UTC 2026".to_owned(),
        "whoami" => "demo".to_owned(),
        _ => String::new(),
    }
}

/// The scenario's `output` when it gives one, else the simulated `default`.
fn given_or(output: Option<&str>, default: impl FnOnce() -> String) -> String {
    output.map_or_else(default, str::to_owned)
}

/// Runs `name(input)` in simulation. `output` (from the scenario) overrides the simulated output.
pub fn simulate(
    name: &str,
    input: &Value,
    output: Option<&str>,
    is_error: bool,
    cwd: &str,
) -> ToolRun {
    match name {
        "Bash" => {
            let cmd = str_field(input, "command");
            let out = given_or(output, || simulate_bash_output(cmd, cwd));
            if is_error {
                return ToolRun {
                    content: format!("Exit code 1\n$ {cmd}\n{out}"),
                    is_error: true,
                    tool_use_result: Value::String(format!("Error: Exit code 1\n{out}")),
                };
            }
            let shown = if out.is_empty() {
                "(Bash completed with no output)"
            } else {
                out.as_str()
            };
            ToolRun {
                content: format!("$ {cmd}\n{shown}"),
                is_error: false,
                tool_use_result: json!({
                    "stdout": out,
                    "stderr": "",
                    "interrupted": false,
                    "isImage": false,
                    "noOutputExpected": out.is_empty()
                }),
            }
        }
        "Edit" | "MultiEdit" => {
            let path = str_field(input, "file_path");
            let old = str_field(input, "old_string");
            let new = str_field(input, "new_string");
            let mut lines: Vec<String> = old.lines().map(|l| format!("-{l}")).collect();
            lines.extend(new.lines().map(|l| format!("+{l}")));
            ToolRun {
                content: given_or(output, || {
                    format!("The file {path} has been updated successfully.")
                }),
                is_error,
                tool_use_result: json!({
                    "filePath": path,
                    "oldString": old,
                    "newString": new,
                    "originalFile": null,
                    "structuredPatch": [{
                        "oldStart": 1,
                        "oldLines": old.lines().count(),
                        "newStart": 1,
                        "newLines": new.lines().count(),
                        "lines": lines
                    }],
                    "userModified": false,
                    "replaceAll": input.get("replace_all").and_then(Value::as_bool).unwrap_or(false)
                }),
            }
        }
        "Write" => {
            let path = str_field(input, "file_path");
            ToolRun {
                content: given_or(output, || format!("File created successfully at: {path}")),
                is_error,
                tool_use_result: json!({
                    "type": "create",
                    "filePath": path,
                    "content": str_field(input, "content"),
                    "structuredPatch": [],
                    "originalFile": null
                }),
            }
        }
        "Read" => {
            let path = str_field(input, "file_path");
            let text = given_or(output, || format!("(demo contents of {path})"));
            let numbered: Vec<String> = text
                .lines()
                .enumerate()
                .map(|(i, l)| format!("{:>6}\t{l}", i + 1))
                .collect();
            let n = text.lines().count();
            ToolRun {
                content: numbered.join("\n"),
                is_error,
                tool_use_result: json!({
                    "type": "text",
                    "file": {"filePath": path, "content": text, "numLines": n, "startLine": 1, "totalLines": n}
                }),
            }
        }
        "ExitPlanMode" => ToolRun {
            content: "User has approved exiting plan mode. You can now proceed.".to_owned(),
            is_error: false,
            tool_use_result: json!({"plan": input.get("plan").cloned().unwrap_or(Value::Null), "isAgent": false}),
        },
        "AskUserQuestion" => {
            let answers = input.get("answers").and_then(Value::as_object);
            let content = match answers {
                Some(a) if !a.is_empty() => {
                    let pairs: Vec<String> = a
                        .iter()
                        .map(|(q, v)| {
                            let v = v
                                .as_str()
                                .map(str::to_owned)
                                .unwrap_or_else(|| v.to_string());
                            format!("\"{q}\"=\"{v}\"")
                        })
                        .collect();
                    format!(
                        "User has answered your questions: {}. You can now continue with the user's answers in mind.",
                        pairs.join(", ")
                    )
                }
                _ => "The user did not answer the questions.".to_owned(),
            };
            ToolRun {
                content,
                is_error,
                tool_use_result: json!({
                    "questions": input.get("questions").cloned().unwrap_or(json!([])),
                    "answers": answers.cloned().map(Value::Object).unwrap_or(json!({}))
                }),
            }
        }
        _ => {
            let out = given_or(output, || format!("(demo) {name} completed"));
            ToolRun {
                content: out.clone(),
                is_error,
                tool_use_result: Value::String(out),
            }
        }
    }
}

/// The input as the `assistant` frame shows it: the CLI fills in defaults the model left out.
pub fn with_defaults(name: &str, input: &Value) -> Value {
    let mut v = input.clone();
    if name == "Edit"
        && let Some(o) = v.as_object_mut()
    {
        o.entry("replace_all").or_insert(Value::Bool(false));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_match_exact_prefix_and_whole_tool() {
        let input = json!({"command": "npm run build"});
        let exact = Rule {
            tool_name: "Bash".into(),
            rule_content: Some("npm run build".into()),
            behavior: "allow".into(),
        };
        let prefix = Rule {
            rule_content: Some("npm run:*".into()),
            ..exact.clone()
        };
        let other = Rule {
            rule_content: Some("npm test".into()),
            ..exact.clone()
        };
        let whole = Rule {
            rule_content: None,
            ..exact.clone()
        };
        assert!(exact.matches("Bash", &input));
        assert!(prefix.matches("Bash", &input));
        assert!(!other.matches("Bash", &input));
        assert!(whole.matches("Bash", &input));
        assert!(!whole.matches("Write", &input));
    }

    #[test]
    fn decisions_follow_mode() {
        let touch = json!({"command": "touch a"});
        let echo = json!({"command": "echo hi"});
        let d = PermissionPolicy::Default;
        assert_eq!(decide("Bash", &touch, d, "default", &[]), Decision::Ask);
        assert!(matches!(
            decide("Bash", &echo, d, "default", &[]),
            Decision::Allow { .. }
        ));
        assert!(matches!(
            decide("Bash", &touch, d, "bypassPermissions", &[]),
            Decision::Allow { .. }
        ));
        assert!(matches!(
            decide("Bash", &touch, d, "dontAsk", &[]),
            Decision::Deny { .. }
        ));
        assert_eq!(decide("Bash", &touch, d, "acceptEdits", &[]), Decision::Ask);
        assert!(matches!(
            decide("Write", &json!({"file_path": "/x"}), d, "acceptEdits", &[]),
            Decision::Allow { .. }
        ));
        assert_eq!(
            decide("Write", &json!({"file_path": "/x"}), d, "plan", &[]),
            Decision::Ask
        );
        assert_eq!(
            decide("AskUserQuestion", &json!({}), d, "bypassPermissions", &[]),
            Decision::Ask
        );
        assert_eq!(
            decide("ExitPlanMode", &json!({"plan": "p"}), d, "plan", &[]),
            Decision::Ask
        );
        assert_eq!(
            decide("ExitPlanMode", &json!({"plan": "p"}), d, "default", &[]),
            Decision::Deny {
                message: NOT_IN_PLAN_MODE.to_owned()
            }
        );
    }

    #[test]
    fn blocked_path_for_touch_is_absolute() {
        let p = default_blocked_path("Bash", &json!({"command": "touch out.txt"}), "/w/demo");
        assert_eq!(p.as_deref(), Some("/w/demo/out.txt"));
        assert_eq!(
            default_blocked_path("Bash", &json!({"command": "echo x"}), "/w"),
            None
        );
    }

    #[test]
    fn bash_result_shows_the_command() {
        let r = simulate(
            "Bash",
            &json!({"command": "echo hi there"}),
            None,
            false,
            "/w",
        );
        assert_eq!(r.content, "$ echo hi there\nhi there");
        assert_eq!(r.tool_use_result["stdout"], "hi there");
    }
}
