//! An assistant message row.

use leptos::prelude::*;

use crate::components::{Markdown, ToolCard};
use crate::state::{AssistantMsg, Block, Item, ItemKind};
use crate::store::Store;

/// Identity of a block slot: its position, kind and (for tool calls) id. A slot keeps its DOM
/// while its content grows.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct SlotKey {
    index: usize,
    kind: &'static str,
    tool: String,
}

fn slot_key(index: usize, block: &Block) -> SlotKey {
    let (kind, tool) = match block {
        Block::Text(_) => ("text", String::new()),
        Block::Thinking(_) => ("thinking", String::new()),
        Block::RedactedThinking => ("redacted", String::new()),
        Block::ToolUse(id) => ("tool", id.clone()),
        Block::Other(_) => ("other", String::new()),
    };
    SlotKey { index, kind, tool }
}

/// An assistant message: markdown text (streaming live), thinking, tool call cards, other blocks.
/// Each block updates on its own; while text streams only its last markdown block is rebuilt.
#[component]
pub fn AssistantRow(
    /// Row key.
    row_key: String,
    /// The row's revision.
    rev: Memo<u64>,
) -> impl IntoView {
    let session = Store::expect().session;
    let msg: Memo<Option<AssistantMsg>> = Memo::new(move |_| {
        let _ = rev.get();
        session.with_untracked(|s| match s.item(&row_key) {
            Some(Item {
                kind: ItemKind::Assistant(a),
                ..
            }) => Some(a.clone()),
            _ => None,
        })
    });
    let slots = Memo::new(move |_| {
        msg.with(|m| {
            m.as_ref()
                .map(|m| {
                    m.blocks
                        .iter()
                        .enumerate()
                        .map(|(i, s)| slot_key(i, &s.block))
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default()
        })
    });
    let synthetic =
        move || msg.with(|m| m.as_ref().and_then(|m| m.model.as_deref()) == Some("<synthetic>"));
    let error = move || msg.with(|m| m.as_ref().and_then(|m| m.error.clone()));
    let typing = move || {
        msg.with(|m| {
            m.as_ref()
                .is_some_and(|m| m.blocks.is_empty() && m.streaming)
        })
    };
    view! {
        <div class="assistant" class:synthetic=synthetic class:error=move || error().is_some()>
            {move || error().map(|e| view! { <div class="error-label" role="alert">{format!("API error ({e})")}</div> })}
            <For each=move || slots.get() key=|k| k.clone() let:k>
                {render_slot(msg, rev, k)}
            </For>
            {move || typing().then(|| view! {
                <div class="typing" role="status" aria-label="Claude is writing"><span></span><span></span><span></span></div>
            })}
        </div>
    }
}

fn render_slot(msg: Memo<Option<AssistantMsg>>, rev: Memo<u64>, key: SlotKey) -> AnyView {
    let i = key.index;
    let live = Signal::derive(move || {
        msg.with(|m| {
            m.as_ref()
                .and_then(|m| m.blocks.get(i))
                .is_some_and(|s| s.open && !s.durable)
        })
    });
    let text = Signal::derive(move || {
        msg.with(
            |m| match m.as_ref().and_then(|m| m.blocks.get(i)).map(|s| &s.block) {
                Some(Block::Text(t) | Block::Thinking(t)) => t.clone(),
                _ => String::new(),
            },
        )
    });
    match key.kind {
        "text" => view! {
            <div class="assistant-text" data-testid="assistant-text" data-streaming=move || live.get().to_string()>
                <Markdown text=text />
                {move || live.get().then(|| view! { <span class="cursor" aria-hidden="true"></span> })}
            </div>
        }
        .into_any(),
        "thinking" => view! {
            <details class="thinking" data-testid="thinking-block" aria-label="Thinking" data-streaming=move || live.get().to_string() open=move || live.get()>
                <summary>{move || if live.get() { "Thinking…" } else { "Thinking" }}</summary>
                <div class="thinking-text">{move || text.get()}</div>
            </details>
        }
        .into_any(),
        "redacted" => view! {
            <div class="thinking redacted" data-testid="thinking-block" data-redacted="true" role="note" aria-label="Thinking (redacted)">"Thinking (redacted)"</div>
        }
        .into_any(),
        "tool" => view! { <ToolCard tool_id=key.tool rev=rev /> }.into_any(),
        _ => {
            let v = msg.with_untracked(|m| match m.as_ref().and_then(|m| m.blocks.get(i)).map(|s| &s.block) {
                Some(Block::Other(v)) => v.clone(),
                _ => serde_json::Value::Null,
            });
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
}
