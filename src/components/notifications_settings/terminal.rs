//! "Send terminal prompts to my phone" (`data-testid="terminal-prompts-switch"`): Claude Code
//! sessions started in a terminal (after `bridge-relay hooks install`) show here live; with the
//! switch on, their permission prompts also wait for an answer here (the terminal asks at the same
//! time; the first answer wins). Controllers only; read when the panel opens.

use leptos::prelude::*;

use crate::net::hooks::{self, HookSettings};

#[component]
pub fn TerminalPromptsSwitch() -> impl IntoView {
    let settings: RwSignal<Option<Result<HookSettings, String>>> = RwSignal::new(None);
    let saving = RwSignal::new(false);
    leptos::task::spawn_local(async move {
        let r = hooks::settings().await.map_err(|e| e.to_string());
        settings.try_set(Some(r));
    });
    let toggle = move |on: bool| {
        let Some(Ok(mut s)) = settings.get_untracked() else {
            return;
        };
        s.send_to_phone = on;
        saving.set(true);
        leptos::task::spawn_local(async move {
            let r = hooks::set_settings(&s).await.map_err(|e| e.to_string());
            settings.try_set(Some(r));
            saving.try_set(false);
        });
    };
    view! {
        <section class="notif-terminal" aria-labelledby="notif-terminal-title">
            <h3 id="notif-terminal-title">"Terminal sessions"</h3>
            {move || match settings.get() {
                None => view! { <p class="muted small">"Loading…"</p> }.into_any(),
                Some(Err(e)) => view! { <p class="field-error" role="alert">{format!("The setting could not be read: {e}")}</p> }.into_any(),
                Some(Ok(s)) => view! {
                    <label class="switch-row">
                        <input
                            type="checkbox"
                            data-testid="terminal-prompts-switch"
                            prop:checked=s.send_to_phone
                            disabled=move || saving.get()
                            on:change=move |ev| toggle(event_target_checked(&ev))
                        />
                        <span>"Send terminal prompts to my phone"</span>
                    </label>
                    <p class="muted small">
                        {format!(
                            "Claude Code sessions in a terminal (after `bridge-relay hooks install`) show here live. With this on, their permission prompts wait up to {} s for an answer here while the terminal asks too; the first answer wins.",
                            s.wait_secs
                        )}
                    </p>
                }.into_any(),
            }}
        </section>
    }
}
