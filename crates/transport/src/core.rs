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

use std::collections::VecDeque;

use bridge_dedup::{DedupPair, Seen};
use bridge_protocol::{CliMessage, ParseError};
use serde_json::Value;

use crate::backoff::{Backoff, BackoffConfig, Retry};
use crate::envelope::{self, DecodeError, DeliveryUpdate, Durable, Frame, PayloadCheck, Source};
use crate::outbox::{Outbox, OutboxConfig, Outcome, Outgoing, PostOutcome, SendError, post_body};
use crate::sse::{SseItem, SseParser};

/// How the read side is carried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadMode {
    /// `GET …/events/stream` (SSE bytes).
    Sse,
    /// `GET …/ws?envelope=1&from_sequence_num=N` (envelope text frames).
    WebSocket,
}

/// How the write side is carried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteMode {
    /// `POST …/events` with hybrid batching.
    Post,
    /// One payload per WebSocket text frame on the read connection.
    WebSocket,
}

/// The three transports of issue 4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TransportKind {
    /// SSE down, POST up (default; the CCR v2 shapes).
    #[default]
    SsePost,
    /// WebSocket both ways.
    WebSocket,
    /// WebSocket down, POST up (the seed's v1 hybrid).
    Hybrid,
}

impl TransportKind {
    /// The read side.
    pub fn read_mode(self) -> ReadMode {
        match self {
            TransportKind::SsePost => ReadMode::Sse,
            TransportKind::WebSocket | TransportKind::Hybrid => ReadMode::WebSocket,
        }
    }

    /// The write side.
    pub fn write_mode(self) -> WriteMode {
        match self {
            TransportKind::WebSocket => WriteMode::WebSocket,
            TransportKind::SsePost | TransportKind::Hybrid => WriteMode::Post,
        }
    }
}

/// Every policy knob. Defaults are the numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Which transport.
    pub kind: TransportKind,
    /// The session id (it goes in the POST body).
    pub session_id: String,
    /// Reconnect backoff.
    pub backoff: BackoffConfig,
    /// Outgoing messages.
    pub outbox: OutboxConfig,
    /// No byte for this long → reconnect (45 s).
    pub liveness_timeout_ms: u64,
    /// No response headers / socket open for this long → retry (15 s).
    pub connect_timeout_ms: u64,
    /// Capacity of each dedup set (2,000).
    pub dedup_capacity: usize,
    /// Page size when fetching a gap from the REST list (1,000).
    pub gap_page_limit: usize,
    /// A check every payload must pass before it is delivered (a refused one
    /// is reported as [`TransportEvent::Malformed`]). `None` (the default):
    /// payloads are delivered as raw JSON with only their string `type`
    /// checked, so the typed decoder is not linked into consumers that never
    /// call it. [`PayloadCheck::TYPED`] refuses known types with bad bodies.
    pub payload_check: Option<PayloadCheck>,
}

impl Config {
    /// Defaults for a session.
    pub fn new(kind: TransportKind, session_id: impl Into<String>) -> Self {
        Self {
            kind,
            session_id: session_id.into(),
            backoff: BackoffConfig::default(),
            outbox: OutboxConfig::default(),
            liveness_timeout_ms: 45_000,
            connect_timeout_ms: 15_000,
            dedup_capacity: bridge_dedup::DEFAULT_CAPACITY,
            gap_page_limit: 1_000,
            payload_check: None,
        }
    }
}

/// Where a client resumes from (e.g. after a page reload, from the
/// transcript it already shows).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Resume {
    /// The highest durable sequence number already applied (0: from the start).
    pub from_sequence_num: u64,
    /// Payload uuids already shown, oldest first (prefills the received set).
    pub received_uuids: Vec<String>,
    /// Payload uuids this client posted (prefills the sent set).
    pub sent_uuids: Vec<String>,
}

/// Why a transport closed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CloseReason {
    /// `close()` was called (or every handle was dropped).
    Client,
    /// A failure retrying cannot fix: HTTP 400/401/403/404 on the stream, a
    /// WebSocket close code 1002/1008/4001/4003/4400/4404, or 401 on a POST.
    Permanent(String),
    /// No healthy connection for the give-up period.
    GaveUp(String),
}

impl std::fmt::Display for CloseReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CloseReason::Client => f.write_str("closed by the client"),
            CloseReason::Permanent(e) => write!(f, "permanent failure: {e}"),
            CloseReason::GaveUp(e) => write!(f, "gave up reconnecting: {e}"),
        }
    }
}

/// The observable connection state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConnectionState {
    /// Opening a connection; `attempt` is 0 for the first one.
    Connecting {
        /// Failed attempts since the last healthy connection.
        attempt: u32,
    },
    /// Connected and live.
    Open,
    /// Waiting `next_retry_ms` before attempt number `attempt`.
    Reconnecting {
        /// 1-based attempt number.
        attempt: u32,
        /// The delay before it, in ms.
        next_retry_ms: u64,
        /// What failed.
        last_error: String,
    },
    /// Suspended by the caller (page hidden); resumes from the cursor.
    Suspended,
    /// Closed for good.
    Closed {
        /// Why.
        reason: CloseReason,
    },
}

/// Counters for the status bar and for tests.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counters {
    /// Messages delivered to the consumer (durable and ephemeral).
    pub delivered: u64,
    /// Durable events delivered.
    pub durable: u64,
    /// Redeliveries dropped (sequence number at or below the cursor, or a
    /// uuid already received).
    pub duplicates: u64,
    /// Echoes of this client's own posts dropped.
    pub echoes: u64,
    /// Frames that did not decode.
    pub malformed: u64,
    /// Frames dropped for another reason (unknown event names, over-long
    /// lines).
    pub dropped: u64,
    /// Reconnects scheduled.
    pub reconnects: u64,
    /// Connections established.
    pub connects: u64,
    /// `catch_up_truncated` frames and live sequence jumps that started a
    /// REST gap fetch.
    pub gap_fetches: u64,
    /// Durable events the relay no longer had (reported as gaps).
    pub lost: u64,
    /// Sends confirmed.
    pub sends_delivered: u64,
    /// Sends reported failed.
    pub send_failures: u64,
}

/// A message for the consumer.
#[derive(Debug, Clone, PartialEq)]
pub struct Inbound {
    /// The durable sequence number; `None` for ephemeral frames.
    pub seq: Option<u64>,
    /// The relay's event id (durable only).
    pub event_id: Option<String>,
    /// Who produced it (durable only).
    pub source: Option<Source>,
    /// When the relay stored it (durable only).
    pub created_at: Option<String>,
    /// The payload as sent: a JSON object with a string `type` (checked by
    /// [`Config::payload_check`] if one is set).
    pub message: Value,
}

impl Inbound {
    /// The payload decoded into a typed [`CliMessage`] (unknown types are
    /// kept as [`CliMessage::Unknown`]; a known type with a bad body is an
    /// error unless [`PayloadCheck::TYPED`] already refused it).
    pub fn decode(&self) -> Result<CliMessage, ParseError> {
        CliMessage::from_value(self.message.clone())
    }

    /// The payload's `type` (`""` if absent).
    pub fn kind(&self) -> &str {
        self.message
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    /// The payload, taken out of the event (no copy).
    pub fn into_payload(self) -> Value {
        self.message
    }
}

/// What the consumer sees.
#[derive(Debug, Clone, PartialEq)]
pub enum TransportEvent {
    /// A new message (decoded, in order, without duplicates or own echoes).
    Message(Box<Inbound>),
    /// A sent message is confirmed by the relay.
    Delivered {
        /// The message uuid (as returned by `send`).
        uuid: String,
        /// The relay's event id.
        event_id: Option<String>,
        /// The relay's sequence number (`None` for unstored kinds).
        seq: Option<u64>,
    },
    /// A sent message failed for good.
    SendFailed {
        /// The message uuid.
        uuid: String,
        /// Why.
        error: SendError,
    },
    /// The relay's delivery progress for a posted event.
    DeliveryUpdate(DeliveryUpdate),
    /// Durable events `after+1 .. next-1` are gone from the relay (retention)
    /// and could not be fetched: the transcript has a hole there.
    Gap {
        /// The last sequence number applied before the hole.
        after: u64,
        /// The first sequence number available after it.
        next: u64,
    },
    /// A frame that did not decode (counted in `malformed`).
    Malformed {
        /// Its sequence number, if durable and readable.
        seq: Option<u64>,
        /// What was wrong.
        error: String,
    },
    /// The connection state changed.
    State(ConnectionState),
}

/// Why a connection ended or could not be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// A non-2xx HTTP status (on the SSE GET, the WS upgrade or a REST fetch).
    Http {
        /// The status.
        status: u16,
        /// `Retry-After`, in ms.
        retry_after_ms: Option<u64>,
        /// The error `type` from the relay's JSON body, if any.
        reason: String,
    },
    /// A network error (refused, reset, DNS, TLS, …).
    Network(String),
    /// The server closed the stream cleanly.
    Ended,
    /// The WebSocket closed with this code.
    WsClosed {
        /// The close code (1005 when none was given).
        code: u16,
        /// The close reason.
        reason: String,
    },
    /// No response headers / socket open in time.
    ConnectTimeout,
    /// No byte for the liveness period.
    Liveness,
}

impl Failure {
    /// Permanent failures are not retried (issue 4; CCR-WIRE §2.3, §6). We add
    /// 1008 (policy violation), which the relay uses for a WebSocket that
    /// never authenticated.
    pub fn is_permanent(&self) -> bool {
        match self {
            // 400 on the stream: the relay refuses the resume cursor (`cursor_beyond_end`, past
            // the end of its log); the same cursor can never succeed.
            Failure::Http { status, .. } => matches!(status, 400 | 401 | 403 | 404),
            // 4404: the relay's "session ended and fully delivered" (its SSE stream says 404);
            // 4400: its `cursor_beyond_end`.
            Failure::WsClosed { code, .. } => {
                matches!(code, 1002 | 1008 | 4001 | 4003 | 4400 | 4404)
            }
            _ => false,
        }
    }

    fn retry_after_ms(&self) -> Option<u64> {
        match self {
            Failure::Http { retry_after_ms, .. } => *retry_after_ms,
            _ => None,
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Http { status, reason, .. } if reason.is_empty() => write!(f, "HTTP {status}"),
            Failure::Http { status, reason, .. } => write!(f, "HTTP {status} ({reason})"),
            Failure::Network(e) => write!(f, "network error: {e}"),
            Failure::Ended => f.write_str("the server ended the stream"),
            Failure::WsClosed { code, reason } => {
                write!(f, "websocket closed with code {code}: {reason}")
            }
            Failure::ConnectTimeout => f.write_str("connect timeout"),
            Failure::Liveness => f.write_str("no data for the liveness period"),
        }
    }
}

/// One page of `GET …/events?after=N&limit=M`.
#[derive(Debug, Clone, PartialEq)]
pub struct EventsPage {
    /// The envelopes, in order.
    pub events: Vec<Value>,
    /// Events after `after` were pruned before the first one returned.
    pub truncated: bool,
    /// The relay's newest sequence number.
    pub last_sequence_num: u64,
}

/// What the I/O edge must do.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Open connection `conn` (SSE GET or WebSocket) resuming after
    /// `from_sequence_num`; drop any previous connection.
    Connect {
        /// The connection generation; report its events with it.
        conn: u64,
        /// The cursor to resume from.
        from_sequence_num: u64,
    },
    /// Drop connection `conn` (if it is still there).
    Disconnect {
        /// The generation.
        conn: u64,
    },
    /// POST this body to the events URL; report with `id`.
    Post {
        /// Request id.
        id: u64,
        /// `{"session_id","events":[{"payload"}…]}`.
        body: Value,
    },
    /// Send a text frame on WebSocket connection `conn`.
    SendFrame {
        /// The generation.
        conn: u64,
        /// The JSON text.
        text: String,
    },
    /// `GET …/events?after=…&limit=…`; report with `on_events_page`.
    FetchEvents {
        /// Cursor.
        after: u64,
        /// Page size.
        limit: usize,
    },
    /// The transport is closed: the driver can stop after delivering events.
    Shutdown,
}

/// Randomness and ids, injected.
pub struct Entropy {
    /// Uniform in `[0, 1)`.
    pub random: Box<dyn FnMut() -> f64 + Send>,
    /// A fresh message uuid.
    pub uuid: Box<dyn FnMut() -> String + Send>,
}

impl Entropy {
    /// Randomness from the OS (through `uuid`'s v4 generator, which uses
    /// `crypto.getRandomValues` on wasm32).
    pub fn system() -> Self {
        Self {
            random: Box::new(|| {
                let bits = (uuid::Uuid::new_v4().as_u128() >> 75) as u64; // 53 random bits
                bits as f64 / (1u64 << 53) as f64
            }),
            uuid: Box::new(|| uuid::Uuid::new_v4().to_string()),
        }
    }
}

impl std::fmt::Debug for Entropy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Entropy")
    }
}

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

    /// A page of the REST event list (asked for by [`Action::FetchEvents`]).
    pub fn on_events_page(&mut self, now: u64, page: Result<EventsPage, Failure>) {
        let Some(gap) = &mut self.gap else { return };
        gap.fetching = false;
        let page = match page {
            Ok(p) => p,
            Err(failure) => {
                // Start over from the cursor: the stream replays what it can
                // and the gap is detected again.
                self.gap = None;
                self.held.clear();
                if matches!(self.phase, Phase::Open | Phase::Connecting { .. }) {
                    self.fail_connection(now, failure);
                } else if failure.is_permanent() {
                    self.close_with(CloseReason::Permanent(format!("event list: {failure}")));
                }
                self.pump(now);
                return;
            }
        };
        let got_any = !page.events.is_empty();
        for raw in page.events {
            let decoded = envelope::decode_envelope(raw);
            let decoded = match self.config.payload_check {
                Some(check) => {
                    decoded.and_then(|d| match check.apply(Frame::Durable(Box::new(d)))? {
                        Frame::Durable(d) => Ok(*d),
                        _ => unreachable!("a checked durable frame stays durable"),
                    })
                }
                None => decoded,
            };
            match decoded {
                Ok(d) if d.seq <= self.cursor => {}
                Ok(d) => {
                    // The relay no longer has cursor+1 .. seq-1 (retention).
                    self.report_gap(d.seq);
                    self.apply_durable(d);
                }
                Err(e) => self.on_malformed(e),
            }
        }
        if !got_any && page.truncated && page.last_sequence_num > self.cursor {
            // Everything after the cursor is gone and nothing newer exists yet.
            self.report_gap(page.last_sequence_num + 1);
        }
        let until = self.gap.as_ref().and_then(|g| g.until);
        let done = !got_any
            || self.cursor >= page.last_sequence_num
            || until.is_some_and(|u| self.cursor >= u);
        if done {
            self.gap = None;
            self.release_held();
        } else if let Some(g) = &mut self.gap {
            g.fetching = true;
            self.actions.push_back(Action::FetchEvents {
                after: self.cursor,
                limit: self.config.gap_page_limit,
            });
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

    // ------------------------------------------------------------ internals

    fn set_state(&mut self, state: ConnectionState) {
        if self.state != state {
            self.state = state.clone();
            self.events.push_back(TransportEvent::State(state));
        }
    }

    fn start_connect(&mut self, now: u64) {
        self.conn += 1;
        self.phase = Phase::Connecting {
            deadline: now + self.config.connect_timeout_ms,
        };
        self.parser.reset();
        self.actions.push_back(Action::Connect {
            conn: self.conn,
            from_sequence_num: self.cursor,
        });
        self.set_state(ConnectionState::Connecting {
            attempt: self.backoff.attempt(),
        });
    }

    /// Tears the current connection down on our side.
    fn drop_connection(&mut self) {
        if matches!(self.phase, Phase::Connecting { .. } | Phase::Open) {
            self.actions
                .push_back(Action::Disconnect { conn: self.conn });
        }
        self.parser.reset();
        self.outbox.on_disconnect();
        // Held live frames come again with the replay from the cursor.
        self.held.clear();
    }

    fn fail_connection(&mut self, now: u64, failure: Failure) {
        self.drop_connection();
        if self.closing_deadline.is_some() {
            self.close_with(CloseReason::Client);
            return;
        }
        if failure.is_permanent() {
            self.close_with(CloseReason::Permanent(failure.to_string()));
            return;
        }
        let rand = (self.entropy.random)();
        match self.backoff.on_failure(now, failure.retry_after_ms(), rand) {
            Retry::After { delay_ms, attempt } => {
                self.counters.reconnects += 1;
                self.phase = Phase::Waiting {
                    retry_at: now + delay_ms,
                };
                self.set_state(ConnectionState::Reconnecting {
                    attempt,
                    next_retry_ms: delay_ms,
                    last_error: failure.to_string(),
                });
            }
            Retry::GiveUp => self.close_with(CloseReason::GaveUp(failure.to_string())),
        }
    }

    fn close_with(&mut self, reason: CloseReason) {
        if self.phase == Phase::Closed {
            return;
        }
        self.drop_connection();
        self.phase = Phase::Closed;
        self.gap = None;
        let outcomes = self.outbox.fail_all(&reason.to_string());
        self.report(outcomes);
        self.set_state(ConnectionState::Closed { reason });
        self.actions.push_back(Action::Shutdown);
    }

    fn report(&mut self, outcomes: Vec<Outcome>) {
        for o in outcomes {
            match o {
                Outcome::Delivered {
                    uuid,
                    event_id,
                    seq,
                } => {
                    self.counters.sends_delivered += 1;
                    self.events.push_back(TransportEvent::Delivered {
                        uuid,
                        event_id,
                        seq,
                    });
                }
                Outcome::Failed { uuid, error } => {
                    self.counters.send_failures += 1;
                    self.events
                        .push_back(TransportEvent::SendFailed { uuid, error });
                }
            }
        }
    }

    /// Emits what the outbox can send now, and finishes a drain.
    fn pump(&mut self, now: u64) {
        if self.phase == Phase::Open {
            let draining = self.closing_deadline.is_some();
            match self.config.kind.write_mode() {
                WriteMode::Post => {
                    if let Some(Outgoing::Post { id, payloads }) =
                        self.outbox.poll_post(now, draining)
                    {
                        let body = post_body(&self.config.session_id, payloads);
                        self.actions.push_back(Action::Post { id, body });
                    }
                }
                WriteMode::WebSocket => {
                    let mut outcomes = Vec::new();
                    let dedup = &self.dedup;
                    while let Some(Outgoing::Frame { text, .. }) =
                        self.outbox
                            .poll_frame(now, &mut outcomes, |u| dedup.was_received(u))
                    {
                        self.actions.push_back(Action::SendFrame {
                            conn: self.conn,
                            text,
                        });
                    }
                    self.report(outcomes);
                }
            }
        }
        if self.phase != Phase::Closed && self.closing_deadline.is_some() && self.outbox.is_empty()
        {
            self.close_with(CloseReason::Client);
        }
    }

    fn on_decoded(&mut self, decoded: Result<Frame, DecodeError>) {
        let decoded = match self.config.payload_check {
            Some(check) => decoded.and_then(|f| check.apply(f)),
            None => decoded,
        };
        match decoded {
            Ok(frame) => self.on_frame(frame, false),
            Err(e) => {
                // A durable frame whose payload is bad still has its place in
                // the sequence: hold or apply it like any other.
                // (The REST fetch returns it again and reports it then.)
                if let Some(seq) = e.seq()
                    && (self.gap.is_some() || seq > self.cursor + 1)
                {
                    if seq > self.cursor {
                        self.start_gap(Some(seq));
                    }
                    return;
                }
                self.on_malformed(e);
            }
        }
    }

    fn on_malformed(&mut self, e: DecodeError) {
        self.counters.malformed += 1;
        if let Some(seq) = e.seq()
            && seq == self.cursor + 1
        {
            self.cursor = seq;
        }
        self.events.push_back(TransportEvent::Malformed {
            seq: e.seq(),
            error: e.to_string(),
        });
    }

    /// A live frame. `front`: it is being re-played from the held queue.
    fn on_frame(&mut self, frame: Frame, front: bool) {
        if let Frame::WsError {
            status,
            kind,
            message,
        } = &frame
        {
            match self.outbox.on_frame_error(*status, kind, message) {
                Some(o) => self.report(vec![o]),
                None => {
                    self.counters.dropped += 1;
                }
            }
            return;
        }
        if let Frame::Ignored(name) = &frame {
            // A keepalive frame (browsers cannot see WebSocket pings) only
            // proves liveness; anything else unknown is counted.
            if name != "keepalive" {
                self.counters.dropped += 1;
            }
            return;
        }
        if self.gap.is_some() {
            if front {
                self.held.push_front(frame);
            } else {
                self.held.push_back(frame);
            }
            return;
        }
        match frame {
            Frame::Durable(d) => {
                if d.seq <= self.cursor {
                    self.counters.duplicates += 1;
                } else if d.seq > self.cursor + 1 {
                    let until = d.seq - 1;
                    self.held.push_front(Frame::Durable(d));
                    self.start_gap(Some(until));
                } else {
                    self.apply_durable(*d);
                }
            }
            Frame::Ephemeral(m) => self.deliver(Inbound {
                seq: None,
                event_id: None,
                source: None,
                created_at: None,
                message: *m,
            }),
            Frame::CatchUpTruncated => self.start_gap(None),
            Frame::DeliveryUpdate(u) => self.events.push_back(TransportEvent::DeliveryUpdate(u)),
            Frame::WsError { .. } | Frame::Ignored(_) => unreachable!("handled above"),
        }
    }

    fn start_gap(&mut self, until: Option<u64>) {
        match &mut self.gap {
            Some(g) => {
                if let (Some(a), Some(b)) = (g.until, until) {
                    g.until = Some(a.max(b));
                }
            }
            None => {
                self.counters.gap_fetches += 1;
                self.gap = Some(GapFill {
                    until,
                    fetching: true,
                });
                self.actions.push_back(Action::FetchEvents {
                    after: self.cursor,
                    limit: self.config.gap_page_limit,
                });
            }
        }
    }

    fn release_held(&mut self) {
        while self.gap.is_none() {
            let Some(frame) = self.held.pop_front() else {
                break;
            };
            self.on_frame(frame, true);
        }
    }

    fn report_gap(&mut self, next: u64) {
        if next > self.cursor + 1 {
            self.counters.lost += next - self.cursor - 1;
            self.events.push_back(TransportEvent::Gap {
                after: self.cursor,
                next,
            });
            self.cursor = next - 1;
        }
    }

    /// Applies the durable event `cursor + 1`.
    fn apply_durable(&mut self, d: Durable) {
        debug_assert_eq!(d.seq, self.cursor + 1);
        self.cursor = d.seq;
        if let Some(uuid) = d.uuid {
            let mut outcomes = Vec::new();
            self.outbox
                .on_echo(&uuid, d.event_id.as_deref(), d.seq, &mut outcomes);
            self.report(outcomes);
            match self.dedup.observe(uuid) {
                Seen::Fresh => {}
                Seen::Echo => {
                    self.counters.echoes += 1;
                    return;
                }
                Seen::Redelivery => {
                    self.counters.duplicates += 1;
                    return;
                }
            }
        }
        self.counters.durable += 1;
        self.deliver(Inbound {
            seq: Some(d.seq),
            event_id: d.event_id,
            source: Some(d.source),
            created_at: d.created_at,
            message: d.message,
        });
    }

    fn deliver(&mut self, inbound: Inbound) {
        self.counters.delivered += 1;
        self.events
            .push_back(TransportEvent::Message(Box::new(inbound)));
    }
}
