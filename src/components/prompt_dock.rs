//! Where pending prompts show.

pub mod dialog_frame;
pub mod early;

use leptos::prelude::*;

use crate::components::{
    ElicitationDialog, PermissionDialog, PlanDialog, QuestionDialog, UserDialog,
};
use crate::format::field;
use crate::lazy::{self, Part};
use crate::state::{Prompt, PromptKind};
use crate::store::Store;

pub use dialog_frame::DialogFrame;
pub use early::EarlyPrompt;

/// Shows the oldest open prompt as its dialog (the queue length is visible in it). An observer
/// sees the pending prompts as "waiting for the controller" instead, with no buttons.
#[component]
pub fn PromptDock() -> impl IntoView {
    let store = Store::expect();
    let observer = Memo::new(move |_| store.session.with(|s| s.is_observer()));
    // A prompt the page came with stays with its early dialog until answered (`EarlyPrompt`).
    let open: Memo<Vec<Prompt>> = Memo::new(move |_| {
        let sid = store.session_id.get().unwrap_or_default();
        store.session.with(|s| {
            s.open_prompts()
                .filter(|p| !store.early.holds(&sid, &p.request_id))
                .cloned()
                .collect()
        })
    });
    let head = Memo::new(move |_| open.with(|o| o.first().map(|p| p.request_id.clone())));
    let queued = Signal::derive(move || open.with(Vec::len));
    let waiting = Memo::new(move |_| {
        store.session.with(|s| {
            s.prompts()
                .iter()
                .map(|p| {
                    let what = p
                        .display_name
                        .clone()
                        .unwrap_or_else(|| p.tool_name.clone());
                    let detail = match p.tool_name.as_str() {
                        "Bash" => field(&p.input, "command").to_string(),
                        _ => field(&p.input, "file_path").to_string(),
                    };
                    (p.request_id.clone(), what, detail)
                })
                .collect::<Vec<_>>()
        })
    });
    move || {
        if observer.get() {
            let list = waiting.get();
            return (!list.is_empty())
                .then(|| {
                    view! {
                        <div class="waiting-controller" data-testid="waiting-for-controller" role="status">
                            <strong>"Waiting for the controller"</strong>
                            <ul>
                                {list
                                    .into_iter()
                                    .map(|(rid, what, detail)| view! {
                                        <li data-testid="pending-prompt" data-request-id=rid>
                                            {what}{(!detail.is_empty()).then(|| view! { <code>{format!(" {detail}")}</code> })}
                                        </li>
                                    })
                                    .collect_view()}
                            </ul>
                        </div>
                    }
                    .into_any()
                });
        }
        let rid = head.get()?;
        let prompt = open.with_untracked(|o| o.iter().find(|p| p.request_id == rid).cloned())?;
        // The dialogs load lazily (src/lazy.rs); they are prefetched long before, and asked for at
        // once here, as the prompt arrives.
        if !lazy::ready(Part::Dialogs) {
            return Some(loading_dialog());
        }
        Some(lazy_dialog(prompt, queued).unwrap_or_else(loading_dialog))
    }
}

/// Stands in for a dialog while its code is still loading (a first prompt right after the page
/// opened, on a slow network).
fn loading_dialog() -> AnyView {
    view! {
        <div class="prompt-loading" role="status" data-testid="prompt-loading">"Loading the dialog…"</div>
    }
    .into_any()
}

crate::lazy::lazy_entries! {
    /// The dialog for `prompt` ([`dialog_view`]), or `None` while the dialogs part is not loaded.
    pub fn lazy_dialog(prompt: Prompt, queued: Signal<usize>) -> AnyView, part dialogs / Dialogs,
        entry dialog, preload preload_dialog { dialog_view(prompt, queued) }
    /// The early dialog ([`early::early_view`]), or `None` while the dialogs part is not loaded.
    pub fn lazy_early() -> AnyView, part dialogs / Dialogs,
        entry early, preload preload_early { early::early_view() }
}

/// The dialog for an open prompt (in the lazily loaded dialogs part).
pub fn dialog_view(prompt: Prompt, queued: Signal<usize>) -> AnyView {
    match prompt.kind {
        PromptKind::Permission => {
            view! { <PermissionDialog prompt=prompt queued=queued /> }.into_any()
        }
        PromptKind::Question => view! { <QuestionDialog prompt=prompt queued=queued /> }.into_any(),
        PromptKind::PlanApproval => view! { <PlanDialog prompt=prompt queued=queued /> }.into_any(),
        PromptKind::Elicitation => {
            view! { <ElicitationDialog prompt=prompt queued=queued /> }.into_any()
        }
        PromptKind::UserDialog => view! { <UserDialog prompt=prompt queued=queued /> }.into_any(),
    }
}
