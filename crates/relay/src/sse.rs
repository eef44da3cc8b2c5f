//! `GET /v1/code/sessions/{id}/events/stream`: the SSE stream of CCR-WIRE §9.3. For an ended
//! session it replays what follows the cursor and then ends; when nothing follows, it answers 404
//! `session_ended` (final for the SDK, which would otherwise reconnect forever).

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;
use bytes::{Bytes, BytesMut};
use futures::Stream;
use serde::Deserialize;

use crate::auth::Principal;
use crate::error::ApiError;
use crate::follow::Follower;
use crate::frames::{Frame, SSE_CATCH_UP_TRUNCATED, SSE_KEEPALIVE};
use crate::http::AppState;

#[derive(Deserialize)]
pub struct StreamQuery {
    from_sequence_num: Option<u64>,
}

/// The resume cursor: the larger of `Last-Event-ID` and `?from_sequence_num` (the CLI sends both).
pub fn cursor_from(headers: &HeaderMap, from_sequence_num: Option<u64>) -> u64 {
    let header = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    header.max(from_sequence_num).unwrap_or(0)
}

pub async fn stream(
    State(app): State<AppState>,
    who: Principal,
    Path(id): Path<String>,
    Query(q): Query<StreamQuery>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let session = app.visible_session(&who, &id)?;
    let cursor = cursor_from(&headers, q.from_sequence_num);
    let (follower, truncated) = Follower::new(session, cursor);
    if follower.finished() {
        // An ended session whose log the client already has: a 2xx that closes at once would make
        // the SDK reconnect about once a second forever (a clean end is a reconnect, and a 2xx resets
        // its retry budget); 404 is final for it. A fresh GET with an earlier cursor still replays.
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "session_ended",
            format!(
                "session {id} has ended and there is nothing after sequence number {cursor}; \
                 read the log with GET /v1/code/sessions/{id}/events?after=0"
            ),
        ));
    }
    let body = Body::from_stream(frames(
        follower,
        truncated,
        app.config.sse_keepalive,
        app.shutdown_signal(),
    ));
    Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache, no-transform")
        .header("x-accel-buffering", "no")
        .body(body)
        .map_err(|e| ApiError::internal(e.to_string()))
}

/// A live batch smaller than this waits for one scheduler round before it is written.
const COALESCE_BELOW: usize = 8;

struct Pump {
    follower: Follower,
    first: Option<Bytes>,
    keepalive: tokio::time::Interval,
    shutdown: tokio::sync::watch::Receiver<bool>,
}

/// The response body, polled directly by the connection (no task or channel in between): each poll
/// drains every frame already queued for this subscriber into one chunk. The stream ends after the
/// final event of an ended session, and when the relay shuts down.
fn frames(
    follower: Follower,
    truncated: bool,
    keepalive: Duration,
    shutdown: tokio::sync::watch::Receiver<bool>,
) -> impl Stream<Item = Result<Bytes, Infallible>> + Send + 'static {
    // Bytes at once, so the headers are flushed (the SDK times out after 15 s without them).
    let mut first = String::from(": connected\n\n");
    if truncated {
        first.push_str(SSE_CATCH_UP_TRUNCATED);
    }
    let pump = Pump {
        follower,
        first: Some(Bytes::from(first)),
        keepalive: tokio::time::interval_at(tokio::time::Instant::now() + keepalive, keepalive),
        shutdown,
    };
    futures::stream::unfold(pump, |mut p| async move {
        if let Some(first) = p.first.take() {
            return Some((Ok(first), p));
        }
        if p.follower.finished() || *p.shutdown.borrow() {
            return None;
        }
        let mut batch = tokio::select! {
            batch = p.follower.next_batch() => batch?,
            _ = p.keepalive.tick() => return Some((Ok(Bytes::from_static(SSE_KEEPALIVE.as_bytes())), p)),
            () = crate::util::until_true(&mut p.shutdown) => return None,
        };
        if batch.len() < COALESCE_BELOW {
            // Let the other woken subscribers (and the agent's reader) run once first, then take what
            // arrived meanwhile: when the relay is busy this turns many small writes into fewer larger
            // ones; when it is idle it costs one trip through the scheduler.
            tokio::task::yield_now().await;
            p.follower.drain_ready(&mut batch);
        }
        Some((Ok(concat(&batch)), p))
    })
}

/// One chunk for a batch: the shared frame itself when there is one, else the frames concatenated.
fn concat(frames: &[Arc<Frame>]) -> Bytes {
    if let [one] = frames {
        return one.sse.clone();
    }
    let mut buf = BytesMut::with_capacity(frames.iter().map(|f| f.sse.len()).sum());
    for f in frames {
        buf.extend_from_slice(&f.sse);
    }
    buf.freeze()
}
