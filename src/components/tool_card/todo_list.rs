//! TodoWrite tool body.

use leptos::prelude::*;
use serde_json::Value;

use crate::format::{field, items};

/// The todo list as a checklist (pending / in progress / done).
#[component]
pub fn TodoList(
    /// Tool input.
    input: Value,
) -> impl IntoView {
    let todos: Vec<(String, String)> = items(&input, "todos")
        .iter()
        .map(|i| {
            let text = if field(i, "status") == "in_progress" && !field(i, "activeForm").is_empty()
            {
                field(i, "activeForm")
            } else {
                field(i, "content")
            };
            (text.to_string(), field(i, "status").to_string())
        })
        .collect();
    view! {
        <ul class="todo-list" role="list" aria-label="Todo list">
            {todos
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
