//! A measured top-level row.

use leptos::prelude::*;

use crate::components::MessageRow;
use crate::components::transcript::RowMeasure;

/// Wraps a top-level [`MessageRow`] so the transcript can measure its height (`data-key`).
#[component]
pub fn TranscriptRow(
    /// Row key.
    row_key: String,
) -> impl IntoView {
    let measure = use_context::<RowMeasure>();
    let el: NodeRef<leptos::html::Div> = NodeRef::new();
    Effect::new(move |_| {
        if let (Some(el), Some(m)) = (el.get(), measure) {
            m.0.with_value(|o| o.observe(&el));
        }
    });
    view! {
        <div class="row" data-key=row_key.clone() node_ref=el>
            <MessageRow row_key=row_key.clone() />
        </div>
    }
}
