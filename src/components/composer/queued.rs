//! Follow-ups waiting for the running turn, above the composer.

use leptos::prelude::*;

use crate::state::Queued;
use crate::store::{Compose, Store};

/// The queue (`data-testid="queued-message"` each): what waits, and that it sends when Claude
/// finishes — one message per turn, so each gets its own answer. Each can be edited or cancelled
/// until it goes, or sent now (interrupting the running turn). After an interrupt the queue is held
/// and says so.
#[component]
pub fn QueuedMessages() -> impl IntoView {
    let store = Store::expect();
    let compose = Compose::expect();
    let items = Memo::new(move |_| compose.queue.with(|q| q.items().to_vec()));
    let held = move || compose.queue.with(|q| q.is_held());
    let running = move || store.session.with(|s| s.turn_running());
    let note = move || {
        let n = compose.queue.with(|q| q.items().len());
        let what = if n == 1 {
            "1 message".to_string()
        } else {
            format!("{n} messages")
        };
        if held() {
            format!("Claude was interrupted: {what} queued and kept. Send now, edit, or cancel.")
        } else if running() {
            format!("{what} queued — sends when Claude finishes, one per turn.")
        } else {
            format!("{what} queued — sending once Claude is ready.")
        }
    };
    view! {
        <Show when=move || !compose.queue.with(|q| q.is_empty())>
            <section class="queued" data-testid="queued-list" aria-label="Queued messages" data-held=move || held().to_string()>
                <p class="queued-note" role="status" data-testid="queued-note">{note}</p>
                <ol class="queued-items">
                    <For each=move || items.get() key=|q| format!("{}|{}", q.uuid, q.text) let:q>
                        <QueuedRow q=q />
                    </For>
                </ol>
            </section>
        </Show>
    }
}

#[component]
fn QueuedRow(q: Queued) -> impl IntoView {
    let store = Store::expect();
    let compose = Compose::expect();
    let uuid = StoredValue::new(q.uuid.clone());
    // A memo: the row's editor is rebuilt only when editing starts or ends, never while typing.
    let editing = Memo::new(move |_| {
        compose
            .queue
            .with(|x| x.editing() == Some(uuid.get_value().as_str()))
    });
    let draft = RwSignal::new(q.text.clone());
    let running = move || store.session.with(|s| s.turn_running());
    let n_att = q.attachments.len();
    let text = q.text.clone();
    view! {
        <li class="queued-message" data-testid="queued-message" data-uuid=q.uuid.clone()>
            {move || if editing.get() {
                view! {
                    // Inside the composer's form: a group, not a form of its own.
                    <div class="queued-edit" role="group" aria-label="Edit queued message">
                        <textarea
                            class="composer-input"
                            data-testid="queued-edit-input"
                            aria-label="Edit the queued message"
                            rows="2"
                            prop:value=move || draft.get()
                            on:input=move |ev| draft.set(event_target_value(&ev))
                            on:keydown=move |ev: leptos::ev::KeyboardEvent| {
                                if ev.key() == "Escape" {
                                    ev.prevent_default();
                                    store.queue_finish_edit(&uuid.get_value(), None);
                                } else if ev.key() == "Enter" && !ev.shift_key() && !ev.is_composing() {
                                    ev.prevent_default();
                                    store.queue_finish_edit(&uuid.get_value(), Some(&draft.get_untracked()));
                                }
                            }
                        ></textarea>
                        <div class="queued-actions">
                            <button type="button" class="primary" data-testid="queued-save" on:click=move |_| {
                                store.queue_finish_edit(&uuid.get_value(), Some(&draft.get_untracked()));
                            }>"Save"</button>
                            <button type="button" data-testid="queued-edit-cancel" on:click=move |_| store.queue_finish_edit(&uuid.get_value(), None)>"Keep as it was"</button>
                        </div>
                    </div>
                }.into_any()
            } else {
                let text = text.clone();
                view! {
                    <div class="queued-body">
                        <span class="chip queued-chip">"Queued"</span>
                        <span class="queued-text" data-testid="queued-text">{text}</span>
                        {(n_att > 0).then(|| view! { <span class="chip">{format!("{n_att} attachment(s)")}</span> })}
                    </div>
                    <div class="queued-actions">
                        <button type="button" data-testid="queued-edit" aria-label="Edit this queued message" on:click=move |_| {
                            store.queue_begin_edit(&uuid.get_value());
                            request_animation_frame(|| crate::dom::focus_selector("[data-testid=queued-edit-input]"));
                        }>"Edit"</button>
                        <button type="button" data-testid="queued-cancel" aria-label="Cancel this queued message: it will not be sent" on:click=move |_| store.queue_cancel(&uuid.get_value())>"Cancel"</button>
                        <button type="button" data-testid="queued-send-now" on:click=move |_| store.queue_send_now(&uuid.get_value())>
                            {move || if running() { "Interrupt and send now" } else { "Send now" }}
                        </button>
                    </div>
                }.into_any()
            }}
        </li>
    }
}
