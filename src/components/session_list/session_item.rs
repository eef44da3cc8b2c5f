//! One session in the list.

use leptos::prelude::*;

use crate::lazy::{self, Part};
use crate::nav::{Nav, session_path};
use crate::net::SessionSummary;
use crate::store::SessionList;
use bridge_protocol::api::ListEntry;

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
    let list = SessionList::expect();
    let nav = Nav::expect();
    let id = summary.id.clone();
    let id_click = id.clone();
    let id_cur = id.clone();
    let id_archive = id.clone();
    let current = Memo::new(move |_| nav.session.with(|s| s.as_deref() == Some(id_cur.as_str())));
    let controller = move || list.is_controller();
    // The same text the relay pre-renders into index.html (bridge-protocol's `ListEntry`).
    let entry = ListEntry::of(&summary, js_sys::Date::now());
    let name = entry.name;
    let meta = entry.meta;
    let host = entry.host;
    // First in the line (it is cut at the end on a phone).
    let host_sep = if meta.is_empty() { "" } else { " · " };
    let from_terminal = entry.from_terminal;
    let origin = entry.origin;
    // "Fork of …": a session forked from another (the relay lists it right after that one).
    let fork_of = entry.fork_of;
    let cwd = entry.cwd;
    let cwd_title = cwd.clone();
    let archive_label = format!("Archive session {name}");
    let name_archive = name.clone();
    let state = entry.state;
    let state_label = entry.state_label;
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
                <span class=format!("badge state-{state}")>{state_label}</span>
                {from_terminal.then(|| view! { <span class="badge origin-cli" title="Started with Claude Code in a terminal">"Terminal"</span> })}
                {fork_of.map(|f| view! { <span class="session-fork" data-testid="session-fork-of">{f}</span> })}
                <span class="session-cwd" title=cwd_title>{cwd}</span>
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
                    {meta}
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
                            list.archive_session(&id.clone(), &name_archive, move || {
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
