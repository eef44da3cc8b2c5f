//! Claude Code's own sessions through the relay: open one (`GET /v1/code/cli-sessions/{id}`, its
//! history as frames), resume it, fork a session before a prompt, and restore files to before a
//! prompt (`rewind_files`, preview first). The bodies are `bridge_protocol::api::cli_sessions`'s.

use bridge_protocol::api::cli_sessions::{
    CliHistoryQuery, CliSessionDetail, ForkRequest, ResumeAnswer, RewindAnswer, RewindRequest,
    SessionStarted,
};
use serde_json::{Value, json};

use super::{NetError, decode, enc, encode, request_json};

/// A CLI session's id is a UUID (relay sessions are `cse_…`).
pub fn is_cli_id(id: &str) -> bool {
    id.len() == 36 && uuid::Uuid::parse_str(id).is_ok()
}

/// `GET /v1/code/cli-sessions/{id}?limit=N`: its list entry plus `live_session` and the last `limit`
/// frames of its history (`frames`, from index `frames_from` of `frames_total`), as the JSON the
/// relay sent: the session part reads it as a [`CliSessionDetail`] ([`cli_session_detail`]; the
/// session list never needs that decoder), and decodes the frames as it decodes the stream's.
pub async fn get_cli_session(id: &str, limit: usize) -> Result<Value, NetError> {
    let query = CliHistoryQuery::last(limit).to_query();
    request_json(
        "GET",
        &format!("/v1/code/cli-sessions/{}{query}", enc(id)),
        None,
    )
    .await
}

/// The answer of [`get_cli_session`] read as its protocol type.
pub fn cli_session_detail(raw: Value) -> Result<CliSessionDetail, NetError> {
    decode(raw)
}

/// `POST /v1/code/cli-sessions/{id}/resume`: the relay session now running it (a new one, or the
/// one already running it).
pub async fn resume(id: &str) -> Result<String, NetError> {
    let v = request_json(
        "POST",
        &format!("/v1/code/cli-sessions/{}/resume", enc(id)),
        Some(&json!({})),
    )
    .await?;
    decode::<ResumeAnswer>(v).map(|a| a.session_id)
}

/// `POST …/{id}/fork` (`cli`: a CLI session, else a relay session) before prompt `message_uuid`:
/// the new session, with the prompt it was cut before (the composer offers it again).
pub async fn fork(id: &str, cli: bool, message_uuid: &str) -> Result<SessionStarted, NetError> {
    let base = if cli { "cli-sessions" } else { "sessions" };
    let req = ForkRequest {
        message_uuid: message_uuid.to_owned(),
    };
    decode(
        request_json(
            "POST",
            &format!("/v1/code/{base}/{}/fork", enc(id)),
            Some(&encode(&req)?),
        )
        .await?,
    )
}

/// `POST …/{id}/rewind`: with `dry_run` only what would change.
pub async fn rewind(
    id: &str,
    cli: bool,
    user_message_id: &str,
    dry_run: bool,
) -> Result<RewindAnswer, NetError> {
    let base = if cli { "cli-sessions" } else { "sessions" };
    let req = RewindRequest {
        user_message_id: user_message_id.to_owned(),
        dry_run,
    };
    decode(
        request_json(
            "POST",
            &format!("/v1/code/{base}/{}/rewind", enc(id)),
            Some(&encode(&req)?),
        )
        .await?,
    )
}
