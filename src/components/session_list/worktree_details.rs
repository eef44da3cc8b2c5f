//! Where a kept worktree is, why it was kept, and discarding it (after a confirmation).

use leptos::prelude::*;

use crate::components::busy_button::BusyButton;
use crate::lazy::{self, Part};
use crate::store::{KeptWorktree, SessionList};

/// A kept worktree (`data-testid="worktree-kept"`, `data-session-id`): why it was kept
/// (`worktree-why`), its path (`worktree-path`) and branch (`worktree-branch`), and for
/// controllers "Discard worktree" (`worktree-discard`), which first asks
/// (`worktree-discard-confirm`: `worktree-discard-yes` / `worktree-discard-no`; the settings
/// part's code, src/lazy.rs: it shows once that is in).
#[component]
pub fn WorktreeDetails(
    /// The kept worktree.
    kept: KeptWorktree,
) -> impl IntoView {
    let list = SessionList::expect();
    let confirming = RwSignal::new(false);
    let discarding = RwSignal::new(false);
    let controller = move || list.is_controller();
    let branch = kept.branch.clone();
    let path = kept.path.clone();
    let what = match (path.is_empty(), &branch) {
        (false, Some(b)) => format!("{path} and its branch {b}"),
        (false, None) => path.clone(),
        (true, Some(b)) => format!("the worktree and its branch {b}"),
        (true, None) => "the worktree".to_string(),
    };
    let question = format!(
        "This deletes {what} on the relay's machine, with its {}. It cannot be undone.",
        kept.why
    );
    let label = format!("Discard the worktree of {}", kept.name);
    let kept_discard = kept.clone();
    view! {
        <div class="worktree-kept" data-testid="worktree-kept" data-session-id=kept.session_id.clone()>
            <p class="worktree-why">
                "Kept because of " <span data-testid="worktree-why">{kept.why.clone()}</span> "."
            </p>
            <dl class="worktree-where">
                {(!path.is_empty()).then(|| view! {
                    <dt>"Path"</dt>
                    <dd><code data-testid="worktree-path">{path.clone()}</code></dd>
                })}
                {branch.clone().map(|b| view! {
                    <dt>"Branch"</dt>
                    <dd><code data-testid="worktree-branch">{b}</code></dd>
                })}
            </dl>
            {move || (controller() && !confirming.get()).then(|| view! {
                <button
                    class="danger-outline"
                    data-testid="worktree-discard"
                    aria-label=label.clone()
                    disabled=move || discarding.get()
                    on:pointerenter=move |_| lazy::prefetch(Part::Settings)
                    on:click=move |_| confirming.set(true)
                >
                    "Discard worktree"
                </button>
            })}
            {move || (confirming.get() && lazy::ready(Part::Settings)).then(|| {
                lazy_confirm(Confirm {
                    list,
                    kept: kept_discard.clone(),
                    question: question.clone(),
                    discarding,
                    confirming,
                })
            }).flatten()}
        </div>
    }
}

/// What the confirmation needs.
pub struct Confirm {
    list: SessionList,
    kept: KeptWorktree,
    question: String,
    discarding: RwSignal<bool>,
    confirming: RwSignal<bool>,
}

crate::lazy::lazy_entries! {
    /// The confirmation ([`confirm_view`]), or `None` while the settings part is not loaded.
    fn lazy_confirm(confirm: Confirm) -> AnyView, part settings / Settings,
        entry confirm, preload preload_confirm { confirm_view(confirm) }
}

/// "Discard this worktree?" with its answers (the settings part's code).
fn confirm_view(confirm: Confirm) -> AnyView {
    let Confirm {
        list,
        kept,
        question,
        discarding,
        confirming,
    } = confirm;
    view! {
        <div
            class="discard-confirm"
            role="alertdialog"
            aria-label="Confirm discarding the worktree"
            data-testid="worktree-discard-confirm"
        >
            <strong>"Discard this worktree?"</strong>
            <span>{question}</span>
            <div class="actions">
                <BusyButton
                    class="danger"
                    test_id="worktree-discard-yes"
                    busy=discarding
                    label="Discard worktree"
                    on_click=move || {
                        discarding.set(true);
                        list.discard_worktree(&kept, move || {
                            discarding.try_set(false);
                            confirming.try_set(false);
                        });
                    }
                />
                <button
                    data-testid="worktree-discard-no"
                    on:click=move |_| confirming.set(false)
                >
                    "Keep it"
                </button>
            </div>
        </div>
    }
    .into_any()
}
