//! The archived sessions whose worktree was kept.

use leptos::prelude::*;

use super::WorktreeDetails;
use crate::store::SessionList;

/// "Kept worktrees" (`data-testid="kept-worktrees"`): each archived session whose worktree the
/// relay kept (`kept-worktree-item`, `data-session-id`) with a "worktree kept" badge
/// (`worktree-kept-badge`), where it is, why, and its discard action. Read from the session list,
/// so it shows after a reload too; nothing renders when there is none.
#[component]
pub fn KeptWorktrees() -> impl IntoView {
    let list = SessionList::expect();
    let kept = move || list.kept_worktrees.get();
    move || {
        (!list.kept_worktrees.with(Vec::is_empty)).then(|| {
            view! {
                <section class="kept-worktrees" data-testid="kept-worktrees" aria-labelledby="kept-worktrees-h">
                    <h3 id="kept-worktrees-h">"Kept worktrees"</h3>
                    <ul class="sessions" role="list">
                        <For
                            each=kept
                            key=|k| format!("{}|{}", k.session_id, k.why)
                            children=move |k| {
                                let (id, name) = (k.session_id.clone(), k.name.clone());
                                view! {
                                    <li
                                        class="session-item archived"
                                        data-testid="kept-worktree-item"
                                        data-session-id=id
                                        role="listitem"
                                    >
                                        <div class="kept-head">
                                            <span class="session-name" title=name.clone()>{name.clone()}</span>
                                            <span class="badge state-kept" data-testid="worktree-kept-badge">"archived · worktree kept"</span>
                                        </div>
                                        <WorktreeDetails kept=k />
                                    </li>
                                }
                            }
                        />
                    </ul>
                </section>
            }
        })
    }
}
