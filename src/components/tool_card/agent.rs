//! Task / Agent tool body.

use leptos::prelude::*;

use crate::format::{field, flag};
use crate::state::ToolCall;

/// The subagent's type, description and prompt (collapsed). Its activity is nested by the card.
#[component]
pub fn AgentBody(
    /// The call.
    tool: ToolCall,
) -> impl IntoView {
    let input = tool.display_input();
    let kind = field(&input, "subagent_type").to_string();
    let prompt = field(&input, "prompt").to_string();
    let background = flag(&input, "run_in_background");
    view! {
        <div class="agent-meta">
            {(!kind.is_empty()).then(|| view! { <span class="chip">{kind}</span> })}
            {background.then(|| view! { <span class="chip">"background"</span> })}
        </div>
        {(!prompt.is_empty()).then(|| view! {
            <details class="inline-details"><summary>"Prompt"</summary><div class="user-text">{prompt}</div></details>
        })}
    }
}
