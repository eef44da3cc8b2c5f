//! An assistant message row.

use leptos::prelude::*;

use crate::components::{Markdown, ToolCard};
use crate::state::{AssistantMsg, Block};

/// An assistant message: markdown text (streaming live), thinking, tool call cards, other blocks.
#[component]
pub fn AssistantRow(
    /// The message.
    msg: AssistantMsg,
) -> impl IntoView {
    let streaming = msg.streaming;
    let synthetic = msg.model.as_deref() == Some("<synthetic>");
    let error = msg.error.clone();
    let has_error = error.is_some();
    let empty = msg.blocks.is_empty();
    let blocks = msg
        .blocks
        .into_iter()
        .map(|slot| {
            let live = slot.open && !slot.durable;
            match slot.block {
                Block::Text(t) => view! {
                    <div class="assistant-text" data-testid="assistant-text" data-streaming=live.to_string()>
                        <Markdown text=t />
                        {live.then(|| view! { <span class="cursor" aria-hidden="true"></span> })}
                    </div>
                }
                .into_any(),
                Block::Thinking(t) => view! {
                    <details class="thinking" data-testid="thinking-block" data-streaming=live.to_string() open=live>
                        <summary>{if live { "Thinking…" } else { "Thinking" }}</summary>
                        <div class="thinking-text">{t}</div>
                    </details>
                }
                .into_any(),
                Block::RedactedThinking => view! {
                    <div class="thinking redacted" data-testid="thinking-block" data-redacted="true">
                        "Thinking (redacted)"
                    </div>
                }
                .into_any(),
                Block::ToolUse(id) => view! { <ToolCard tool_id=id /> }.into_any(),
                Block::Other(v) => {
                    let ty = v.get("type").and_then(|t| t.as_str()).unwrap_or("block").to_string();
                    view! {
                        <details class="other-block">
                            <summary>{ty}</summary>
                            <pre class="code">{crate::format::pretty(&v)}</pre>
                        </details>
                    }
                    .into_any()
                }
            }
        })
        .collect_view();
    view! {
        <div class="assistant" class:synthetic=synthetic class:error=has_error>
            {error.map(|e| view! { <div class="error-label" role="alert">{format!("API error ({e})")}</div> })}
            {blocks}
            {(empty && streaming).then(|| view! {
                <div class="typing" role="status" aria-label="Claude is writing"><span></span><span></span><span></span></div>
            })}
        </div>
    }
}
