//! A button for an action that takes a while.

use std::rc::Rc;

use leptos::prelude::*;

/// A button that is disabled while `busy` holds, and then says `busy_label` (when given) instead of
/// `label`.
#[component]
pub fn BusyButton(
    /// Its classes, if any.
    #[prop(optional)]
    class: Option<&'static str>,
    /// `data-testid`.
    test_id: &'static str,
    /// Its accessible name, when not its text.
    #[prop(optional)]
    aria_label: Option<&'static str>,
    /// While the action runs (or another one it waits for).
    #[prop(into)]
    busy: Signal<bool>,
    /// What it says.
    label: &'static str,
    /// What it says while busy.
    #[prop(optional)]
    busy_label: Option<&'static str>,
    /// The action.
    on_click: impl Fn() + 'static,
) -> impl IntoView {
    // The view is built by one function whatever the action's type (no copy of it per caller).
    busy_button(
        class,
        test_id,
        aria_label,
        busy,
        label,
        busy_label,
        Rc::new(on_click),
    )
}

fn busy_button(
    class: Option<&'static str>,
    test_id: &'static str,
    aria_label: Option<&'static str>,
    busy: Signal<bool>,
    label: &'static str,
    busy_label: Option<&'static str>,
    on_click: Rc<dyn Fn()>,
) -> impl IntoView + use<> {
    let busy_label = busy_label.unwrap_or(label);
    view! {
        <button
            class=class
            data-testid=test_id
            aria-label=aria_label
            disabled=move || busy.get()
            on:click=move |_| on_click()
        >
            {move || if busy.get() { busy_label } else { label }}
        </button>
    }
}
