//! Short notices.

use leptos::prelude::*;

use crate::store::Store;

/// Toasts for things the person should know (a dialog closed because someone else answered, the
/// CLI refused a request …), each dismissible.
#[component]
pub fn Notices() -> impl IntoView {
    let store = Store::expect();
    let notices = move || store.session.with(|s| s.notices().to_vec());
    view! {
        <div class="notices" role="status" aria-live="polite">
            <For each=notices key=|n| n.id let:n>
                <div class="notice" data-testid="notice">
                    <span>{n.text.clone()}</span>
                    <button class="link-button" aria-label="Dismiss" on:click=move |_| store.dismiss_notice(n.id)>"✕"</button>
                </div>
            </For>
        </div>
    }
}
