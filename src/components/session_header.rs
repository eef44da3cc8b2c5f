//! The session header.

use leptos::prelude::*;

use crate::components::{
    ChangesButton, ConnectionStatus, ContextMeter, InterruptButton, McpStatus, ModelSelect,
    PermissionModeSelect, SessionStateBadge,
};
use crate::format;
use crate::nav::Nav;
use crate::store::Store;

/// Always-visible session facts (name, state, connection, context use, MCP servers, running cost)
/// and, for controllers, the model and permission-mode pickers and the interrupt button.
#[component]
pub fn SessionHeader() -> impl IntoView {
    let store = Store::expect();
    let nav = Nav::expect();
    let observer = Memo::new(move |_| store.session.with(|s| s.is_observer()));
    let terminal = Memo::new(move |_| store.session.with(|s| s.info().terminal));
    let title = move || {
        let id = store.session_id.get().unwrap_or_default();
        let from_list = store.list.sessions.with(|l| {
            l.iter()
                .find(|s| s.id == id)
                .map(|s| format::session_name(s.title.as_deref(), s.cwd.as_deref(), &s.id))
        });
        from_list.unwrap_or_else(|| {
            store
                .session
                .with(|s| format::session_name(None, s.info().cwd.as_deref(), &id))
        })
    };
    let cost = move || store.session.with(|s| s.cost_total());
    // Scale-out: the node running this session (from the list; nothing on a single relay).
    let host = move || {
        let id = store.session_id.get().unwrap_or_default();
        store.list.sessions.with(|l| {
            l.iter()
                .find(|s| s.id == id)
                .and_then(|s| crate::components::session_list::session_item::host_of(s))
                .map(str::to_owned)
        })
    };
    view! {
        <header class="session-header">
            <div class="header-row">
                <a class="back" href="/" aria-label="All sessions" on:click=move |ev| {
                    ev.prevent_default();
                    nav.go(None);
                }>"‹"</a>
                <h1 class="session-title" title=title>{title}</h1>
                {move || host().map(|h| view! {
                    <span class="session-host" data-testid="session-header-host" title=format!("Runs on the host {h}")>
                        {format!("on {h}")}
                    </span>
                })}
                <SessionStateBadge />
                <ConnectionStatus />
                <ChangesButton />
                <ContextMeter />
                <McpStatus />
                <span class="cost" data-testid="session-cost" aria-label="Session cost" title="Session cost so far">
                    {move || format::cost(cost())}
                </span>
            </div>
            // A terminal session's model, mode and interrupt are the terminal's. (A memo: the row is
            // built again only when that changes, not on every frame of the session.)
            {move || (!observer.get() && !terminal.get()).then(|| view! {
                <div class="header-row controls">
                    <ModelSelect />
                    <PermissionModeSelect />
                    <span class="grow"></span>
                    <InterruptButton />
                </div>
            })}
            {move || store.session.with(|s| s.rate_limit().cloned()).map(|r| {
                let when = r.resets_at.map(|_| " Resets later.").unwrap_or_default();
                view! {
                    <div class=format!("banner rate-{}", r.status) role="alert" data-testid="rate-limit-banner">
                        {if r.status == "rejected" { "Rate limit reached." } else { "Close to the rate limit." }}
                        {when}
                    </div>
                }
            })}
            {move || store.cli.partial.get().map(|(shown, total)| view! {
                <div class="banner" role="status" data-testid="cli-history-partial">
                    {format!("Showing the last {shown} of {total} messages of this transcript. ")}
                    <button type="button" class="link-button" data-testid="cli-show-earlier"
                        on:click=move |_| store.show_earlier_cli()>"Show earlier"</button>
                </div>
            })}
            {move || store.history_from.get().map(|from| view! {
                <div class="banner" role="status" data-testid="history-partial">
                    {format!("A long session: showing its latest events (after event {from}) and every prompt waiting for you. ")}
                    <button type="button" class="link-button" data-testid="history-show-all"
                        on:click=move |_| store.show_whole_history()>"Show all"</button>
                </div>
            })}
            {move || store.truncated.get().then(|| view! {
                <div class="banner" role="status">"Older history is no longer kept by the relay; the transcript starts later."</div>
            })}
        </header>
    }
}
