//! `GET /v1/code/sessions/{id}/events/stream`: the SSE stream of CCR-WIRE §9.3.

use std::convert::Infallible;

use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, header};
use axum::response::Response;
use bytes::{Bytes, BytesMut};
use futures::StreamExt as _;
use serde::Deserialize;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

use crate::auth::Principal;
use crate::error::ApiError;
use crate::follow::Follower;
use crate::frames::{SSE_CATCH_UP_TRUNCATED, SSE_KEEPALIVE};
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
    let (tx, rx) = mpsc::channel::<Bytes>(16);
    tokio::spawn(pump(
        follower,
        truncated,
        tx,
        app.config.sse_keepalive,
        app.shutdown_signal(),
    ));
    let body = Body::from_stream(ReceiverStream::new(rx).map(Ok::<_, Infallible>));
    Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache, no-transform")
        .header("x-accel-buffering", "no")
        .body(body)
        .map_err(|e| ApiError::internal(e.to_string()))
}

async fn pump(
    mut follower: Follower,
    truncated: bool,
    tx: mpsc::Sender<Bytes>,
    keepalive: std::time::Duration,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
) {
    // Bytes at once, so the headers are flushed (the SDK times out after 15 s without them).
    let mut first = String::from(": connected\n\n");
    if truncated {
        first.push_str(SSE_CATCH_UP_TRUNCATED);
    }
    if tx.send(Bytes::from(first)).await.is_err() {
        return;
    }
    let mut ka = tokio::time::interval_at(tokio::time::Instant::now() + keepalive, keepalive);
    loop {
        tokio::select! {
            batch = follower.next_batch() => {
                let Some(frames) = batch else { return };
                let mut buf = BytesMut::with_capacity(frames.iter().map(|f| f.sse.len()).sum());
                for f in &frames {
                    buf.extend_from_slice(&f.sse);
                }
                if tx.send(buf.freeze()).await.is_err() {
                    return;
                }
            }
            _ = ka.tick() => {
                if tx.send(Bytes::from_static(SSE_KEEPALIVE.as_bytes())).await.is_err() {
                    return;
                }
            }
            () = tx.closed() => return,
            () = crate::util::until_true(&mut shutdown) => return,
        }
    }
}
