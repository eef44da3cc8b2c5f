//! Following a session's log from a cursor: stored events first (strictly after the cursor), then live
//! frames, never a durable frame twice. A subscriber that falls behind the broadcast buffer catches up
//! from the replay path (recent frames in memory, older ones from the store) instead of losing events.
//! Shared by the SSE stream and the WebSocket.

use std::sync::Arc;

use tokio::sync::broadcast::Receiver;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};

use crate::frames::Frame;
use crate::session::Session;

/// A replay reads at most this many events, or about this many payload bytes, at a time (one event
/// always, however large): a full replay of a log of multi-megabyte events holds one page, not the log.
pub const REPLAY_PAGE: usize = 256;
pub const REPLAY_PAGE_BYTES: usize = 1 << 20;
/// At most this many live frames, or about this many bytes, per batch (one body chunk on SSE).
const LIVE_BATCH: usize = 1024;
const LIVE_BATCH_BYTES: usize = 512 * 1024;

pub struct Follower {
    session: Arc<Session>,
    rx: Receiver<Arc<Frame>>,
    /// Highest durable sequence number handed out.
    cursor: u64,
    /// Replay from the store up to here before taking live frames.
    replay_to: u64,
    /// The sequence number of the session's final durable event, once known.
    end_seq: Option<u64>,
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
            },
            truncated,
        )
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
                let frames: Vec<Arc<Frame>> = frames
                    .into_iter()
                    .filter(|f| f.seq.is_some_and(|s| s <= self.replay_to))
                    .collect();
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
