//! The sans-IO heart of every transport: a state machine fed with what the
//! network did (bytes, frames, failures, POST answers, REST pages) and the
//! current time, which answers with [`Action`]s for the I/O edge to carry out
//! and [`TransportEvent`]s for the consumer. No socket, no clock, no global
//! randomness: the driver (native or wasm) owns those.
//!
//! What it guarantees, and the official SDK does not (CCR-WIRE §2–§7):
//! * **lossless, ordered resume** — a durable event is applied only when it
//!   is the next sequence number; a jump (or `catch_up_truncated`) fetches the
//!   missing range from the REST list before anything later is applied, and
//!   what the relay no longer has is reported as a [`TransportEvent::Gap`];
//! * **no duplicates** — sequence numbers at or below the cursor are dropped,
//!   and the bounded uuid sets drop echoes and redeliveries;
//! * **reconnect forever-ish** — backoff 1 s → 30 s, give up only after 10
//!   minutes without a healthy connection; liveness 45 s;
//! * **no silent send loss** — see [`crate::outbox`].

mod config;
mod connection;
mod events;
mod network;
mod ordering;
mod outgoing;

use std::collections::VecDeque;

use bridge_dedup::DedupPair;
use serde_json::Value;

use crate::backoff::Backoff;
use crate::envelope::{self, Frame};
use crate::outbox::{Outbox, PostOutcome, SendError};
use crate::sse::{SseItem, SseParser};

pub use config::{Config, Entropy, ReadMode, Resume, TransportKind, WriteMode};
pub use events::{Action, CloseReason, ConnectionState, Counters, Inbound, TransportEvent};
pub use network::{EventsPage, Failure};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Connecting { deadline: u64 },
    Open,
    Waiting { retry_at: u64 },
    Suspended,
    Closed,
}

#[derive(Debug)]
struct GapFill {
    /// Fetch at least up to here (a live event after it is held).
    until: Option<u64>,
    fetching: bool,
}

/// The transport state machine.
#[derive(Debug)]
pub struct Core {
    config: Config,
    entropy: Entropy,
    phase: Phase,
    state: ConnectionState,
    backoff: Backoff,
    outbox: Outbox,
    dedup: DedupPair<String>,
    counters: Counters,
    cursor: u64,
    conn: u64,
    last_byte_at: u64,
    parser: SseParser,
    gap: Option<GapFill>,
    held: VecDeque<Frame>,
    closing_deadline: Option<u64>,
    actions: VecDeque<Action>,
    events: VecDeque<TransportEvent>,
}

impl Core {
    /// A new transport at `now`; it asks to connect at once.
    pub fn new(config: Config, resume: Resume, entropy: Entropy, now: u64) -> Self {
        let mut dedup = DedupPair::with_capacity(config.dedup_capacity.max(1));
        dedup.prefill_received(resume.received_uuids);
        dedup.prefill_sent(resume.sent_uuids);
        let mut core = Self {
            backoff: Backoff::new(config.backoff.clone()),
            outbox: Outbox::new(config.outbox.clone()),
            config,
            entropy,
            phase: Phase::Closed,
            state: ConnectionState::Connecting { attempt: 0 },
            dedup,
            counters: Counters::default(),
            cursor: resume.from_sequence_num,
            conn: 0,
            last_byte_at: now,
            parser: SseParser::new(),
            gap: None,
            held: VecDeque::new(),
            closing_deadline: None,
            actions: VecDeque::new(),
            events: VecDeque::new(),
        };
        core.start_connect(now);
        core
    }

    // ------------------------------------------------------------ getters

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The connection state.
    pub fn state(&self) -> &ConnectionState {
        &self.state
    }

    /// The counters.
    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// The highest durable sequence number applied (every event at or below
    /// it has been handled, in order).
    pub fn cursor(&self) -> u64 {
        self.cursor
    }

    /// The current connection generation.
    pub fn conn(&self) -> u64 {
        self.conn
    }

    /// Messages not yet confirmed.
    pub fn pending_sends(&self) -> usize {
        self.outbox.len()
    }

    /// The uuids not yet confirmed, oldest first.
    pub fn pending_uuids(&self) -> Vec<String> {
        self.outbox.pending_uuids()
    }

    /// `true` once closed for good.
    pub fn is_closed(&self) -> bool {
        self.phase == Phase::Closed
    }

    /// The next action for the I/O edge.
    pub fn poll_action(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    /// `true` if actions are waiting to be polled.
    pub fn has_actions(&self) -> bool {
        !self.actions.is_empty()
    }

    /// The next event for the consumer.
    pub fn poll_event(&mut self) -> Option<TransportEvent> {
        self.events.pop_front()
    }

    /// When [`Core::on_timer`] must be called next, if ever.
    pub fn next_deadline(&self) -> Option<u64> {
        let mut d: Option<u64> = None;
        let mut consider = |t: u64| d = Some(d.map_or(t, |x| x.min(t)));
        match self.phase {
            Phase::Connecting { deadline } => consider(deadline),
            Phase::Open => {
                consider(self.last_byte_at + self.config.liveness_timeout_ms);
                if let Some(t) = self.outbox.next_deadline() {
                    consider(t);
                }
            }
            Phase::Waiting { retry_at } => consider(retry_at),
            Phase::Suspended | Phase::Closed => {}
        }
        if self.phase != Phase::Closed
            && let Some(t) = self.closing_deadline
        {
            consider(t);
        }
        d
    }

    // ------------------------------------------------------------ caller inputs

    /// Queues a payload (a client→CLI message as JSON). Returns its uuid —
    /// assigned here once, or the payload's own non-empty `uuid`.
    pub fn send(&mut self, now: u64, payload: Value) -> Result<String, SendError> {
        if self.phase == Phase::Closed {
            return Err(SendError::Closed(match &self.state {
                ConnectionState::Closed { reason } => reason.to_string(),
                _ => "closed".into(),
            }));
        }
        let uuid = self.outbox.push(now, payload, &mut self.entropy.uuid)?;
        let _ = self.dedup.record_sent(uuid.clone());
        self.pump(now);
        Ok(uuid)
    }

    /// Stops reading (page hidden). Nothing is lost: `resume` reconnects from
    /// the cursor. Sends made meanwhile wait.
    pub fn suspend(&mut self, _now: u64) {
        if matches!(self.phase, Phase::Closed | Phase::Suspended) {
            return;
        }
        self.drop_connection();
        self.phase = Phase::Suspended;
        self.set_state(ConnectionState::Suspended);
    }

    /// Resumes after `suspend`, at once (no backoff).
    pub fn resume(&mut self, now: u64) {
        if self.phase == Phase::Suspended {
            self.start_connect(now);
        }
    }

    /// Reconnects now if waiting for a retry (e.g. the browser came back
    /// online), skipping the remaining delay.
    pub fn retry_now(&mut self, now: u64) {
        if matches!(self.phase, Phase::Waiting { .. }) {
            self.start_connect(now);
        }
    }

    /// Closes: pending sends get `drain_ms` to go out, then whatever is left
    /// is reported failed and the state becomes `Closed { Client }`.
    pub fn close(&mut self, now: u64) {
        if self.phase == Phase::Closed || self.closing_deadline.is_some() {
            return;
        }
        self.closing_deadline = Some(now + self.config.outbox.drain_ms);
        self.pump(now);
    }

    // ------------------------------------------------------------ network inputs

    /// Connection `conn` is established (SSE response headers with 2xx, or
    /// the WebSocket is open). Returns `false` if that connection is no longer
    /// wanted (stale, suspended, closed): the caller drops it.
    pub fn on_connected(&mut self, now: u64, conn: u64) -> bool {
        if conn != self.conn || !matches!(self.phase, Phase::Connecting { .. }) {
            return false;
        }
        self.phase = Phase::Open;
        self.last_byte_at = now;
        self.parser.reset();
        self.backoff.on_connected(now);
        self.counters.connects += 1;
        self.set_state(ConnectionState::Open);
        self.pump(now);
        true
    }

    /// Bytes of the SSE body of connection `conn`.
    pub fn on_bytes(&mut self, now: u64, conn: u64, bytes: &[u8]) {
        if conn != self.conn || self.phase != Phase::Open {
            return;
        }
        self.last_byte_at = now;
        for item in self.parser.feed(bytes) {
            match item {
                SseItem::Event(ev) => {
                    let decoded = envelope::decode_sse(&ev);
                    self.on_decoded(decoded);
                }
                SseItem::Comment(_) | SseItem::Retry(_) => {}
                SseItem::TooLong { len, max } => {
                    self.counters.dropped += 1;
                    self.events.push_back(TransportEvent::Malformed {
                        seq: None,
                        error: format!("SSE line of {len} bytes exceeds the {max}-byte cap"),
                    });
                }
            }
        }
        self.pump(now);
    }

    /// A text frame of WebSocket connection `conn`.
    pub fn on_text(&mut self, now: u64, conn: u64, text: &str) {
        if conn != self.conn || self.phase != Phase::Open {
            return;
        }
        self.last_byte_at = now;
        let decoded = envelope::decode_ws(text);
        self.on_decoded(decoded);
        self.pump(now);
    }

    /// Any other sign of life on connection `conn` (ping, pong, binary frame).
    pub fn on_activity(&mut self, now: u64, conn: u64) {
        if conn == self.conn && self.phase == Phase::Open {
            self.last_byte_at = now;
        }
    }

    /// Connection `conn` failed, ended, or could not be made.
    pub fn on_failure(&mut self, now: u64, conn: u64, failure: Failure) {
        if conn != self.conn || !matches!(self.phase, Phase::Connecting { .. } | Phase::Open) {
            return;
        }
        self.fail_connection(now, failure);
        self.pump(now);
    }

    /// The answer to POST `id`. A 401 closes the transport (the token is no
    /// longer valid); other refusals fail only the events concerned.
    pub fn on_post_result(&mut self, now: u64, id: u64, outcome: PostOutcome) {
        let unauthorized = matches!(outcome, PostOutcome::Rejected { status: 401, .. });
        let rand = (self.entropy.random)();
        let outcomes = self.outbox.on_post_result(now, id, outcome, rand);
        self.report(outcomes);
        if unauthorized {
            self.close_with(CloseReason::Permanent(
                "HTTP 401 on POST: the token is no longer valid".into(),
            ));
        }
        self.pump(now);
    }

    /// Time passed: liveness, connect timeout, retry timer, outbox timers,
    /// close drain.
    pub fn on_timer(&mut self, now: u64) {
        match self.phase {
            Phase::Connecting { deadline } if now >= deadline => {
                self.fail_connection(now, Failure::ConnectTimeout);
            }
            Phase::Open if now >= self.last_byte_at + self.config.liveness_timeout_ms => {
                self.fail_connection(now, Failure::Liveness);
            }
            Phase::Open => {
                if let Some(o) = self.outbox.check_frame_timeout(now) {
                    self.report(vec![o]);
                }
            }
            Phase::Waiting { retry_at } if now >= retry_at => self.start_connect(now),
            _ => {}
        }
        if self.phase != Phase::Closed && self.closing_deadline.is_some_and(|t| now >= t) {
            self.close_with(CloseReason::Client);
        }
        self.pump(now);
    }
}
