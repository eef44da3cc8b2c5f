//! One transcript row.

pub mod assistant_row;
pub mod raw_row;
pub mod result_footer;
pub mod system_row;
pub mod user_actions;
pub mod user_row;

use leptos::prelude::*;

use crate::state::{Item, ItemKind};
use crate::store::Store;

pub use assistant_row::AssistantRow;
pub use raw_row::RawRowView;
pub use result_footer::ResultFooter;
pub use system_row::SystemRowView;
pub use user_row::UserRow;

/// A transcript row by key (`data-testid="message"`, `data-role`, `data-uuid`). It updates only
/// when its own revision changes (a delta to another row leaves it alone). Assistant rows update
/// block by block (see [`AssistantRow`]); other rows are small and re-render whole.
#[component]
pub fn MessageRow(
    /// The row's key in the session model.
    row_key: String,
) -> impl IntoView {
    let session = Store::expect().session;
    let k = row_key.clone();
    let rev = Memo::new(move |_| session.with(|s| s.item_rev(&k)));
    let (assistant, nested) = session.with_untracked(|s| {
        s.item(&row_key)
            .map(|i| (matches!(i.kind, ItemKind::Assistant(_)), i.parent.is_some()))
            .unwrap_or_default()
    });
    if assistant {
        let k2 = row_key.clone();
        let uuid = Memo::new(move |_| {
            let _ = rev.get();
            session.with_untracked(|s| {
                s.item(&k2)
                    .and_then(|i| i.uuid().map(str::to_string))
                    .unwrap_or_default()
            })
        });
        return view! {
            <article
                class="message role-assistant"
                class:nested=nested
                data-testid="message"
                data-role="assistant"
                data-uuid=move || uuid.get()
                aria-label="assistant message"
            >
                <AssistantRow row_key=row_key rev=rev />
            </article>
        }
        .into_any();
    }
    (move || {
        // Read (not just track) the memo so it is brought up to date.
        let _ = rev.get();
        session
            .with_untracked(|s| s.item(&row_key).cloned())
            .map(render_item)
    })
    .into_any()
}

fn render_item(item: Item) -> AnyView {
    let role = item.role();
    let uuid = item.uuid().unwrap_or_default().to_string();
    let nested = item.parent.is_some();
    let body = match item.kind {
        ItemKind::User(u) => view! { <UserRow msg=u /> }.into_any(),
        ItemKind::Assistant(_) => ().into_any(),
        ItemKind::System(s) => view! { <SystemRowView row=s /> }.into_any(),
        ItemKind::Result(r) => view! { <ResultFooter row=r /> }.into_any(),
        ItemKind::Raw(r) => view! { <RawRowView row=r /> }.into_any(),
    };
    view! {
        <article
            class=format!("message role-{role}")
            class:nested=nested
            data-testid="message"
            data-role=role
            data-uuid=uuid
            aria-label=format!("{role} message")
        >
            {body}
        </article>
    }
    .into_any()
}
