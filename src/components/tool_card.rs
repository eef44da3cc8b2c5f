//! A tool call card.

pub mod agent;
pub mod bash;
pub mod edit_file;
pub mod generic;
pub mod question;
pub mod read_file;
pub mod search;
pub mod todo_list;
pub mod tool_output;
pub mod web;
pub mod write_file;

use leptos::prelude::*;
use serde_json::Value;

use crate::components::{DiffView, Markdown, MessageRow};
use crate::format::{field, items};
use crate::state::{ToolCall, ToolStatus};
use crate::store::Store;

pub use agent::AgentBody;
pub use bash::BashBody;
pub use edit_file::EditBody;
pub use generic::GenericBody;
pub use question::QuestionBody;
pub use read_file::ReadBody;
pub use search::SearchBody;
pub use todo_list::TodoList;
pub use tool_output::ToolOutputView;
pub use web::WebBody;
pub use write_file::WriteBody;

/// A one-line summary of a tool call's input (command, path, pattern …).
pub fn summary(name: &str, input: &Value) -> String {
    let s = match name {
        "Bash" => field(input, "command")
            .lines()
            .next()
            .unwrap_or_default()
            .to_string(),
        "Read" | "Write" | "Edit" | "MultiEdit" | "NotebookEdit" => {
            let p = field(input, "file_path");
            if p.is_empty() {
                field(input, "notebook_path").to_string()
            } else {
                p.to_string()
            }
        }
        "Glob" | "Grep" => field(input, "pattern").to_string(),
        "WebFetch" => field(input, "url").to_string(),
        "WebSearch" => field(input, "query").to_string(),
        "Task" | "Agent" => field(input, "description").to_string(),
        "TaskCreate" => field(input, "subject").to_string(),
        "TaskUpdate" | "TaskGet" => format!("#{}", field(input, "taskId")),
        "TodoWrite" => {
            format!("{} items", items(input, "todos").len())
        }
        _ => String::new(),
    };
    let s: String = s.chars().take(160).collect();
    s
}

/// Human label of a status.
pub fn status_label(tool: &ToolCall, observer: bool) -> String {
    match tool.status {
        ToolStatus::Streaming => "writing…".into(),
        ToolStatus::PendingPermission if observer => "waiting for the controller".into(),
        ToolStatus::PendingPermission => "needs your permission".into(),
        ToolStatus::Running => match tool.progress_secs {
            Some(s) => format!("running · {s:.0}s"),
            None => "running".into(),
        },
        ToolStatus::Done => "done".into(),
        ToolStatus::Error => "error".into(),
        ToolStatus::Denied => "denied".into(),
    }
}

/// A tool call card keyed by `tool_use_id` (`data-testid="tool-call"`, `data-tool-name`,
/// `data-tool-use-id`, `data-status`): a per-tool body, the edit a person made before it ran, the
/// result (long output collapsed with "show all"), and a subagent's nested activity.
/// It re-renders only when the call itself changes.
#[component]
pub fn ToolCard(
    /// `tool_use_id`.
    tool_id: String,
    /// Revision of the row holding the card (bumped by any change to the card).
    rev: Memo<u64>,
) -> impl IntoView {
    let session = Store::expect().session;
    let id = tool_id.clone();
    let tool = Memo::new(move |_| {
        let _ = rev.get();
        session.with_untracked(|s| s.tool(&id).cloned())
    });
    let observer = session.with_untracked(|s| s.is_observer());
    move || match tool.get() {
        Some(t) => render_tool(t, observer),
        None => view! { <div class="tool-card missing">{format!("Tool call {tool_id}")}</div> }
            .into_any(),
    }
}

fn render_tool(tool: ToolCall, observer: bool) -> AnyView {
    let status = tool.status.as_str();
    let label = status_label(&tool, observer);
    let input = tool.display_input();
    let name = tool.name.clone();
    let (display_name, server) = match name.strip_prefix("mcp__") {
        Some(rest) => {
            let mut it = rest.splitn(2, "__");
            let server = it.next().unwrap_or_default().to_string();
            (it.next().unwrap_or(rest).to_string(), Some(server))
        }
        None => (name.clone(), None),
    };
    let summary_text = summary(&name, &input);
    let body = match name.as_str() {
        "Bash" => view! { <BashBody tool=tool.clone() /> }.into_any(),
        "Read" => view! { <ReadBody input=input.clone() /> }.into_any(),
        "Edit" | "MultiEdit" => view! { <EditBody input=input.clone() /> }.into_any(),
        "Write" => view! { <WriteBody input=input.clone() id=tool.id.clone() /> }.into_any(),
        "Glob" | "Grep" => view! { <SearchBody input=input.clone() /> }.into_any(),
        "WebFetch" | "WebSearch" => view! { <WebBody input=input.clone() /> }.into_any(),
        "TodoWrite" => view! { <TodoList input=input.clone() /> }.into_any(),
        "TaskCreate" | "TaskUpdate" | "TaskList" | "TaskGet" => {
            view! { <crate::components::task_list::TaskToolBody tool=tool.clone() /> }.into_any()
        }
        "Task" | "Agent" => view! { <AgentBody tool=tool.clone() /> }.into_any(),
        "AskUserQuestion" => view! { <QuestionBody input=input.clone() /> }.into_any(),
        "ExitPlanMode" => {
            let plan = field(&input, "plan").to_string();
            view! { <div class="plan"><Markdown text=plan /></div> }.into_any()
        }
        _ => view! { <GenericBody input=input.clone() server=server.clone() /> }.into_any(),
    };
    // The edit a person made in the permission dialog: what ran differs from the proposal.
    let edited = tool.ran_input.clone().map(|ran| {
        let (old, new) = if name == "Bash" {
            (
                field(&tool.input, "command").to_string(),
                field(&ran, "command").to_string(),
            )
        } else {
            (
                crate::format::pretty(&tool.input),
                crate::format::pretty(&ran),
            )
        };
        view! {
            <div class="edited-note" data-testid="tool-edited">
                <span class="chip warn">"Edited before running"</span>
                <DiffView old=old new=new label="Proposed → ran".to_string() />
            </div>
        }
    });
    let deny = (tool.status == ToolStatus::Denied)
        .then(|| tool.deny_message.clone())
        .flatten()
        .map(|m| view! { <div class="deny-note" role="note">{format!("Denied: {m}")}</div> });
    let task = tool.task.clone().map(|t| {
        let text = [
            t.status.unwrap_or_default(),
            t.summary.or(t.description).unwrap_or_default(),
        ]
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" · ");
        view! { <div class="task-note">{format!("Background task: {text}")}</div> }
    });
    let output = tool
        .output
        .clone()
        .filter(|_| tool.status != ToolStatus::Denied || tool.deny_message.is_none())
        // A task tool's result is in its one-line body (failures still show in full).
        .filter(|o| {
            o.is_error
                || !matches!(
                    tool.name.as_str(),
                    "TaskCreate" | "TaskUpdate" | "TaskList" | "TaskGet"
                )
        })
        .map(|o| {
            // CLI 2.1.332 starts Task as a background agent and answers with a page of notes meant
            // for the model (ids, where its transcript goes): one line for people, the notes folded.
            let launched = matches!(tool.name.as_str(), "Task" | "Agent")
                && !o.is_error
                && o.text.starts_with("Async agent launched");
            let out =
                view! { <ToolOutputView id=tool.id.clone() text=o.text is_error=o.is_error /> };
            if launched {
                view! {
                    <details class="inline-details launch-notes">
                        <summary>"Launch notes (meant for the model)"</summary>
                        {out}
                    </details>
                }
                .into_any()
            } else {
                out.into_any()
            }
        });
    let children = tool.children.clone();
    let nested = (!children.is_empty()).then(|| {
        view! {
            <div class="subagent" role="group" aria-label="Subagent activity">
                {children.into_iter().map(|k| view! { <MessageRow row_key=k /> }).collect_view()}
            </div>
        }
    });
    let aria = format!("{display_name} tool call: {label}");
    view! {
        <section
            class=format!("tool-card status-{status}")
            data-testid="tool-call"
            data-tool-name=name.clone()
            data-tool-use-id=tool.id.clone()
            data-status=status
            role="group"
            aria-label=aria
        >
            <header class="tool-head">
                <span class="tool-name">{server.map(|s| format!("{s} · ")).unwrap_or_default()}{display_name}</span>
                <span class="tool-summary" title=summary_text.clone()>{summary_text.clone()}</span>
                <span class=format!("tool-status status-{status}") role="status">{label}</span>
            </header>
            <div class="tool-body">{body}</div>
            {edited}
            {deny}
            {task}
            {output}
            {nested}
        </section>
    }
    .into_any()
}
