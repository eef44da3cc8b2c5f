//! Session state badge.

use leptos::prelude::*;

use crate::store::Store;

/// idle / running / requires_action / ended (`data-testid="session-state"`), plus the "needs you"
/// marker while a prompt waits for this console.
#[component]
pub fn SessionStateBadge() -> impl IntoView {
    let store = Store::expect();
    let state = move || store.session.with(|s| s.state().to_string());
    let label = move || match state().as_str() {
        "running" => "Running",
        "requires_action" => "Waiting for approval",
        "ended" => "Ended",
        _ => "Idle",
    };
    view! {
        <span
            class=move || format!("badge state-{}", state())
            data-testid="session-state"
            data-state=state
            role="status"
            aria-label=move || format!("Session state: {}", label())
        >
            {label}
        </span>
        {move || store.session.with(|s| s.needs_you()).then(|| view! {
            <span class="badge needs-you" data-testid="needs-you" role="status">"● Needs you"</span>
        })}
    }
}
