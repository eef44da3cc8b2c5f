//! The modal panels (the changes panel, the Notifications panel) and the focus handling every
//! modal shares with the prompt dialogs.

use std::rc::Rc;

use leptos::ev::KeyboardEvent;
use leptos::prelude::*;

use crate::dom;

/// Focus for the modal `el`: once it is in the page, focuses its element marked `data-autofocus`;
/// returns its keydown handler, which keeps Tab inside it.
pub fn modal_focus(el: NodeRef<leptos::html::Div>) -> impl Fn(KeyboardEvent) + Copy + 'static {
    Effect::new(move |_| {
        if let Some(node) = el.get() {
            request_animation_frame(move || dom::focus_in(&node, "[data-autofocus]"));
        }
    });
    move |ev: KeyboardEvent| {
        if let Some(node) = el.get_untracked() {
            dom::trap_tab(&node, &ev);
        }
    }
}

/// A modal panel (`role="dialog"`, `aria-modal`, named by its heading `labelled_by`) over a
/// backdrop: see [`modal_focus`]. A click on the backdrop itself (not inside the panel) calls
/// `on_close`; Escape, wherever the focus is (a button that just became disabled drops it), calls
/// `on_escape`.
#[component]
pub fn ModalPanel(
    /// The backdrop's classes.
    backdrop_class: &'static str,
    /// The panel's classes.
    class: &'static str,
    /// The id of the panel's heading.
    labelled_by: &'static str,
    /// The panel's `data-testid`.
    test_id: &'static str,
    /// The panel's `data-view`, for a panel with several views.
    #[prop(optional)]
    data_view: Option<Signal<&'static str>>,
    /// Closes the panel.
    on_close: impl Fn() + 'static,
    /// What Escape does.
    on_escape: impl Fn() + 'static,
    /// The panel's content.
    children: Children,
) -> impl IntoView {
    // The view is built by one function whatever the handlers' types (no copy of it per caller).
    let on_close: Rc<dyn Fn()> = Rc::new(on_close);
    let on_escape: Rc<dyn Fn()> = Rc::new(on_escape);
    modal_panel(
        backdrop_class,
        class,
        labelled_by,
        test_id,
        data_view,
        on_close,
        on_escape,
        children,
    )
}

#[allow(clippy::too_many_arguments)]
fn modal_panel(
    backdrop_class: &'static str,
    class: &'static str,
    labelled_by: &'static str,
    test_id: &'static str,
    data_view: Option<Signal<&'static str>>,
    on_close: Rc<dyn Fn()>,
    on_escape: Rc<dyn Fn()>,
    children: Children,
) -> impl IntoView + use<> {
    let el: NodeRef<leptos::html::Div> = NodeRef::new();
    let on_keydown = modal_focus(el);
    let esc = window_event_listener(leptos::ev::keydown, move |ev| {
        if ev.key() == "Escape" && !ev.default_prevented() {
            ev.prevent_default();
            on_escape();
        }
    });
    on_cleanup(move || esc.remove());
    view! {
        <div
            class=backdrop_class
            on:click=move |ev| {
                if ev.target() == ev.current_target() {
                    on_close();
                }
            }
        >
            <div
                class=class
                node_ref=el
                role="dialog"
                aria-modal="true"
                aria-labelledby=labelled_by
                data-testid=test_id
                data-view=move || data_view.map(|v| v.get())
                on:keydown=on_keydown
            >
                {children()}
            </div>
        </div>
    }
}

/// A panel's "Close" button, which the panel focuses when it opens.
#[component]
pub fn CloseButton(
    /// `data-testid`.
    test_id: &'static str,
    /// The accessible name.
    aria_label: &'static str,
    /// Closes the panel.
    on_click: impl Fn() + 'static,
) -> impl IntoView {
    view! {
        <button
            class="link-button close"
            data-testid=test_id
            aria-label=aria_label
            data-autofocus
            on:click=move |_| on_click()
        >
            "Close"
        </button>
    }
}
