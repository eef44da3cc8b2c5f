//! What the demo agent answers beyond the transcript, so the demo shows the console's session
//! header and task list: `get_context_usage`, `mcp_status` (plausible, clearly demo data), and the
//! task tools (`TaskCreate`, `TaskUpdate`, `TaskList`, `TaskGet`) with the real CLI 2.1.332's result
//! shapes (`tests/fixtures/real-cli-2.1.332/bridge-capture-tasks-interrupt.ndjson`).

use serde_json::{Value, json};

use crate::tools::ToolRun;

/// Tokens the demo's system prompt, tools and skills take before any message.
const BASE_TOKENS: [(&str, &str, u64); 4] = [
    ("system_prompt", "System prompt", 1963),
    ("system_tools", "System tools", 7451),
    ("mcp_tools", "MCP tools", 1284),
    ("skills", "Skills", 2067),
];
const WINDOW: u64 = 200_000;
const AUTOCOMPACT_BUFFER: u64 = 33_000;

/// Per-session state behind those answers.
#[derive(Debug, Default)]
pub(crate) struct Info {
    /// Tokens the conversation's messages take so far (grows with each API call).
    pub message_tokens: u64,
    tasks: Vec<DemoTask>,
    next_id: u64,
}

#[derive(Debug, Clone)]
struct DemoTask {
    id: String,
    subject: String,
    description: String,
    status: String,
    blocked_by: Vec<String>,
}

/// True for the task tools this module runs.
pub(crate) fn is_task_tool(name: &str) -> bool {
    matches!(name, "TaskCreate" | "TaskUpdate" | "TaskList" | "TaskGet")
}

fn s<'a>(v: &'a Value, k: &str) -> &'a str {
    v.get(k).and_then(Value::as_str).unwrap_or_default()
}

fn error(text: String) -> ToolRun {
    ToolRun {
        content: format!("<tool_use_error>{text}</tool_use_error>"),
        is_error: true,
        tool_use_result: Value::String(format!("Error: {text}")),
    }
}

impl Info {
    /// `get_context_usage` answer for `model` (same keys as the real CLI's, without `gridRows`).
    pub(crate) fn context_usage(&self, model: &str) -> Value {
        let mut categories: Vec<Value> = BASE_TOKENS
            .iter()
            .map(|(id, name, tokens)| json!({"id": id, "name": name, "tokens": tokens, "kind": "used"}))
            .collect();
        let base: u64 = BASE_TOKENS.iter().map(|(_, _, t)| t).sum();
        let messages = self.message_tokens.min(WINDOW - base - AUTOCOMPACT_BUFFER);
        categories.push(
            json!({"id": "messages", "name": "Messages", "tokens": messages, "kind": "used"}),
        );
        let used = base + messages;
        categories.push(
            json!({"id": "autocompact_buffer", "name": "Autocompact buffer",
            "tokens": AUTOCOMPACT_BUFFER, "kind": "buffer"}),
        );
        categories.push(json!({"id": "free_space", "name": "Free space",
            "tokens": WINDOW - used - AUTOCOMPACT_BUFFER, "kind": "free"}));
        json!({
            "categories": categories,
            "totalTokens": used,
            "maxTokens": WINDOW,
            "rawMaxTokens": WINDOW,
            "percentage": (used * 100 / WINDOW),
            "model": model,
            "autoCompactThreshold": WINDOW - AUTOCOMPACT_BUFFER,
            "isAutoCompactEnabled": true,
            "memoryFiles": [],
            "mcpTools": [],
            "agents": []
        })
    }

    /// `mcp_status` answer: one server of each interesting state.
    pub(crate) fn mcp_status() -> Value {
        json!({"mcpServers": [
            {"name": "demo-files", "status": "connected",
             "serverInfo": {"name": "demo-files", "version": "1.2.0"},
             "config": {"type": "stdio", "command": "demo-files-mcp", "args": []},
             "transport": "stdio", "scope": "project", "source": "project",
             "tools": [{"name": "list_files"}, {"name": "read_file"}]},
            {"name": "demo-tracker", "status": "needs-auth",
             "config": {"type": "http", "url": "https://tracker.example.invalid/mcp"},
             "transport": "http", "scope": "user", "source": "user"},
            {"name": "demo-broken", "status": "failed",
             "error": "spawn demo-broken-mcp ENOENT (demo: this server is missing on purpose)",
             "config": {"type": "stdio", "command": "demo-broken-mcp", "args": []},
             "transport": "stdio", "scope": "local", "source": "local"}
        ]})
    }

    /// Runs a task tool as CLI 2.1.332 does (its result text and `tool_use_result`).
    pub(crate) fn run_task_tool(&mut self, name: &str, input: &Value) -> ToolRun {
        match name {
            "TaskCreate" => {
                self.next_id += 1;
                let t = DemoTask {
                    id: self.next_id.to_string(),
                    subject: s(input, "subject").to_owned(),
                    description: s(input, "description").to_owned(),
                    status: "pending".into(),
                    blocked_by: Vec::new(),
                };
                let run = ToolRun {
                    content: format!("Task #{} created successfully: {}", t.id, t.subject),
                    is_error: false,
                    tool_use_result: json!({"task": {"id": t.id, "subject": t.subject,
                        "description": t.description}}),
                };
                self.tasks.push(t);
                run
            }
            "TaskUpdate" => {
                let id = s(input, "taskId").to_owned();
                let Some(i) = self.tasks.iter().position(|t| t.id == id) else {
                    return error(format!("Task #{id} not found"));
                };
                let mut fields = Vec::new();
                let mut change = None;
                if let Some(st) = input.get("status").and_then(Value::as_str) {
                    if st == "deleted" {
                        self.tasks.remove(i);
                        return ToolRun {
                            content: format!("Updated task #{id} deleted"),
                            is_error: false,
                            tool_use_result: json!({"success": true, "taskId": id,
                                "updatedFields": ["deleted"]}),
                        };
                    }
                    let from = std::mem::replace(&mut self.tasks[i].status, st.to_owned());
                    change = Some(json!({"from": from, "to": st}));
                    fields.push("status");
                }
                let t = &mut self.tasks[i];
                for (key, slot) in [
                    ("subject", &mut t.subject),
                    ("description", &mut t.description),
                ] {
                    if let Some(v) = input.get(key).and_then(Value::as_str) {
                        *slot = v.to_owned();
                        fields.push(key);
                    }
                }
                if let Some(b) = input.get("addBlockedBy").and_then(Value::as_array) {
                    t.blocked_by
                        .extend(b.iter().filter_map(Value::as_str).map(str::to_owned));
                    fields.push("blockedBy");
                }
                if input.get("activeForm").is_some() {
                    fields.push("activeForm");
                }
                let mut r = json!({"success": true, "taskId": id, "updatedFields": fields});
                if let Some(c) = change {
                    r["statusChange"] = c;
                }
                ToolRun {
                    content: format!("Updated task #{id} {}", fields.join(", ")),
                    is_error: false,
                    tool_use_result: r,
                }
            }
            "TaskList" => ToolRun {
                content: self
                    .tasks
                    .iter()
                    .map(|t| format!("#{} [{}] {}", t.id, t.status, t.subject))
                    .collect::<Vec<_>>()
                    .join("\n"),
                is_error: false,
                tool_use_result: json!({"tasks": self.tasks.iter().map(|t| json!({
                    "id": t.id, "subject": t.subject, "status": t.status, "blockedBy": t.blocked_by
                })).collect::<Vec<_>>()}),
            },
            _ => {
                let id = s(input, "taskId");
                match self.tasks.iter().find(|t| t.id == id) {
                    Some(t) => ToolRun {
                        content: format!(
                            "Task #{}: {}\nStatus: {}\nDescription: {}",
                            t.id, t.subject, t.status, t.description
                        ),
                        is_error: false,
                        tool_use_result: json!({"task": {"id": t.id, "subject": t.subject,
                            "description": t.description, "status": t.status, "blocks": [],
                            "blockedBy": t.blocked_by}}),
                    },
                    None => error(format!("Task #{id} not found")),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tasks_run_like_the_cli() {
        let mut info = Info::default();
        let r = info.run_task_tool(
            "TaskCreate",
            &json!({"subject": "Write it", "description": "d", "activeForm": "Writing it"}),
        );
        assert_eq!(r.content, "Task #1 created successfully: Write it");
        let r = info.run_task_tool(
            "TaskUpdate",
            &json!({"taskId": "1", "status": "in_progress"}),
        );
        assert_eq!(
            r.tool_use_result["statusChange"],
            json!({"from": "pending", "to": "in_progress"})
        );
        assert_eq!(
            info.run_task_tool("TaskList", &json!({})).content,
            "#1 [in_progress] Write it"
        );
        assert!(
            info.run_task_tool("TaskGet", &json!({"taskId": "9"}))
                .is_error
        );
    }

    #[test]
    fn context_usage_adds_up() {
        let info = Info {
            message_tokens: 5000,
            ..Info::default()
        };
        let v = info.context_usage("claude-sonnet-4-5");
        let used: u64 = v["categories"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["kind"] == "used")
            .map(|c| c["tokens"].as_u64().unwrap())
            .sum();
        assert_eq!(used, v["totalTokens"].as_u64().unwrap());
        let all: u64 = v["categories"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["tokens"].as_u64().unwrap())
            .sum();
        assert_eq!(all, WINDOW);
    }
}
