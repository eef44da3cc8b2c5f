//! WebFetch / WebSearch tool body.

use leptos::prelude::*;
use serde_json::Value;

use crate::format::field;
use crate::markdown::safe_url;

/// The URL (a link only when its scheme is safe) or query, and the prompt.
#[component]
pub fn WebBody(
    /// Tool input.
    input: Value,
) -> impl IntoView {
    let url = field(&input, "url").to_string();
    let query = field(&input, "query").to_string();
    let prompt = field(&input, "prompt").to_string();
    let link = (!url.is_empty()).then(|| {
        if safe_url(&url) && (url.starts_with("http://") || url.starts_with("https://")) {
            view! { <a href=url.clone() rel="noopener noreferrer nofollow" target="_blank">{url.clone()}</a> }.into_any()
        } else {
            view! { <code>{url.clone()}</code> }.into_any()
        }
    });
    view! {
        {link.map(|l| view! { <div class="file-line">{l}</div> })}
        {(!query.is_empty()).then(|| view! { <div class="file-line">"Search: "<code>{query}</code></div> })}
        {(!prompt.is_empty()).then(|| view! { <div class="tool-desc">{prompt}</div> })}
    }
}
