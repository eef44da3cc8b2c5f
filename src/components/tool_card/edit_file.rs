//! Edit / MultiEdit tool body.

use leptos::prelude::*;
use serde_json::Value;

use crate::components::DiffView;
use crate::format::{field, flag};

/// The file and a diff of each replacement (old → new).
#[component]
pub fn EditBody(
    /// Tool input.
    input: Value,
) -> impl IntoView {
    let path = field(&input, "file_path").to_string();
    let edits: Vec<(String, String, bool)> = match input.get("edits").and_then(Value::as_array) {
        Some(list) => list
            .iter()
            .map(|e| {
                (
                    field(e, "old_string").to_string(),
                    field(e, "new_string").to_string(),
                    flag(e, "replace_all"),
                )
            })
            .collect(),
        None => vec![(
            field(&input, "old_string").to_string(),
            field(&input, "new_string").to_string(),
            flag(&input, "replace_all"),
        )],
    };
    let n = edits.len();
    view! {
        <div class="file-line"><code class="path">{path}</code></div>
        {edits
            .into_iter()
            .enumerate()
            .map(|(i, (old, new, all))| {
                // The path is on the line above; several edits are numbered.
                let diff = if n > 1 {
                    view! { <DiffView old=old new=new label=format!("Edit {} of {n}", i + 1) /> }.into_any()
                } else {
                    view! { <DiffView old=old new=new /> }.into_any()
                };
                view! {
                    {diff}
                    {all.then(|| view! { <span class="chip">"replace all"</span> })}
                }
            })
            .collect_view()}
    }
}
