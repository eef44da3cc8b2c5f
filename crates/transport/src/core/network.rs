//! What the I/O edge reports back: why a connection failed (and whether that is worth a retry), and
//! a page of the REST event list.

use serde_json::Value;

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

    pub(super) fn retry_after_ms(&self) -> Option<u64> {
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
