//! Any other tool (MCP tools included).

use leptos::prelude::*;
use serde_json::Value;

use crate::format::pretty;

/// The input as JSON (MCP tools show their server).
#[component]
pub fn GenericBody(
    /// Tool input.
    input: Value,
    /// MCP server name, for `mcp__server__tool` tools.
    server: Option<String>,
) -> impl IntoView {
    let empty = input.as_object().is_some_and(|o| o.is_empty());
    view! {
        {server.map(|s| view! { <div class="muted">{format!("MCP server: {s}")}</div> })}
        {(!empty).then(|| view! { <pre class="code json">{pretty(&input)}</pre> })}
    }
}
