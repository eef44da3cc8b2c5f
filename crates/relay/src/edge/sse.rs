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

use crate::core::auth::Principal;
use crate::core::follow::Follower;
use crate::core::frames::{Frame, SSE_CATCH_UP_TRUNCATED, SSE_KEEPALIVE};
use crate::core::session::Session;
use crate::edge::error::ApiError;
use crate::edge::extract::AppState;

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
    let (follower, truncated) = Follower::new(session.clone(), cursor);
    if follower.beyond_end() {
        return Err(follower.beyond_end_error().into());
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
    let revoked = Box::pin(crate::edge::extract::until_revoked(
        app.clone(),
        who.clone(),
    ));
    let body = Body::from_stream(futures::StreamExt::take_until(
        frames_for(
            follower,
            truncated,
            app.config.sse_keepalive,
            app.config.sse_coalesce,
            Some(session),
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

/// Live subscribers of one session up to which the write window stays at its base
/// (`--sse-coalesce-ms`).
pub const WIDEN_FROM: usize = 50;
/// The most the write window widens: this many times its base.
pub const WIDEN_MAX: f64 = 8.0;
/// How often a stream reads its session's subscriber count again.
const WINDOW_REFRESH: Duration = Duration::from_millis(250);

/// The least time between two writes to one SSE subscriber of a session that has `subscribers`
/// live subscribers: `base` up to [`WIDEN_FROM`], then `base × √(subscribers / 50)` (with the
/// default 2 ms: 4 ms at 200, 8.9 ms at 1,000, 12.6 ms at 2,000), at most [`WIDEN_MAX`] × base
/// (16 ms, reached at 3,200). A busy session then costs the relay writes per second that grow as
/// √n rather than n (2,000 subscribers: about 160,000/s instead of 1,000,000/s at 2 ms), while a
/// frame waits at most one window more. `base` zero: no coalescing at any count.
pub fn coalesce_window(base: Duration, subscribers: usize) -> Duration {
    if base.is_zero() || subscribers <= WIDEN_FROM {
        return base;
    }
    let f = (subscribers as f64 / WIDEN_FROM as f64).sqrt();
    base.mul_f64(f.min(WIDEN_MAX))
}

struct Pump {
    follower: Follower,
    first: Option<Bytes>,
    /// Frames of the current batch not written yet (at most [`CHUNK_BYTES`] go per chunk).
    pending: std::collections::VecDeque<Arc<Frame>>,
    keepalive: tokio::time::Interval,
    /// `--sse-coalesce-ms`: the window's base ([`coalesce_window`]).
    coalesce: Duration,
    /// The session whose subscriber count widens the window (`None`: the base always).
    fanout: Option<Arc<Session>>,
    /// The window now, and when the subscriber count was read for it.
    window: Duration,
    window_at: Option<Instant>,
    last_write: Option<Instant>,
    shutdown: tokio::sync::watch::Receiver<bool>,
    /// This stream's place under --max-streams-per-principal, freed when the body drops.
    _slot: Option<crate::core::limits::StreamSlot>,
    /// Observers get frames through [`crate::core::redact::frame_for_observer`].
    observer: bool,
}

impl Pump {
    /// The write window, from the session's subscriber count read at most every
    /// [`WINDOW_REFRESH`] (the count takes the fan-out channel's lock).
    fn window(&mut self, now: Instant) -> Duration {
        let Some(session) = &self.fanout else {
            return self.coalesce;
        };
        if self.coalesce.is_zero() {
            return Duration::ZERO;
        }
        if self.window_at.is_none_or(|t| now >= t + WINDOW_REFRESH) {
            self.window = coalesce_window(self.coalesce, session.subscriber_count());
            self.window_at = Some(now);
        }
        self.window
    }
}

/// The response body, polled directly by the connection (no task or channel in between): each poll
/// drains every frame already queued for this subscriber into one chunk. A frame that follows the
/// previous write by less than the window (`coalesce`, widened with the session's subscriber
/// count: [`coalesce_window`]) waits out the rest of it, and whatever arrived meanwhile goes in the
/// same chunk: a busy stream costs at most one write per subscriber per window, an idle one is
/// written at once. The stream ends after the final event of an ended
/// session, and when the relay shuts down.
#[cfg(test)]
fn frames(
    follower: Follower,
    truncated: bool,
    keepalive: Duration,
    coalesce: Duration,
    shutdown: tokio::sync::watch::Receiver<bool>,
    slot: Option<crate::core::limits::StreamSlot>,
) -> impl Stream<Item = Result<Bytes, Infallible>> + Send + 'static {
    frames_for(
        follower, truncated, keepalive, coalesce, None, shutdown, slot, false,
    )
}

/// [`frames`]; the window widens with `fanout`'s subscriber count; for an `observer`, frames pass
/// through [`crate::core::redact::frame_for_observer`].
#[allow(clippy::too_many_arguments)]
fn frames_for(
    follower: Follower,
    truncated: bool,
    keepalive: Duration,
    coalesce: Duration,
    fanout: Option<Arc<Session>>,
    shutdown: tokio::sync::watch::Receiver<bool>,
    slot: Option<crate::core::limits::StreamSlot>,
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
        fanout,
        window: coalesce,
        window_at: None,
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
            () = crate::core::util::until_true(&mut p.shutdown) => return None,
        };
        let now = Instant::now();
        let window = p.window(now);
        if let Some(due) = p.last_write.map(|t| t + window)
            && now < due
        {
            tokio::time::sleep_until(due).await;
            p.follower.drain_ready(&mut batch);
        }
        p.last_write = Some(Instant::now());
        if p.observer {
            batch = batch
                .iter()
                .map(crate::core::redact::frame_for_observer)
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
    use crate::core::agent::AgentEvents as _;
    use crate::core::audit::AuditLog;
    use crate::core::session::{ExitInfo, Session, SessionCtx, SessionMeta};
    use crate::core::store::MemoryStore;
    use futures::StreamExt as _;

    /// A session with its audit log in a fresh directory (removed when the rig drops), and a
    /// shutdown signal that does not fire while the rig lives.
    struct Rig {
        _dir: tempfile::TempDir,
        s: Arc<Session>,
        _tx: tokio::sync::watch::Sender<bool>,
        shutdown: tokio::sync::watch::Receiver<bool>,
    }

    fn rig() -> Rig {
        let dir = tempfile::tempdir().unwrap();
        let ctx = Arc::new(SessionCtx {
            audit: Arc::new(AuditLog::open(&dir.path().join("audit.jsonl")).unwrap()),
            ..SessionCtx::for_tests(Arc::new(MemoryStore::default()))
        });
        let meta = SessionMeta::new("cse_sse".into(), "/tmp".into(), None, None, None);
        let (_tx, shutdown) = tokio::sync::watch::channel(false);
        Rig {
            _dir: dir,
            s: Session::with_test_agent(meta, ctx, 16).0,
            _tx,
            shutdown,
        }
    }

    /// The [`frames`] of `s` from its start, with keepalives a minute apart and the window
    /// `coalesce`.
    fn body_of(
        s: &Arc<Session>,
        coalesce: Duration,
        shutdown: tokio::sync::watch::Receiver<bool>,
    ) -> impl Stream<Item = Result<Bytes, Infallible>> + Send + 'static {
        let (follower, _) = Follower::new(s.clone(), 0);
        frames(
            follower,
            false,
            Duration::from_secs(60),
            coalesce,
            shutdown,
            None,
        )
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
        let Rig { s, shutdown, .. } = &rig();
        let coalesce = Duration::from_millis(300);
        let body = body_of(s, coalesce, shutdown.clone());
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
            at: crate::core::util::now_rfc3339(),
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
        let Rig { s, shutdown, .. } = &rig();
        let mut body = Box::pin(body_of(s, Duration::ZERO, shutdown.clone()));
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
        let Rig { s, shutdown, .. } = &rig();
        let mut body = Box::pin(body_of(s, Duration::ZERO, shutdown.clone()));
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

    #[test]
    fn the_window_widens_with_the_subscriber_count_up_to_its_cap() {
        let ms = Duration::from_millis;
        let base = ms(2);
        for n in [0, 1, 10, WIDEN_FROM] {
            assert_eq!(coalesce_window(base, n), base, "{n}");
        }
        assert_eq!(coalesce_window(base, 200), ms(4));
        let at_2000 = coalesce_window(base, 2000).as_secs_f64() * 1000.0;
        assert!((12.6..12.7).contains(&at_2000), "{at_2000}");
        assert_eq!(coalesce_window(base, 3200), ms(16));
        assert_eq!(coalesce_window(base, 1_000_000), ms(16), "capped");
        let mut last = Duration::ZERO;
        for n in 0..5000 {
            let w = coalesce_window(base, n);
            assert!(w >= last, "never narrower with more subscribers ({n})");
            last = w;
        }
        // 0 turns coalescing off at any count.
        assert_eq!(coalesce_window(Duration::ZERO, 5000), Duration::ZERO);
    }

    /// `streams` subscribers of a session that gets one frame a millisecond for 200 ms (time is
    /// paused: the figures are exact): the writes they made in all, and the longest a frame waited.
    async fn burst(streams: usize, widen: bool) -> (usize, Duration) {
        let Rig { s, shutdown, .. } = &rig();
        let (out_tx, mut out) = tokio::sync::mpsc::unbounded_channel();
        for _ in 0..streams {
            let (follower, _) = Follower::new(s.clone(), 0);
            let body = frames_for(
                follower,
                false,
                Duration::from_secs(600),
                Duration::from_millis(2),
                widen.then(|| s.clone()),
                shutdown.clone(),
                None,
                false,
            );
            let out_tx = out_tx.clone();
            tokio::spawn(async move {
                let mut body = std::pin::pin!(body);
                body.next().await;
                while let Some(Ok(chunk)) = body.next().await {
                    let _ = out_tx.send((Instant::now(), ids(&chunk)));
                }
            });
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
        let start = Instant::now();
        for n in 1..=200 {
            s.on_line(&line(n));
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        let (mut writes, mut delivered, mut worst) = (0, 0, Duration::ZERO);
        while let Ok((at, ids)) = out.try_recv() {
            writes += 1;
            delivered += ids.len();
            for n in ids {
                let sent = start + Duration::from_millis(n - 1);
                worst = worst.max(at - sent);
            }
        }
        assert_eq!(delivered, 200 * streams, "every frame reached every stream");
        (writes, worst)
    }

    #[tokio::test(start_paused = true)]
    async fn a_burst_to_many_subscribers_is_written_in_fewer_writes() {
        // 400 subscribers: the window is 2 ms × √8 = 5.7 ms instead of 2 ms.
        let (fixed, fixed_wait) = burst(400, false).await;
        let (wide, wide_wait) = burst(400, true).await;
        println!(
            "200 frames in 200 ms to 400 subscribers: {fixed} writes (fixed 2 ms, longest wait \
             {fixed_wait:?}), {wide} writes (widened, longest wait {wide_wait:?})"
        );
        assert!(
            wide * 2 < fixed,
            "widened: {wide} writes, fixed 2 ms: {fixed} writes"
        );
        assert!(fixed_wait <= Duration::from_millis(2), "{fixed_wait:?}");
        assert!(
            wide_wait <= coalesce_window(Duration::from_millis(2), 400),
            "a frame waits at most one window: {wide_wait:?}"
        );
        // A few subscribers: the same writes as the fixed window.
        let (few_fixed, _) = burst(5, false).await;
        let (few_wide, _) = burst(5, true).await;
        assert_eq!(few_fixed, few_wide);
    }
}
