//! The REST shapes of Claude Code's own sessions (sessions started in a terminal, found in the CLI's
//! transcripts) and of forking and rewinding a session: `GET /v1/code/cli-sessions/{id}` (its
//! history, a page at a time), `POST …/{id}/resume`, `POST /v1/code/{cli-sessions|sessions}/{id}/fork`
//! and `…/rewind`. One definition for the relay that writes and reads them and the console on the
//! other side.
//!
//! The history's frames stay [`Value`]s: they are the CLI's stream-json frames, which a client
//! decodes with the message types of this crate (the console's session part, from their text); a
//! second, typed copy here would decode each transcript line twice.
//!
//! Writing gives the JSON the relay has always written: the list entry's fields first, then the
//! fields of the route (`frames…`, `session_id`, `prompt`, `dry_run`), `null`s where it wrote
//! them. Reading tolerates fields these types do not model (a gateway's `host`, a newer relay's):
//! the list entry keeps them in its `extra`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::SessionSummary;
use crate::RewindFilesResponse;
use crate::util::present;

/// Frames of a transcript's history the relay sends when the client does not say how many
/// ([`CliHistoryQuery::limit`] absent).
pub const DEFAULT_HISTORY_LIMIT: usize = 1000;

/// The query of `GET /v1/code/cli-sessions/{id}`: which page of the history.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CliHistoryQuery {
    /// At most this many frames (absent: [`DEFAULT_HISTORY_LIMIT`]; 0 counts as 1), the last ones
    /// before `before`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
    /// Frames before this index of the whole history (absent: its end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<usize>,
}

impl CliHistoryQuery {
    /// The last `limit` frames of the history.
    pub fn last(limit: usize) -> Self {
        Self {
            limit: Some(limit),
            before: None,
        }
    }

    /// The query string, `?` included (`?limit=N&before=K`; empty when both are absent).
    pub fn to_query(&self) -> String {
        let parts: Vec<String> = [("limit", self.limit), ("before", self.before)]
            .into_iter()
            .filter_map(|(k, v)| v.map(|v| format!("{k}={v}")))
            .collect();
        if parts.is_empty() {
            String::new()
        } else {
            format!("?{}", parts.join("&"))
        }
    }

    /// The range of a history of `total` frames this page holds (`from..to`).
    pub fn range(&self, total: usize) -> std::ops::Range<usize> {
        let end = self.before.unwrap_or(total).min(total);
        let start = end.saturating_sub(self.limit.unwrap_or(DEFAULT_HISTORY_LIMIT).max(1));
        start..end
    }
}

/// The answer of `GET /v1/code/cli-sessions/{id}`: its list entry (`origin: "cli"`) plus one page
/// of its history as stream-json frames, the last `limit` before index `before`; a client shows
/// earlier history by asking for the page before `frames_from`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CliSessionDetail {
    /// The session as the list shows it (cwd, title, git branch, transcript size…).
    #[serde(flatten)]
    pub summary: SessionSummary,
    /// The page: the CLI's frames (`user`, `assistant`, … with `isReplay: true`), oldest first.
    #[serde(default)]
    pub frames: Vec<Value>,
    /// The index of `frames[0]` in the whole history (0: the page starts at the beginning).
    #[serde(default)]
    pub frames_from: usize,
    /// How many frames the whole history has.
    #[serde(default)]
    pub frames_total: usize,
    /// The relay session now running this CLI session (`null`: none); a client opens that one
    /// instead.
    #[serde(default)]
    pub live_session: Option<String>,
}

impl CliSessionDetail {
    /// How many frames of the history this page and the ones after it hold, and how many there are
    /// in all, when that is not the whole history (`None`: the page starts at the beginning).
    pub fn partial(&self) -> Option<(usize, usize)> {
        let total = self.frames_total;
        (self.frames_from > 0).then(|| (total - self.frames_from.min(total), total))
    }
}

/// The body of `POST /v1/code/{cli-sessions|sessions}/{id}/fork`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForkRequest {
    /// The prompt to fork before (its uuid in the transcript): the new session has the
    /// conversation up to just before it.
    pub message_uuid: String,
}

/// The answer of `POST /v1/code/cli-sessions/{id}/resume` (201) and of a fork (201): the relay
/// session just made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionStarted {
    /// The new session as the list shows it (`origin: "relay"`).
    #[serde(flatten)]
    pub summary: SessionSummary,
    /// Its id (the same as `summary.id`).
    pub session_id: String,
    /// A fork only: the text of the prompt it was cut before, for the composer to offer again
    /// (`Some(None)`: written `null`, the prompt has no text; `None`: absent, a resume).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub prompt: Option<Option<String>>,
}

impl SessionStarted {
    /// The prompt a fork was cut before, if it has text.
    pub fn prompt(&self) -> Option<&str> {
        self.prompt.as_ref().and_then(Option::as_deref)
    }
}

/// The answer of `POST /v1/code/cli-sessions/{id}/resume` (200) when a relay session already runs
/// that CLI session: that one, not a new one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AlreadyRunning {
    /// The relay session running it.
    pub session_id: String,
    /// Always `true`.
    pub already_running: bool,
}

/// Either answer of `POST /v1/code/cli-sessions/{id}/resume` — [`AlreadyRunning`] (200) or
/// [`SessionStarted`] (201) — read for what a client follows: the relay session that runs the CLI
/// session now, and whether it ran it already. The new session's list entry is not read here (the
/// list shows it): a client that only follows the session links no decoder for it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ResumeAnswer {
    /// The relay session that runs the CLI session now.
    pub session_id: String,
    /// A relay session ran it already (the 200 answer).
    #[serde(default)]
    pub already_running: bool,
}

fn yes() -> bool {
    true
}

/// The body of `POST /v1/code/sessions/{id}/rewind` (and of `/v1/code/cli-sessions/{id}/rewind`,
/// which the relay refuses: not live): restore files to before a prompt, Claude Code's
/// `rewind_files`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RewindRequest {
    /// The prompt (its uuid) whose files to restore to their state before it.
    pub user_message_id: String,
    /// Only say what would change (absent: `true`, a preview).
    #[serde(default = "yes")]
    pub dry_run: bool,
}

/// The answer of `POST /v1/code/sessions/{id}/rewind`: Claude Code's `rewind_files` result as the
/// CLI gave it, plus whether it was a preview.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RewindAnswer {
    /// `canRewind`, `error`, `filesChanged`, `insertions`, `deletions` (and what else the CLI
    /// said, kept).
    #[serde(flatten)]
    pub result: RewindFilesResponse,
    /// As asked: only a preview, nothing was restored.
    pub dry_run: bool,
}

impl RewindAnswer {
    /// Whether Claude Code can restore (or restored) the files.
    pub fn can_rewind(&self) -> bool {
        self.result.can_rewind
    }

    /// The files that change (or changed).
    pub fn files_changed(&self) -> &[String] {
        self.result.files_changed.as_deref().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::Origin;
    use crate::values::SessionState;
    use serde_json::{Map, json};

    fn cli_entry() -> SessionSummary {
        SessionSummary {
            origin: Some(Origin::Cli),
            cwd: Some("/w".into()),
            title: Some("first prompt".into()),
            git_branch: Some(Some("main".into())),
            last_activity_at: Some("2025-01-01T00:00:00Z".into()),
            size_bytes: Some(42),
            ..SessionSummary::new("27784601-dc95-46a5-9f01-072efd77a9f0", SessionState::Idle)
        }
    }

    /// What the relay wrote before these types: the entry, then the route's keys (in this order).
    fn appended(entry: &SessionSummary, more: Value) -> String {
        let mut v = serde_json::to_value(entry).unwrap();
        for (k, x) in more.as_object().unwrap() {
            v[k] = x.clone();
        }
        serde_json::to_string(&v).unwrap()
    }

    #[test]
    fn a_history_page_is_the_entry_then_the_frames_then_the_counts() {
        let frames = vec![json!({"type": "user", "isReplay": true, "message": {"content": "hi"}})];
        let page = CliSessionDetail {
            summary: cli_entry(),
            frames: frames.clone(),
            frames_from: 3,
            frames_total: 4,
            live_session: None,
        };
        let text = serde_json::to_string(&page).unwrap();
        assert_eq!(
            text,
            appended(
                &cli_entry(),
                json!({"frames": frames, "frames_from": 3, "frames_total": 4, "live_session": null})
            )
        );
        assert!(
            text.starts_with(r#"{"id":"27784601-dc95-46a5-9f01-072efd77a9f0","state":"idle","#),
            "{text}"
        );
        assert!(
            text.ends_with(r#""frames_from":3,"frames_total":4,"live_session":null}"#),
            "{text}"
        );
        let back: CliSessionDetail = serde_json::from_str(&text).unwrap();
        assert_eq!(back, page);
        assert_eq!(back.partial(), Some((1, 4)));
        assert!(
            back.summary.extra.is_empty(),
            "the page's keys are not the entry's"
        );
        // A gateway adds `host`: kept in the entry, written back after the page's keys.
        let mut v: Value = serde_json::from_str(&text).unwrap();
        v["host"] = "node1".into();
        v["live_session"] = "cse_1".into();
        v["frames_from"] = 0.into();
        let read: CliSessionDetail = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(read.summary.extra["host"], "node1");
        assert_eq!(read.live_session.as_deref(), Some("cse_1"));
        assert_eq!(read.partial(), None);
        assert_eq!(serde_json::to_value(&read).unwrap()["host"], "node1");
    }

    #[test]
    fn the_history_query_and_its_range() {
        let q: CliHistoryQuery = serde_json::from_value(json!({})).unwrap();
        assert_eq!(q, CliHistoryQuery::default());
        assert_eq!(q.to_query(), "");
        assert_eq!(q.range(5), 0..5);
        assert_eq!(q.range(1500), 500..1500);
        assert_eq!(CliHistoryQuery::last(1000).to_query(), "?limit=1000");
        let q = CliHistoryQuery {
            limit: Some(2),
            before: Some(7),
        };
        assert_eq!(q.to_query(), "?limit=2&before=7");
        assert_eq!(q.range(10), 5..7);
        assert_eq!(q.range(6), 4..6, "before past the end: the end");
        assert_eq!(
            CliHistoryQuery {
                limit: Some(0),
                before: None
            }
            .range(3),
            2..3,
            "a limit of 0 sends one frame"
        );
        assert_eq!(
            serde_json::to_string(&q).unwrap(),
            r#"{"limit":2,"before":7}"#
        );
    }

    #[test]
    fn resume_and_fork_answers_keep_their_layout() {
        let mut relay = cli_entry();
        relay.id = "cse_1".into();
        relay.origin = Some(Origin::Relay);
        relay.size_bytes = None;
        let resumed = SessionStarted {
            summary: relay.clone(),
            session_id: "cse_1".into(),
            prompt: None,
        };
        let text = serde_json::to_string(&resumed).unwrap();
        assert_eq!(text, appended(&relay, json!({"session_id": "cse_1"})));
        assert!(
            !text.contains(r#""prompt":"#),
            "a resume has no prompt: {text}"
        );
        let forked = SessionStarted {
            prompt: Some(Some("and also quince".into())),
            ..resumed.clone()
        };
        let text = serde_json::to_string(&forked).unwrap();
        assert_eq!(
            text,
            appended(
                &relay,
                json!({"session_id": "cse_1", "prompt": "and also quince"})
            )
        );
        assert_eq!(
            serde_json::from_str::<SessionStarted>(&text).unwrap(),
            forked
        );
        assert_eq!(forked.prompt(), Some("and also quince"));
        let no_text = SessionStarted {
            prompt: Some(None),
            ..resumed.clone()
        };
        let text = serde_json::to_string(&no_text).unwrap();
        assert!(
            text.ends_with(r#","session_id":"cse_1","prompt":null}"#),
            "{text}"
        );
        let back: SessionStarted = serde_json::from_str(&text).unwrap();
        assert_eq!((back.prompt.clone(), back.prompt()), (Some(None), None));

        let running = AlreadyRunning {
            session_id: "cse_2".into(),
            already_running: true,
        };
        assert_eq!(
            serde_json::to_string(&running).unwrap(),
            r#"{"session_id":"cse_2","already_running":true}"#
        );
        let r: ResumeAnswer =
            serde_json::from_value(serde_json::to_value(&running).unwrap()).unwrap();
        assert_eq!((r.session_id.as_str(), r.already_running), ("cse_2", true));
        let r: ResumeAnswer =
            serde_json::from_value(serde_json::to_value(&resumed).unwrap()).unwrap();
        assert_eq!((r.session_id.as_str(), r.already_running), ("cse_1", false));
        assert!(serde_json::from_value::<ResumeAnswer>(json!({"id": "x"})).is_err());
    }

    #[test]
    fn fork_and_rewind_requests() {
        assert_eq!(
            serde_json::to_string(&ForkRequest {
                message_uuid: "u1".into()
            })
            .unwrap(),
            r#"{"message_uuid":"u1"}"#
        );
        assert!(serde_json::from_value::<ForkRequest>(json!({})).is_err());
        let r: RewindRequest = serde_json::from_value(json!({"user_message_id": "u1"})).unwrap();
        assert!(r.dry_run, "absent dry_run: a preview");
        let r = RewindRequest {
            dry_run: false,
            ..r
        };
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"user_message_id":"u1","dry_run":false}"#
        );
        assert!(serde_json::from_value::<RewindRequest>(json!({"dry_run": true})).is_err());
    }

    #[test]
    fn a_rewind_answer_is_the_clis_result_plus_dry_run() {
        let cli = json!({"canRewind": true, "filesChanged": ["/w/a.txt"], "insertions": 0, "deletions": 3});
        let result: RewindFilesResponse = serde_json::from_value(cli.clone()).unwrap();
        let answer = RewindAnswer {
            result,
            dry_run: true,
        };
        assert_eq!(
            serde_json::to_string(&answer).unwrap(),
            r#"{"canRewind":true,"filesChanged":["/w/a.txt"],"insertions":0,"deletions":3,"dry_run":true}"#
        );
        assert_eq!(answer.files_changed(), ["/w/a.txt"]);
        assert!(answer.can_rewind());
        let refused: RewindAnswer = serde_json::from_value(
            json!({"canRewind": false, "error": "No file checkpoint found", "future": 1, "dry_run": true}),
        )
        .unwrap();
        assert!(!refused.can_rewind() && refused.files_changed().is_empty());
        assert_eq!(
            refused.result.error.as_deref(),
            Some("No file checkpoint found")
        );
        let mut extra = Map::new();
        extra.insert("future".into(), 1.into());
        assert_eq!(refused.result.extra, extra, "what the CLI said is kept");
        assert_eq!(
            serde_json::to_string(&refused).unwrap(),
            r#"{"canRewind":false,"error":"No file checkpoint found","future":1,"dry_run":true}"#
        );
    }
}
