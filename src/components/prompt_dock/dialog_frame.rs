//! The modal frame every prompt dialog uses.

use leptos::prelude::*;

use crate::components::modal_panel::modal_focus;
use crate::state::{Prompt, PromptKind};

/// A modal dialog (`role="dialog"`, `aria-modal`, `data-testid="permission-dialog"` with
/// `data-request-id`, `data-tool-name`, `data-kind`): traps Tab focus inside, focuses the element
/// marked `data-autofocus` on open, shows the queue ("1 of 3"), and puts its actions in a bar that
/// sits at the bottom of the screen on phones.
#[component]
pub fn DialogFrame(
    /// The prompt.
    prompt: Prompt,
    /// Heading.
    #[prop(into)]
    title: String,
    /// Open prompts (this one included).
    #[prop(into)]
    queued: Signal<usize>,
    /// Body.
    children: Children,
    /// The action buttons.
    #[prop(into)]
    actions: ViewFn,
) -> impl IntoView {
    let el: NodeRef<leptos::html::Div> = NodeRef::new();
    let on_keydown = modal_focus(el);
    let kind = match prompt.kind {
        PromptKind::Permission => "permission",
        PromptKind::Question => "question",
        PromptKind::PlanApproval => "plan",
        PromptKind::Elicitation => "elicitation",
        PromptKind::UserDialog => "user-dialog",
    };
    let title_id = format!("dlg-title-{}", prompt.request_id);
    view! {
        <div class="dialog-backdrop">
            <div
                class=format!("dialog kind-{kind}")
                node_ref=el
                role="dialog"
                aria-modal="true"
                aria-labelledby=title_id.clone()
                data-testid="permission-dialog"
                data-request-id=prompt.request_id.clone()
                data-tool-name=prompt.tool_name.clone()
                data-kind=kind
                on:keydown=on_keydown
            >
                <header class="dialog-head">
                    <h2 id=title_id.clone()>{title}</h2>
                    {move || (queued.get() > 1).then(|| view! {
                        <span class="chip" data-testid="prompt-queue" aria-label=format!("{} prompts waiting", queued.get())>
                            {format!("1 of {}", queued.get())}
                        </span>
                    })}
                </header>
                <div class="dialog-body">{children()}</div>
                <footer class="dialog-actions">{actions.run()}</footer>
            </div>
        </div>
    }
}
