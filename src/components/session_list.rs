//! The session list.

pub mod archive_notice;
pub mod kept_worktrees;
pub mod session_item;
pub mod worktree_details;

use leptos::prelude::*;

use crate::components::NewSessionForm;
use crate::nav::{ListView, Nav};
use crate::store::Store;

pub use archive_notice::ArchiveNoticeView;
pub use kept_worktrees::KeptWorktrees;
pub use session_item::SessionItem;
pub use worktree_details::WorktreeDetails;

/// Sessions with their state, cwd, model, pending prompts and last activity
/// (`data-testid="session-list"`); controllers also get "new session" and archive. Refreshes every
/// few seconds. "All" / "Needs you" (`session-filter-all`, `session-filter-needs-you`, also
/// `?view=needs-you`) choose which sessions show; the bell (`notifications-open`) opens the
/// Notifications panel. After archiving, a notice says whether the worktree was kept; the
/// archived sessions whose worktree was kept are listed under "Kept worktrees" (view "All").
#[component]
pub fn SessionList() -> impl IntoView {
    let store = Store::expect();
    let nav = Nav::expect();
    // The console asked for the list beside `GET /v1/me` at start: that read is not repeated.
    store.list.refresh_unless_pending();
    if let Ok(handle) = set_interval_with_handle(
        move || store.list.refresh(),
        std::time::Duration::from_secs(4),
    ) {
        on_cleanup(move || handle.clear());
    }
    // The open session's state is known live from its stream: refresh the list as soon as it
    // changes, so the list's badge never lags the header by a polling interval.
    Effect::new(move |prev: Option<String>| {
        let now = store.session.with(|s| s.state().as_str().to_string());
        if prev.as_ref().is_some_and(|p| *p != now) {
            store.list.open_state_changed();
        }
        now
    });
    let controller = move || {
        store
            .me
            .with(|m| m.as_ref().is_some_and(|m| !m.is_observer()))
    };
    let item_key = |s: &crate::net::SessionSummary| {
        format!(
            "{}|{}|{}|{}|{:?}|{:?}|{:?}",
            s.id,
            s.state,
            s.pending_permissions,
            s.model.clone().unwrap_or_default(),
            s.last_activity_at,
            s.title,
            s.cwd
        )
    };
    let list_view = move || nav.view.get();
    let waiting = move || {
        store
            .list
            .sessions
            .with(|l| ListView::NeedsYou.filter(l).len())
    };
    let shown = move || store.list.sessions.with(|l| list_view().filter(l));
    view! {
        <nav class="session-list" data-testid="session-list" aria-label="Sessions">
            <div class="list-head">
                <h2>"Sessions"</h2>
                <button
                    class="icon-button"
                    data-testid="notifications-open"
                    aria-label="Notifications"
                    aria-haspopup="dialog"
                    title="Notifications"
                    on:click=move |_| store.device.open_notifications()
                >
                    <svg viewBox="0 0 24 24" width="20" height="20" aria-hidden="true" focusable="false">
                        <path d="M12 3a6 6 0 0 0-6 6v3.6L4.3 15.4A1 1 0 0 0 5.2 17h13.6a1 1 0 0 0 .9-1.6L18 12.6V9a6 6 0 0 0-6-6Zm-2.4 15.5a2.5 2.5 0 0 0 4.8 0Z" fill="currentColor"/>
                    </svg>
                </button>
            </div>
            <div class="list-filter" role="group" aria-label="Which sessions to show">
                <button
                    class="chip-button"
                    data-testid="session-filter-all"
                    aria-pressed=move || (list_view() == ListView::All).to_string()
                    on:click=move |_| nav.set_view(ListView::All)
                >
                    "All"
                </button>
                <button
                    class="chip-button"
                    data-testid="session-filter-needs-you"
                    aria-pressed=move || (list_view() == ListView::NeedsYou).to_string()
                    on:click=move |_| nav.set_view(ListView::NeedsYou)
                >
                    {move || match waiting() {
                        0 => "Needs you".to_string(),
                        n => format!("Needs you ({n})"),
                    }}
                </button>
            </div>
            {move || controller().then(|| view! { <NewSessionForm /> })}
            <ArchiveNoticeView />
            <ul class="sessions" role="list">
                <For each=shown key=item_key let:s>
                    <SessionItem summary=s />
                </For>
            </ul>
            {move || match (list_view(), store.list.sessions.with(Vec::is_empty), waiting()) {
                (ListView::All, true, _) => Some(view! {
                    <p class="muted empty">
                        {move || if store.device.relay_offline.with(Option::is_some) {
                            "Sessions show here once the relay can be reached."
                        } else if !store.list.kept_worktrees.with(Vec::is_empty) {
                            "No live sessions."
                        } else {
                            "No sessions yet."
                        }}
                    </p>
                }.into_any()),
                (ListView::NeedsYou, _, 0) => Some(view! {
                    <p class="muted empty" data-testid="needs-you-empty">
                        "No session waits for you. "
                        <button class="link-button" data-testid="session-filter-show-all" on:click=move |_| nav.set_view(ListView::All)>
                            "Show all sessions"
                        </button>
                    </p>
                }.into_any()),
                _ => None,
            }}
            {move || (list_view() == ListView::All).then(|| view! { <KeptWorktrees /> })}
        </nav>
    }
}
