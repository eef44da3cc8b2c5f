//! `GET /v1/code/sessions/{id}/events/stream`: the SSE stream of CCR-WIRE §9.3. For an ended
//! session it replays what follows the cursor and then ends; when nothing follows, it answers 404
//! `session_ended` (final for the SDK, which would otherwise reconnect forever).

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;
use bytes::{Bytes, BytesMut};
use futures::Stream;
use serde::Deserialize;

use crate::auth::Principal;
use crate::error::ApiError;
use crate::extract::AppState;
use crate::follow::Follower;
use crate::frames::{Frame, SSE_CATCH_UP_TRUNCATED, SSE_KEEPALIVE};

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
    let slot = app.limits.streams.acquire(&who.token_id)?;
    let cursor = cursor_from(&headers, q.from_sequence_num);
    let (follower, truncated) = Follower::new(session, cursor);
    if follower.beyond_end() {
        return Err(follower.beyond_end_error());
    }
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
    // The stream ends within a second of its credential being revoked, expiring or logged out.
    let revoked = Box::pin(crate::auth::until_revoked(app.clone(), who.clone()));
    let body = Body::from_stream(futures::StreamExt::take_until(
        frames_for(
            follower,
            truncated,
            app.config.sse_keepalive,
            app.config.sse_coalesce,
            app.shutdown_signal(),
            Some(slot),
            !who.can_write(),
        ),
        revoked,
    ));
    Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache, no-transform")
        .header("x-accel-buffering", "no")
        .body(body)
        .map_err(|e| ApiError::internal(e.to_string()))
}

/// The largest body chunk a stream writes at once (a single larger frame goes alone): a batch past it
/// goes out as several chunks. A connection whose client reads slowly holds one chunk of its own
/// while the socket drains (the frames are shared by every subscriber); with whole batches (up to
/// 512 KB live, 1 MB replayed) 2,000 slow observers held about 1 GB.
pub const CHUNK_BYTES: usize = 64 * 1024;

struct Pump {
    follower: Follower,
    first: Option<Bytes>,
    /// Frames of the current batch not written yet (at most [`CHUNK_BYTES`] go per chunk).
    pending: std::collections::VecDeque<Arc<Frame>>,
    keepalive: tokio::time::Interval,
    coalesce: Duration,
    last_write: Option<Instant>,
    shutdown: tokio::sync::watch::Receiver<bool>,
    /// This stream's place under --max-streams-per-principal, freed when the body drops.
    _slot: Option<crate::limits::StreamSlot>,
    /// Observers get frames through [`crate::redact::frame_for_observer`].
    observer: bool,
}

/// The response body, polled directly by the connection (no task or channel in between): each poll
/// drains every frame already queued for this subscriber into one chunk. A frame that follows the
/// previous write by less than `coalesce` waits out the rest of that interval, and whatever arrived
/// meanwhile goes in the same chunk: a busy stream costs at most one write per subscriber per
/// interval, an idle one is written at once. The stream ends after the final event of an ended
/// session, and when the relay shuts down.
#[cfg(test)]
fn frames(
    follower: Follower,
    truncated: bool,
    keepalive: Duration,
    coalesce: Duration,
    shutdown: tokio::sync::watch::Receiver<bool>,
    slot: Option<crate::limits::StreamSlot>,
) -> impl Stream<Item = Result<Bytes, Infallible>> + Send + 'static {
    frames_for(
        follower, truncated, keepalive, coalesce, shutdown, slot, false,
    )
}

/// [`frames`]; for an `observer`, frames pass through [`crate::redact::frame_for_observer`].
fn frames_for(
    follower: Follower,
    truncated: bool,
    keepalive: Duration,
    coalesce: Duration,
    shutdown: tokio::sync::watch::Receiver<bool>,
    slot: Option<crate::limits::StreamSlot>,
    observer: bool,
) -> impl Stream<Item = Result<Bytes, Infallible>> + Send + 'static {
    // Bytes at once, so the headers are flushed (the SDK times out after 15 s without them).
    let mut first = String::from(": connected\n\n");
    if truncated {
        first.push_str(SSE_CATCH_UP_TRUNCATED);
    }
    let pump = Pump {
        follower,
        first: Some(Bytes::from(first)),
        pending: std::collections::VecDeque::new(),
        keepalive: tokio::time::interval_at(Instant::now() + keepalive, keepalive),
        coalesce,
        last_write: None,
        shutdown,
        _slot: slot,
        observer,
    };
    futures::stream::unfold(pump, |mut p| async move {
        if let Some(first) = p.first.take() {
            return Some((Ok(first), p));
        }
        if !p.pending.is_empty() {
            return Some((Ok(next_chunk(&mut p.pending)), p));
        }
        if p.follower.finished() || *p.shutdown.borrow() {
            return None;
        }
        let mut batch = tokio::select! {
            batch = p.follower.next_batch() => batch?,
            _ = p.keepalive.tick() => return Some((Ok(Bytes::from_static(SSE_KEEPALIVE.as_bytes())), p)),
            () = crate::util::until_true(&mut p.shutdown) => return None,
        };
        if let Some(due) = p.last_write.map(|t| t + p.coalesce)
            && Instant::now() < due
        {
            tokio::time::sleep_until(due).await;
            p.follower.drain_ready(&mut batch);
        }
        p.last_write = Some(Instant::now());
        if p.observer {
            batch = batch
                .iter()
                .map(crate::redact::frame_for_observer)
                .collect();
        }
        p.pending.extend(batch);
        Some((Ok(next_chunk(&mut p.pending)), p))
    })
}

/// The next chunk of a batch: its first frames up to [`CHUNK_BYTES`] (one frame always) — the
/// shared frame itself when it goes alone, else those frames concatenated.
fn next_chunk(pending: &mut std::collections::VecDeque<Arc<Frame>>) -> Bytes {
    let mut n = 0;
    let mut len = 0;
    for f in pending.iter() {
        if n > 0 && len + f.sse.len() > CHUNK_BYTES {
            break;
        }
        len += f.sse.len();
        n += 1;
    }
    if n == 1 {
        return pending
            .pop_front()
            .map(|f| f.sse.clone())
            .unwrap_or_default();
    }
    let mut buf = BytesMut::with_capacity(len);
    for f in pending.drain(..n) {
        buf.extend_from_slice(&f.sse);
    }
    buf.freeze()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::{AgentControl, AgentEvents as _, AgentHandle};
    use crate::audit::AuditLog;
    use crate::session::{ExitInfo, Session, SessionCtx, SessionMeta};
    use crate::store::MemoryStore;
    use futures::StreamExt as _;

    fn session(dir: &std::path::Path) -> Arc<Session> {
        let ctx = Arc::new(SessionCtx {
            store: Arc::new(MemoryStore::default()),
            audit: Arc::new(AuditLog::open(&dir.join("audit.jsonl")).unwrap()),
            permission_timeout: None,
            retention_events: None,
            ended_tx: None,
            push: None,
            allow_bypass_permissions: false,
        });
        let s = Session::create(
            SessionMeta::new("cse_sse".into(), "/tmp".into(), None, None, None),
            ctx,
        )
        .unwrap();
        let (stdin, _) = tokio::sync::mpsc::channel(16);
        s.attach_agent(AgentHandle {
            stdin,
            control: AgentControl::detached(),
        });
        s
    }

    fn ids(chunk: &Bytes) -> Vec<u64> {
        std::str::from_utf8(chunk)
            .unwrap()
            .lines()
            .filter_map(|l| l.strip_prefix("id: ")?.parse().ok())
            .collect()
    }

    fn line(n: u64) -> String {
        format!(r#"{{"type":"assistant","n":{n}}}"#)
    }

    #[tokio::test]
    async fn frames_close_together_share_one_write_and_the_stream_ends_after_the_exit() {
        let dir = tempfile::tempdir().unwrap();
        let s = session(dir.path());
        let (_tx, shutdown) = tokio::sync::watch::channel(false);
        let (follower, _) = Follower::new(s.clone(), 0);
        let coalesce = Duration::from_millis(300);
        let body = frames(
            follower,
            false,
            Duration::from_secs(60),
            coalesce,
            shutdown,
            None,
        );
        // The connection's side: every chunk with the time it was produced.
        let (out_tx, mut out) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut body = std::pin::pin!(body);
            while let Some(Ok(chunk)) = body.next().await {
                let _ = out_tx.send((std::time::Instant::now(), chunk));
            }
        });
        let mut next = async || {
            tokio::time::timeout(Duration::from_secs(5), out.recv())
                .await
                .unwrap()
        };
        assert_eq!(&next().await.unwrap().1[..], b": connected\n\n");
        s.on_line(&line(1));
        let (t1, chunk) = next().await.unwrap();
        assert_eq!(ids(&chunk), vec![1], "idle: written at once");
        s.on_line(&line(2));
        s.on_line(&line(3));
        tokio::time::sleep(Duration::from_millis(100)).await;
        s.on_line(&line(4));
        let (t2, chunk) = next().await.unwrap();
        assert_eq!(
            ids(&chunk),
            vec![2, 3, 4],
            "one write for what came within the interval"
        );
        assert!(
            t2 - t1 >= coalesce - Duration::from_millis(2),
            "{:?}",
            t2 - t1
        );
        s.on_exit(ExitInfo {
            exit_code: Some(0),
            signal: None,
            stderr_tail: String::new(),
            at: crate::util::now_rfc3339(),
            reason: None,
        });
        assert_eq!(ids(&next().await.unwrap().1), vec![5]);
        assert!(
            next().await.is_none(),
            "the stream ended after the exit event"
        );
    }

    /// A batch larger than one chunk goes out as several, in order, none past [`CHUNK_BYTES`]
    /// unless a single frame is, nothing lost.
    #[tokio::test]
    async fn a_large_batch_is_written_in_bounded_chunks() {
        let dir = tempfile::tempdir().unwrap();
        let s = session(dir.path());
        let (_tx, shutdown) = tokio::sync::watch::channel(false);
        let (follower, _) = Follower::new(s.clone(), 0);
        let mut body = Box::pin(frames(
            follower,
            false,
            Duration::from_secs(60),
            Duration::ZERO,
            shutdown,
            None,
        ));
        body.next().await;
        let text = "x".repeat(1000);
        for n in 1..=300 {
            s.on_line(&format!(r#"{{"type":"assistant","n":{n},"t":"{text}"}}"#));
        }
        let mut seen = Vec::new();
        let mut chunks = 0;
        while seen.len() < 300 {
            let chunk = tokio::time::timeout(Duration::from_secs(5), body.next())
                .await
                .unwrap()
                .unwrap()
                .unwrap();
            assert!(chunk.len() <= CHUNK_BYTES, "{} bytes", chunk.len());
            seen.extend(ids(&chunk));
            chunks += 1;
        }
        assert_eq!(seen, (1..=300).collect::<Vec<u64>>());
        assert!(chunks >= 5, "300 KB in chunks of at most 64 KB: {chunks}");
    }

    #[tokio::test]
    async fn without_coalescing_each_wakeup_writes() {
        let dir = tempfile::tempdir().unwrap();
        let s = session(dir.path());
        let (_tx, shutdown) = tokio::sync::watch::channel(false);
        let (follower, _) = Follower::new(s.clone(), 0);
        let mut body = Box::pin(frames(
            follower,
            false,
            Duration::from_secs(60),
            Duration::ZERO,
            shutdown,
            None,
        ));
        body.next().await;
        s.on_line(&line(1));
        assert_eq!(ids(&body.next().await.unwrap().unwrap()), vec![1]);
        s.on_line(&line(2));
        assert_eq!(ids(&body.next().await.unwrap().unwrap()), vec![2]);
        // Already queued when the subscriber wakes: drained into one chunk.
        s.on_line(&line(3));
        s.on_line(&line(4));
        assert_eq!(ids(&body.next().await.unwrap().unwrap()), vec![3, 4]);
    }
}
