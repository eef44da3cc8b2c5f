//! Body of a task-tool card (TaskCreate, TaskUpdate, TaskList, TaskGet).

use leptos::prelude::*;

use crate::state::ToolCall;
use crate::state::tasks::card_line;

/// One line instead of the call's JSON: "Created task 3: Write the parser", "Task 1: pending → in
/// progress", "Listed 2 tasks" (`data-testid="task-call"`). The list itself is pinned above the
/// transcript.
#[component]
pub fn TaskToolBody(
    /// The call.
    tool: ToolCall,
) -> impl IntoView {
    let input = tool.display_input();
    let line = card_line(
        &tool.name,
        &input,
        tool.output
            .as_ref()
            .map(|o| (o.text.as_str(), o.structured.as_ref(), o.is_error)),
    );
    view! { <p class="task-call" data-testid="task-call">{line}</p> }
}
