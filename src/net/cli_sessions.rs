//! Claude Code's own sessions through the relay: open one (`GET /v1/code/cli-sessions/{id}`, its
//! history as frames), resume it, fork a session before a prompt, and restore files to before a
//! prompt (`rewind_files`, preview first).

use serde::Deserialize;
use serde_json::{Value, json};

use super::{NetError, enc, request_json};

/// A CLI session's id is a UUID (relay sessions are `cse_…`).
pub fn is_cli_id(id: &str) -> bool {
    id.len() == 36 && uuid::Uuid::parse_str(id).is_ok()
}

/// `GET /v1/code/cli-sessions/{id}?limit=N`: its list entry plus `live_session` and the last `limit`
/// frames of its history (`frames`, from index `frames_from` of `frames_total`).
pub async fn get_cli_session(id: &str, limit: usize) -> Result<Value, NetError> {
    request_json(
        "GET",
        &format!("/v1/code/cli-sessions/{}?limit={limit}", enc(id)),
        None,
    )
    .await
}

/// `POST /v1/code/cli-sessions/{id}/resume`: the relay session now running it.
pub async fn resume(id: &str) -> Result<String, NetError> {
    let v = request_json(
        "POST",
        &format!("/v1/code/cli-sessions/{}/resume", enc(id)),
        Some(&json!({})),
    )
    .await?;
    session_id(&v)
}

fn session_id(v: &Value) -> Result<String, NetError> {
    v.get("session_id")
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| NetError::Decode("no session_id in the answer".into()))
}

/// A new session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Forked {
    pub session_id: String,
    /// The prompt it was cut before (the composer offers it again).
    pub prompt: Option<String>,
}

/// `POST …/{id}/fork` (`cli`: a CLI session, else a relay session) before prompt `message_uuid`.
pub async fn fork(id: &str, cli: bool, message_uuid: &str) -> Result<Forked, NetError> {
    let base = if cli { "cli-sessions" } else { "sessions" };
    let v = request_json(
        "POST",
        &format!("/v1/code/{base}/{}/fork", enc(id)),
        Some(&json!({ "message_uuid": message_uuid })),
    )
    .await?;
    Ok(Forked {
        session_id: session_id(&v)?,
        prompt: v.get("prompt").and_then(Value::as_str).map(str::to_string),
    })
}

/// What Claude Code says a rewind does (or did).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
pub struct Rewind {
    #[serde(rename = "canRewind", default)]
    pub can_rewind: bool,
    #[serde(default)]
    pub error: Option<String>,
    #[serde(rename = "filesChanged", default)]
    pub files_changed: Vec<String>,
    #[serde(default)]
    pub insertions: Option<u64>,
    #[serde(default)]
    pub deletions: Option<u64>,
}

/// `POST …/{id}/rewind`: with `dry_run` only what would change.
pub async fn rewind(
    id: &str,
    cli: bool,
    user_message_id: &str,
    dry_run: bool,
) -> Result<Rewind, NetError> {
    let base = if cli { "cli-sessions" } else { "sessions" };
    let v = request_json(
        "POST",
        &format!("/v1/code/{base}/{}/rewind", enc(id)),
        Some(&json!({ "user_message_id": user_message_id, "dry_run": dry_run })),
    )
    .await?;
    serde_json::from_value(v).map_err(|e| NetError::Decode(e.to_string()))
}
