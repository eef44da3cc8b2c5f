//! A user row.

mod images;

use leptos::prelude::*;

use crate::state::{SendState, UserMsg, UserOrigin};
use crate::store::Store;

/// A prompt (shown as typed, never as markdown), a CLI-made user frame, or a replayed command;
/// with its delivery state and a retry button when sending failed.
#[component]
pub fn UserRow(
    /// The row.
    msg: UserMsg,
) -> impl IntoView {
    let store = Store::expect();
    let origin = match msg.origin {
        UserOrigin::Prompt => "prompt",
        UserOrigin::Synthetic => "synthetic",
        UserOrigin::LocalCommand => "local-command",
        UserOrigin::SubagentPrompt => "subagent-prompt",
    };
    let uuid = msg.uuid.clone();
    let status = match &msg.send {
        SendState::Pending => Some(view! { <span class="send-state">"Sending…"</span> }.into_any()),
        SendState::Sent => Some(view! { <span class="send-state">"Sent"</span> }.into_any()),
        SendState::Confirmed => None,
        SendState::Failed(why) => Some(
            view! {
                <span class="send-state failed" role="alert">
                    {format!("Not sent: {why}")}
                    <button
                        class="link-button"
                        data-testid="message-retry"
                        aria-label="Retry sending this message"
                        on:click=move |_| store.retry_prompt(&uuid)
                    >
                        "Retry"
                    </button>
                </span>
            }
            .into_any(),
        ),
    };
    let (label, text) = match msg.origin {
        UserOrigin::Synthetic => (Some("Claude Code"), msg.text),
        UserOrigin::LocalCommand => {
            let (label, text) = crate::format::local_command(&msg.text);
            (Some(label), text)
        }
        UserOrigin::SubagentPrompt => (Some("Subagent prompt"), msg.text),
        UserOrigin::Prompt => (None, msg.text),
    };
    // Long frames the CLI writes itself (a compaction summary …) are folded to their first line.
    let fold = msg.origin == UserOrigin::Synthetic
        && (text.chars().count() > 400 || text.lines().count() > 8);
    let body = if fold {
        let line = text
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or_default();
        // Its first sentence, or the start of it.
        let first = match line.find(". ") {
            Some(end) if end < 160 => line[..=end].to_string(),
            _ if line.chars().count() > 140 => {
                format!("{}…", line.chars().take(140).collect::<String>())
            }
            _ => line.to_string(),
        };
        view! {
            <details class="inline-details folded-synthetic">
                <summary>{first}</summary>
                <div class="user-text">{text}</div>
            </details>
        }
        .into_any()
    } else {
        view! { <div class="user-text">{text}</div> }.into_any()
    };
    let queued = msg.lifecycle.as_deref() == Some("queued");
    // Fork from a prompt, or restore the files to before it: controllers, once it was delivered.
    let actions = (msg.origin == UserOrigin::Prompt
        && !msg.uuid.is_empty()
        && matches!(msg.send, SendState::Confirmed)
        && store.can_act())
    .then(|| view! { <super::user_actions::UserActions uuid=msg.uuid.clone() /> });
    view! {
        <div class=format!("bubble user origin-{origin}") data-send-state=msg.send.as_str() data-origin=origin>
            {label.map(|l| view! { <span class="bubble-label">{l}</span> })}
            {body}
            {(!msg.images.is_empty()).then(|| view! { <images::UserImages images=msg.images.clone() /> })}
            <div class="bubble-meta">
                {queued.then(|| view! { <span class="chip">"Queued"</span> })}
                {msg.coalesced.then(|| view! { <span class="chip" title="Claude Code answered this together with the previous message">"Answered with the previous message"</span> })}
                {status}
            </div>
            {actions}
        </div>
    }
}
