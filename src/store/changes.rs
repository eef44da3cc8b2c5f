//! The store's side of the changes panel: the open session's changed files (read from the relay
//! when the session is opened, when the panel opens, and shortly after each tool call that writes —
//! debounced, one request at a time) and the diff of the file the person picked. The relay calls
//! are in [`crate::net::changes`]; components take [`Changes`] from context, read its signals and
//! call its methods.

use bridge_protocol::MessageType;
use leptos::prelude::*;

use super::Store;
use crate::net::Incoming;
use crate::net::changes::{self as api, ChangeList, FileDiff};

/// Tools whose results may have changed files on disk.
pub const WRITING_TOOLS: &[&str] = &["Write", "Edit", "MultiEdit", "NotebookEdit", "Bash"];
/// Quiet time after a writing tool's result before the list is read again.
pub const DEBOUNCE_MS: u64 = 600;

/// The changes panel's state (cheap to copy).
#[derive(Clone, Copy)]
pub struct Changes {
    /// The panel is open.
    pub open: RwSignal<bool>,
    /// The last list read (kept while a newer one loads), or why it could not be read.
    pub list: RwSignal<Option<Result<ChangeList, String>>>,
    /// A list request is under way.
    pub loading: RwSignal<bool>,
    /// The file whose diff is shown.
    pub selected: RwSignal<Option<String>>,
    /// Its diff (None while loading).
    pub diff: RwSignal<Option<Result<FileDiff, String>>>,
    /// The session the list belongs to.
    session: StoredValue<Option<String>>,
    /// Bumped by each scheduled refresh: only the last one runs.
    debounce: StoredValue<u64>,
    /// A request is under way / another was asked for meanwhile.
    in_flight: StoredValue<bool>,
    again: StoredValue<bool>,
    /// Bumped by each diff request: an older answer is dropped.
    diff_gen: StoredValue<u64>,
}

impl Changes {
    pub(super) fn new() -> Self {
        Changes {
            open: RwSignal::new(false),
            list: RwSignal::new(None),
            loading: RwSignal::new(false),
            selected: RwSignal::new(None),
            diff: RwSignal::new(None),
            session: StoredValue::new(None),
            debounce: StoredValue::new(0),
            in_flight: StoredValue::new(false),
            again: StoredValue::new(false),
            diff_gen: StoredValue::new(0),
        }
    }

    /// How many files changed, once known.
    pub fn count(&self) -> Option<usize> {
        self.list.with(|l| {
            l.as_ref()
                .and_then(|r| r.as_ref().ok())
                .map(|l| l.files.len())
        })
    }
}

/// Whether `frames` hold the result of a tool call that may have written files (`name_of` gives
/// a tool_use id's tool name).
pub fn writes_files(frames: &[Incoming], name_of: impl Fn(&str) -> Option<String>) -> bool {
    frames.iter().any(|f| {
        // Only a `user` frame is read as a `Value` (its text parsed again).
        f.payload.kind() == MessageType::User && {
            let p = f.payload.value();
            p.pointer("/message/content")
                .and_then(|c| c.as_array())
                .is_some_and(|blocks| {
                    blocks.iter().any(|b| {
                        b.get("type").and_then(|t| t.as_str()) == Some("tool_result")
                            && b.get("tool_use_id")
                                .and_then(|i| i.as_str())
                                .and_then(&name_of)
                                .is_some_and(|n| WRITING_TOOLS.contains(&n.as_str()))
                    })
                })
        }
    })
}

impl Changes {
    /// The changes panel from context.
    pub fn expect() -> Self {
        expect_context::<Changes>()
    }

    /// Follows the open session: a new one starts with an empty list; the list is read once the
    /// session's history is in (on each opening).
    pub fn follow(&self, session: Option<String>, caught_up: bool) {
        let c = *self;
        let changed = c
            .session
            .try_update_value(|s| {
                let changed = *s != session;
                *s = session.clone();
                changed
            })
            .unwrap_or(false);
        if changed {
            c.list.set(None);
            c.selected.set(None);
            c.diff.set(None);
            c.open.set(false);
        }
        // Called when the session or its caught-up state changes: each opening reads the list anew.
        if session.is_some() && caught_up {
            self.refresh();
        }
    }

    /// Opens the panel and reads the list again.
    pub fn open_panel(&self) {
        self.open.set(true);
        self.refresh();
    }

    /// Closes the panel.
    pub fn close_panel(&self) {
        self.open.set(false);
        self.selected.set(None);
        self.diff.set(None);
    }

    /// Shows `path`'s diff (None: back to the list).
    pub fn select(&self, path: Option<String>) {
        let c = *self;
        c.selected.set(path.clone());
        c.diff.set(None);
        if let Some(p) = path {
            self.load_diff(p);
        }
    }

    /// Reads the list (one request at a time: one asked for meanwhile runs after it).
    pub fn refresh(&self) {
        let c = *self;
        let Some(sid) = c.session.try_get_value().flatten() else {
            return;
        };
        if c.in_flight.try_get_value() != Some(false) {
            c.again.try_set_value(true);
            return;
        }
        c.in_flight.set_value(true);
        c.loading.set(true);
        leptos::task::spawn_local(async move {
            let r = api::list(&sid).await.map_err(|e| e.to_string());
            if c.session.try_get_value().flatten().as_deref() != Some(sid.as_str()) {
                c.in_flight.try_set_value(false);
                c.again.try_set_value(false);
                return;
            }
            c.list.try_set(Some(r));
            c.loading.try_set(false);
            c.in_flight.try_set_value(false);
            // The file shown may have changed too.
            if c.open.try_get_untracked() == Some(true)
                && let Some(p) = c.selected.try_get_untracked().flatten()
            {
                c.load_diff(p);
            }
            if c.again.try_update_value(std::mem::take) == Some(true) {
                c.refresh();
            }
        });
    }

    fn load_diff(&self, path: String) {
        let c = *self;
        let Some(sid) = c.session.try_get_value().flatten() else {
            return;
        };
        let Some(generation) = c.diff_gen.try_update_value(|g| {
            *g += 1;
            *g
        }) else {
            return;
        };
        leptos::task::spawn_local(async move {
            let r = api::diff(&sid, &path).await.map_err(|e| e.to_string());
            if c.diff_gen.try_get_value() == Some(generation)
                && c.selected.try_get_untracked().flatten().as_deref() == Some(path.as_str())
            {
                c.diff.try_set(Some(r));
            }
        });
    }
}

impl Store {
    /// Called with each batch of applied frames: a writing tool's result schedules a refresh.
    pub(super) fn note_changes(&self, frames: &[Incoming]) {
        if self.caught_up.try_get_untracked() != Some(true) {
            return;
        }
        let wrote = self
            .session
            .try_with_untracked(|s| writes_files(frames, |id| s.tool(id).map(|t| t.name.clone())))
            .unwrap_or(false);
        if !wrote {
            return;
        }
        let c = self.changes;
        let Some(generation) = c.debounce.try_update_value(|g| {
            *g += 1;
            *g
        }) else {
            return;
        };
        set_timeout(
            move || {
                if c.debounce.try_get_value() == Some(generation) {
                    // The list's loading is in the session part (in: the frames are applied).
                    crate::lazy::when_loaded(crate::lazy::Part::Session, move || {
                        super::split_entry::refresh_changes(c)
                    });
                }
            },
            std::time::Duration::from_millis(DEBOUNCE_MS),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::Source;
    use serde_json::json;

    fn result(id: &str) -> Incoming {
        Incoming {
            source: Source::Worker,
            seq: Some(1),
            payload: json!({"type": "user", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": id, "content": "ok"}]}})
            .into(),
        }
    }

    #[test]
    fn only_writing_tools_results_count() {
        let names = |id: &str| {
            Some(
                match id {
                    "w" => "Write",
                    "b" => "Bash",
                    "n" => "NotebookEdit",
                    _ => "Read",
                }
                .to_owned(),
            )
        };
        assert!(writes_files(&[result("w")], names));
        assert!(writes_files(&[result("r"), result("b")], names));
        assert!(writes_files(&[result("n")], names));
        assert!(!writes_files(&[result("r")], names));
        assert!(!writes_files(&[result("x")], |_| None));
        let text = Incoming {
            source: Source::Worker,
            seq: Some(2),
            payload: json!({"type": "user", "message": {"role": "user", "content": "Write"}})
                .into(),
        };
        assert!(!writes_files(&[text], names));
    }
}
