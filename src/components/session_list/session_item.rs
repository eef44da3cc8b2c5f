//! One session in the list.

use leptos::prelude::*;

use crate::format;
use crate::lazy::{self, Part};
use crate::nav::{Nav, session_path};
use crate::net::SessionSummary;
use crate::store::Store;
use bridge_protocol::api::Origin;

/// Starts loading what opening a session needs: the session view and its live connection.
fn prefetch_session_view() {
    lazy::prefetch(Part::Session);
    lazy::prefetch(Part::Live);
}

/// The node running a session, when the relay is a scale-out gateway (`host` in the API; a
/// single relay sends none).
pub fn host_of(summary: &SessionSummary) -> Option<&str> {
    summary
        .extra
        .get("host")
        .and_then(|v| v.as_str())
        .filter(|h| !h.is_empty())
}

/// A session entry (`data-testid="session-item"`, `data-session-id`, `data-state`, `data-origin`
/// `relay` or `cli` — Claude Code's own, started in a terminal, marked "Terminal"): opens it on
/// click; controllers can archive it (through the store, which says when the worktree was kept).
#[component]
pub fn SessionItem(
    /// The session.
    summary: SessionSummary,
) -> impl IntoView {
    let store = Store::expect();
    let nav = Nav::expect();
    let id = summary.id.clone();
    let id_click = id.clone();
    let id_cur = id.clone();
    let id_archive = id.clone();
    let current = Memo::new(move |_| nav.session.with(|s| s.as_deref() == Some(id_cur.as_str())));
    let controller = move || {
        store
            .me
            .with(|m| m.as_ref().is_some_and(|m| !m.is_observer()))
    };
    let name = format::session_name(
        summary.title.as_deref(),
        summary.cwd.as_deref(),
        &summary.id,
    );
    let ago = summary
        .last_activity_at
        .as_ref()
        .map(|t| format::ago(&t.as_str().into(), js_sys::Date::now()))
        .unwrap_or_default();
    let mut meta = Vec::new();
    if let Some(m) = &summary.model {
        meta.push(m.clone());
    }
    if summary.pending_permissions > 0 {
        meta.push(format!("{} waiting", summary.pending_permissions));
    }
    if let Some(b) = summary.git_branch() {
        meta.push(b.to_owned());
    }
    if !ago.is_empty() {
        meta.push(ago);
    }
    let host = host_of(&summary).map(str::to_owned);
    // First in the line (it is cut at the end on a phone).
    let host_sep = if meta.is_empty() { "" } else { " · " };
    let from_terminal = summary.origin() == Origin::Cli;
    let origin = summary.origin().as_str().to_owned();
    // "Fork of …": a session forked from another (the relay lists it right after that one).
    let fork_of = summary
        .cli
        .as_ref()
        .and_then(|c| c.forked_from.as_ref())
        .map(|f| {
            let title = f.title.as_deref().unwrap_or("another session");
            format!("Fork of {title}")
        });
    let archive_label = format!("Archive session {name}");
    let name_archive = name.clone();
    let state = summary.state.as_str().to_owned();
    let archiving = RwSignal::new(false);
    view! {
        <li
            class="session-item"
            class:active=move || current.get()
            data-testid="session-item"
            data-session-id=id.clone()
            data-state=state.clone()
            data-origin=origin.clone()
            role="listitem"
        >
            <a
                href=session_path(&id)
                aria-current=move || current.get().then_some("page")
                on:click=move |ev| {
                    ev.prevent_default();
                    nav.go(Some(&id_click));
                }
                // The session view's part starts loading on intent (a pointer over the entry, a
                // finger down, keyboard focus), before the click, if the idle prefetch has not.
                on:pointerenter=|_| prefetch_session_view()
                on:pointerdown=|_| prefetch_session_view()
                on:focus=|_| prefetch_session_view()
            >
                <span class="session-name" title=name.clone()>{name.clone()}</span>
                <span class=format!("badge state-{state}")>{state.replace('_', " ")}</span>
                {from_terminal.then(|| view! { <span class="badge origin-cli" title="Started with Claude Code in a terminal">"Terminal"</span> })}
                {fork_of.map(|f| view! { <span class="session-fork" data-testid="session-fork-of">{f}</span> })}
                <span class="session-cwd" title=summary.cwd.clone().unwrap_or_default()>{summary.cwd.clone().unwrap_or_default()}</span>
                <span class="session-meta">
                    {host.map(|h| {
                        let title = format!("Runs on the host {h}");
                        view! {
                            <span class="session-host" data-testid="session-host" title=title>
                                "on "{h}
                            </span>
                            {host_sep}
                        }
                    })}
                    {meta.join(" · ")}
                </span>
            </a>
            {move || (controller() && !from_terminal).then(|| {
                let id_archive = id_archive.clone();
                let name_archive = name_archive.clone();
                let archive_label = archive_label.clone();
                view! {
                    <button
                        class="link-button archive"
                        data-testid="session-archive"
                        aria-label=archive_label.clone()
                        disabled=move || archiving.get()
                        on:click=move |_| {
                            archiving.set(true);
                            let id = id_archive.clone();
                            store.archive_session(&id.clone(), &name_archive, move || {
                                archiving.try_set(false);
                                if nav.session.get_untracked().as_deref() == Some(id.as_str()) {
                                    nav.go(None);
                                }
                            });
                        }
                    >
                        "Archive"
                    </button>
                }
            })}
        </li>
    }
}
