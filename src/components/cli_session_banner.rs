//! The banner over a session started in a terminal, and the hand-over to the relay session that
//! continues it (or to a fork).

use leptos::prelude::*;

use crate::nav::{Nav, session_path};
use crate::store::Store;

/// Over one of Claude Code's own sessions (`data-testid="cli-session-banner"`): where it ran, and
/// that a message resumes it here. Also opens the session a resume or a fork made, in place.
#[component]
pub fn CliSessionBanner() -> impl IntoView {
    let store = Store::expect();
    let nav = Nav::expect();
    Effect::new(move |_| {
        if let Some(id) = store.cli.moved_to.get() {
            store.cli.moved_to.set(None);
            crate::dom::replace_url(&session_path(&id));
            nav.session.set(Some(id));
        }
    });
    let cwd = move || {
        store.cli.detail.with(|d| {
            d.as_ref()
                .and_then(|d| d.get("cwd"))
                .and_then(|c| c.as_str())
                .unwrap_or_default()
                .to_string()
        })
    };
    let branch = move || {
        store.cli.detail.with(|d| {
            d.as_ref()
                .and_then(|d| d.get("git_branch"))
                .and_then(|c| c.as_str())
                .map(|b| format!(" · {b}"))
                .unwrap_or_default()
        })
    };
    move || {
        store.cli.open.get().map(|_| {
            view! {
                <div class="cli-banner" data-testid="cli-session-banner" role="note">
                    <strong>"Started in a terminal"</strong>
                    <span class="muted">{cwd}{branch}</span>
                    <span>
                        {move || if store.cli.resuming.get() {
                            "Resuming it here…".to_string()
                        } else if store.can_act() {
                            "Send a message to continue it here (claude --resume).".to_string()
                        } else {
                            "Read-only.".to_string()
                        }}
                    </span>
                    {move || store.cli.error.get().map(|e| view! {
                        <span class="error" data-testid="cli-session-error" role="alert">{e}</span>
                    })}
                </div>
            }
        })
    }
}

/// Over a session that runs in a terminal and is followed live through Claude Code's hooks
/// (`data-testid="terminal-live-banner"`): where it runs, that its prompts can be answered here
/// (the first answer wins, here or at the terminal), and that a message waits for its turn to end.
#[component]
pub fn TerminalLiveBanner() -> impl IntoView {
    let store = Store::expect();
    // Memos: the banner is built again when these change, not on every frame of the session.
    let terminal = Memo::new(move |_| store.session.with(|s| s.info().terminal));
    let cwd = Memo::new(move |_| {
        store
            .session
            .with(|s| s.info().cwd.clone().unwrap_or_default())
    });
    let ended = Memo::new(move |_| {
        store
            .session
            .with(|s| s.state() == bridge_protocol::SessionState::Ended)
    });
    move || {
        terminal.get().then(|| {
            view! {
                <div class="cli-banner" data-testid="terminal-live-banner" role="note">
                    <strong>{move || if ended.get() { "Ran in a terminal" } else { "Live from a terminal" }}</strong>
                    <span class="muted">{move || cwd.get()}</span>
                    <span>
                        {move || if ended.get() {
                            "The session ended there."
                        } else if store.can_act() {
                            "Answer its prompts here or at the terminal (the first answer wins); a message waits for its turn to end."
                        } else {
                            "Read-only."
                        }}
                    </span>
                </div>
            }
        })
    }
}
