//! The observer banner.

use leptos::prelude::*;

/// Says this console only mirrors the session (`data-testid="observer-banner"`).
#[component]
pub fn ObserverBanner() -> impl IntoView {
    view! {
        <div class="observer-banner" data-testid="observer-banner" role="status" aria-label="Observer mode">
            <strong>"Observing"</strong>
            " — a read-only mirror of this session. Prompts are answered by the controller."
        </div>
    }
}
