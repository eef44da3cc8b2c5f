//! The model picker.

use leptos::prelude::*;

use crate::store::Store;

/// Picks the session's model from the `initialize` response's models (`set_model`).
#[component]
pub fn ModelSelect() -> impl IntoView {
    let store = Store::expect();
    let current = move || {
        store
            .session
            .with(|s| s.info().model.clone().unwrap_or_default())
    };
    let options = move || {
        store.session.with(|s| {
            let mut opts: Vec<(String, String)> = s
                .info()
                .models
                .iter()
                .map(|m| (m.value.clone(), m.display_name.clone()))
                .collect();
            let cur = s.info().model.clone().unwrap_or_default();
            if !cur.is_empty() && !opts.iter().any(|(v, _)| *v == cur) {
                opts.insert(0, (cur.clone(), cur));
            }
            if opts.is_empty() {
                // Models not known yet (or the CLI has none to offer): still name the current one.
                opts.push((String::new(), "Default".to_string()));
            }
            opts
        })
    };
    view! {
        <label class="picker">
            <span class="picker-label">"Model"</span>
            <select
                data-testid="model-select"
                aria-label="Model"
                disabled=move || store.session.with(|s| s.state() == crate::state::SessionState::Ended)
                prop:value=current
                on:change=move |ev| {
                    let v = event_target_value(&ev);
                    if !v.is_empty() && v != current() {
                        store.set_model(Some(v));
                    }
                }
            >
                {move || {
                    let cur = current();
                    options()
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
