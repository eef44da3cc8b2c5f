//! Following a session's log from a cursor: stored events first (strictly after the cursor), then live
//! frames, never a durable frame twice. A subscriber that falls behind the broadcast buffer catches up
//! from the replay path (recent frames in memory, older ones from the store) instead of losing events.
//! Shared by the SSE stream and the WebSocket.

use std::sync::Arc;

use tokio::sync::broadcast::Receiver;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};

use crate::core::error::{Error, Fault};
use crate::core::frames::Frame;
use crate::core::session::Session;

/// A replay reads at most this many events, or about this many payload bytes, at a time (one event
/// always, however large): a full replay of a log of multi-megabyte events holds one page, not the log.
pub const REPLAY_PAGE: usize = 256;
pub const REPLAY_PAGE_BYTES: usize = 1 << 20;
/// At most this many live frames, or about this many bytes, per batch (one body chunk on SSE).
const LIVE_BATCH: usize = 1024;
const LIVE_BATCH_BYTES: usize = 512 * 1024;

/// 400 `cursor_beyond_end`: `cursor` is past `last`, the end of session `id`'s log.
pub fn beyond_end_error(id: &str, cursor: u64, last: u64) -> Error {
    Error::new(
        Fault::Invalid,
        "cursor_beyond_end",
        format!(
            "sequence number {cursor} is past the end of session {id}'s log (its last is {last}): \
             this relay never sent it. Resume from {last}, or read the log again from 0"
        ),
    )
}

pub struct Follower {
    session: Arc<Session>,
    rx: Receiver<Arc<Frame>>,
    /// Highest durable sequence number handed out.
    cursor: u64,
    /// Replay from the store up to here before taking live frames.
    replay_to: u64,
    /// The sequence number of the session's final durable event, once known.
    end_seq: Option<u64>,
    /// Gaps up to here were announced (catch_up_truncated): at connect, or in the stream.
    announced_gap_to: u64,
    /// The cursor was past the log's end when the follower started (see [`Self::beyond_end`]).
    beyond_end: bool,
}

impl Follower {
    /// Starts after `cursor`. The flag says events after the cursor were pruned (catch_up_truncated).
    pub fn new(session: Arc<Session>, cursor: u64) -> (Follower, bool) {
        let sub = session.subscribe();
        let truncated = sub.last_seq > 0 && cursor.saturating_add(1) < sub.first_seq;
        (
            Follower {
                session,
                rx: sub.rx,
                cursor,
                replay_to: sub.last_seq,
                end_seq: sub.ended.then_some(sub.last_seq),
                announced_gap_to: if truncated { sub.first_seq } else { 0 },
                beyond_end: cursor > sub.last_seq,
            },
            truncated,
        )
    }

    /// The cursor names events this log never had (it is past the last sequence number): the
    /// client saw another log, or a log that lost its end. Streams refuse it; skipping silently
    /// would hide every event until the log caught up with the cursor.
    pub fn beyond_end(&self) -> bool {
        self.beyond_end
    }

    /// The refusal of a cursor past the end (400 `cursor_beyond_end`).
    pub fn beyond_end_error(&self) -> Error {
        beyond_end_error(&self.session.id, self.cursor, self.replay_to)
    }

    pub fn cursor(&self) -> u64 {
        self.cursor
    }

    /// The session has ended and everything up to its final event was handed out: nothing more will
    /// come (ephemeral frames aside, and an ended agent sends none).
    pub fn finished(&self) -> bool {
        self.end_seq.is_some_and(|end| self.cursor >= end)
    }

    fn accept(&mut self, f: &Frame) -> bool {
        match f.seq {
            Some(s) if s <= self.cursor => false,
            Some(s) => {
                self.cursor = s;
                if f.ends_session {
                    self.end_seq = Some(s);
                }
                true
            }
            None => self.cursor >= self.replay_to,
        }
    }

    /// After a lag: replay up to the current end of the log, and learn whether the session ended.
    fn resync(&mut self) {
        let (last, ended) = self.session.tail();
        self.replay_to = last;
        if ended {
            self.end_seq = Some(last);
        }
    }

    /// The next frames in order. `None`: the session is gone. Cancel-safe (its only await is the
    /// broadcast receive). Live frames already queued are drained into one batch.
    pub async fn next_batch(&mut self) -> Option<Vec<Arc<Frame>>> {
        loop {
            if self.cursor < self.replay_to {
                let frames = match self.session.replay_page(
                    self.cursor,
                    REPLAY_PAGE,
                    REPLAY_PAGE_BYTES,
                ) {
                    Ok(f) => f,
                    Err(e) => {
                        tracing::error!(session = %self.session.id, error = %e, "replay from the store failed");
                        Vec::new()
                    }
                };
                let mut frames: Vec<Arc<Frame>> = frames
                    .into_iter()
                    .filter(|f| f.seq.is_some_and(|s| s <= self.replay_to))
                    .collect();
                // Retention pruned events this subscriber had not reached yet (it lagged): say so
                // where it happens, before what follows the gap.
                let resumes_at = frames
                    .first()
                    .and_then(|f| f.seq)
                    .unwrap_or(self.replay_to + 1);
                if resumes_at > self.cursor + 1 && resumes_at > self.announced_gap_to {
                    self.announced_gap_to = resumes_at;
                    tracing::debug!(session = %self.session.id, after = self.cursor, resumes_at, "gap in a replay: catch_up_truncated");
                    frames.insert(0, Frame::catch_up_truncated());
                    if resumes_at > self.replay_to {
                        self.cursor = self.replay_to;
                        return Some(frames);
                    }
                }
                match frames.last().and_then(|f| f.seq) {
                    Some(last) => {
                        self.cursor = last;
                        if frames.iter().any(|f| f.ends_session) {
                            self.end_seq = frames
                                .iter()
                                .rev()
                                .find(|f| f.ends_session)
                                .and_then(|f| f.seq);
                        }
                        return Some(frames);
                    }
                    None => {
                        // Pruned or missing: nothing more to replay.
                        self.cursor = self.replay_to;
                        continue;
                    }
                }
            }
            let first = match self.rx.recv().await {
                Ok(f) => f,
                Err(RecvError::Lagged(n)) => {
                    tracing::debug!(session = %self.session.id, skipped = n, "subscriber lagged; catching up from the store");
                    self.resync();
                    continue;
                }
                Err(RecvError::Closed) => return None,
            };
            let mut out = Vec::new();
            if self.accept(&first) {
                out.push(first);
            }
            self.drain_ready(&mut out);
            if !out.is_empty() {
                return Some(out);
            }
        }
    }

    /// Appends the live frames already queued (no waiting), up to the batch bounds. After a lag it
    /// stops; the next [`Self::next_batch`] replays what was missed.
    pub fn drain_ready(&mut self, out: &mut Vec<Arc<Frame>>) {
        if self.cursor < self.replay_to {
            return;
        }
        let mut bytes: usize = out.iter().map(|f| f.sse.len()).sum();
        while out.len() < LIVE_BATCH && bytes < LIVE_BATCH_BYTES {
            match self.rx.try_recv() {
                Ok(f) => {
                    if self.accept(&f) {
                        bytes += f.sse.len();
                        out.push(f);
                    }
                }
                Err(TryRecvError::Lagged(_)) => {
                    self.resync();
                    break;
                }
                Err(TryRecvError::Empty | TryRecvError::Closed) => break,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::agent::AgentEvents as _;
    use crate::core::session::{BROADCAST_CAPACITY, SessionCtx, SessionMeta};
    use crate::core::store::MemoryStore;

    fn session(retention: u64) -> Arc<Session> {
        let ctx = Arc::new(SessionCtx {
            retention_events: Some(retention),
            ..SessionCtx::for_tests(Arc::new(MemoryStore::default()))
        });
        let meta = SessionMeta::new("cse_f".into(), "/tmp".into(), None, None, None);
        Session::with_test_agent(meta, ctx, 16).0
    }

    fn is_truncation(f: &Frame) -> bool {
        f.sse.starts_with(b"event: catch_up_truncated")
    }

    /// A subscriber that lags while retention prunes what it had not read yet is told so in the
    /// stream, right before the first event after the gap.
    #[tokio::test]
    async fn a_gap_made_during_a_lagging_replay_is_announced_mid_stream() {
        let s = session(100);
        s.on_line(r#"{"type":"assistant","n":1}"#);
        let (mut f, truncated) = Follower::new(s.clone(), 0);
        assert!(!truncated, "nothing was pruned at connect");
        let first = f.next_batch().await.unwrap();
        assert_eq!(first[0].seq, Some(1));
        assert!(!first.iter().any(|f| is_truncation(f)));
        // The subscriber stops reading; far more than the broadcast ring and the retention follow.
        let n = BROADCAST_CAPACITY as u64 + 500;
        for i in 0..n {
            s.on_line(&format!(r#"{{"type":"assistant","n":{}}}"#, i + 2));
        }
        let (first_kept, last) = s.bounds();
        assert!(
            first_kept > 2,
            "retention pruned the events after the cursor"
        );
        let batch = f.next_batch().await.unwrap();
        assert!(is_truncation(&batch[0]), "the gap is announced first");
        assert_eq!(batch[1].seq, Some(first_kept), "then what follows the gap");
        let mut seen = batch.last().unwrap().seq.unwrap();
        let mut signals = 1;
        while seen < last {
            let batch = f.next_batch().await.unwrap();
            signals += batch.iter().filter(|f| is_truncation(f)).count();
            seen = batch.last().unwrap().seq.unwrap_or(seen);
        }
        assert_eq!(signals, 1, "announced once");
    }

    /// At connect, the gap is announced by the caller (the flag); the replay does not repeat it.
    #[tokio::test]
    async fn a_gap_announced_at_connect_is_not_repeated() {
        let s = session(10);
        for i in 0..50 {
            s.on_line(&format!(r#"{{"type":"assistant","n":{i}}}"#));
        }
        let (mut f, truncated) = Follower::new(s.clone(), 0);
        assert!(truncated);
        let batch = f.next_batch().await.unwrap();
        assert!(!batch.iter().any(|f| is_truncation(f)));
        assert_eq!(batch[0].seq, Some(s.bounds().0));
    }
}
