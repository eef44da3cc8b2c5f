//! The REST session API: create, list, read, delete and archive sessions; post events and read them
//! back in pages.

use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::BytesMut;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::core::auth::Principal;
use crate::core::follow::{REPLAY_PAGE, REPLAY_PAGE_BYTES};
use crate::core::relay::CreateSession;
use crate::core::session::Session;
use crate::edge::error::ApiError;
use crate::edge::external::External;
use crate::edge::extract::{
    AppState, Controller, JsonBody, discard_worktree, json_created, parse_body, posted_payloads,
};
use bridge_protocol::api::NewSession;

pub(super) async fn create_session(
    State(app): State<AppState>,
    ext: External,
    Controller(_): Controller,
    JsonBody(body): JsonBody,
) -> Result<Response, ApiError> {
    let req: NewSession = parse_body(body, "session request")?;
    let s = app.create_session(CreateSession::from(req)).await?;
    Ok(json_created(ext.session_created(s.id.clone(), None)))
}

#[derive(Deserialize)]
pub(super) struct ListQuery {
    #[serde(default)]
    include_archived: Option<String>,
    /// Also the archived sessions whose worktree was kept (the console lists them so that the
    /// work can be found and discarded), without every other archived session.
    #[serde(default)]
    kept_worktrees: Option<String>,
}

pub(super) async fn list_sessions(
    State(app): State<AppState>,
    who: Principal,
    Query(q): Query<ListQuery>,
) -> Json<bridge_protocol::api::SessionList> {
    let yes = |v: &Option<String>| v.as_deref().is_some_and(|v| v == "1" || v == "true");
    let archived = match (yes(&q.include_archived), yes(&q.kept_worktrees)) {
        (true, _) => crate::core::relay::Archived::All,
        (false, true) => crate::core::relay::Archived::WorktreeKept,
        (false, false) => crate::core::relay::Archived::None,
    };
    Json(crate::features::transcripts::api::list(&app, archived, &who).await)
}

pub(super) async fn get_session(
    State(app): State<AppState>,
    who: Principal,
    Path(id): Path<String>,
) -> Result<Json<bridge_protocol::api::SessionDetail>, ApiError> {
    let mut v = app.visible_session(&who, &id)?.detail();
    if !who.can_write() {
        crate::core::redact::initialize_for_observer(&mut v.initialize);
    }
    Ok(Json(v))
}

#[derive(Deserialize)]
pub(super) struct DeleteQuery {
    force: Option<String>,
}

/// `DELETE /v1/code/sessions/{id}[?force=1]`: the session's events and record are gone.
pub(super) async fn delete_session(
    State(app): State<AppState>,
    Controller(_): Controller,
    Path(id): Path<String>,
    Query(q): Query<DeleteQuery>,
) -> Result<StatusCode, ApiError> {
    let force = q.force.as_deref().is_some_and(|v| v == "1" || v == "true");
    app.delete_session(&id, force).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Body (optional): `{"discard_worktree": true}` removes the session's worktree even when that
/// loses work; without it such a worktree is kept and the answer says why (`worktree_kept`) and
/// where (`worktree`: `path`, `branch`).
pub(super) async fn archive_session(
    State(app): State<AppState>,
    Controller(_): Controller,
    Path(id): Path<String>,
    JsonBody(body): JsonBody,
) -> Result<Json<bridge_protocol::api::ArchiveAnswer>, ApiError> {
    let discard = discard_worktree(&body)?;
    let (s, kept) = app.archive(&id, discard).await?;
    let worktree = kept
        .is_some()
        .then(|| s.meta().worktree)
        .flatten()
        .map(|wt| bridge_protocol::api::WorktreeInfo {
            path: wt.path,
            branch: wt.branch,
        });
    Ok(Json(bridge_protocol::api::ArchiveAnswer {
        session_id: s.id.clone(),
        archived: true,
        worktree_kept: kept,
        worktree,
    }))
}

pub(super) async fn post_events(
    State(app): State<AppState>,
    who: Principal,
    Path(id): Path<String>,
    JsonBody(body): JsonBody,
) -> Result<Json<Value>, ApiError> {
    let session = app.visible_session(&who, &id)?;
    if !who.can_write() {
        return Err(ApiError::forbidden(
            "observer tokens are read-only: sending events needs the controller token",
        ));
    }
    let results = session.ingest(&who, posted_payloads(&id, body)?)?;
    Ok(Json(json!({"results": results})))
}

#[derive(Deserialize)]
pub(super) struct EventsQuery {
    after: Option<u64>,
    limit: Option<usize>,
}

pub const EVENTS_PAGE_DEFAULT: usize = 1000;
pub const EVENTS_PAGE_MAX: usize = 10_000;

pub(super) async fn list_events(
    State(app): State<AppState>,
    who: Principal,
    Path(id): Path<String>,
    Query(q): Query<EventsQuery>,
) -> Result<Response, ApiError> {
    let session = app.visible_session(&who, &id)?;
    let after = q.after.unwrap_or(0);
    let limit = q
        .limit
        .unwrap_or(EVENTS_PAGE_DEFAULT)
        .clamp(1, EVENTS_PAGE_MAX);
    let (first, last) = session.bounds();
    if after > last {
        return Err(crate::core::follow::beyond_end_error(&id, after, last).into());
    }
    let truncated = last > 0 && after.saturating_add(1) < first;
    // The first page now (a store failure is still a clean 500), the rest as the client reads:
    // pages bounded in events and bytes, never the whole answer in memory.
    let page = session.replay_page(after, limit.min(REPLAY_PAGE), REPLAY_PAGE_BYTES)?;
    let pages = EventPages {
        session,
        cursor: after,
        left: limit,
        last,
        next: Some(page),
        wrote_head: false,
        wrote_event: false,
        observer: !who.can_write(),
        tail: Some(format!(
            "],\"truncated\":{truncated},\"last_sequence_num\":{last}}}"
        )),
    };
    let body = futures::stream::unfold(pages, |mut p| async move {
        let chunk = p.next_chunk();
        chunk.map(|c| (c, p))
    });
    Ok((
        [(header::CONTENT_TYPE, "application/json")],
        Body::from_stream(body),
    )
        .into_response())
}

/// `GET …/events` as a sequence of body chunks, one replay page each.
pub(super) struct EventPages {
    session: Arc<Session>,
    cursor: u64,
    left: usize,
    /// Events after this one (appended during the answer) are left out.
    last: u64,
    next: Option<Vec<Arc<crate::core::frames::Frame>>>,
    wrote_head: bool,
    wrote_event: bool,
    /// Observers get frames through [`crate::core::redact::frame_for_observer`].
    observer: bool,
    tail: Option<String>,
}

impl EventPages {
    fn next_chunk(&mut self) -> Option<Result<bytes::Bytes, std::io::Error>> {
        let frames = match self.next.take() {
            Some(f) => f,
            None if self.left == 0 || self.cursor >= self.last || self.tail.is_none() => Vec::new(),
            None => match self.session.replay_page(
                self.cursor,
                self.left.min(REPLAY_PAGE),
                REPLAY_PAGE_BYTES,
            ) {
                Ok(f) => f,
                Err(e) => {
                    tracing::error!(session = %self.session.id, error = %e, "replay from the store failed mid-answer");
                    self.tail = None;
                    return Some(Err(std::io::Error::other(e.to_string())));
                }
            },
        };
        let frames: Vec<_> = frames
            .into_iter()
            .filter(|f| f.seq.is_some_and(|s| s <= self.last))
            .take(self.left)
            .collect();
        let mut out =
            BytesMut::with_capacity(frames.iter().map(|f| f.data.len() + 1).sum::<usize>() + 96);
        if !std::mem::replace(&mut self.wrote_head, true) {
            out.extend_from_slice(b"{\"events\":[");
        }
        match frames.last().and_then(|f| f.seq) {
            Some(seq) => {
                self.cursor = seq;
                self.left -= frames.len();
                for f in &frames {
                    if std::mem::replace(&mut self.wrote_event, true) {
                        out.extend_from_slice(b",");
                    }
                    let redacted = self
                        .observer
                        .then(|| crate::core::redact::frame_for_observer(f));
                    let f = redacted.as_ref().unwrap_or(f);
                    // The SSE data line of a durable frame is its envelope.
                    out.extend_from_slice(&f.data);
                }
            }
            None => out.extend_from_slice(self.tail.take()?.as_bytes()),
        }
        Some(Ok(out.freeze()))
    }
}
