//! What a person can do from one of their prompts: fork the session from there, or restore the files
//! to before it (Claude Code's `rewind_files`: a preview of what changes first, then the restore).

use leptos::prelude::*;

use crate::store::{ForkUi, RewindUi, Store};

/// "Fork from here" (`message-fork`) and "Restore files to before this message" (`message-rewind`)
/// under prompt `uuid`, with the restore's preview (`rewind-preview`: files, insertions, deletions;
/// `rewind-confirm`, `rewind-cancel`) or why it cannot (`rewind-refused`). Controllers only.
#[component]
pub fn UserActions(
    /// The prompt's uuid (as Claude Code knows it).
    uuid: String,
) -> impl IntoView {
    let store = Store::expect();
    let u_fork = uuid.clone();
    let u_rw = uuid.clone();
    let u_state = uuid.clone();
    let u_fstate = uuid.clone();
    let rewind = Memo::new(move |_| store.cli.rewind.with(|m| m.get(&u_state).cloned()));
    let fork = Memo::new(move |_| store.cli.fork.with(|m| m.get(&u_fstate).cloned()));
    let busy = move || {
        matches!(rewind.get(), Some(RewindUi::Checking | RewindUi::Restoring))
            || matches!(fork.get(), Some(ForkUi::Working))
    };
    let panel = move || {
        let uuid = uuid.clone();
        rewind.get().map(|r| match r {
            RewindUi::Checking => view! {
                <p class="rewind-panel muted" role="status">"Asking Claude Code what would change…"</p>
            }
            .into_any(),
            RewindUi::Restoring => view! {
                <p class="rewind-panel muted" role="status">"Restoring files…"</p>
            }
            .into_any(),
            RewindUi::Refused(why) => {
                let u = uuid.clone();
                view! {
                    <div class="rewind-panel refused" data-testid="rewind-refused" role="alert">
                        <span>{format!("Files cannot be restored: {why}")}</span>
                        <button class="link-button" on:click=move |_| store.cli.rewind_cancel(&u)>"Dismiss"</button>
                    </div>
                }
                .into_any()
            }
            RewindUi::Preview(p) if p.files_changed().is_empty() => {
                let u = uuid.clone();
                view! {
                    <div class="rewind-panel" data-testid="rewind-preview" role="status">
                        <span>"Nothing to restore: Claude Code changed no file (with Edit or Write) since this message."</span>
                        <button class="link-button" data-testid="rewind-cancel" on:click=move |_| store.cli.rewind_cancel(&u)>"Dismiss"</button>
                    </div>
                }
                .into_any()
            }
            RewindUi::Preview(p) => {
                let (u1, u2) = (uuid.clone(), uuid.clone());
                let files = p.files_changed().to_vec();
                let summary = format!(
                    "{} file(s) would change: +{} −{}",
                    files.len(),
                    p.result.insertions.unwrap_or(0),
                    p.result.deletions.unwrap_or(0)
                );
                view! {
                    <div class="rewind-panel" data-testid="rewind-preview" role="group" aria-label="Restore files preview">
                        <p>{summary}</p>
                        <ul class="rewind-files">
                            {files.into_iter().map(|f| view! { <li><code>{f}</code></li> }).collect_view()}
                        </ul>
                        <div class="rewind-buttons">
                            <button class="button danger" data-testid="rewind-confirm" on:click=move |_| store.rewind_confirm(&u1)>
                                "Restore files"
                            </button>
                            <button class="button" data-testid="rewind-cancel" on:click=move |_| store.cli.rewind_cancel(&u2)>
                                "Cancel"
                            </button>
                        </div>
                    </div>
                }
                .into_any()
            }
            RewindUi::Done(d) => {
                let u = uuid.clone();
                view! {
                    <div class="rewind-panel done" data-testid="rewind-done" role="status">
                        <span>{format!("Restored {} file(s) to before this message.", d.files_changed().len())}</span>
                        <button class="link-button" on:click=move |_| store.cli.rewind_cancel(&u)>"Dismiss"</button>
                    </div>
                }
                .into_any()
            }
        })
    };
    let fork_error = move || match fork.get() {
        Some(ForkUi::Failed(why)) => Some(view! {
            <p class="rewind-panel refused" data-testid="fork-failed" role="alert">{format!("Could not fork: {why}")}</p>
        }),
        _ => None,
    };
    view! {
        <div class="user-actions">
            <button
                class="link-button"
                data-testid="message-fork"
                title="A new session with the conversation up to just before this message"
                disabled=busy
                on:click=move |_| store.fork_from(&u_fork)
            >
                {move || if matches!(fork.get(), Some(ForkUi::Working)) { "Forking…" } else { "Fork from here" }}
            </button>
            <button
                class="link-button"
                data-testid="message-rewind"
                title="Put the files Claude changed since this message back as they were"
                disabled=busy
                on:click=move |_| store.rewind_preview(&u_rw)
            >
                "Restore files to before this message"
            </button>
        </div>
        {fork_error}
        {panel}
    }
}
