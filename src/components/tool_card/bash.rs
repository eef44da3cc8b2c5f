//! Bash tool body.

use leptos::prelude::*;

use crate::format::{field, flag};
use crate::state::ToolCall;

/// The command (what actually ran, if it was edited) and its description.
#[component]
pub fn BashBody(
    /// The call.
    tool: ToolCall,
) -> impl IntoView {
    let input = tool.display_input();
    let command = field(&input, "command").to_string();
    let description = field(&input, "description").to_string();
    let background = flag(&input, "run_in_background");
    view! {
        {(!description.is_empty()).then(|| view! { <div class="tool-desc">{description}</div> })}
        <pre class="code command"><span class="prompt" aria-hidden="true">"$ "</span>{command}</pre>
        {background.then(|| view! { <span class="chip">"in background"</span> })}
    }
}
