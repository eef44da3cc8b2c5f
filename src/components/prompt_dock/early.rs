//! The dialog of a prompt the page came with, before the session has loaded
//! ([`crate::store::EarlyPrompts`]): a notification that Claude needs the person opens the session,
//! and its waiting prompt takes the tap as soon as the dialogs part is in, while the session view,
//! its history and its live connection load behind it. Only the gate ([`EarlyPrompt`]) is in the
//! main module; the dialog's state and the reading of the prompt ([`early_view`]) are in the
//! dialogs part.

use leptos::prelude::*;

use crate::lazy::{self, Part};
use crate::state::prompt_of_frame;
use crate::store::Store;

/// Shows the oldest prompt [`crate::store::EarlyPrompts`] holds for the open session (the same
/// modal dialog the prompt dock shows; the dock leaves that prompt to this one until it is
/// answered here or the session's model saw it settled elsewhere). Nothing for an observer.
#[component]
pub fn EarlyPrompt() -> impl IntoView {
    let store = Store::expect();
    let open = Memo::new(move |_| {
        !store
            .me
            .with(|m| m.as_ref().is_some_and(|m| m.is_observer()))
            && store
                .session_id
                .with(|id| id.as_deref().is_some_and(|id| store.early.showing(id)))
    });
    move || {
        (open.get() && lazy::ready(Part::Dialogs))
            .then(super::lazy_early)
            .flatten()
    }
}

/// The early dialog (in the dialogs part): the oldest waiting prompt as its dialog, gone once it
/// is answered here or the session's model saw it settled.
pub fn early_view() -> AnyView {
    let store = Store::expect();
    let early = store.early;
    let waiting = Memo::new(move |_| {
        let sid = store.session_id.get()?;
        let (frame, n) = early.head(&sid)?;
        Some((prompt_of_frame(&frame)?, n))
    });
    let head = Memo::new(move |_| waiting.with(|w| w.as_ref().map(|(p, _)| p.request_id.clone())));
    let queued = Signal::derive(move || waiting.with(|w| w.as_ref().map_or(0, |(_, n)| *n)));
    // Answered in another window or withdrawn by the CLI, as the session's model (once its history
    // is in) says: the dialog goes.
    Effect::new(move |_| {
        if head.get().is_none() {
            return;
        }
        let Some(sid) = store.session_id.get_untracked() else {
            return;
        };
        store.session.with(|m| early.drop_settled(&sid, m));
    });
    (move || {
        let rid = head.get()?;
        let prompt = waiting.with_untracked(|w| {
            w.as_ref()
                .map(|(p, _)| p.clone())
                .filter(|p| p.request_id == rid)
        })?;
        Some(super::dialog_view(prompt, queued))
    })
    .into_any()
}
