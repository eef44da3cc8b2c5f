//! The ExitPlanMode dialog.

use bridge_protocol::{PermissionMode, PermissionUpdate, PermissionUpdateDestination};
use leptos::prelude::*;

use crate::components::Markdown;
use crate::components::prompt_dock::DialogFrame;
use crate::state::Prompt;
use crate::state::prompt::plan_text;
use crate::store::Store;

/// "Approve, auto-accept edits": the session switches to `acceptEdits`.
fn accept_edits_for_session() -> PermissionUpdate {
    PermissionUpdate::set_mode(
        PermissionMode::AcceptEdits,
        PermissionUpdateDestination::Session,
    )
}

/// Shows the plan (markdown) and asks to approve it and leave plan mode — optionally switching to
/// auto-accepting edits — or to keep planning with feedback for the model.
#[component]
pub fn PlanDialog(
    /// The prompt.
    prompt: Prompt,
    /// Open prompts.
    #[prop(into)]
    queued: Signal<usize>,
) -> impl IntoView {
    let store = Store::expect();
    // The real CLI asks with an empty input: the plan is in the model's tool_use block.
    let input = prompt.input.clone();
    let tool_use_id = prompt.tool_use_id.clone();
    let plan = Memo::new(move |_| {
        store.session.with(|s| {
            let proposed = tool_use_id
                .as_deref()
                .and_then(|id| s.tool(id))
                .map(|t| &t.input);
            plan_text(&input, proposed)
                .unwrap_or_else(|| "_The CLI sent no plan text._".to_string())
        })
    });
    let feedback = RwSignal::new(String::new());
    let p = StoredValue::new(prompt.clone());
    view! {
        <DialogFrame
            prompt=prompt.clone()
            title="Ready to leave plan mode?"
            queued=queued
            actions=move || view! {
                <button class="danger-outline" data-testid="permission-deny" on:click=move |_| {
                    let msg = feedback.get_untracked();
                    let msg = if msg.trim().is_empty() { "Keep planning.".to_string() } else { msg };
                    p.with_value(|p| store.deny(p, &msg, false));
                }>"Keep planning"</button>
                <button data-testid="plan-approve-accept-edits" on:click=move |_| {
                    p.with_value(|p| store.allow(p, p.input.clone(), vec![accept_edits_for_session()]));
                }>"Approve, auto-accept edits"</button>
                <button class="primary" data-testid="permission-allow" data-autofocus on:click=move |_| {
                    p.with_value(|p| store.allow(p, p.input.clone(), vec![]));
                }>"Approve plan"</button>
            }
        >
            <div class="plan"><Markdown text=plan /></div>
            <label class="field">
                <span>"Feedback if you keep planning (optional)"</span>
                <textarea data-testid="permission-deny-message" rows="2" prop:value=move || feedback.get()
                    on:input=move |ev| feedback.set(event_target_value(&ev))></textarea>
            </label>
        </DialogFrame>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_edits_is_the_session_set_mode_sent_before() {
        assert_eq!(
            serde_json::to_value(vec![accept_edits_for_session()]).unwrap(),
            serde_json::json!([{"type": "setMode", "mode": "acceptEdits", "destination": "session"}])
        );
    }
}
