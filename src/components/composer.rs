//! The message composer.

mod attachment_preview;
mod queued;

use leptos::ev::KeyboardEvent;
use leptos::prelude::*;

use crate::state::attachment::{ACCEPT, check_fits};
use crate::state::{Attachment, SessionState, SlashCommand, queue, slash_matches};
use crate::store::{Store, files_of};

pub use attachment_preview::AttachmentPreview;
pub use queued::QueuedMessages;

/// What the composer says while prompts an earlier page left unsent wait for the history.
fn restoring_text(n: usize) -> String {
    let what = if n == 1 {
        "1 message".to_string()
    } else {
        format!("{n} messages")
    };
    format!(
        "{what} not sent before the page was reloaded will appear and be sent once the session history has loaded."
    )
}

/// Multi-line input: Enter sends, Shift+Enter breaks the line, and nothing is sent while an IME
/// composition is in progress (`isComposing`, keyCode 229, and composition events). Disabled
/// states say why. Sent prompts show in the transcript at once as pending.
#[component]
pub fn Composer() -> impl IntoView {
    let store = Store::expect();
    let text = RwSignal::new(String::new());
    let composing = StoredValue::new(false);
    let input: NodeRef<leptos::html::Textarea> = NodeRef::new();
    let picker: NodeRef<leptos::html::Input> = NodeRef::new();
    let attachments = RwSignal::new(Vec::<Attachment>::new());
    let attach_errors = RwSignal::new(Vec::<String>::new());
    let reading = RwSignal::new(0usize);
    let dragging = RwSignal::new(false);
    let next_id = StoredValue::new(0u64);
    // Reads files one after the other (in the order given) into the draft's attachments; a file
    // that cannot be attached gets its own error line, and nothing else in the draft changes.
    let add_files = move |list: Vec<web_sys::File>| {
        if list.is_empty() {
            return;
        }
        attach_errors.set(Vec::new());
        reading.update(|n| *n += 1);
        store.read_attachments(
            list,
            move || {
                next_id.try_update_value(|n| {
                    *n += 1;
                    format!("att-{n}")
                })
            },
            move |a| {
                text.with_untracked(|t| attachments.with_untracked(|cur| check_fits(t, cur, a)))
            },
            move |got| match got {
                Ok(a) => {
                    attachments.try_update(|v| v.push(a));
                }
                Err(e) => {
                    attach_errors.try_update(|v| v.push(e.to_string()));
                }
            },
            move || {
                reading.try_update(|n| *n = n.saturating_sub(1));
            },
        );
    };
    // The draft survives an update reload ("New version — reload"): the store keeps it for that.
    Effect::new(move |_| text.with(|t| store.device.note_draft(t)));
    Effect::new(move |_| {
        if let Some(sid) = store.session_id.get()
            && let Some(draft) = store.device.take_saved_draft(&sid)
            && text.with_untracked(String::is_empty)
        {
            text.set(draft);
        }
    });
    let disabled_reason = move || -> Option<&'static str> {
        if store.session_id.with(Option::is_none) {
            Some("Open a session to send messages.")
        } else if store.session.with(|s| s.state() == SessionState::Ended)
            || store.conn.with(|c| *c == crate::net::ConnState::Ended)
        {
            Some(
                "This session has ended, so it takes no more messages. Start a new session to continue.",
            )
        } else {
            None
        }
    };
    let hint = move || -> Option<String> {
        if let Some(r) = disabled_reason() {
            return Some(r.to_string());
        }
        match store.conn.get() {
            crate::net::ConnState::Live => None,
            crate::net::ConnState::Paused => Some(
                "Paused while the page was hidden — reconnecting; nothing is lost.".to_string(),
            ),
            crate::net::ConnState::Offline(why) => {
                Some(format!("Offline ({why}): reload the page to reconnect."))
            }
            _ => Some(
                "Reconnecting — messages you send now go out, in order, once the connection is back."
                    .to_string(),
            ),
        }
    };
    // Slash commands the CLI offers, while the text is `/` and the start of a name.
    let menu_dismissed = RwSignal::new(false);
    let selected = RwSignal::new(0usize);
    let matches = Memo::new(move |_| -> Vec<SlashCommand> {
        if menu_dismissed.get() {
            return vec![];
        }
        text.with(|t| {
            store.session.with(|s| {
                slash_matches(&s.info().commands, t, 8)
                    .into_iter()
                    .cloned()
                    .collect()
            })
        })
    });
    let complete = move |name: String| {
        text.set(format!("/{name} "));
        selected.set(0);
        if let Some(el) = input.get_untracked() {
            let _ = el.focus();
        }
    };
    let send = move || {
        if reading.get_untracked() > 0 || disabled_reason().is_some() {
            return;
        }
        let t = text.get_untracked();
        if store.submit(&t, attachments.get_untracked()).is_some() {
            text.set(String::new());
            attachments.set(Vec::new());
            attach_errors.set(Vec::new());
        }
    };
    // Sending now would land while Claude works: the message is queued instead (the button says so).
    let will_queue = move || {
        store.session.with(queue::busy)
            || !store.compose.queue.with(|q| q.is_empty())
            || store.compose.restoring.get() > 0
    };
    let has_content =
        move || !text.with(|t| t.trim().is_empty()) || !attachments.with(Vec::is_empty);
    // Files dropped anywhere on the page (the transcript too) are attached, not opened by the browser.
    let has_files = |ev: &web_sys::DragEvent| {
        ev.data_transfer()
            .is_some_and(|d| d.types().includes(&"Files".into(), 0))
    };
    let over = window_event_listener(leptos::ev::dragover, move |ev| {
        if has_files(&ev) {
            ev.prevent_default();
            dragging.set(disabled_reason().is_none());
        }
    });
    let left = window_event_listener(leptos::ev::dragleave, move |ev| {
        if ev.related_target().is_none() {
            dragging.set(false);
        }
    });
    let dropped = window_event_listener(leptos::ev::drop, move |ev| {
        if has_files(&ev) {
            ev.prevent_default();
            dragging.set(false);
            if disabled_reason().is_none() {
                add_files(files_of(ev.data_transfer().and_then(|d| d.files())));
            }
        }
    });
    on_cleanup(move || {
        over.remove();
        left.remove();
        dropped.remove();
    });
    let on_keydown = move |ev: KeyboardEvent| {
        // Never act on half a word: keys that belong to an IME composition are the IME's.
        if ev.is_composing() || ev.key_code() == 229 || composing.get_value() {
            return;
        }
        let options = matches.get_untracked();
        if !options.is_empty() {
            let n = options.len();
            let sel = selected.get_untracked().min(n - 1);
            match ev.key().as_str() {
                "ArrowDown" => {
                    ev.prevent_default();
                    selected.set((sel + 1) % n);
                    return;
                }
                "ArrowUp" => {
                    ev.prevent_default();
                    selected.set((sel + n - 1) % n);
                    return;
                }
                "Tab" if !ev.shift_key() => {
                    ev.prevent_default();
                    complete(options[sel].name.clone());
                    return;
                }
                "Escape" => {
                    // Closes the menu only (not an interrupt).
                    ev.prevent_default();
                    menu_dismissed.set(true);
                    return;
                }
                // Enter takes the highlighted command, unless it is already typed out in full.
                "Enter"
                    if !ev.shift_key()
                        && !ev.alt_key()
                        && text
                            .with_untracked(|t| t.trim() != format!("/{}", options[sel].name)) =>
                {
                    ev.prevent_default();
                    complete(options[sel].name.clone());
                    return;
                }
                _ => {}
            }
        }
        if ev.key() != "Enter" || ev.shift_key() || ev.alt_key() {
            return;
        }
        ev.prevent_default();
        send();
    };
    // Phones have no Shift+Enter worth advertising, and the long hint wraps.
    let placeholder = if crate::dom::viewport_width() < 600.0 {
        "Message Claude…"
    } else {
        "Message Claude — Enter to send, Shift+Enter for a new line"
    };
    let suggestion = move || store.session.with(|s| s.suggestion().map(str::to_string));
    view! {
        <form
            class="composer"
            class:dragging=move || dragging.get()
            aria-label="Message composer"
            on:submit=move |ev| {
                ev.prevent_default();
                send();
            }
        >
            {move || suggestion().filter(|_| text.with(String::is_empty)).map(|sg| {
                let sg2 = sg.clone();
                view! {
                    <button type="button" class="suggestion chip" data-testid="prompt-suggestion" on:click=move |_| {
                        text.set(sg2.clone());
                        if let Some(el) = input.get_untracked() { let _ = el.focus(); }
                    }>{format!("Suggestion: {sg}")}</button>
                }
            })}
            {move || {
                let options = matches.get();
                (!options.is_empty()).then(|| {
                    let sel = selected.get().min(options.len() - 1);
                    view! {
                        <ul class="slash-menu" id="slash-menu" role="listbox" data-testid="slash-menu" aria-label="Slash commands">
                            {options.into_iter().enumerate().map(|(i, c)| {
                                let name = c.name.clone();
                                view! {
                                    <li
                                        id=format!("slash-option-{i}")
                                        role="option"
                                        data-testid="slash-option"
                                        data-name=c.name.clone()
                                        aria-selected=(i == sel).to_string()
                                        // Keep the focus in the text field.
                                        on:mousedown=|ev| ev.prevent_default()
                                        on:click=move |_| complete(name.clone())
                                    >
                                        <span class="slash-name">{format!("/{}", c.name)}</span>
                                        {(!c.argument_hint.is_empty()).then(|| view! { <span class="slash-hint">{c.argument_hint.clone()}</span> })}
                                        <span class="slash-desc">{c.description.clone()}</span>
                                    </li>
                                }
                            }).collect_view()}
                        </ul>
                    }
                })
            }}
            <QueuedMessages />
            <AttachmentPreview attachments=attachments reading=reading />
            {move || (!attach_errors.with(Vec::is_empty)).then(|| view! {
                <ul class="attach-errors" role="alert">
                    {attach_errors.get().into_iter().map(|e| view! { <li data-testid="attachment-error">{e}</li> }).collect_view()}
                </ul>
            })}
            {move || store.compose.note.get().map(|n| view! {
                <p class="composer-hint" role="status" data-testid="compose-note">{n}</p>
            })}
            <div class="composer-row">
                <input
                    node_ref=picker
                    type="file"
                    hidden
                    multiple
                    accept=ACCEPT
                    data-testid="composer-attach"
                    aria-label="Attach images or text files"
                    on:change=move |ev| {
                        let el: web_sys::HtmlInputElement = event_target(&ev);
                        add_files(files_of(el.files()));
                        // The same file can be picked again after it was removed.
                        el.set_value("");
                    }
                />
                <button
                    type="button"
                    class="attach-button"
                    data-testid="composer-attach-button"
                    aria-label="Attach images or text files"
                    title="Attach images or text files (or paste, or drop them here)"
                    disabled=move || disabled_reason().is_some()
                    on:click=move |_| {
                        if let Some(p) = picker.get_untracked() {
                            p.click();
                        }
                    }
                >
                    <span aria-hidden="true">"+"</span>
                </button>
                <textarea
                    node_ref=input
                    class="composer-input"
                    data-testid="composer-input"
                    aria-label="Message to Claude"
                    placeholder=placeholder
                    rows="1"
                    prop:value=move || text.get()
                    disabled=move || disabled_reason().is_some()
                    on:input=move |ev| {
                        text.set(event_target_value(&ev));
                        selected.set(0);
                        menu_dismissed.set(false);
                    }
                    // A textarea is a textbox: no aria-expanded (axe, flow 17); the listbox is tied to it by
                    // aria-controls and the highlighted option by aria-activedescendant.
                    aria-autocomplete="list"
                    aria-controls=move || (!matches.with(Vec::is_empty)).then_some("slash-menu")
                    aria-activedescendant=move || {
                        let n = matches.with(Vec::len);
                        (n > 0).then(|| format!("slash-option-{}", selected.get().min(n - 1)))
                    }
                    on:compositionstart=move |_| composing.set_value(true)
                    on:compositionend=move |_| {
                        // Some browsers send the committing Enter's keydown right after this event.
                        set_timeout(move || { composing.try_update_value(|c| *c = false); }, std::time::Duration::from_millis(30));
                    }
                    on:keydown=on_keydown
                    on:paste=move |ev: leptos::ev::ClipboardEvent| {
                        let list = files_of(ev.clipboard_data().and_then(|d| d.files()));
                        if !list.is_empty() {
                            // A screenshot or a copied file: attached; pasted text stays text.
                            ev.prevent_default();
                            add_files(list);
                        }
                    }
                ></textarea>
                <button
                    type="submit"
                    class="primary"
                    data-testid="composer-send"
                    aria-label=move || if will_queue() { "Queue message: it is sent when Claude finishes" } else { "Send message" }
                    data-queues=move || will_queue().to_string()
                    disabled=move || disabled_reason().is_some() || !has_content() || reading.get() != 0
                >
                    {move || if will_queue() { "Queue" } else { "Send" }}
                </button>
            </div>
            {move || hint().map(|h| view! { <p class="composer-hint" role="status">{h}</p> })}
            {move || match store.compose.restoring.get() {
                0 => None,
                n => Some(view! {
                    <p class="composer-hint" role="status" data-testid="unsent-restoring">{restoring_text(n)}</p>
                }),
            }}
        </form>
    }
}
