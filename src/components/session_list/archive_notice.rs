//! What archiving (or discarding a worktree) just did.

use leptos::prelude::*;

use super::WorktreeDetails;
use crate::store::{ArchiveNotice, SessionList};

/// The notice after archiving (`data-testid="archive-notice"`, `data-kind` = `kept`, `discarded`
/// or `failed`): the session's worktree was kept — where, why, and "Discard worktree" — or it was
/// discarded, or the relay refused. Dismissed with `archive-notice-dismiss`.
#[component]
pub fn ArchiveNoticeView() -> impl IntoView {
    let list = SessionList::expect();
    move || {
        list.archive_notice.get().map(|notice| {
            let (kind, body) = match notice {
                ArchiveNotice::Kept(kept) => (
                    "kept",
                    view! {
                        <p>
                            <strong>{format!("Archived “{}”.", kept.name)}</strong>
                            " Its worktree was kept, so no work is lost."
                        </p>
                        <WorktreeDetails kept=kept />
                    }
                    .into_any(),
                ),
                ArchiveNotice::Discarded { name, path } => (
                    "discarded",
                    view! {
                        <p>
                            {format!("The worktree of “{name}” was discarded")}
                            {(!path.is_empty()).then(|| view! { " (" <code>{path}</code> ")" })}
                            "."
                        </p>
                    }
                    .into_any(),
                ),
                ArchiveNotice::Failed { what, message } => (
                    "failed",
                    view! { <p>{format!("{what} failed: {message}")}</p> }.into_any(),
                ),
            };
            view! {
                <div
                    class=format!("archive-notice {kind}")
                    data-testid="archive-notice"
                    data-kind=kind
                    role="status"
                >
                    <div class="archive-notice-body">{body}</div>
                    <button
                        class="link-button dismiss"
                        data-testid="archive-notice-dismiss"
                        aria-label="Dismiss"
                        on:click=move |_| list.dismiss_archive_notice()
                    >
                        "✕"
                    </button>
                </div>
            }
        })
    }
}
