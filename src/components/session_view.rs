//! The open session.

use leptos::prelude::*;

use crate::components::{
    Composer, Notices, ObserverBanner, PromptDock, SessionHeader, TaskListPanel, Transcript,
};
use crate::dom;
use crate::store::Store;

/// Header, transcript, prompt dialogs and composer of the open session. Escape interrupts a
/// running turn (when no dialog is open); the tab title shows "Needs you" while a prompt waits.
#[component]
pub fn SessionView() -> impl IntoView {
    let store = Store::expect();
    let observer = Memo::new(move |_| store.session.with(|s| s.is_observer()));
    let needs_you = Memo::new(move |_| store.session.with(|s| s.needs_you()));
    Effect::new(move |_| {
        dom::set_title(if needs_you.get() {
            "● Needs you — Bridge Console"
        } else {
            "Bridge Console"
        });
    });
    on_cleanup(|| dom::set_title("Bridge Console"));
    let esc = window_event_listener(leptos::ev::keydown, move |ev| {
        if ev.key() != "Escape"
            || ev.default_prevented()
            || !store.can_act()
            || store.device.notifications_open.get_untracked()
        {
            return;
        }
        let (running, prompt_open) = store
            .session
            .with_untracked(|s| (s.turn_running(), s.open_prompts().next().is_some()));
        if running && !prompt_open {
            ev.prevent_default();
            store.interrupt();
        }
    });
    on_cleanup(move || esc.remove());
    view! {
        <section class="session-view" aria-label="Session">
            <SessionHeader />
            <crate::components::cli_session_banner::CliSessionBanner />
            <crate::components::cli_session_banner::TerminalLiveBanner />
            {move || observer.get().then(|| view! { <ObserverBanner /> })}
            <TaskListPanel />
            <Transcript />
            <PromptDock />
            {move || (!observer.get()).then(|| view! { <Composer /> })}
            <Notices />
        </section>
    }
}

/// [`SessionView`] as a view: the entry point of the lazily loaded session part (`crate::lazy`).
pub fn session_view() -> AnyView {
    view! { <SessionView /> }.into_any()
}

crate::lazy::lazy_entries! {
    /// The open session's view ([`session_view`]), or `None` while the session part is not
    /// loaded (the frames' decoder is the part's other entry point, in `crate::lazy`).
    pub fn lazy_session_view() -> AnyView, part session / Session,
        entry session, preload preload_session { session_view() }
}
