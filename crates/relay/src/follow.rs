//! Following a session's log from a cursor: stored events first (strictly after the cursor), then live
//! frames, never a durable frame twice. A subscriber that falls behind the broadcast buffer catches up
//! from the store instead of losing events. Shared by the SSE stream and the WebSocket.

use std::sync::Arc;

use tokio::sync::broadcast::Receiver;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};

use crate::frames::Frame;
use crate::session::Session;

const REPLAY_PAGE: usize = 500;
const LIVE_BATCH: usize = 256;

pub struct Follower {
    session: Arc<Session>,
    rx: Receiver<Arc<Frame>>,
    /// Highest durable sequence number handed out.
    cursor: u64,
    /// Replay from the store up to here before taking live frames.
    replay_to: u64,
}

impl Follower {
    /// Starts after `cursor`. The flag says events after the cursor were pruned (catch_up_truncated).
    pub fn new(session: Arc<Session>, cursor: u64) -> (Follower, bool) {
        let sub = session.subscribe();
        let truncated = sub.last_seq > 0 && cursor + 1 < sub.first_seq;
        (
            Follower {
                session,
                rx: sub.rx,
                cursor,
                replay_to: sub.last_seq,
            },
            truncated,
        )
    }

    pub fn cursor(&self) -> u64 {
        self.cursor
    }

    fn accept(&mut self, f: &Frame) -> bool {
        match f.seq {
            Some(s) if s <= self.cursor => false,
            Some(s) => {
                self.cursor = s;
                true
            }
            None => self.cursor >= self.replay_to,
        }
    }

    /// The next frames in order. `None`: the session is gone. Cancel-safe (its only await is the
    /// broadcast receive).
    pub async fn next_batch(&mut self) -> Option<Vec<Arc<Frame>>> {
        loop {
            if self.cursor < self.replay_to {
                let events = match self.session.read_after(self.cursor, REPLAY_PAGE) {
                    Ok(e) => e,
                    Err(e) => {
                        tracing::error!(session = %self.session.id, error = %e, "replay from the store failed");
                        Vec::new()
                    }
                };
                let frames: Vec<Arc<Frame>> = events
                    .iter()
                    .filter(|e| e.seq <= self.replay_to)
                    .map(Frame::durable)
                    .collect();
                match frames.last().and_then(|f| f.seq) {
                    Some(last) => {
                        self.cursor = last;
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
                    self.replay_to = self.session.last_seq();
                    continue;
                }
                Err(RecvError::Closed) => return None,
            };
            let mut out = Vec::new();
            if self.accept(&first) {
                out.push(first);
            }
            while out.len() < LIVE_BATCH {
                match self.rx.try_recv() {
                    Ok(f) => {
                        if self.accept(&f) {
                            out.push(f);
                        }
                    }
                    Err(TryRecvError::Lagged(_)) => {
                        self.replay_to = self.session.last_seq();
                        break;
                    }
                    Err(TryRecvError::Empty | TryRecvError::Closed) => break,
                }
            }
            if !out.is_empty() {
                return Some(out);
            }
        }
    }
}
