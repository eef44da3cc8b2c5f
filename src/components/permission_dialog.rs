//! The permission dialog for `can_use_tool`.

pub mod input_editor;
pub mod suggestion_list;

use bridge_protocol::PermissionUpdate;
use leptos::ev::KeyboardEvent;
use leptos::prelude::*;
use serde_json::Value;

use crate::components::prompt_dock::DialogFrame;
use crate::state::Prompt;
use crate::store::Store;

pub use input_editor::InputEditor;
pub use suggestion_list::SuggestionList;

/// Asks to allow a tool call: the tool, its title/description, the decision reason and blocked
/// path, the input in a per-tool editor, the permission suggestions as checkable editable rules,
/// an optional deny message, and Allow / Deny / Deny and stop. Allow sends `updatedInput` (edited or
/// original); invalid JSON cannot be sent. Ctrl/⌘+Enter or Alt+A allows, Alt+D denies.
#[component]
pub fn PermissionDialog(
    /// The prompt.
    prompt: Prompt,
    /// Open prompts.
    #[prop(into)]
    queued: Signal<usize>,
) -> impl IntoView {
    let store = Store::expect();
    let original = prompt.input.clone();
    let updated: RwSignal<Result<Value, String>> = RwSignal::new(Ok(original.clone()));
    let deny_msg = RwSignal::new(String::new());
    // A suggestion that does not fit its kind could not be sent (the CLI would drop every update
    // in the answer): it is not offered.
    let picks: RwSignal<Vec<(bool, PermissionUpdate)>> = RwSignal::new(
        prompt
            .suggestions
            .iter()
            .filter_map(|s| bridge_protocol::from_value_text::<PermissionUpdate>(s).ok())
            .map(|s| (false, s))
            .collect(),
    );
    let p = StoredValue::new(prompt.clone());
    let allow = move || {
        if let Ok(v) = updated.get_untracked() {
            let perms = picks
                .get_untracked()
                .into_iter()
                .filter(|(on, _)| *on)
                .map(|(_, v)| v)
                .collect();
            p.with_value(|p| store.allow(p, v, perms));
        }
    };
    let deny = move |stop: bool| p.with_value(|p| store.deny(p, &deny_msg.get_untracked(), stop));
    let orig2 = original.clone();
    let edited = Memo::new(move |_| updated.with(|u| u.as_ref().is_ok_and(|v| *v != orig2)));
    let invalid = Memo::new(move |_| updated.with(|u| u.is_err()));
    let on_keydown = move |ev: KeyboardEvent| {
        let key = ev.key();
        if (ev.ctrl_key() || ev.meta_key()) && key == "Enter"
            || ev.alt_key() && key.eq_ignore_ascii_case("a")
        {
            ev.prevent_default();
            allow();
        } else if ev.alt_key() && key.eq_ignore_ascii_case("d") {
            ev.prevent_default();
            deny(false);
        }
    };
    let name = prompt
        .display_name
        .clone()
        .unwrap_or_else(|| prompt.tool_name.clone());
    let heading = format!("Allow {name}?");
    let reason = prompt.decision_reason.clone().or_else(|| {
        prompt
            .decision_reason_type
            .clone()
            .map(|t| match t.as_str() {
                "subcommandResults" => "Part of this command needs approval.".to_string(),
                "mode" => "The current permission mode asks for this.".to_string(),
                "workingDir" => "It reaches outside the working directory.".to_string(),
                other => format!("Reason: {other}"),
            })
    });
    view! {
        <DialogFrame
            prompt=prompt.clone()
            title=heading
            queued=queued
            actions=move || view! {
                <button class="danger-outline" data-testid="permission-deny" aria-keyshortcuts="Alt+D" on:click=move |_| deny(false)>
                    "Deny"
                </button>
                <button class="danger-outline" data-testid="permission-deny-stop" aria-label="Deny and stop the turn" on:click=move |_| deny(true)>
                    "Deny and stop"
                </button>
                <button
                    class="primary"
                    data-testid="permission-allow"
                    aria-keyshortcuts="Control+Enter Alt+A"
                    disabled=move || invalid.get()
                    on:click=move |_| allow()
                >
                    {move || if edited.get() { "Allow edited" } else { "Allow" }}
                </button>
            }
        >
            <div class="dialog-keys" on:keydown=on_keydown>
                {prompt.title.clone().map(|t| view! { <p class="dialog-title">{t}</p> })}
                {prompt
                    .description
                    .clone()
                    .or_else(|| Some(crate::format::field(&prompt.input, "description").to_string()))
                    .filter(|d| !d.is_empty() && Some(d) != prompt.title.as_ref())
                    .map(|d| view! { <p class="dialog-desc">{d}</p> })}
                {reason.map(|r| view! { <p class="dialog-reason">{r}</p> })}
                {prompt.blocked_path.clone().map(|b| view! { <p class="dialog-reason">"Path: "<code>{b}</code></p> })}
                <InputEditor tool_name=prompt.tool_name.clone() input=original.clone() updated=updated />
                {move || edited.get().then(|| view! { <p class="chip warn" data-testid="permission-edited">"You edited this — Claude will run your version."</p> })}
                <SuggestionList picks=picks />
                <label class="field">
                    <span>"Message to Claude if you deny (optional)"</span>
                    <textarea
                        data-testid="permission-deny-message"
                        aria-label="Message to Claude if you deny"
                        rows="2"
                        prop:value=move || deny_msg.get()
                        on:input=move |ev| deny_msg.set(event_target_value(&ev))
                    ></textarea>
                </label>
                <p class="muted small key-hint">"Ctrl/⌘+Enter or Alt+A to allow · Alt+D to deny"</p>
            </div>
        </DialogFrame>
    }
}
