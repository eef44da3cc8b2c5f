//! TodoWrite tool body.

use leptos::prelude::*;
use serde_json::Value;

use crate::format::field;

/// The todo list as a checklist (pending / in progress / done).
#[component]
pub fn TodoList(
    /// Tool input.
    input: Value,
) -> impl IntoView {
    let items: Vec<(String, String)> = input
        .get("todos")
        .and_then(Value::as_array)
        .map(|t| {
            t.iter()
                .map(|i| {
                    let text = if field(i, "status") == "in_progress"
                        && !field(i, "activeForm").is_empty()
                    {
                        field(i, "activeForm")
                    } else {
                        field(i, "content")
                    };
                    (text.to_string(), field(i, "status").to_string())
                })
                .collect()
        })
        .unwrap_or_default();
    view! {
        <ul class="todo-list" role="list" aria-label="Todo list">
            {items
                .into_iter()
                .map(|(text, status)| {
                    let mark = match status.as_str() {
                        "completed" => "☑",
                        "in_progress" => "◐",
                        _ => "☐",
                    };
                    view! {
                        <li class=format!("todo {status}") role="listitem" aria-checked=(status == "completed").to_string()>
                            <span class="todo-mark" aria-hidden="true">{mark}</span>
                            {text}
                        </li>
                    }
                })
                .collect_view()}
        </ul>
    }
}
