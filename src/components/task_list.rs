//! The session's task list, pinned above the transcript.

pub mod tool_body;

use leptos::prelude::*;

use crate::state::{Task, TaskStatus};
use crate::store::Store;

pub use tool_body::TaskToolBody;

fn mark(status: &TaskStatus) -> &'static str {
    match status {
        TaskStatus::Completed => "☑",
        TaskStatus::InProgress => "◐",
        TaskStatus::Pending => "☐",
        TaskStatus::Other(_) => "·",
    }
}

/// The task list the agent keeps with its task tools, as a live checklist like the terminal's
/// (`data-testid="task-list"`; each row `task-item` with `data-status` pending / in_progress /
/// completed): the active form while a task is in progress, finished ones struck through. Folds
/// to one line (progress and the current task); hidden while the list is empty.
#[component]
pub fn TaskListPanel() -> impl IntoView {
    let store = Store::expect();
    let tasks = Memo::new(move |_| store.session.with(|s| s.tasks().tasks().to_vec()));
    let open = RwSignal::new(true);
    move || {
        let list = tasks.get();
        (!list.is_empty()).then(|| {
            let done = list
                .iter()
                .filter(|t| t.status == TaskStatus::Completed)
                .count();
            let total = list.len();
            let current = list
                .iter()
                .find(|t| t.status == TaskStatus::InProgress)
                .map(|t| t.label().to_string());
            let progress = format!("{done}/{total} done");
            let aria = format!("Tasks: {progress}");
            view! {
                <section
                    class="task-panel"
                    class:open=move || open.get()
                    data-testid="task-list"
                    data-done=done.to_string()
                    data-total=total.to_string()
                    aria-label="Tasks"
                >
                    <button
                        class="task-panel-head"
                        data-testid="task-list-toggle"
                        aria-expanded=move || open.get().to_string()
                        aria-label=aria
                        on:click=move |_| open.update(|o| *o = !*o)
                    >
                        <span class="task-panel-title">"Tasks"</span>
                        <span class="task-progress">{progress}</span>
                        <span class="task-current">{current.map(|c| format!("◐ {c}"))}</span>
                        <span class="task-chevron" aria-hidden="true">{move || if open.get() { "▾" } else { "▸" }}</span>
                    </button>
                    <ul class="task-items" role="list" hidden=move || !open.get()>
                        {list.into_iter().map(task_row).collect_view()}
                    </ul>
                </section>
            }
        })
    }
}

fn task_row(t: Task) -> impl IntoView {
    let status = t.status.as_str().to_string();
    let checked = (t.status == TaskStatus::Completed).to_string();
    let title = if t.description.is_empty() {
        t.subject.clone()
    } else {
        format!("{} — {}", t.subject, t.description)
    };
    let blocked = (!t.blocked_by.is_empty() && t.status != TaskStatus::Completed).then(|| {
        format!(
            "waits for {}",
            t.blocked_by
                .iter()
                .map(|b| format!("#{b}"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    });
    view! {
        <li
            class=format!("task-item {status}")
            data-testid="task-item"
            data-status=status
            data-task-id=t.id.clone()
            role="listitem"
            aria-checked=checked
            title=title
        >
            <span class="task-mark" aria-hidden="true">{mark(&t.status)}</span>
            <span class="task-label">{t.label().to_string()}</span>
            {blocked.map(|b| view! { <span class="task-blocked">{b}</span> })}
            {t.owner.map(|o| view! { <span class="task-owner">{o}</span> })}
        </li>
    }
}
