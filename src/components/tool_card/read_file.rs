//! Read tool body.

use leptos::prelude::*;
use serde_json::Value;

use crate::format::field;

/// The file and the line range read.
#[component]
pub fn ReadBody(
    /// Tool input.
    input: Value,
) -> impl IntoView {
    let path = field(&input, "file_path").to_string();
    let range = match (
        input.get("offset").and_then(Value::as_u64),
        input.get("limit").and_then(Value::as_u64),
    ) {
        (Some(o), Some(l)) => format!("lines {o}–{}", o + l),
        (Some(o), None) => format!("from line {o}"),
        (None, Some(l)) => format!("first {l} lines"),
        _ => String::new(),
    };
    view! {
        <div class="file-line"><code class="path">{path}</code>{(!range.is_empty()).then(|| view! { <span class="muted">{format!(" · {range}")}</span> })}</div>
    }
}
