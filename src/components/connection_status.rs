//! Connection state indicator.

use leptos::prelude::*;

use crate::store::Store;

/// Connecting / live / reconnecting in Ns / offline (`data-testid="connection-status"`).
#[component]
pub fn ConnectionStatus() -> impl IntoView {
    let store = Store::expect();
    view! {
        <span
            class=move || format!("conn conn-{}", store.conn.with(|c| c.as_str()))
            data-testid="connection-status"
            data-state=move || store.conn.with(|c| c.as_str())
            role="status"
            aria-label=move || format!("Connection: {}", store.conn.with(|c| c.label()))
        >
            <span class="dot" aria-hidden="true"></span>
            {move || store.conn.with(|c| c.label())}
        </span>
    }
}
