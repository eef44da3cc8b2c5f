//! The message composer.

use leptos::ev::KeyboardEvent;
use leptos::prelude::*;

use crate::state::SessionState;
use crate::store::Store;

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
    let send = move || {
        let t = text.get_untracked();
        if disabled_reason().is_none() && store.send_prompt(&t).is_some() {
            text.set(String::new());
        }
    };
    let on_keydown = move |ev: KeyboardEvent| {
        if ev.key() != "Enter" || ev.shift_key() || ev.alt_key() {
            return;
        }
        // Never send half a word: the Enter that commits an IME composition is not a send.
        if ev.is_composing() || ev.key_code() == 229 || composing.get_value() {
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
            <div class="composer-row">
                <textarea
                    node_ref=input
                    class="composer-input"
                    data-testid="composer-input"
                    aria-label="Message to Claude"
                    placeholder=placeholder
                    rows="1"
                    prop:value=move || text.get()
                    disabled=move || disabled_reason().is_some()
                    on:input=move |ev| text.set(event_target_value(&ev))
                    on:compositionstart=move |_| composing.set_value(true)
                    on:compositionend=move |_| {
                        // Some browsers send the committing Enter's keydown right after this event.
                        set_timeout(move || { composing.try_update_value(|c| *c = false); }, std::time::Duration::from_millis(30));
                    }
                    on:keydown=on_keydown
                ></textarea>
                <button
                    type="submit"
                    class="primary"
                    data-testid="composer-send"
                    aria-label="Send message"
                    disabled=move || disabled_reason().is_some() || text.with(|t| t.trim().is_empty())
                >
                    "Send"
                </button>
            </div>
            {move || hint().map(|h| view! { <p class="composer-hint" role="status">{h}</p> })}
            {move || match store.restoring.get() {
                0 => None,
                n => Some(view! {
                    <p class="composer-hint" role="status" data-testid="unsent-restoring">{restoring_text(n)}</p>
                }),
            }}
        </form>
    }
}
