//! The session list.

pub mod session_item;

use leptos::prelude::*;

use crate::components::NewSessionForm;
use crate::store::Store;

pub use session_item::SessionItem;

/// Sessions with their state, cwd, model, pending prompts and last activity
/// (`data-testid="session-list"`); controllers also get "new session" and archive. Refreshes every
/// few seconds.
#[component]
pub fn SessionList() -> impl IntoView {
    let store = Store::expect();
    store.refresh_sessions();
    if let Ok(handle) = set_interval_with_handle(
        move || store.refresh_sessions(),
        std::time::Duration::from_secs(4),
    ) {
        on_cleanup(move || handle.clear());
    }
    // The open session's state is known live from its stream: refresh the list as soon as it
    // changes, so the list's badge never lags the header by a polling interval.
    Effect::new(move |prev: Option<String>| {
        let now = store.session.with(|s| s.state().as_str().to_string());
        if prev.as_ref().is_some_and(|p| *p != now) {
            store.refresh_sessions();
        }
        now
    });
    let controller = move || {
        store
            .me
            .with(|m| m.as_ref().is_some_and(|m| !m.is_observer()))
    };
    let item_key = |s: &crate::net::SessionSummary| {
        format!(
            "{}|{}|{}|{}|{:?}|{:?}|{:?}",
            s.id,
            s.state,
            s.pending_permissions,
            s.model.clone().unwrap_or_default(),
            s.last_activity_at,
            s.title,
            s.cwd
        )
    };
    view! {
        <nav class="session-list" data-testid="session-list" aria-label="Sessions">
            <div class="list-head">
                <h2>"Sessions"</h2>
            </div>
            {move || controller().then(|| view! { <NewSessionForm /> })}
            <ul class="sessions" role="list">
                <For each=move || store.sessions.get() key=item_key let:s>
                    <SessionItem summary=s />
                </For>
            </ul>
            {move || store.sessions.with(Vec::is_empty).then(|| view! {
                <p class="muted empty">"No sessions yet."</p>
            })}
        </nav>
    }
}
