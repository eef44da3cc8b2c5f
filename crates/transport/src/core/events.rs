//! What a transport reports: its connection state and counters, the messages and other events for
//! the consumer, and the actions the I/O edge carries out.

use bridge_protocol::{CliMessage, ParseError};
use serde_json::Value;

use crate::envelope::{DeliveryUpdate, Payload, Source};
use crate::outbox::SendError;

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
    /// The payload as sent, as its JSON text: an object with a string `type`
    /// (its body checked by [`Config::payload_check`] if one is set).
    pub message: Payload,
}

impl Inbound {
    /// The payload decoded into a typed [`CliMessage`] (unknown types are
    /// kept as [`CliMessage::Unknown`]; a known type with a bad body is an
    /// error unless [`PayloadCheck::TYPED`] already refused it).
    pub fn decode(&self) -> Result<CliMessage, ParseError> {
        CliMessage::from_value(self.message.value())
    }

    /// The payload's `type` (`""` if it has escapes; see [`Payload::kind`]).
    pub fn kind(&self) -> &str {
        self.message.kind().as_str()
    }

    /// The payload, taken out of the event (no copy).
    pub fn into_payload(self) -> Payload {
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
