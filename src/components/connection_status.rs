//! Connection state indicator.

use leptos::prelude::*;

use crate::components::session_state_badge::StatusBadge;
use crate::store::Store;

/// The time (`Date.now()`, ms) for a countdown: ticks every half second while `active` holds,
/// until the component that asked goes.
pub fn countdown_clock(active: impl Fn() -> bool + 'static) -> RwSignal<f64> {
    let now = RwSignal::new(js_sys::Date::now());
    if let Ok(h) = set_interval_with_handle(
        move || {
            if active() {
                now.set(js_sys::Date::now());
            }
        },
        std::time::Duration::from_millis(500),
    ) {
        on_cleanup(move || h.clear());
    }
    now
}

/// Connecting / live / reconnecting in Ns / offline (`data-testid="connection-status"`).
#[component]
pub fn ConnectionStatus() -> impl IntoView {
    let store = Store::expect();
    // Ticks while reconnecting, for the countdown.
    let now = countdown_clock(move || store.conn.with_untracked(|c| c.as_str() == "reconnecting"));
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
        <StatusBadge
            class="conn conn-"
            test_id="connection-status"
            what="Connection"
            state=Signal::derive(move || state().to_string())
            label=Signal::derive(label)
            dot=true
        />
    }
}
