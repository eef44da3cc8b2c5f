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
    // An ended session's stream is complete, not offline.
    let ended = move || {
        store
            .session
            .with(|s| s.state() == crate::state::SessionState::Ended)
            && store.conn.with(|c| {
                matches!(
                    c,
                    crate::net::ConnState::Offline(_) | crate::net::ConnState::Ended
                )
            })
    };
    let state = move || {
        if ended() {
            "ended"
        } else {
            store.conn.with(|c| c.as_str())
        }
    };
    let label = move || {
        if ended() {
            return "Session ended".to_string();
        }
        store
            .conn
            .with(|c| c.label_at(now.get().max(js_sys::Date::now())))
    };
    view! {
        <span
            class=move || format!("conn conn-{}", state())
            data-testid="connection-status"
            data-state=state
            role="status"
            aria-label=move || format!("Connection: {}", label())
        >
            <span class="dot" aria-hidden="true"></span>
            {label}
        </span>
    }
}
