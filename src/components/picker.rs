//! The select the session header's pickers (model, permission mode) are made of.

use std::rc::Rc;

use leptos::prelude::*;

use crate::state::SessionState;
use crate::store::Store;

/// A labelled select of one of the session's settings: `options` (value, label) with the selected
/// value marked; disabled once the session has ended. `on_change` gets each value picked.
#[component]
pub fn Picker(
    /// The visible label.
    label: &'static str,
    /// The select's `data-testid`.
    test_id: &'static str,
    /// The select's accessible name.
    aria_label: &'static str,
    /// The options (value, label) and the selected value.
    #[prop(into)]
    options: Signal<(Vec<(String, String)>, String)>,
    /// Called with the value picked.
    on_change: impl Fn(String) + 'static,
    /// The select, for a picker that puts the value back.
    #[prop(optional)]
    select_ref: NodeRef<leptos::html::Select>,
) -> impl IntoView {
    // The view is built by one function whatever the handler's type (no copy of it per caller).
    picker(
        label,
        test_id,
        aria_label,
        options,
        Rc::new(on_change),
        select_ref,
    )
}

fn picker(
    label: &'static str,
    test_id: &'static str,
    aria_label: &'static str,
    options: Signal<(Vec<(String, String)>, String)>,
    on_change: Rc<dyn Fn(String)>,
    select_ref: NodeRef<leptos::html::Select>,
) -> impl IntoView + use<> {
    let store = Store::expect();
    view! {
        <label class="picker">
            <span class="picker-label">{label}</span>
            <select
                node_ref=select_ref
                data-testid=test_id
                aria-label=aria_label
                disabled=move || store.session.with(|s| s.state() == SessionState::Ended)
                prop:value=move || options.with(|(_, selected)| selected.clone())
                on:change=move |ev| on_change(event_target_value(&ev))
            >
                {move || {
                    let (options, cur) = options.get();
                    options
                        .into_iter()
                        .map(|(value, label)| {
                            let selected = value == cur;
                            view! { <option value=value selected=selected>{label}</option> }
                        })
                        .collect_view()
                }}
            </select>
        </label>
    }
}
