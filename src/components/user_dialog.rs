//! The `request_user_dialog` dialog.

use leptos::prelude::*;

use crate::components::prompt_dock::DialogFrame;
use crate::format::pretty;
use crate::state::Prompt;
use crate::store::Store;

/// A dialog the CLI asks the host to show (`dialog_kind` + payload), answered `completed` or
/// `cancelled`.
#[component]
pub fn UserDialog(
    /// The prompt.
    prompt: Prompt,
    /// Open prompts.
    #[prop(into)]
    queued: Signal<usize>,
) -> impl IntoView {
    let store = Store::expect();
    let rid = StoredValue::new(prompt.request_id.clone());
    let text = prompt
        .input
        .get("message")
        .or_else(|| prompt.input.get("text"))
        .and_then(|v| v.as_str())
        .map(str::to_string);
    let payload = pretty(&prompt.input);
    view! {
        <DialogFrame
            prompt=prompt.clone()
            title=format!("Claude Code: {}", prompt.tool_name)
            queued=queued
            actions=move || view! {
                <button class="danger-outline" data-testid="permission-deny" on:click=move |_| rid.with_value(|r| store.answer_dialog(r, false))>"Cancel"</button>
                <button class="primary" data-testid="permission-allow" data-autofocus on:click=move |_| rid.with_value(|r| store.answer_dialog(r, true))>"Done"</button>
            }
        >
            {text.map(|t| view! { <p class="dialog-desc">{t}</p> })}
            <details class="inline-details"><summary>"Details"</summary><pre class="code">{payload}</pre></details>
        </DialogFrame>
    }
}
