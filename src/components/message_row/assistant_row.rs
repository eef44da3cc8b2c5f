//! An assistant message row.

use leptos::prelude::*;

use crate::components::markdown_view::MdSource;
use crate::components::{Markdown, ToolCard};
use crate::state::{AssistantMsg, Block, Item, ItemKind, Session};
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

/// The row's message, read in place where the session keeps it (tracking the row's revision):
/// nothing of a streaming message is copied per update.
#[derive(Clone, Copy)]
struct MsgRef {
    rev: Memo<u64>,
    session: RwSignal<Session>,
    key: StoredValue<String>,
}

impl MsgRef {
    /// `f` of the message (`R::default()` while the row has none).
    fn with<R: Default>(self, f: impl FnOnce(&AssistantMsg) -> R) -> R {
        self.rev.track();
        self.session.with_untracked(|s| {
            self.key.with_value(|k| match s.item(k) {
                Some(Item {
                    kind: ItemKind::Assistant(a),
                    ..
                }) => f(a),
                _ => R::default(),
            })
        })
    }
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
    let msg = MsgRef {
        rev,
        session: Store::expect().session,
        key: StoredValue::new(row_key),
    };
    let slots = Memo::new(move |_| {
        msg.with(|m| {
            m.blocks
                .iter()
                .enumerate()
                .map(|(i, s)| slot_key(i, &s.block))
                .collect::<Vec<_>>()
        })
    });
    let synthetic = Memo::new(move |_| msg.with(|m| m.model.as_deref() == Some("<synthetic>")));
    let error = Memo::new(move |_| msg.with(|m| m.error.clone()));
    let typing = Memo::new(move |_| msg.with(|m| m.blocks.is_empty() && m.streaming));
    view! {
        <div class="assistant" class:synthetic=synthetic class:error=move || error.with(Option::is_some)>
            {move || error.get().map(|e| view! { <div class="error-label" role="alert">{format!("API error ({e})")}</div> })}
            <For each=move || slots.get() key=|k| k.clone() let:k>
                {render_slot(msg, rev, k)}
            </For>
            {move || typing.get().then(|| view! {
                <div class="typing" role="status" aria-label="Claude is writing"><span></span><span></span><span></span></div>
            })}
        </div>
    }
}

fn render_slot(msg: MsgRef, rev: Memo<u64>, key: SlotKey) -> AnyView {
    let i = key.index;
    let live =
        Memo::new(move |_| msg.with(|m| m.blocks.get(i).is_some_and(|s| s.open && !s.durable)));
    // The block's text, lent where it is kept.
    let read = move |f: &mut dyn FnMut(&str)| {
        msg.with(|m| match m.blocks.get(i).map(|s| &s.block) {
            Some(Block::Text(t) | Block::Thinking(t)) => f(t),
            _ => f(""),
        })
    };
    let text = MdSource::reader(read);
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
                <div class="thinking-text">{move || { let mut out = String::new(); read(&mut |t| out = t.to_owned()); out }}</div>
            </details>
        }
        .into_any(),
        "redacted" => view! {
            <div class="thinking redacted" data-testid="thinking-block" data-redacted="true" role="note" aria-label="Thinking (redacted)">"Thinking (redacted)"</div>
        }
        .into_any(),
        "tool" => view! { <ToolCard tool_id=key.tool rev=rev /> }.into_any(),
        _ => {
            let v = untrack(|| msg.with(|m| match m.blocks.get(i).map(|s| &s.block) {
                Some(Block::Other(v)) => v.clone(),
                _ => serde_json::Value::Null,
            }));
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
