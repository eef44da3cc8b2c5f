//! The session's task list, as the terminal shows it: derived from the task tools' calls and
//! results (CLI 2.1.332: `TaskCreate`, `TaskUpdate`, `TaskList`, `TaskGet`; older flows: `TodoWrite`).
//!
//! Shapes (real captures, `tests/fixtures/real-cli-2.1.332/bridge-capture-tasks-interrupt.ndjson`):
//! * `TaskCreate {subject, description, activeForm?}` → `tool_use_result.task {id, subject, description}`,
//!   text `Task #1 created successfully: …`;
//! * `TaskUpdate {taskId, status?, subject?, description?, activeForm?, owner?, addBlockedBy?}` →
//!   `{success, taskId, updatedFields, statusChange? {from, to}}`; `status: "deleted"` removes it;
//! * `TaskList {}` → `{tasks: [{id, subject, status, blockedBy, owner?}]}`, text `#1 [completed] …`;
//! * `TaskGet {taskId}` → `{task: {id, subject, description, status, blocks, blockedBy}}`;
//! * `TodoWrite {todos: [{content, status, activeForm}]}` replaces the whole list.
//!
//! Pure: the [`crate::state::Session`] feeds it each finished task-tool call.

use serde_json::Value;

/// Where a task stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TaskStatus {
    /// Not started.
    Pending,
    /// Being worked on (its `active_form` is what the terminal's spinner says).
    InProgress,
    /// Done.
    Completed,
    /// A value this console does not know yet, kept as sent.
    Other(String),
}

impl TaskStatus {
    /// From the wire string.
    pub fn parse(s: &str) -> Self {
        match s {
            "pending" => Self::Pending,
            "in_progress" => Self::InProgress,
            "completed" => Self::Completed,
            other => Self::Other(other.to_string()),
        }
    }

    /// The wire string (also the `data-status` of a task row).
    pub fn as_str(&self) -> &str {
        match self {
            Self::Pending => "pending",
            Self::InProgress => "in_progress",
            Self::Completed => "completed",
            Self::Other(s) => s,
        }
    }
}

/// One task of the list.
#[derive(Clone, Debug, PartialEq)]
pub struct Task {
    /// The CLI's id (`"1"`, `"2"` …; the position for `TodoWrite`).
    pub id: String,
    /// Short title.
    pub subject: String,
    /// What needs doing.
    pub description: String,
    /// Present-continuous form shown while in progress ("Running tests").
    pub active_form: Option<String>,
    /// Status.
    pub status: TaskStatus,
    /// Ids of tasks that must finish first.
    pub blocked_by: Vec<String>,
    /// Who works on it (agent teams).
    pub owner: Option<String>,
}

impl Task {
    fn new(id: &str) -> Self {
        Task {
            id: id.to_string(),
            subject: String::new(),
            description: String::new(),
            active_form: None,
            status: TaskStatus::Pending,
            blocked_by: Vec::new(),
            owner: None,
        }
    }

    /// What a checklist row says: the active form while in progress, else the subject.
    pub fn label(&self) -> &str {
        match (&self.status, self.active_form.as_deref()) {
            (TaskStatus::InProgress, Some(a)) if !a.trim().is_empty() => a,
            _ if self.subject.is_empty() => &self.id,
            _ => &self.subject,
        }
    }
}

/// The task list of a session.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TaskList {
    tasks: Vec<Task>,
}

/// True for the tools that read or change the task list.
pub fn is_task_tool(name: &str) -> bool {
    matches!(
        name,
        "TaskCreate" | "TaskUpdate" | "TaskList" | "TaskGet" | "TodoWrite"
    )
}

fn s<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// An id given as a string or a number.
fn id_of(v: &Value, key: &str) -> Option<String> {
    match v.get(key)? {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| match x {
                    Value::String(s) => Some(s.clone()),
                    Value::Number(n) => Some(n.to_string()),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default()
}

/// `Task #3 created successfully: …` → `3` (results without their structured part).
fn created_id_from_text(text: &str) -> Option<String> {
    let rest = text.trim().strip_prefix("Task #")?;
    let id: String = rest.chars().take_while(char::is_ascii_digit).collect();
    (!id.is_empty()).then_some(id)
}

/// `#1 [completed] Write the parser` lines of a `TaskList` result text.
fn list_from_text(text: &str) -> Vec<Task> {
    text.lines()
        .filter_map(|line| {
            let rest = line.trim().strip_prefix('#')?;
            let (id, rest) = rest.split_once(' ')?;
            let rest = rest.trim_start().strip_prefix('[')?;
            let (status, subject) = rest.split_once(']')?;
            let mut t = Task::new(id);
            t.status = TaskStatus::parse(status);
            t.subject = subject.trim().to_string();
            Some(t)
        })
        .collect()
}

impl TaskList {
    /// The tasks, in the CLI's order.
    pub fn tasks(&self) -> &[Task] {
        &self.tasks
    }

    /// No task known.
    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }

    /// (completed, all).
    pub fn progress(&self) -> (usize, usize) {
        let done = self
            .tasks
            .iter()
            .filter(|t| t.status == TaskStatus::Completed)
            .count();
        (done, self.tasks.len())
    }

    /// The task in progress, if any (the first one).
    pub fn current(&self) -> Option<&Task> {
        self.tasks
            .iter()
            .find(|t| t.status == TaskStatus::InProgress)
    }

    fn entry(&mut self, id: &str) -> &mut Task {
        match self.tasks.iter().position(|t| t.id == id) {
            Some(i) => &mut self.tasks[i],
            None => {
                self.tasks.push(Task::new(id));
                self.tasks.last_mut().expect("just pushed")
            }
        }
    }

    /// Takes a finished task-tool call into account: `input` as it ran, the result's text and its
    /// structured form (`tool_use_result`). Failed calls change nothing. Returns whether the list
    /// changed.
    pub fn apply(
        &mut self,
        name: &str,
        input: &Value,
        text: &str,
        structured: Option<&Value>,
        is_error: bool,
    ) -> bool {
        if is_error {
            return false;
        }
        let structured = structured.filter(|v| v.is_object());
        let before = self.tasks.clone();
        match name {
            "TaskCreate" => {
                let task = structured.and_then(|v| v.get("task"));
                let Some(id) = task
                    .and_then(|t| id_of(t, "id"))
                    .or_else(|| created_id_from_text(text))
                else {
                    return false;
                };
                let t = self.entry(&id);
                t.subject = task
                    .and_then(|t| s(t, "subject"))
                    .or_else(|| s(input, "subject"))
                    .unwrap_or_default()
                    .to_string();
                t.description = task
                    .and_then(|t| s(t, "description"))
                    .or_else(|| s(input, "description"))
                    .unwrap_or_default()
                    .to_string();
                t.active_form = s(input, "activeForm").map(str::to_string);
                t.status = TaskStatus::Pending;
            }
            "TaskUpdate" => {
                if structured
                    .and_then(|v| v.get("success"))
                    .and_then(Value::as_bool)
                    == Some(false)
                {
                    return false;
                }
                let Some(id) = structured
                    .and_then(|v| id_of(v, "taskId"))
                    .or_else(|| id_of(input, "taskId"))
                else {
                    return false;
                };
                let status = structured
                    .and_then(|v| v.get("statusChange"))
                    .and_then(|c| s(c, "to"))
                    .or_else(|| s(input, "status"));
                if status == Some("deleted") {
                    self.tasks.retain(|t| t.id != id);
                } else {
                    let t = self.entry(&id);
                    if let Some(st) = status {
                        t.status = TaskStatus::parse(st);
                    }
                    if let Some(x) = s(input, "subject") {
                        t.subject = x.to_string();
                    }
                    if let Some(x) = s(input, "description") {
                        t.description = x.to_string();
                    }
                    if let Some(x) = s(input, "activeForm") {
                        t.active_form = Some(x.to_string());
                    }
                    if let Some(x) = s(input, "owner") {
                        t.owner = Some(x.to_string());
                    }
                    for b in strings(input.get("addBlockedBy")) {
                        if !t.blocked_by.contains(&b) {
                            t.blocked_by.push(b);
                        }
                    }
                }
            }
            "TaskList" => {
                let listed: Vec<Task> = match structured.and_then(|v| v.get("tasks")) {
                    Some(Value::Array(items)) => items
                        .iter()
                        .filter_map(|i| {
                            let mut t = Task::new(&id_of(i, "id")?);
                            t.subject = s(i, "subject").unwrap_or_default().to_string();
                            t.status = TaskStatus::parse(s(i, "status").unwrap_or("pending"));
                            t.blocked_by = strings(i.get("blockedBy"));
                            t.owner = s(i, "owner").map(str::to_string);
                            Some(t)
                        })
                        .collect(),
                    _ => list_from_text(text),
                };
                // The listing is the truth; what it does not carry (descriptions, active forms)
                // is kept from what was known.
                self.tasks = listed
                    .into_iter()
                    .map(|mut t| {
                        if let Some(old) = before.iter().find(|o| o.id == t.id) {
                            t.description.clone_from(&old.description);
                            t.active_form.clone_from(&old.active_form);
                            if t.owner.is_none() {
                                t.owner.clone_from(&old.owner);
                            }
                        }
                        t
                    })
                    .collect();
            }
            "TaskGet" => {
                let Some(task) = structured.and_then(|v| v.get("task")) else {
                    return false;
                };
                let Some(id) = id_of(task, "id") else {
                    return false;
                };
                let t = self.entry(&id);
                if let Some(x) = s(task, "subject") {
                    t.subject = x.to_string();
                }
                if let Some(x) = s(task, "description") {
                    t.description = x.to_string();
                }
                if let Some(x) = s(task, "status") {
                    t.status = TaskStatus::parse(x);
                }
                if task.get("blockedBy").is_some() {
                    t.blocked_by = strings(task.get("blockedBy"));
                }
            }
            "TodoWrite" => {
                let Some(todos) = input.get("todos").and_then(Value::as_array) else {
                    return false;
                };
                self.tasks = todos
                    .iter()
                    .enumerate()
                    .map(|(i, todo)| {
                        let mut t = Task::new(&(i + 1).to_string());
                        t.subject = s(todo, "content").unwrap_or_default().to_string();
                        t.active_form = s(todo, "activeForm").map(str::to_string);
                        t.status = TaskStatus::parse(s(todo, "status").unwrap_or("pending"));
                        t
                    })
                    .collect();
            }
            _ => return false,
        }
        self.tasks != before
    }
}

/// The one line a task-tool card shows instead of its JSON: "Created task 3: Write the parser",
/// "Task 1: in progress → completed", "Listed 2 tasks" … `output` is `(text, structured, is_error)`
/// once the result came.
pub fn card_line(
    name: &str,
    input: &Value,
    output: Option<(&str, Option<&Value>, bool)>,
) -> String {
    let subject = s(input, "subject").unwrap_or_default();
    let id = id_of(input, "taskId").unwrap_or_default();
    let Some((text, structured, is_error)) = output else {
        return match name {
            "TaskCreate" => format!("Creating task: {subject}"),
            "TaskUpdate" => match s(input, "status") {
                Some(st) => format!("Marking task {id} {}", st.replace('_', " ")),
                None => format!("Updating task {id}"),
            },
            "TaskList" => "Reading the task list".into(),
            "TaskGet" => format!("Reading task {id}"),
            _ => "Updating the todo list".into(),
        };
    };
    if is_error {
        let first = text.lines().next().unwrap_or_default();
        let first = first
            .trim_start_matches("<tool_use_error>")
            .trim_end_matches("</tool_use_error>");
        return format!("Failed: {first}");
    }
    let structured = structured.filter(|v| v.is_object());
    match name {
        "TaskCreate" => {
            let task = structured.and_then(|v| v.get("task"));
            let id = task
                .and_then(|t| id_of(t, "id"))
                .or_else(|| created_id_from_text(text))
                .unwrap_or_default();
            let subject = task.and_then(|t| s(t, "subject")).unwrap_or(subject);
            format!("Created task {id}: {subject}")
        }
        "TaskUpdate" => {
            let change = structured.and_then(|v| v.get("statusChange"));
            match (
                change.and_then(|c| s(c, "from")),
                change.and_then(|c| s(c, "to")),
            ) {
                (Some(from), Some(to)) => format!(
                    "Task {id}: {} → {}",
                    from.replace('_', " "),
                    to.replace('_', " ")
                ),
                _ if s(input, "status") == Some("deleted") => format!("Deleted task {id}"),
                _ => {
                    let fields = strings(structured.and_then(|v| v.get("updatedFields")));
                    if fields.is_empty() {
                        format!("Updated task {id}")
                    } else {
                        format!("Updated task {id}: {}", fields.join(", "))
                    }
                }
            }
        }
        "TaskList" => {
            let n = match structured.and_then(|v| v.get("tasks")) {
                Some(Value::Array(a)) => a.len(),
                _ => list_from_text(text).len(),
            };
            format!("Listed {n} task{}", if n == 1 { "" } else { "s" })
        }
        "TaskGet" => {
            let task = structured.and_then(|v| v.get("task"));
            let subject = task.and_then(|t| s(t, "subject")).unwrap_or_default();
            let status = task
                .and_then(|t| s(t, "status"))
                .unwrap_or_default()
                .replace('_', " ");
            format!("Task {id}: {subject} ({status})")
        }
        _ => {
            let n = input
                .get("todos")
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            format!("Updated the todo list ({n} items)")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn create_update_delete() {
        let mut l = TaskList::default();
        assert!(l.apply(
            "TaskCreate",
            &json!({"subject": "Parse", "description": "d", "activeForm": "Parsing"}),
            "Task #1 created successfully: Parse",
            Some(&json!({"task": {"id": "1", "subject": "Parse", "description": "d"}})),
            false,
        ));
        assert!(l.apply(
            "TaskUpdate",
            &json!({"taskId": "1", "status": "in_progress"}),
            "Updated task #1 status",
            Some(&json!({"success": true, "taskId": "1", "statusChange": {"from": "pending", "to": "in_progress"}})),
            false,
        ));
        assert_eq!(l.current().unwrap().label(), "Parsing");
        // A failed call changes nothing.
        assert!(!l.apply(
            "TaskUpdate",
            &json!({"taskId": "1", "status": "completed"}),
            "<tool_use_error>nope</tool_use_error>",
            None,
            true
        ));
        assert_eq!(l.tasks()[0].status, TaskStatus::InProgress);
        assert!(l.apply(
            "TaskUpdate",
            &json!({"taskId": "1", "status": "deleted"}),
            "Updated task #1 deleted",
            Some(&json!({"success": true, "taskId": "1"})),
            false
        ));
        assert!(l.is_empty());
    }

    #[test]
    fn text_only_results_still_count() {
        let mut l = TaskList::default();
        l.apply(
            "TaskCreate",
            &json!({"subject": "A", "description": ""}),
            "Task #7 created successfully: A",
            None,
            false,
        );
        assert_eq!(l.tasks()[0].id, "7");
        l.apply(
            "TaskList",
            &json!({}),
            "#7 [completed] A\n#8 [pending] B",
            None,
            false,
        );
        assert_eq!(l.progress(), (1, 2));
        assert_eq!(l.tasks()[1].subject, "B");
    }

    #[test]
    fn todo_write_replaces_the_list() {
        let mut l = TaskList::default();
        l.apply(
            "TodoWrite",
            &json!({"todos": [
                {"content": "One", "status": "completed", "activeForm": "Doing one"},
                {"content": "Two", "status": "in_progress", "activeForm": "Doing two"}
            ]}),
            "ok",
            None,
            false,
        );
        assert_eq!(l.progress(), (1, 2));
        assert_eq!(l.current().unwrap().label(), "Doing two");
    }

    #[test]
    fn card_lines() {
        let out = json!({"task": {"id": "3", "subject": "Write docs"}});
        assert_eq!(
            card_line(
                "TaskCreate",
                &json!({"subject": "Write docs"}),
                Some(("", Some(&out), false))
            ),
            "Created task 3: Write docs"
        );
        let upd = json!({"success": true, "taskId": "1", "statusChange": {"from": "pending", "to": "in_progress"}});
        assert_eq!(
            card_line(
                "TaskUpdate",
                &json!({"taskId": "1", "status": "in_progress"}),
                Some(("", Some(&upd), false))
            ),
            "Task 1: pending → in progress"
        );
        assert_eq!(
            card_line(
                "TaskList",
                &json!({}),
                Some(("#1 [pending] A", None, false))
            ),
            "Listed 1 task"
        );
        assert_eq!(
            card_line(
                "TaskCreate",
                &json!({}),
                Some((
                    "<tool_use_error>Error: No such tool</tool_use_error>",
                    None,
                    true
                ))
            ),
            "Failed: Error: No such tool"
        );
        assert_eq!(
            card_line("TaskCreate", &json!({"subject": "X"}), None),
            "Creating task: X"
        );
    }
}
