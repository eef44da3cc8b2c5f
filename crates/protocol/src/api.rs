//! The relay's REST shapes: who wrote a durable event ([`Source`]), and a session as
//! `GET /v1/code/sessions` lists it and `GET /v1/code/sessions/{id}` shows it ([`SessionSummary`],
//! [`SessionDetail`]). One definition for the relay that writes them and the clients (transport,
//! console) that read them. The Web Push routes' bodies are in [`push`]; those of Claude Code's own
//! sessions (history, resume, fork, rewind) in [`cli_sessions`]; signing in in [`auth`].
//!
//! Unknown values parse: the enums are open (`Other(String)`), fields this crate does not model are
//! kept in `extra`, and a list entry that does not fit at all is skipped rather than failing the
//! whole list ([`SessionList`]). Serializing what was parsed gives back the same JSON.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use crate::extra::open_struct;
use crate::util::{open_enum, present};
use crate::values::SessionState;

/// The bytes a path segment keeps as they are: RFC 3986's unreserved characters.
const SEGMENT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// A session id, file path … as one segment of an API path (`/v1/code/sessions/{id}/…`): every
/// byte but the unreserved characters percent-encoded, `/` included. The console builds its
/// request paths with it; the relay its pre-rendered links.
pub fn path_segment(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, SEGMENT).to_string()
}

pub mod auth;
mod changes;
pub mod cli_sessions;
mod list_entry;
pub mod push;
pub use auth::{EmbedConfig, LoginAnswer, LoginRequest};
pub use changes::{
    ArchiveAnswer, ChangeList, ChangeSource, ChangeStatus, ChangedFile, FileDiff, Me,
};
pub use cli_sessions::{
    AlreadyRunning, CliHistoryQuery, CliSessionDetail, ForkRequest, ResumeAnswer, RewindAnswer,
    RewindRequest, SessionStarted,
};
pub use list_entry::{ListEntry, ago, parse_iso_ms, session_name, waits_for_answer};
pub use push::{
    PushAnswerRequest, PushAnswered, PushDecision, PushDevice, PushDeviceList, PushKeys,
    PushSubscribeAnswer, PushSubscribeRequest, PushTestAnswer, VapidPublicKey,
};

open_enum! {
    /// Who wrote a durable event (the relay's envelope `source`).
    pub enum Source {
        /// The agent (CLI stdout). Events the relay writes in the agent's place (its exit, an
        /// undecodable line) are the worker's too, with `relay_generated: true` in the payload.
        Worker = "worker",
        /// A browser or API client (posted, or sent over the WebSocket).
        Client = "client",
        /// The relay itself (its permission-timeout deny).
        Relay = "relay",
    }
}

open_enum! {
    /// Where a listed session comes from.
    pub enum Origin {
        /// Started by the relay (it runs, or ran, its agent).
        Relay = "relay",
        /// Claude Code's own session, found in its transcripts (started in a terminal).
        Cli = "cli",
    }
}

/// How a session's agent ended (`exit`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ExitInfo {
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub stderr_tail: String,
    /// RFC 3339.
    pub at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Where a session's git worktree is (`worktree`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct WorktreeInfo {
    /// Its directory on the relay's machine.
    pub path: String,
    /// Its branch (`bridge/<id prefix>`), if it has one.
    pub branch: Option<String>,
}

/// How a relay session relates to Claude Code's own sessions (`cli`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CliLink {
    /// The CLI's session id (from `system/init`, or the resumed id): its transcript is this
    /// session's, so the list does not show it twice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Started with `--resume` of this CLI session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resumed: Option<String>,
    /// A fork: of which session (a relay id or a CLI id), its title, and the prompt it was cut
    /// before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forked_from: Option<ForkedFrom>,
    /// It runs in a terminal, outside the relay, and is followed live through Claude Code's hooks
    /// (`bridge-relay hooks install`): its prompts are answered here, its messages wait for its
    /// turn to end. Listed with `origin: "cli"`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub terminal: bool,
}

/// `GET`/`PUT /v1/hooks/settings`: what the relay does with the permission prompts of sessions that
/// run in a terminal (followed through Claude Code's hooks).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookSettings {
    /// Hold a terminal's permission prompts for an answer from the console or a notification
    /// (the terminal shows its own dialog meanwhile; the first answer wins). Off: its prompts are
    /// answered at the terminal only.
    pub send_to_phone: bool,
    /// How long a prompt waits for an answer from here before it is left to the terminal (1–300).
    pub wait_secs: u64,
}

/// The session a fork was cut from (`cli.forked_from`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForkedFrom {
    #[serde(default)]
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default)]
    pub before_message: String,
}

open_struct! {
    /// One session as `GET /v1/code/sessions` lists it (and the fields every session detail has).
    ///
    /// A relay session always carries `exit` (maybe `null`) and `last_sequence_num`; a CLI session
    /// (`origin: "cli"`) carries `git_branch` (maybe `null`) and `size_bytes` instead. Fields absent
    /// from the JSON stay absent when serialized again; fields not modelled here are kept as sent
    /// (`extra`).
    pub struct SessionSummary {
        pub id: String,
        #[serde(default = "unknown_state")]
        pub state: SessionState,
        #[serde(default)]
        #[serialize_always]
        pub cwd: Option<String>,
        #[serde(default)]
        #[serialize_always]
        pub model: Option<String>,
        #[serde(default)]
        #[serialize_always]
        pub permission_mode: Option<String>,
        #[serde(default)]
        #[serialize_always]
        pub title: Option<String>,
        /// RFC 3339 (`null` for a CLI session).
        #[serde(default)]
        #[serialize_always]
        pub created_at: Option<String>,
        /// RFC 3339.
        #[serde(default)]
        #[serialize_always]
        pub last_activity_at: Option<String>,
        /// Permission prompts waiting for an answer.
        #[serde(default)]
        pub pending_permissions: u64,
        /// How its agent ended (relay sessions: `null` while it has not).
        #[serde(default, deserialize_with = "present")]
        pub exit: Option<Option<ExitInfo>>,
        /// Archived (listed only on request, or when its worktree was kept).
        #[serde(default)]
        pub archived: bool,
        /// Its last event's sequence number (relay sessions).
        #[serde(default)]
        pub last_sequence_num: Option<u64>,
        /// Its git worktree (spawn mode `worktree`).
        #[serde(default)]
        pub worktree: Option<WorktreeInfo>,
        /// Archived, but its worktree was kept, and why (`uncommitted changes`, `1 commit(s) not
        /// merged into main`).
        #[serde(default)]
        pub worktree_kept: Option<String>,
        /// How a relay session relates to Claude Code's own.
        #[serde(default)]
        pub cli: Option<CliLink>,
        /// The git branch a CLI session was on (CLI sessions: `null` when unknown).
        #[serde(default, deserialize_with = "present")]
        pub git_branch: Option<Option<String>>,
        /// The size of a CLI session's transcript.
        #[serde(default)]
        pub size_bytes: Option<u64>,
        /// `relay` or `cli` (absent in a session detail).
        #[serde(default)]
        pub origin: Option<Origin>,
    }
}

fn unknown_state() -> SessionState {
    SessionState::Other(String::new())
}

/// No id, an unknown (empty) state, everything else empty/absent.
impl Default for SessionSummary {
    fn default() -> Self {
        Self::new(String::new(), unknown_state())
    }
}

impl SessionSummary {
    /// A summary with only an id and a state (everything else empty/absent).
    pub fn new(id: impl Into<String>, state: SessionState) -> Self {
        Self {
            id: id.into(),
            state,
            cwd: None,
            model: None,
            permission_mode: None,
            title: None,
            created_at: None,
            last_activity_at: None,
            pending_permissions: 0,
            exit: None,
            archived: false,
            last_sequence_num: None,
            worktree: None,
            worktree_kept: None,
            cli: None,
            git_branch: None,
            size_bytes: None,
            origin: None,
            extra: Map::new(),
        }
    }

    /// Where it comes from; a summary without `origin` is the relay's.
    pub fn origin(&self) -> Origin {
        self.origin.clone().unwrap_or(Origin::Relay)
    }

    /// The git branch of a CLI session, if known.
    pub fn git_branch(&self) -> Option<&str> {
        self.git_branch.as_ref().and_then(Option::as_deref)
    }
}

/// The answer to `GET /v1/code/sessions`: `{"sessions": [...]}`. Reading it skips an entry that
/// does not fit [`SessionSummary`] (no string `id`, a field of the wrong type) instead of failing
/// the whole list.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionList {
    #[serde(default, deserialize_with = "lenient_list")]
    pub sessions: Vec<SessionSummary>,
}

fn lenient_list<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<SessionSummary>, D::Error> {
    let raw = Option::<Vec<Value>>::deserialize(d)?.unwrap_or_default();
    Ok(raw
        .into_iter()
        .filter_map(|v| serde_json::from_value(v).ok())
        .collect())
}

/// A permission or other control request waiting for an answer (`pending_requests[]`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingRequest {
    #[serde(default)]
    pub request_id: String,
    #[serde(default)]
    pub subtype: String,
    #[serde(default)]
    pub sequence_num: u64,
    #[serde(default)]
    pub tool_name: Option<String>,
}

/// `GET /v1/code/sessions/{id}`: the summary plus the CLI's `initialize` answer and the requests
/// waiting for an answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionDetail {
    #[serde(flatten)]
    pub summary: SessionSummary,
    /// The CLI's `initialize` answer (`null` until it came).
    #[serde(default)]
    pub initialize: Value,
    #[serde(default)]
    pub pending_requests: Vec<PendingRequest>,
}

/// The body of `POST /v1/code/sessions`: a new session. Each field absent: the relay's default
/// (`--cwd`, `--model`, `--permission-mode`; no title).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewSession {
    /// Working directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Permission mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_mode: Option<String>,
    /// Title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// The answer of `POST /v1/code/sessions` (201): the new session and where to reach it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionCreated {
    /// Its id.
    pub session_id: String,
    /// Its event stream (SSE).
    pub stream_url: String,
    /// Where its client events are posted.
    pub send_url: String,
    /// Its WebSocket.
    pub ws_url: String,
    /// On a scale-out gateway: the agents node that runs it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::path_segment;

    #[test]
    fn a_path_segment_keeps_only_unreserved_characters() {
        assert_eq!(path_segment("cse_01-AZ.z~"), "cse_01-AZ.z~");
        assert_eq!(path_segment("src/a b.rs"), "src%2Fa%20b.rs");
        assert_eq!(path_segment("é?#%"), "%C3%A9%3F%23%25");
    }

    #[test]
    fn a_new_session_and_its_answer_keep_their_json() {
        use super::{NewSession, SessionCreated};
        let req = NewSession {
            model: Some("opus".into()),
            ..NewSession::default()
        };
        assert_eq!(serde_json::to_string(&req).unwrap(), r#"{"model":"opus"}"#);
        let read: NewSession = serde_json::from_str(r#"{"title":"t","other":1}"#).unwrap();
        assert_eq!(read.title.as_deref(), Some("t"));
        let created = SessionCreated {
            session_id: "cse_1".into(),
            stream_url: "http://r/s".into(),
            send_url: "http://r/e".into(),
            ws_url: "ws://r/w".into(),
            host: None,
        };
        assert_eq!(
            serde_json::to_string(&created).unwrap(),
            r#"{"session_id":"cse_1","stream_url":"http://r/s","send_url":"http://r/e","ws_url":"ws://r/w"}"#
        );
        let on_gateway = SessionCreated {
            host: Some("node-a".into()),
            ..created
        };
        assert!(
            serde_json::to_string(&on_gateway)
                .unwrap()
                .ends_with(r#","host":"node-a"}"#)
        );
    }
}
