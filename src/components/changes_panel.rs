//! The changes panel: what changed in the session's working directory, each file's diff.

use leptos::portal::Portal;
use leptos::prelude::*;

use crate::components::busy_button::BusyButton;
use crate::components::diff_view::DiffLines;
use crate::components::modal_panel::{CloseButton, ModalPanel};
use crate::diff::parse_unified;
use crate::dom;
use crate::net::changes::{ChangedFile, FileDiff};
use crate::store::{Changes, Store};

/// One letter for a status, as `git status --short` shows it.
fn status_letter(status: &str) -> &'static str {
    match status {
        "modified" => "M",
        "added" => "A",
        "deleted" => "D",
        "renamed" => "R",
        "untracked" => "U",
        _ => "?",
    }
}

/// `+3 −1`, `binary`, or nothing when the counts are unknown.
fn counts(f: &ChangedFile) -> String {
    if f.binary {
        return "binary".into();
    }
    match (f.insertions, f.deletions) {
        (Some(a), Some(d)) => format!("+{a} −{d}"),
        (Some(a), None) => format!("+{a}"),
        (None, Some(d)) => format!("−{d}"),
        (None, None) => String::new(),
    }
}

/// The header button (`data-testid="changes-open"`) with the number of changed files
/// (`changes-count`), and the panel while it is open. It keeps the list of the open session
/// current (read once the history is in, and after each tool call that writes).
#[component]
pub fn ChangesButton() -> impl IntoView {
    let store = Store::expect();
    let changes = Changes::expect();
    Effect::new(move |_| {
        changes.follow(store.session_id.get(), store.caught_up.get());
    });
    let count = Memo::new(move |_| changes.count());
    let label = move || match count.get() {
        Some(1) => "Changes: 1 file changed".to_string(),
        Some(n) => format!("Changes: {n} files changed"),
        None => "Changes".to_string(),
    };
    view! {
        <button
            class="chip-button changes-button"
            data-testid="changes-open"
            aria-haspopup="dialog"
            aria-expanded=move || changes.open.get().to_string()
            aria-label=label
            title=label
            data-count=move || count.get().map(|n| n.to_string()).unwrap_or_default()
            on:click=move |_| changes.open_panel()
        >
            <span aria-hidden="true">"±"</span>
            <span class="changes-count" data-testid="changes-count" aria-hidden="true">
                {move || count.get().map_or_else(|| "…".to_string(), |n| n.to_string())}
            </span>
        </button>
        // In the body, not the header: the header's backdrop filter would confine a fixed panel.
        {move || changes.open.get().then(|| view! { <Portal><ChangesPanel /></Portal> })}
    }
}

/// The panel (`data-testid="changes-panel"`, a modal dialog; a full-screen sheet on phones): the
/// changed files (`change-item` with `data-path` and `data-status`), and the picked file's diff
/// (`change-diff`). Read-only. Escape goes back from a diff to the list, then closes.
#[component]
pub fn ChangesPanel() -> impl IntoView {
    let c = Changes::expect();
    let close = move || {
        c.close_panel();
        dom::focus_selector("[data-testid='changes-open']");
    };
    let back_or_close = move || {
        if c.selected.get_untracked().is_some() {
            c.select(None);
        } else {
            close();
        }
    };
    let selected = Memo::new(move |_| c.selected.get());
    let data_view = Signal::derive(move || {
        if selected.get().is_some() {
            "diff"
        } else {
            "list"
        }
    });
    view! {
        <ModalPanel
            backdrop_class="dialog-backdrop changes-backdrop"
            class="dialog changes-panel"
            labelled_by="changes-title"
            test_id="changes-panel"
            data_view=data_view
            on_close=close
            on_escape=back_or_close
        >
            <header class="dialog-head">
                {move || selected.get().is_some().then(|| view! {
                    <button
                        class="link-button changes-back"
                        data-testid="changes-back"
                        aria-label="Back to the changed files"
                        on:click=move |_| c.select(None)
                    >
                        "‹ Files"
                    </button>
                })}
                <h2 id="changes-title" class="changes-title">
                    {move || selected.get().unwrap_or_else(|| "Changes".to_string())}
                </h2>
                <BusyButton
                    class="link-button"
                    test_id="changes-refresh"
                    aria_label="Read the changes again"
                    busy=c.loading
                    label="Refresh"
                    busy_label="Reading…"
                    on_click=move || c.refresh()
                />
                <CloseButton test_id="changes-close" aria_label="Close the changes panel" on_click=close />
            </header>
            <div class="dialog-body changes-body">
                {move || match selected.get() {
                    None => view! { <ChangeList /> }.into_any(),
                    Some(path) => view! { <ChangeDiff path=path /> }.into_any(),
                }}
            </div>
        </ModalPanel>
    }
}

/// The list of changed files.
#[component]
fn ChangeList() -> impl IntoView {
    let c = Changes::expect();
    let summary = move || {
        c.list.with(|l| match l {
            None => "Reading the changes…".to_string(),
            Some(Err(e)) => format!("The changes could not be read: {e}"),
            Some(Ok(l)) => {
                let n = l.files.len();
                let files = if n == 1 {
                    "1 file changed".to_string()
                } else {
                    format!("{n} files changed")
                };
                let more = if l.truncated {
                    " (more than shown)"
                } else {
                    ""
                };
                match (l.source.as_str(), &l.branch) {
                    ("git", Some(b)) => {
                        format!("{files}{more} · git, branch {b}, compared with HEAD")
                    }
                    ("git", None) => format!("{files}{more} · git, compared with HEAD"),
                    _ => format!(
                        "{files}{more} · written by this session's tools (not a git repository)"
                    ),
                }
            }
        })
    };
    let failed = move || c.list.with(|l| matches!(l, Some(Err(_))));
    let files = move || {
        c.list
            .with(|l| {
                l.as_ref()
                    .and_then(|r| r.as_ref().ok())
                    .map(|l| l.files.clone())
            })
            .unwrap_or_default()
    };
    let empty = move || {
        c.list
            .with(|l| matches!(l, Some(Ok(l)) if l.files.is_empty()))
    };
    view! {
        <p
            class="changes-summary"
            class:error=failed
            data-testid="changes-summary"
            role="status"
        >
            {summary}
        </p>
        {move || empty().then(|| view! {
            <p class="muted" data-testid="changes-empty">"No changes in the working directory."</p>
        })}
        <ul class="changes-list" aria-label="Changed files">
            <For each=files key=|f| (f.path.clone(), f.status.clone(), f.insertions, f.deletions, f.binary) let:f>
                <ChangeRow file=f />
            </For>
        </ul>
    }
}

/// One changed file: a button that shows its diff.
#[component]
fn ChangeRow(file: ChangedFile) -> impl IntoView {
    let c = Changes::expect();
    let path = file.path.clone();
    let letter = status_letter(file.status.as_str());
    let n = counts(&file);
    let aria = format!(
        "{}, {}{}",
        file.path,
        file.status,
        if n.is_empty() {
            String::new()
        } else {
            format!(", {n}")
        }
    );
    view! {
        <li>
            <button
                class="change-item"
                data-testid="change-item"
                data-path=file.path.clone()
                data-status=file.status.to_string()
                aria-label=aria
                on:click=move |_| c.select(Some(path.clone()))
            >
                <span class=format!("change-status status-{}", file.status) title=file.status.to_string()>{letter}</span>
                <span class="change-path">
                    {file.from.clone().map(|f| view! { <span class="change-from">{f}" → "</span> })}
                    {file.path.clone()}
                    {file.conflicted.then(|| view! { <span class="change-conflict">" (conflict)"</span> })}
                </span>
                <span class="change-counts">{n}</span>
            </button>
        </li>
    }
}

/// The diff of `path`.
#[component]
fn ChangeDiff(path: String) -> impl IntoView {
    let c = Changes::expect();
    let lines = Memo::new(move |_| {
        c.diff.with(|d| match d {
            Some(Ok(FileDiff {
                diff: Some(text), ..
            })) => parse_unified(text),
            _ => Vec::new(),
        })
    });
    let body = {
        let path = path.clone();
        move || {
            c.diff.with(|d| match d {
                None => view! { <p class="muted" data-testid="change-diff-loading">"Reading the diff…"</p> }.into_any(),
                Some(Err(e)) => view! { <p class="error" role="alert">{format!("The diff could not be read: {e}")}</p> }.into_any(),
                Some(Ok(d)) if d.binary => view! {
                    <p class="change-note" data-testid="change-binary">"Binary file: its content is not shown."</p>
                }.into_any(),
                Some(Ok(d)) => {
                    let note = d.note.clone();
                    let truncated = d.truncated;
                    let has_text = d.diff.as_deref().is_some_and(|t| !t.is_empty());
                    let path = path.clone();
                    view! {
                        {note.map(|n| view! { <p class="change-note" data-testid="change-note">{n}</p> })}
                        {truncated.then(|| view! {
                            <p class="change-note" data-testid="change-truncated">"The diff is too large: only its beginning is shown."</p>
                        })}
                        {if has_text {
                            view! { <DiffLines lines=lines label=path /> }.into_any()
                        } else {
                            view! { <p class="muted">"Nothing to show."</p> }.into_any()
                        }}
                    }
                    .into_any()
                }
            })
        }
    };
    view! {
        <div class="change-diff" data-testid="change-diff" data-path=path.clone()>
            {body}
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_read_plainly() {
        let f = |ins, del, binary| ChangedFile {
            path: "a".into(),
            status: "modified".into(),
            from: None,
            insertions: ins,
            deletions: del,
            binary,
            size: None,
            conflicted: false,
        };
        assert_eq!(counts(&f(Some(3), Some(1), false)), "+3 −1");
        assert_eq!(counts(&f(None, None, true)), "binary");
        assert_eq!(counts(&f(None, None, false)), "");
        assert_eq!(status_letter("untracked"), "U");
        assert_eq!(status_letter("weird"), "?");
    }
}
