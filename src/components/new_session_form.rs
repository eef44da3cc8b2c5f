//! The new-session form.

use leptos::prelude::*;

use crate::components::permission_mode_select::MODES;
use crate::lazy::{self, Part};
use crate::nav::Nav;
use crate::store::SessionList;
use bridge_protocol::api::NewSession;

fn opt(s: String) -> Option<String> {
    let t = s.trim().to_string();
    (!t.is_empty()).then_some(t)
}

/// What the form holds, kept while it is closed (typed values come back when it opens again).
#[derive(Clone, Copy)]
pub struct FormState {
    cwd: RwSignal<String>,
    model: RwSignal<String>,
    mode: RwSignal<String>,
    title: RwSignal<String>,
    busy: RwSignal<bool>,
    error: RwSignal<Option<String>>,
    open: RwSignal<bool>,
}

/// Starts a session (working directory, model, permission mode, title) and opens it.
///
/// The button is on the list's first paint; the form and what starts a session are the settings
/// part (src/lazy.rs): pointing at the button starts loading it, and the form shows once it is in.
#[component]
pub fn NewSessionForm() -> impl IntoView {
    let open = RwSignal::new(false);
    let state = FormState {
        cwd: RwSignal::new(String::new()),
        model: RwSignal::new(String::new()),
        mode: RwSignal::new("default".to_string()),
        title: RwSignal::new(String::new()),
        busy: RwSignal::new(false),
        error: RwSignal::new(None::<String>),
        open,
    };
    view! {
        <div class="new-session">
            <button class="primary wide" data-testid="new-session" aria-expanded=move || open.get().to_string()
                on:pointerenter=move |_| lazy::prefetch(Part::Settings)
                on:focus=move |_| lazy::prefetch(Part::Settings)
                on:click=move |_| open.update(|o| *o = !*o)>
                "+ New session"
            </button>
            {move || (open.get() && lazy::ready(Part::Settings)).then(move || lazy_form(state)).flatten()}
        </div>
    }
}

crate::lazy::lazy_entries! {
    /// The form ([`form_view`]), or `None` while the settings part is not loaded.
    fn lazy_form(state: FormState) -> AnyView, part settings / Settings,
        entry form, preload preload_form { form_view(state) }
}

/// The open form: starts the session and opens it.
fn form_view(state: FormState) -> AnyView {
    let FormState {
        cwd,
        model,
        mode,
        title,
        busy,
        error,
        open,
    } = state;
    let list = SessionList::expect();
    let nav = Nav::expect();
    let create = move || {
        busy.set(true);
        error.set(None);
        let req = NewSession {
            cwd: opt(cwd.get_untracked()),
            model: opt(model.get_untracked()),
            permission_mode: opt(mode.get_untracked()),
            title: opt(title.get_untracked()),
        };
        list.create_session(req, move |result| {
            match result {
                Ok(id) => {
                    open.try_set(false);
                    nav.go(Some(&id));
                }
                Err(e) => {
                    error.try_set(Some(e.to_string()));
                }
            }
            // The form may be gone by now (we navigated away).
            busy.try_set(false);
        });
    };
    view! {
        <form class="new-session-form" aria-label="New session" on:submit=move |ev| { ev.prevent_default(); create(); }>
            <label class="field"><span>"Working directory"</span>
                <input class="mono" data-testid="new-session-cwd" placeholder="relay default" prop:value=move || cwd.get()
                    on:input=move |ev| cwd.set(event_target_value(&ev)) /></label>
            <label class="field"><span>"Model"</span>
                <input data-testid="new-session-model" placeholder="default" prop:value=move || model.get()
                    on:input=move |ev| model.set(event_target_value(&ev)) /></label>
            <label class="field"><span>"Permission mode"</span>
                <select data-testid="new-session-permission-mode" prop:value=move || mode.get()
                    on:change=move |ev| mode.set(event_target_value(&ev))>
                    {MODES.iter().map(|(v, l)| view! { <option value=*v>{*l}</option> }).collect_view()}
                </select></label>
            {move || (mode.get() == "bypassPermissions").then(|| view! {
                <p class="field-error" role="alert">"Every tool will run without asking. Use only in a disposable sandbox."</p>
            })}
            <label class="field"><span>"Title"</span>
                <input data-testid="new-session-title" placeholder="optional" prop:value=move || title.get()
                    on:input=move |ev| title.set(event_target_value(&ev)) /></label>
            <button type="submit" class="primary" data-testid="new-session-create" disabled=move || busy.get()>
                {move || if busy.get() { "Starting…" } else { "Start session" }}
            </button>
            {move || error.get().map(|e| view! { <p class="field-error" role="alert">{e}</p> })}
        </form>
    }
    .into_any()
}
