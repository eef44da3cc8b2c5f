//! The interrupt button.

use leptos::prelude::*;

use crate::state::InterruptState;
use crate::store::Store;

/// Stops the running turn (also Escape). Shows when the interrupt was sent and when the CLI
/// acknowledged it.
#[component]
pub fn InterruptButton() -> impl IntoView {
    let store = Store::expect();
    let running = move || store.session.with(|s| s.turn_running());
    let state = move || store.session.with(|s| s.interrupt_state());
    view! {
        {move || {
            let st = state();
            let show = running() || st != InterruptState::None;
            show.then(|| {
                let (label, busy) = match &st {
                    InterruptState::None => ("Stop".to_string(), false),
                    InterruptState::Requested => ("Stopping…".to_string(), true),
                    InterruptState::Acknowledged => ("Stopped ✓".to_string(), true),
                    InterruptState::Failed(e) => (format!("Stop failed: {e}"), false),
                };
                // The accessible name starts with the visible text (WCAG 2.5.3).
                let aria = format!("{label} — interrupt the running turn (Escape)");
                view! {
                    <button
                        class="danger interrupt"
                        data-testid="interrupt-button"
                        data-state=match &st {
                            InterruptState::None => "idle",
                            InterruptState::Requested => "requested",
                            InterruptState::Acknowledged => "acknowledged",
                            InterruptState::Failed(_) => "failed",
                        }
                        aria-label=aria
                        aria-keyshortcuts="Escape"
                        title="Interrupt (Esc)"
                        disabled=busy
                        on:click=move |_| store.interrupt()
                    >
                        {label}
                    </button>
                }
            })
        }}
    }
}
