//! A line diff.

use leptos::prelude::*;

use crate::diff::{DiffLine, diff_stats};
use crate::lazy::{self, Part};

/// Shows `old` → `new` as a unified line diff (via `similar`), live when the inputs are signals.
#[component]
pub fn DiffView(
    /// Text before.
    #[prop(into)]
    old: Signal<String>,
    /// Text after.
    #[prop(into)]
    new: Signal<String>,
    /// Optional label (e.g. the file path).
    #[prop(optional, into)]
    label: Option<String>,
) -> impl IntoView {
    // The diff code loads lazily (src/lazy.rs): no lines until it is in, then the memo re-runs.
    let lines = Memo::new(move |_| {
        let ready = lazy::ready(Part::Diff);
        old.with(|o| new.with(|n| ready.then(|| lazy::diff_lines(o, n, 3)).flatten()))
            .unwrap_or_default()
    });
    view! { <DiffLines lines=lines label=label.unwrap_or_default() /> }
}

/// Shows diff lines already made (e.g. a unified diff from the relay read with
/// [`crate::diff::parse_unified`]): the same figure as [`DiffView`].
#[component]
pub fn DiffLines(
    /// The lines.
    #[prop(into)]
    lines: Signal<Vec<DiffLine>>,
    /// Optional label (e.g. the file path; empty: none).
    #[prop(optional, into)]
    label: String,
) -> impl IntoView {
    let label_text = if label.is_empty() {
        "Changes".to_string()
    } else {
        label.clone()
    };
    view! {
        <figure class="diff" role="figure" aria-label=format!("Diff: {label_text}")>
            <figcaption class="diff-caption">
                {(!label.is_empty()).then_some(label)}
                <span class="diff-stats">
                    {move || {
                        let (del, add) = lines.with(|l| diff_stats(l));
                        format!(" −{del} +{add}")
                    }}
                </span>
            </figcaption>
            <pre class="diff-body">
                {move || {
                    lines
                        .get()
                        .into_iter()
                        .map(|l| {
                            let class = match l.sign {
                                '-' => "diff-line del",
                                '+' => "diff-line add",
                                '…' => "diff-line fold",
                                _ => "diff-line",
                            };
                            let sign = if l.sign == '…' { "⋯".to_string() } else { l.sign.to_string() };
                            view! {
                                <div class=class>
                                    <span class="diff-sign" aria-hidden="true">{sign}</span>
                                    {l.text}
                                </div>
                            }
                        })
                        .collect_view()
                }}
            </pre>
        </figure>
    }
}
