//! Glob / Grep tool body.

use leptos::prelude::*;
use serde_json::Value;

use crate::format::field;

/// Pattern, path and filters of a search.
#[component]
pub fn SearchBody(
    /// Tool input.
    input: Value,
) -> impl IntoView {
    let pattern = field(&input, "pattern").to_string();
    let mut extra = Vec::new();
    for k in ["path", "glob", "type", "output_mode"] {
        let v = field(&input, k);
        if !v.is_empty() {
            extra.push(format!("{k}: {v}"));
        }
    }
    view! {
        <div class="file-line"><code>{pattern}</code></div>
        {(!extra.is_empty()).then(|| view! { <div class="muted">{extra.join(" · ")}</div> })}
    }
}
