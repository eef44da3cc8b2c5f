//! HTTP: CLI sessions in `GET /v1/code/sessions` (`origin: "cli"`), and
//! `GET /v1/code/cli-sessions/{id}` (the history as frames), `POST …/{id}/resume`, `POST …/{id}/fork`,
//! `POST …/{id}/rewind` (refused: not live), plus `POST /v1/code/sessions/{id}/fork` and
//! `POST /v1/code/sessions/{id}/rewind` for the relay's own sessions. Claude Code's transcripts are
//! the controller's: reading them takes the controller or an observer token minted with
//! `transcripts: true` ([`Principal::transcripts`]); resume, fork and rewind take the controller.

use std::collections::HashSet;
use std::time::Duration;

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Map, Value};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::{CliLink, ForkedFrom, Resume, Transcript, index, parse};
use crate::core::auth::Principal;
use crate::core::relay::CreateSession;
use crate::edge::error::ApiError;
use crate::edge::extract::{AppState, Controller, JsonBody, json_created};
use bridge_protocol::api::{
    AlreadyRunning, CliHistoryQuery, CliSessionDetail, ForkRequest, Origin, RewindAnswer,
    RewindRequest, SessionList, SessionStarted, SessionSummary,
};
use bridge_protocol::{
    ClientMessage, ControlRequest, ControlRequestBody, ControlResponseBody, MessageType,
    RewindFilesRequest, RewindFilesResponse, SessionState,
};

/// How long a rewind waits for the CLI's answer.
pub const REWIND_TIMEOUT: Duration = Duration::from_secs(20);

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/code/cli-sessions/{id}", get(detail))
        .route("/v1/code/cli-sessions/{id}/resume", post(resume))
        .route("/v1/code/cli-sessions/{id}/fork", post(fork_cli))
        .route("/v1/code/cli-sessions/{id}/rewind", post(rewind_cli))
        .route("/v1/code/sessions/{id}/fork", post(fork_relay))
        .route("/v1/code/sessions/{id}/rewind", post(rewind_relay))
}

/// The session list: the relay's sessions (`origin: "relay"`) and the CLI's transcripts that no relay
/// session owns (`origin: "cli"`), newest first, each fork right after the session it came from.
/// A session-scoped observer sees only its session; the CLI's transcripts are listed to those who may
/// read them.
pub async fn list(
    app: &AppState,
    archived: crate::core::relay::Archived,
    who: &Principal,
) -> SessionList {
    let mut list = app.summaries(archived, who.session_scope.as_deref());
    // Terminal sessions: like the transcripts, unless the token is scoped to that very session.
    list.retain(|s| {
        !s.cli.as_ref().is_some_and(|c| c.terminal)
            || who.transcripts
            || who.session_scope.as_deref() == Some(s.id.as_str())
    });
    if who.transcripts {
        list.extend(cli_list(app).await);
    }
    order(&mut list);
    SessionList { sessions: list }
}

/// The CLI's transcripts on this machine that no relay session owns, as list entries (`origin:
/// "cli"`), unordered: the single relay's list holds them, and an agents node answers them to a
/// gateway, which lists every node's.
pub async fn cli_list(app: &AppState) -> Vec<SessionSummary> {
    let owned = owned_cli_ids(app);
    let app2 = app.clone();
    let found = tokio::task::spawn_blocking(move || index::Index::of(&app2).refresh().0)
        .await
        .unwrap_or_default();
    found
        .iter()
        .filter(|t| !owned.contains(&t.id))
        .map(cli_summary)
        .collect()
}

/// Whether this machine holds the transcript of CLI session `id` (a gateway asks each agents node
/// before it forwards a request about one).
pub async fn holds(app: &AppState, id: &str) -> bool {
    if !index::valid_id(id) {
        return false;
    }
    let app2 = app.clone();
    let id = id.to_owned();
    tokio::task::spawn_blocking(move || index::Index::of(&app2).find(&id).is_some())
        .await
        .unwrap_or(false)
}

/// CLI session ids whose transcript belongs to a relay session (archived ones too).
fn owned_cli_ids(app: &AppState) -> HashSet<String> {
    app.list()
        .iter()
        .filter_map(|s| s.meta().cli)
        .flat_map(|c| [c.session_id, c.resumed])
        .flatten()
        .collect()
}

fn when(s: &SessionSummary) -> OffsetDateTime {
    s.last_activity_at
        .as_deref()
        .and_then(|t| OffsetDateTime::parse(t, &Rfc3339).ok())
        .unwrap_or(OffsetDateTime::UNIX_EPOCH)
}

/// Newest first; a fork follows its origin when that is listed.
pub fn order(list: &mut Vec<SessionSummary>) {
    list.sort_by(|a, b| when(b).cmp(&when(a)).then_with(|| a.id.cmp(&b.id)));
    // A session is known by its id, and a relay session also by the CLI session it runs.
    let names = |s: &SessionSummary| -> Vec<String> {
        let cli = s.cli.as_ref();
        [
            Some(&s.id),
            cli.and_then(|c| c.session_id.as_ref()),
            cli.and_then(|c| c.resumed.as_ref()),
        ]
        .into_iter()
        .flatten()
        .cloned()
        .collect()
    };
    let ids: std::collections::HashMap<String, String> = list
        .iter()
        .flat_map(|s| {
            let id = s.id.clone();
            names(s).into_iter().map(move |n| (n, id.clone()))
        })
        .collect();
    let origin_of = |s: &SessionSummary| -> Option<String> {
        s.cli
            .as_ref()
            .and_then(|c| c.forked_from.as_ref())
            .and_then(|f| ids.get(&f.id))
            .filter(|o| **o != s.id)
            .cloned()
    };
    let (forks, mut rest): (Vec<SessionSummary>, Vec<SessionSummary>) =
        list.drain(..).partition(|s| origin_of(s).is_some());
    // Newest fork first, right below its origin (a fork of a fork below that one).
    let mut pending = forks;
    for _ in 0..8 {
        if pending.is_empty() {
            break;
        }
        let mut left = Vec::new();
        for f in pending.into_iter().rev() {
            let origin = origin_of(&f);
            match rest
                .iter()
                .position(|s| Some(s.id.as_str()) == origin.as_deref())
            {
                Some(i) => rest.insert(i + 1, f),
                None => left.push(f),
            }
        }
        left.reverse();
        pending = left;
    }
    rest.extend(pending);
    *list = rest;
}

fn rfc3339(t: std::time::SystemTime) -> String {
    OffsetDateTime::from(t).format(&Rfc3339).unwrap_or_default()
}

/// A CLI session as the list shows it.
pub fn cli_summary(t: &Transcript) -> SessionSummary {
    SessionSummary {
        origin: Some(Origin::Cli),
        cwd: t.facts.cwd.clone(),
        title: t.facts.title(),
        git_branch: Some(t.facts.git_branch.clone()),
        last_activity_at: Some(rfc3339(t.modified)),
        size_bytes: Some(t.size),
        ..SessionSummary::new(t.id.clone(), SessionState::Idle)
    }
}

fn readable(who: &Principal) -> Result<(), ApiError> {
    if !who.transcripts {
        return Err(ApiError::forbidden(
            "Claude Code's own sessions are the controller's: they need the controller token, or an observer token minted with \"transcripts\": true",
        ));
    }
    Ok(())
}

/// The transcript of `id`, or 400 (not a session id) / 404.
async fn transcript(app: &AppState, id: &str) -> Result<Transcript, ApiError> {
    if !index::valid_id(id) {
        return Err(ApiError::bad_request(format!(
            "{id:?} is not a Claude Code session id (a UUID such as 27784601-dc95-46a5-9f01-072efd77a9f0)"
        )));
    }
    let app2 = app.clone();
    let id2 = id.to_owned();
    tokio::task::spawn_blocking(move || index::Index::of(&app2).find(&id2))
        .await
        .map_err(|e| ApiError::internal(e.to_string()))?
        .ok_or_else(|| {
            ApiError::not_found(format!(
                "no Claude Code session {id} under {} (is --claude-config-dir the CLI's config dir?)",
                index::Index::of(app).projects_dir().display()
            ))
        })
}

/// Whole transcripts read at once: each may hold a large file and its parse in memory.
pub const WHOLE_READS: usize = 2;

/// Every parsed line of a transcript (read whole: only for opening, resuming or forking one), at
/// most [`WHOLE_READS`] at a time, from the index's cache when the file has not changed; a file over
/// [`index::MAX_WHOLE_BYTES`] is refused (413) without being read.
async fn lines(app: &AppState, t: &Transcript) -> Result<std::sync::Arc<Vec<Value>>, ApiError> {
    static READS: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(WHOLE_READS);
    let _permit = READS
        .acquire()
        .await
        .map_err(|e| ApiError::internal(e.to_string()))?;
    let app2 = app.clone();
    let t2 = t.clone();
    match tokio::task::spawn_blocking(move || index::Index::of(&app2).whole(&t2))
        .await
        .map_err(|e| ApiError::internal(e.to_string()))?
    {
        Ok(lines) => Ok(lines),
        Err(index::WholeError::TooLarge(n)) => Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "request_too_large",
            format!(
                "this transcript is {} MB; the relay opens, resumes and forks transcripts of up to {} MB (run `claude --resume {}` in a terminal for this one)",
                n / (1024 * 1024),
                index::MAX_WHOLE_BYTES / (1024 * 1024),
                t.id
            ),
        )),
        Err(index::WholeError::Io(e)) => Err(ApiError::internal(format!(
            "cannot read the transcript: {e}"
        ))),
    }
}

/// The relay session now running CLI session `id`, if any.
fn live_session(app: &AppState, id: &str) -> Option<String> {
    app.list()
        .into_iter()
        .find(|s| {
            s.agent_running()
                && s.meta()
                    .cli
                    .is_some_and(|c| c.session_id.as_deref() == Some(id))
        })
        .map(|s| s.id.clone())
}

/// `GET /v1/code/cli-sessions/{id}[?limit=N][&before=K]` ([`CliHistoryQuery`]): the list entry plus
/// `frames`, one page of the history as stream-json frames — the last `limit` before index
/// `before` — with `frames_from` (the index of the first one sent) and `frames_total`
/// ([`CliSessionDetail`]); a client shows earlier history by asking for the page before
/// `frames_from`.
async fn detail(
    State(app): State<AppState>,
    who: Principal,
    Path(id): Path<String>,
    Query(page): Query<CliHistoryQuery>,
) -> Result<Json<CliSessionDetail>, ApiError> {
    readable(&who)?;
    let t = transcript(&app, &id).await?;
    let lines = lines(&app, &t).await?;
    let mut frames = parse::history(&lines, None);
    let total = frames.len();
    let range = page.range(total);
    frames.truncate(range.end);
    frames.drain(..range.start);
    Ok(Json(CliSessionDetail {
        summary: cli_summary(&t),
        frames,
        frames_from: range.start,
        frames_total: total,
        live_session: live_session(&app, &id),
    }))
}

fn existing_dir(t: &Transcript) -> Result<String, ApiError> {
    let cwd = t.facts.cwd.clone().ok_or_else(|| {
        ApiError::conflict(
            "no_cwd",
            "the transcript does not say which directory the session ran in",
        )
    })?;
    if !std::path::Path::new(&cwd).is_dir() {
        return Err(ApiError::conflict(
            "cwd_missing",
            format!("the session ran in {cwd}, which no longer exists: it cannot be resumed there"),
        ));
    }
    Ok(cwd)
}

/// 201 with the session just made ([`SessionStarted`]; a fork's `prompt`, `null` when it has no
/// text, is `Some`).
fn created(session: &crate::core::session::Session, prompt: Option<Option<String>>) -> Response {
    let mut summary = session.summary();
    summary.origin = Some(Origin::Relay);
    let started = SessionStarted {
        summary,
        session_id: session.id.clone(),
        prompt,
    };
    json_created(started)
}

/// `POST /v1/code/cli-sessions/{id}/resume`: a relay session running `claude --resume <id>` in the
/// session's cwd, its history stored first (so it shows above the new turn). When a relay session
/// already runs it, that one is answered (200, [`AlreadyRunning`]).
async fn resume(
    State(app): State<AppState>,
    Controller(_): Controller,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let t = transcript(&app, &id).await?;
    if let Some(live) = live_session(&app, &id) {
        return Ok(Json(AlreadyRunning {
            session_id: live,
            already_running: true,
        })
        .into_response());
    }
    let cwd = existing_dir(&t)?;
    let lines = lines(&app, &t).await?;
    let session = app
        .create_session(CreateSession {
            cwd: Some(cwd),
            title: t.facts.title(),
            resume: Some(Resume {
                session_id: id.clone(),
                fork: false,
                at: None,
            }),
            history: parse::history(&lines, None),
            cli: Some(CliLink {
                session_id: Some(id.clone()),
                resumed: Some(id.clone()),
                ..CliLink::default()
            }),
            ..CreateSession::default()
        })
        .await?;
    tracing::info!(session = %session.id, cli_session = %id, "CLI session resumed");
    Ok(created(&session, None))
}

async fn fork_from(
    app: &AppState,
    origin_id: &str,
    t: &Transcript,
    title: Option<String>,
    body: Value,
) -> Result<Response, ApiError> {
    let body: ForkRequest = serde_json::from_value(body).map_err(|e| {
        ApiError::bad_request(format!(
            "invalid fork body (expected {{\"message_uuid\": \"…\"}}): {e}"
        ))
    })?;
    let cwd = existing_dir(t)?;
    let lines = lines(app, t).await?;
    let cut = parse::fork_point(&lines, &body.message_uuid).map_err(ApiError::bad_request)?;
    let prompt = lines
        .iter()
        .find(|v| v.get("uuid").and_then(Value::as_str) == Some(body.message_uuid.as_str()))
        .and_then(parse::prompt_text);
    // Before the first prompt there is nothing to keep: a new session in the same directory.
    let (resume, history) = match &cut {
        Some(at) => (
            Some(Resume {
                session_id: t.id.clone(),
                fork: true,
                at: Some(at.clone()),
            }),
            parse::history(&lines, Some(at)),
        ),
        None => (None, Vec::new()),
    };
    let session = app
        .create_session(CreateSession {
            cwd: Some(cwd),
            title: title.clone(),
            resume,
            history,
            cli: Some(CliLink {
                session_id: None,
                resumed: None,
                forked_from: Some(ForkedFrom {
                    id: origin_id.to_owned(),
                    title,
                    before_message: body.message_uuid.clone(),
                }),
                ..CliLink::default()
            }),
            ..CreateSession::default()
        })
        .await?;
    tracing::info!(session = %session.id, from = %origin_id, before = %body.message_uuid, "session forked");
    Ok(created(&session, Some(prompt)))
}

/// `POST /v1/code/cli-sessions/{id}/fork` `{"message_uuid"}` ([`ForkRequest`]): a new relay session
/// with the conversation up to just before that prompt (`--resume <id> --fork-session
/// --resume-session-at <the line before>`); 201 with [`SessionStarted`].
async fn fork_cli(
    State(app): State<AppState>,
    Controller(_): Controller,
    Path(id): Path<String>,
    JsonBody(body): JsonBody,
) -> Result<Response, ApiError> {
    let t = transcript(&app, &id).await?;
    let title = t.facts.title();
    fork_from(&app, &id, &t, title, body).await
}

/// `POST /v1/code/sessions/{id}/fork`: the same for a relay session, through its CLI transcript.
async fn fork_relay(
    State(app): State<AppState>,
    Controller(who): Controller,
    Path(id): Path<String>,
    JsonBody(body): JsonBody,
) -> Result<Response, ApiError> {
    let s = app.visible_session(&who, &id)?;
    let meta = s.meta();
    let Some(cli) = meta.cli.as_ref().and_then(|c| c.session_id.clone()) else {
        return Err(ApiError::conflict(
            "no_transcript",
            "this session's agent has not reported a Claude Code session yet: wait for it to start",
        ));
    };
    let t = transcript(&app, &cli).await.map_err(|e| {
        if e.status == StatusCode::NOT_FOUND {
            ApiError::conflict(
                "no_transcript",
                format!(
                    "no Claude Code transcript for this session under {}: forking needs the real CLI's transcript (the demo agent writes none)",
                    index::Index::of(&app).projects_dir().display()
                ),
            )
        } else {
            e
        }
    })?;
    fork_from(&app, &id, &t, meta.title.clone().or(t.facts.title()), body).await
}

/// `POST /v1/code/cli-sessions/{id}/rewind`: refused, clearly.
async fn rewind_cli(
    State(_): State<AppState>,
    Controller(_): Controller,
    Path(_): Path<String>,
) -> ApiError {
    ApiError::conflict(
        "not_live",
        "this session is not running under the relay: Claude Code restores files only in a live \
         session that kept checkpoints. Send a message to resume it here; files can then be restored \
         to before the messages of the resumed session",
    )
}

/// `POST /v1/code/sessions/{id}/rewind` `{"user_message_id", "dry_run"?: true}` ([`RewindRequest`]):
/// sends `rewind_files` to the agent and answers the CLI's result (`canRewind`, `filesChanged`,
/// `insertions`, `deletions`, `error`) plus `dry_run` ([`RewindAnswer`]). 409 when the agent is not
/// running, 502 when it answers an error (or not a result), 504 without an answer.
async fn rewind_relay(
    State(app): State<AppState>,
    Controller(who): Controller,
    Path(id): Path<String>,
    JsonBody(body): JsonBody,
) -> Result<Json<RewindAnswer>, ApiError> {
    let s = app.visible_session(&who, &id)?;
    let body: RewindRequest = serde_json::from_value(body).map_err(|e| {
        ApiError::bad_request(format!(
            "invalid rewind body (expected {{\"user_message_id\": \"…\", \"dry_run\": true}}): {e}"
        ))
    })?;
    if body.user_message_id.is_empty() || body.user_message_id.len() > 200 {
        return Err(ApiError::bad_request(
            "user_message_id must be a message uuid",
        ));
    }
    if !s.agent_running() {
        return Err(ApiError::conflict(
            "not_live",
            "this session's agent is not running: Claude Code restores files only in a live session",
        ));
    }
    let rid = format!("rewind_{}", uuid::Uuid::new_v4().simple());
    let mut sub = s.subscribe();
    let request = ClientMessage::ControlRequest(ControlRequest::new(
        rid.clone(),
        ControlRequestBody::RewindFiles(RewindFilesRequest {
            user_message_id: body.user_message_id.clone(),
            dry_run: Some(body.dry_run),
            extra: Map::new(),
        }),
    ));
    let request = serde_json::to_value(&request)
        .map_err(|e| ApiError::internal(format!("cannot write the rewind request: {e}")))?;
    s.ingest(&who, vec![request])?;
    let answer = tokio::time::timeout(REWIND_TIMEOUT, async {
        loop {
            match sub.rx.recv().await {
                Ok(frame) => {
                    let Ok(v) = serde_json::from_slice::<Value>(&frame.payload) else {
                        continue;
                    };
                    if MessageType::of(&v) == Some(MessageType::ControlResponse)
                        && v["response"]["request_id"] == rid.as_str()
                    {
                        return Some(v["response"].clone());
                    }
                }
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                Err(_) => return None,
            }
        }
    })
    .await;
    let Ok(Some(resp)) = answer else {
        return Err(ApiError::new(
            StatusCode::GATEWAY_TIMEOUT,
            "no_answer",
            "the agent did not answer the rewind request (it may have exited)",
        ));
    };
    let resp = ControlResponseBody::from_value(resp).ok();
    if let Some(ControlResponseBody::Success(ok)) = &resp {
        let result = ok
            .response
            .clone()
            .unwrap_or_else(|| Value::Object(Map::new()));
        let result = serde_json::from_value::<RewindFilesResponse>(result).map_err(|e| {
            ApiError::new(
                StatusCode::BAD_GATEWAY,
                "agent_error",
                format!("Claude Code's answer to the rewind request is not its result: {e}"),
            )
        })?;
        return Ok(Json(RewindAnswer {
            result,
            dry_run: body.dry_run,
        }));
    }
    let err = match &resp {
        Some(ControlResponseBody::Error(e)) => e.error.as_str(),
        Some(ControlResponseBody::Other(raw)) => raw
            .get("error")
            .and_then(Value::as_str)
            .unwrap_or("unknown error"),
        Some(ControlResponseBody::Success(_)) | None => "unknown error",
    };
    let msg = if err.contains("Unsupported control request subtype") {
        format!("this agent cannot restore files ({err}): the demo agent is not Claude Code")
    } else {
        format!("Claude Code could not restore files: {err}")
    };
    Err(ApiError::new(StatusCode::BAD_GATEWAY, "agent_error", msg))
}
