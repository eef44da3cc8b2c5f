//! Archiving a session, and the worktrees archiving kept. In spawn mode `worktree` the relay keeps
//! a session's worktree when removing it would lose work (uncommitted changes, commits not merged
//! into its base branch): the console says so right after archiving (path, branch, why), lists
//! such archived sessions as "worktree kept" (from the session list, so it survives a reload), and
//! discards one only when the person asks to and confirms.

use leptos::prelude::*;

use super::{SessionList, split_entry};
use crate::format;
use crate::lazy::{self, Part};
use crate::net::{self, ArchiveAnswer, SessionSummary};

/// A worktree the relay kept when its session was archived.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeptWorktree {
    /// The archived session.
    pub session_id: String,
    /// The session's name as the list shows it.
    pub name: String,
    /// The worktree's directory on the relay's machine.
    pub path: String,
    /// Its branch, if it has one.
    pub branch: Option<String>,
    /// Why it was kept (`uncommitted changes`, `1 commit(s) not merged into main`).
    pub why: String,
}

impl KeptWorktree {
    /// From an entry of the session list: an archived session whose worktree was kept.
    pub fn from_summary(s: &SessionSummary) -> Option<Self> {
        if !s.archived {
            return None;
        }
        let why = s.worktree_kept.clone()?;
        let wt = s.worktree.clone().unwrap_or_default();
        Some(Self {
            session_id: s.id.clone(),
            name: format::session_name(s.title.as_deref(), s.cwd.as_deref(), &s.id),
            path: wt.path,
            branch: wt.branch,
            why,
        })
    }

    /// From the relay's answer to archiving session `id` (named `name`), if it kept the worktree.
    pub fn from_answer(id: &str, name: &str, answer: &ArchiveAnswer) -> Option<Self> {
        let why = answer.worktree_kept.clone()?;
        let wt = answer.worktree.clone().unwrap_or_default();
        Some(Self {
            session_id: id.to_owned(),
            name: name.to_owned(),
            path: wt.path,
            branch: wt.branch,
            why,
        })
    }
}

/// What the last archive or discard did, shown above the list until dismissed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArchiveNotice {
    /// The session was archived and its worktree kept.
    Kept(KeptWorktree),
    /// A kept worktree was discarded (the relay removes the directory and the branch).
    Discarded {
        /// The session's name.
        name: String,
        /// The directory that goes away.
        path: String,
    },
    /// Archiving or discarding failed.
    Failed {
        /// What was attempted, e.g. `Archiving “fix-ci”`.
        what: String,
        /// The relay's (or the network's) reason.
        message: String,
    },
}

/// Splits the relay's list into the live sessions and the worktrees kept by archived ones (other
/// archived sessions are not shown).
pub fn split_sessions(list: Vec<SessionSummary>) -> (Vec<SessionSummary>, Vec<KeptWorktree>) {
    let mut kept = Vec::new();
    let live = list
        .into_iter()
        .filter(|s| {
            if let Some(k) = KeptWorktree::from_summary(s) {
                kept.push(k);
            }
            !s.archived
        })
        .collect();
    (live, kept)
}

/// The notice after archiving: the kept worktree, or nothing to say.
pub fn notice_after_archive(id: &str, name: &str, answer: &ArchiveAnswer) -> Option<ArchiveNotice> {
    KeptWorktree::from_answer(id, name, answer).map(ArchiveNotice::Kept)
}

impl SessionList {
    /// Archives session `id` (named `name` in the list): the relay stops its agent and hides it.
    /// When the relay kept its worktree, the notice says where and why. `done` runs when the
    /// relay has answered.
    ///
    /// Its code is the settings part (src/lazy.rs): it runs once that is in (at once when it is).
    pub fn archive_session(&self, id: &str, name: &str, done: impl FnOnce() + 'static) {
        let list = *self;
        let (id, name) = (id.to_owned(), name.to_owned());
        let done: Box<dyn FnOnce()> = Box::new(done);
        lazy::when_loaded(Part::Settings, move || {
            split_entry::archive_session(list, id, name, done)
        });
    }

    /// [`Self::archive_session`] (the settings part's code).
    pub(crate) fn archive_now(&self, id: String, name: String, done: Box<dyn FnOnce()>) {
        let list = *self;
        leptos::task::spawn_local(async move {
            let notice = match net::archive_session(&id, false).await {
                Ok(answer) => notice_after_archive(&id, &name, &answer),
                Err(e) => Some(ArchiveNotice::Failed {
                    what: format!("Archiving “{name}”"),
                    message: e.to_string(),
                }),
            };
            list.archive_notice.try_set(notice);
            done();
            list.refresh();
        });
    }

    /// Discards a kept worktree: the relay removes its directory and its branch, work included.
    /// Call it only after the person confirmed. `done` runs when the relay has answered.
    ///
    /// Its code is the settings part (src/lazy.rs): it runs once that is in (at once when it is).
    pub fn discard_worktree(&self, kept: &KeptWorktree, done: impl FnOnce() + 'static) {
        let list = *self;
        let kept = kept.clone();
        let done: Box<dyn FnOnce()> = Box::new(done);
        lazy::when_loaded(Part::Settings, move || {
            split_entry::discard_worktree(list, kept, done)
        });
    }

    /// [`Self::discard_worktree`] (the settings part's code).
    pub(crate) fn discard_now(&self, kept: KeptWorktree, done: Box<dyn FnOnce()>) {
        let list = *self;
        leptos::task::spawn_local(async move {
            let notice = match net::archive_session(&kept.session_id, true).await {
                Ok(_) => {
                    list.kept_worktrees.try_update(|l| {
                        l.retain(|k| k.session_id != kept.session_id);
                    });
                    ArchiveNotice::Discarded {
                        name: kept.name.clone(),
                        path: kept.path.clone(),
                    }
                }
                Err(e) => ArchiveNotice::Failed {
                    what: format!("Discarding the worktree of “{}”", kept.name),
                    message: e.to_string(),
                },
            };
            list.archive_notice.try_set(Some(notice));
            done();
            list.refresh();
        });
    }

    /// Hides the archive notice.
    pub fn dismiss_archive_notice(&self) {
        self.archive_notice.set(None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(v: serde_json::Value) -> SessionSummary {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn the_list_splits_into_live_sessions_and_kept_worktrees() {
        let list = vec![
            summary(serde_json::json!({"id": "cse_live", "state": "idle", "archived": false})),
            summary(serde_json::json!({
                "id": "cse_kept", "state": "ended", "archived": true, "title": "Fix CI",
                "worktree": {"path": "/d/worktrees/cse_kept", "branch": "bridge/kept"},
                "worktree_kept": "uncommitted changes"
            })),
            // Archived, nothing kept (a relay asked for every archived session): not shown.
            summary(serde_json::json!({"id": "cse_gone", "state": "ended", "archived": true})),
            // A live session's worktree is not "kept", whatever the field says.
            summary(serde_json::json!({
                "id": "cse_odd", "state": "idle", "worktree_kept": "uncommitted changes"
            })),
        ];
        let (live, kept) = split_sessions(list);
        let ids: Vec<&str> = live.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, vec!["cse_live", "cse_odd"]);
        assert_eq!(
            kept,
            vec![KeptWorktree {
                session_id: "cse_kept".into(),
                name: "Fix CI".into(),
                path: "/d/worktrees/cse_kept".into(),
                branch: Some("bridge/kept".into()),
                why: "uncommitted changes".into(),
            }]
        );
    }

    #[test]
    fn archiving_says_so_only_when_the_worktree_was_kept() {
        let removed = ArchiveAnswer::default();
        assert_eq!(notice_after_archive("cse_a", "a", &removed), None);
        let kept: ArchiveAnswer = serde_json::from_value(serde_json::json!({
            "session_id": "cse_a", "archived": true,
            "worktree_kept": "2 commit(s) not merged into main",
            "worktree": {"path": "/d/worktrees/cse_a", "branch": "bridge/a"}
        }))
        .unwrap();
        assert_eq!(
            notice_after_archive("cse_a", "my-project", &kept),
            Some(ArchiveNotice::Kept(KeptWorktree {
                session_id: "cse_a".into(),
                name: "my-project".into(),
                path: "/d/worktrees/cse_a".into(),
                branch: Some("bridge/a".into()),
                why: "2 commit(s) not merged into main".into(),
            }))
        );
        // An older relay that says why but not where: still said, without a path.
        let bare = ArchiveAnswer {
            worktree_kept: Some("uncommitted changes".into()),
            worktree: None,
            ..ArchiveAnswer::default()
        };
        let Some(ArchiveNotice::Kept(k)) = notice_after_archive("cse_a", "a", &bare) else {
            panic!("kept")
        };
        assert_eq!((k.path.as_str(), k.branch), ("", None));
    }
}
