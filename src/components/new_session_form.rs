//! The new-session form.

use leptos::prelude::*;

use crate::components::permission_mode_select::MODES;
use crate::nav::Nav;
use crate::store::SessionList;
use bridge_protocol::api::NewSession;

fn opt(s: String) -> Option<String> {
    let t = s.trim().to_string();
    (!t.is_empty()).then_some(t)
}

/// Starts a session (working directory, model, permission mode, title) and opens it.
#[component]
pub fn NewSessionForm() -> impl IntoView {
    let list = SessionList::expect();
    let nav = Nav::expect();
    let open = RwSignal::new(false);
    let cwd = RwSignal::new(String::new());
    let model = RwSignal::new(String::new());
    let mode = RwSignal::new("default".to_string());
    let title = RwSignal::new(String::new());
    let busy = RwSignal::new(false);
    let error = RwSignal::new(None::<String>);
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
        <div class="new-session">
            <button class="primary wide" data-testid="new-session" aria-expanded=move || open.get().to_string()
                on:click=move |_| open.update(|o| *o = !*o)>
                "+ New session"
            </button>
            {move || open.get().then(|| view! {
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
            })}
        </div>
    }
}
