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
