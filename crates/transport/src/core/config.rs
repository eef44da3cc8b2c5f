//! What a transport is told when it starts: which transport, every policy knob, where to resume
//! from, and the injected randomness.

use crate::backoff::BackoffConfig;
use crate::envelope::PayloadCheck;
use crate::outbox::OutboxConfig;

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
