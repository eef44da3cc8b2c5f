//! The "Refresh" button of the session header's info chips.

use leptos::prelude::*;

use crate::components::busy_button::BusyButton;
use crate::state::InfoKind;
use crate::store::Store;

/// Asks the CLI afresh for the session header's info (`data-testid` as given): "Asking…" and
/// disabled while an answer of `kind` is awaited. Controllers only; observers see nothing.
#[component]
pub fn InfoRefresh(
    /// The answer it waits for.
    kind: InfoKind,
    /// `data-testid`.
    test_id: &'static str,
) -> impl IntoView {
    let store = Store::expect();
    let waiting = Memo::new(move |_| store.session.with(|s| s.agent_info().waiting(kind)));
    let observer = Memo::new(move |_| store.session.with(|s| s.is_observer()));
    move || {
        (!observer.get()).then(|| {
            view! {
                <BusyButton
                    class="chip-button"
                    test_id=test_id
                    busy=waiting
                    label="Refresh"
                    busy_label="Asking…"
                    on_click=move || store.refresh_agent_info(true)
                />
            }
        })
    }
}
