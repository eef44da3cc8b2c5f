//! The attachments of the message being written, before it is sent.

use leptos::prelude::*;

use crate::state::Attachment;

/// Thumbnails (images) or file chips (text) with name and size, each with a remove button
/// (`data-testid="attachment-remove"`, a real button: reachable and usable from the keyboard).
#[component]
pub fn AttachmentPreview(
    /// The draft's attachments.
    attachments: RwSignal<Vec<Attachment>>,
    /// Files still being read (shown as a busy note).
    reading: RwSignal<usize>,
) -> impl IntoView {
    view! {
        <Show when=move || !attachments.with(Vec::is_empty) || reading.get() != 0>
            <ul class="attachment-preview" data-testid="attachment-preview" aria-label="Attachments">
                <For each=move || attachments.get() key=|a| a.id.clone() let:a>
                    {
                        let id = a.id.clone();
                        let desc = a.describe();
                        let label = format!("Remove {}", a.name);
                        view! {
                            <li class="attachment" data-testid="attachment-item" data-name=a.name.clone()>
                                {match a.data_url() {
                                    Some(url) => view! { <img class="attachment-thumb" src=url alt=format!("{} ({desc})", a.name) /> }.into_any(),
                                    None => view! { <span class="attachment-icon" aria-hidden="true">"TXT"</span> }.into_any(),
                                }}
                                <span class="attachment-meta">
                                    <span class="attachment-name">{a.name.clone()}</span>
                                    <span class="attachment-size" data-testid="attachment-size">{desc.clone()}</span>
                                </span>
                                <button
                                    type="button"
                                    class="attachment-remove"
                                    data-testid="attachment-remove"
                                    aria-label=label.clone()
                                    title=label
                                    on:click=move |_| attachments.update(|v| v.retain(|x| x.id != id))
                                >"×"</button>
                            </li>
                        }
                    }
                </For>
                {move || (reading.get() != 0).then(|| view! {
                    <li class="attachment reading" role="status" data-testid="attachment-reading">"Reading…"</li>
                })}
            </ul>
        </Show>
    }
}
