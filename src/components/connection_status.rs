//! Connection state indicator.

use leptos::prelude::*;

use crate::store::Store;

/// Connecting / live / reconnecting in Ns / offline (`data-testid="connection-status"`).
#[component]
pub fn ConnectionStatus() -> impl IntoView {
    let store = Store::expect();
    // Ticks while reconnecting, for the countdown.
    let now = RwSignal::new(js_sys::Date::now());
    if let Ok(h) = set_interval_with_handle(
        move || {
            if store.conn.with_untracked(|c| c.as_str() == "reconnecting") {
                now.set(js_sys::Date::now());
            }
        },
        std::time::Duration::from_millis(500),
    ) {
        on_cleanup(move || h.clear());
    }
    let label = move || {
        store
            .conn
            .with(|c| c.label_at(now.get().max(js_sys::Date::now())))
    };
    view! {
        <span
            class=move || format!("conn conn-{}", store.conn.with(|c| c.as_str()))
            data-testid="connection-status"
            data-state=move || store.conn.with(|c| c.as_str())
            role="status"
            aria-label=move || format!("Connection: {}", label())
        >
            <span class="dot" aria-hidden="true"></span>
            {label}
        </span>
    }
}
