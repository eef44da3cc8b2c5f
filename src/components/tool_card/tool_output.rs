//! A tool result, collapsed when long.

use leptos::prelude::*;

use crate::store::Store;

/// Lines shown before "show all".
pub const COLLAPSED_LINES: usize = 12;
/// Characters shown before "show all".
pub const COLLAPSED_CHARS: usize = 2_000;

/// Cuts `text` for the collapsed view; returns the shown part and whether anything was cut.
pub fn collapse(text: &str) -> (String, bool) {
    let mut end = text.len();
    if let Some((i, _)) = text.match_indices('\n').nth(COLLAPSED_LINES - 1) {
        end = end.min(i);
    }
    if end > COLLAPSED_CHARS {
        end = text
            .char_indices()
            .nth(COLLAPSED_CHARS)
            .map_or(text.len(), |(i, _)| i);
    }
    (text[..end].to_string(), end < text.len())
}

/// The output of a tool (`data-testid="tool-result"`), with "show all" for long outputs.
#[component]
pub fn ToolOutputView(
    /// Id for remembering the expanded state.
    #[prop(into)]
    id: String,
    /// Output text.
    text: String,
    /// `is_error`.
    is_error: bool,
) -> impl IntoView {
    let store = Store::expect();
    let lines = text.lines().count();
    let (short, cut) = collapse(&text);
    let key = format!("out:{id}");
    let key2 = key.clone();
    let expanded = Signal::derive(move || store.is_expanded(&key));
    let full = text.clone();
    view! {
        <div class="tool-result" class:error=is_error data-testid="tool-result"
            role="region"
            aria-label=if is_error { "Tool error output" } else { "Tool output" } data-is-error=is_error.to_string()>
            {if text.is_empty() {
                view! { <span class="muted">"(no output)"</span> }.into_any()
            } else {
                view! {
                    <pre class="code output">{move || if expanded.get() { full.clone() } else { short.clone() }}</pre>
                }
                .into_any()
            }}
            {cut.then(|| view! {
                <button
                    class="link-button"
                    data-testid="tool-result-toggle"
                    aria-expanded=move || expanded.get().to_string()
                    on:click=move |_| store.toggle_expanded(&key2)
                >
                    {move || if expanded.get() { "Show less".to_string() } else { format!("Show all ({lines} lines)") }}
                </button>
            })}
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::collapse;

    #[test]
    fn collapses_long_outputs_only() {
        assert_eq!(collapse("a\nb"), ("a\nb".to_string(), false));
        let many: String = (0..40).map(|i| format!("line {i}\n")).collect();
        let (short, cut) = collapse(&many);
        assert!(cut);
        assert_eq!(short.lines().count(), 12);
        let wide = "é".repeat(5000);
        let (short, cut) = collapse(&wide);
        assert!(cut);
        assert_eq!(short.chars().count(), 2000);
    }
}
