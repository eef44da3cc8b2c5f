//! Write tool body.

use leptos::prelude::*;
use serde_json::Value;

use crate::components::tool_card::tool_output::collapse;
use crate::format::field;
use crate::store::Store;

/// The file and a preview of its content (collapsed when long).
#[component]
pub fn WriteBody(
    /// Tool input.
    input: Value,
    /// Tool id (for the expanded state).
    id: String,
) -> impl IntoView {
    let store = Store::expect();
    let path = field(&input, "file_path").to_string();
    let content = field(&input, "content").to_string();
    let lines = content.lines().count();
    let (short, cut) = collapse(&content);
    let key = format!("write:{id}");
    let key2 = key.clone();
    let expanded = Signal::derive(move || store.is_expanded(&key));
    view! {
        <div class="file-line"><code class="path">{path}</code><span class="muted">{format!(" · {lines} lines")}</span></div>
        <pre class="code preview">{move || if expanded.get() { content.clone() } else { short.clone() }}</pre>
        {cut.then(|| view! {
            <button class="link-button" aria-expanded=move || expanded.get().to_string() on:click=move |_| store.toggle_expanded(&key2)>
                {move || if expanded.get() { "Show less".to_string() } else { format!("Show all ({lines} lines)") }}
            </button>
        })}
    }
}
