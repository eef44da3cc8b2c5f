//! An unknown frame.

use leptos::prelude::*;

use crate::state::RawRow;

/// A frame of a type this console does not know, collapsed; expanding shows its JSON.
#[component]
pub fn RawRowView(
    /// The row.
    row: RawRow,
) -> impl IntoView {
    view! {
        <details class="raw" data-testid="raw-message" aria-label="Unrecognised message" data-label=row.label.clone()>
            <summary>{format!("Unrecognised message: {}", row.label)}</summary>
            <pre class="code">{row.json}</pre>
        </details>
    }
}
