//! Session state badge.

use leptos::prelude::*;

use crate::store::Store;

/// A live state (`role="status"`, `data-state`): classed `class` + the state (`badge state-` →
/// `badge state-running`), showing `label` (after a dot, with `dot`), named "`what`: `label`".
#[component]
pub fn StatusBadge(
    /// The class, which the state completes.
    class: &'static str,
    /// `data-testid`.
    test_id: &'static str,
    /// What the state is of, for the accessible name.
    what: &'static str,
    /// The state.
    state: Signal<String>,
    /// The state in words.
    label: Signal<String>,
    /// Whether a coloured dot comes first.
    #[prop(optional)]
    dot: bool,
) -> impl IntoView {
    view! {
        <span
            class=move || format!("{class}{}", state.get())
            data-testid=test_id
            data-state=state
            role="status"
            aria-label=move || format!("{what}: {}", label.get())
        >
            {dot.then(|| view! { <span class="dot" aria-hidden="true"></span> })}
            {label}
        </span>
    }
}

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
        <StatusBadge
            class="badge state-"
            test_id="session-state"
            what="Session state"
            state=Signal::derive(state)
            label=Signal::derive(move || label().to_string())
        />
        {move || store.session.with(|s| s.needs_you()).then(|| view! {
            <span class="badge needs-you" data-testid="needs-you" role="status">"● Needs you"</span>
        })}
    }
}
