//! The turn footer.

use leptos::prelude::*;

use crate::format;
use crate::state::ResultRow;

/// A `result`: duration, turns, tokens, cost and the session's running total; errors (including API
/// errors reported inside a `success` result) stand out.
#[component]
pub fn ResultFooter(
    /// The result.
    row: ResultRow,
) -> impl IntoView {
    let headline = if !row.is_error {
        "Done".to_string()
    } else if row.subtype == "error_during_execution" {
        match row.terminal_reason.as_deref() {
            Some(r) if r.starts_with("aborted") => "Interrupted".to_string(),
            _ => "Stopped with an error".to_string(),
        }
    } else if let Some(status) = row.api_error_status {
        format!("API error {status}")
    } else {
        match row.subtype.as_str() {
            "error_max_turns" => "Stopped: turn limit reached".into(),
            "error_max_budget_usd" => "Stopped: budget reached".into(),
            _ => "Error".into(),
        }
    };
    let mut parts = Vec::new();
    if let Some(ms) = row.duration_ms {
        parts.push(format::duration_ms(ms));
    }
    if let Some(n) = row.num_turns {
        parts.push(format!("{n} turn{}", if n == 1 { "" } else { "s" }));
    }
    // Unknown tokens (a replayed terminal session) say nothing rather than a false 0.
    if let (Some(input), Some(output)) = (row.input_tokens, row.output_tokens) {
        parts.push(format!(
            "{} in · {} out",
            format::tokens(input),
            format::tokens(output)
        ));
    }
    parts.push(format!(
        "{} (session {})",
        format::cost(row.turn_cost),
        format::cost(row.session_cost)
    ));
    if row.denials > 0 {
        parts.push(format!("{} denied", row.denials));
    }
    // The CLI's internal diagnostics stay out of sight, in the details.
    let (errors, diagnostics) = format::split_diagnostics(&row.errors);
    view! {
        <div
            class="result-summary"
            class:error=row.is_error
            data-testid="result-summary"
            data-is-error=row.is_error.to_string()
            data-subtype=row.subtype.clone()
            role="note"
            aria-label="Turn summary"
        >
            <span class="result-head">{if row.is_error { "⚠ " } else { "✓ " }}{headline}</span>
            <span class="result-stats">{parts.join(" · ")}</span>
            {(!errors.is_empty()).then(|| view! {
                <ul class="result-errors" role="alert">
                    {errors.into_iter().map(|e| view! { <li>{e}</li> }).collect_view()}
                </ul>
            })}
            {(!diagnostics.is_empty()).then(|| view! {
                <details class="inline-details result-diagnostics" data-testid="result-diagnostics">
                    <summary>"Details"</summary>
                    <pre class="code">{diagnostics.join("\n")}</pre>
                </details>
            })}
        </div>
    }
}
