//! The outbox: every outgoing message gets its `uuid` once, goes out in order,
//! waits while disconnected, and either is confirmed or is reported as failed
//! — never silently dropped (the official SDK drops an event after 3 failed
//! POSTs, CCR-WIRE §4).
//!
//! Two ways out:
//! * **POST** (SSE+POST and Hybrid): the seed's hybrid batching. `stream_event`s
//!   wait up to 100 ms; any other message flushes everything queued, in order;
//!   at most 500 events a batch, at most 100,000 queued; one request in flight;
//!   retries back off 500 ms → 8 s. A batch the relay refuses as a whole (it
//!   validates all-or-nothing) is retried one event at a time so that only the
//!   offending event fails.
//! * **WebSocket frames**: one payload per frame, one frame in flight,
//!   confirmed by the relay's echo of its `uuid` or refused by an error frame.
//!   Unconfirmed frames are resent after a reconnect; the relay de-duplicates
//!   on `uuid`, so a resend is never applied twice.

use std::collections::VecDeque;

use bridge_protocol::MessageType;
use serde_json::{Map, Value};

/// Outbox knobs (defaults per issue 4).
#[derive(Debug, Clone, PartialEq)]
pub struct OutboxConfig {
    /// Most events in one POST (500).
    pub max_batch: usize,
    /// Most events waiting (100,000); beyond, `send` is refused at once.
    pub max_queued: usize,
    /// How long `stream_event`s may wait for company (100 ms).
    pub stream_event_wait_ms: u64,
    /// First retry delay of a failed POST (500 ms).
    pub retry_base_ms: u64,
    /// Largest retry delay (8 s).
    pub retry_max_ms: u64,
    /// Consecutive retryable failures, while connected, before the events
    /// of the failing request are reported failed (8, about 40 s).
    pub max_attempts: u32,
    /// How long `close` waits for pending sends (3 s).
    pub drain_ms: u64,
    /// How long a WebSocket frame may wait for its echo while connected
    /// before it is reported unconfirmed (30 s).
    pub ws_ack_timeout_ms: u64,
}

impl Default for OutboxConfig {
    fn default() -> Self {
        Self {
            max_batch: 500,
            max_queued: 100_000,
            stream_event_wait_ms: 100,
            retry_base_ms: 500,
            retry_max_ms: 8_000,
            max_attempts: 8,
            drain_ms: 3_000,
            ws_ack_timeout_ms: 30_000,
        }
    }
}

/// Why a send failed for good.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SendError {
    /// More than `max_queued` events are waiting.
    #[error("the outbox is full ({0} events waiting); wait for the connection to recover")]
    QueueFull(usize),
    /// The payload is not a JSON object with a string `type`.
    #[error("a payload must be a JSON object with a string `type`")]
    NotAMessage,
    /// The relay refused the event (400 malformed, 403 observer, 404 unknown
    /// session, 409 not pending, 410 session ended, 413 too large).
    #[error("the relay refused the event: HTTP {status} {kind}: {message}")]
    Rejected {
        /// HTTP status.
        status: u16,
        /// The error `type` from the relay's JSON body.
        kind: String,
        /// The relay's message.
        message: String,
    },
    /// Retryable failures went on for `max_attempts` tries.
    #[error("sending failed {attempts} times; last error: {last_error}")]
    Exhausted {
        /// How many tries.
        attempts: u32,
        /// The last failure.
        last_error: String,
    },
    /// A WebSocket frame was never echoed back.
    #[error("the relay never confirmed the event (no echo within {0} ms)")]
    Unconfirmed(u64),
    /// The transport closed (by `close`, a permanent failure, or giving up)
    /// before the event could be sent.
    #[error("the transport closed before the event was sent: {0}")]
    Closed(String),
}

/// One queued message.
#[derive(Debug, Clone)]
struct Item {
    uuid: String,
    payload: Value,
    stream_event: bool,
    fire_and_forget: bool,
    enqueued_at: u64,
}

/// The outcome of one POST.
#[derive(Debug, Clone, PartialEq)]
pub enum PostOutcome {
    /// 2xx with `{"results":[{"event_id","sequence_num"}]}` (one per event,
    /// in order; missing entries are treated as confirmed without a seq).
    Accepted(Vec<(Option<String>, Option<u64>)>),
    /// A status the request may be retried after (5xx, 408, 425, 429, other
    /// 4xx not listed below) or a network error / timeout.
    Retryable {
        /// Human-readable reason.
        error: String,
        /// The server's `Retry-After`, in ms.
        retry_after_ms: Option<u64>,
    },
    /// The relay refused the request (400, 403, 404, 409, 410, 413, 422).
    Rejected {
        /// HTTP status.
        status: u16,
        /// JSON error type.
        kind: String,
        /// JSON error message.
        message: String,
    },
}

/// A request the outbox wants made.
#[derive(Debug, Clone, PartialEq)]
pub enum Outgoing {
    /// POST these payloads as one request.
    Post {
        /// Matches the later [`Outbox::on_post_result`].
        id: u64,
        /// The payloads (each with its `uuid`), in order.
        payloads: Vec<Value>,
    },
    /// Send one payload as a WebSocket text frame.
    Frame {
        /// The payload's uuid.
        uuid: String,
        /// The JSON text.
        text: String,
    },
}

/// What happened to queued messages.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The relay has it (`seq` is `None` for kinds it does not store, e.g.
    /// `keep_alive`).
    Delivered {
        /// The message uuid.
        uuid: String,
        /// The relay's event id.
        event_id: Option<String>,
        /// The relay's sequence number.
        seq: Option<u64>,
    },
    /// It failed for good.
    Failed {
        /// The message uuid.
        uuid: String,
        /// Why.
        error: SendError,
    },
}

#[derive(Debug)]
struct InFlight {
    id: u64,
    items: Vec<Item>,
    /// Items confirmed by an echo while the request was still running.
    confirmed: Vec<bool>,
}

#[derive(Debug)]
struct AwaitingEcho {
    item: Item,
    sent_at: u64,
}

/// The outbox state machine.
#[derive(Debug)]
pub struct Outbox {
    config: OutboxConfig,
    queue: VecDeque<Item>,
    in_flight: Option<InFlight>,
    awaiting_echo: Option<AwaitingEcho>,
    next_id: u64,
    retry_at: Option<u64>,
    failures: u32,
    /// After an all-or-nothing refusal, this many head items go one by one.
    singles: usize,
}

impl Outbox {
    /// An empty outbox.
    pub fn new(config: OutboxConfig) -> Self {
        Self {
            config,
            queue: VecDeque::new(),
            in_flight: None,
            awaiting_echo: None,
            next_id: 1,
            retry_at: None,
            failures: 0,
            singles: 0,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &OutboxConfig {
        &self.config
    }

    /// Messages not yet confirmed (queued, in flight, or awaiting an echo).
    pub fn len(&self) -> usize {
        self.queue.len()
            + self.in_flight.as_ref().map_or(0, |f| f.items.len())
            + usize::from(self.awaiting_echo.is_some())
    }

    /// `true` when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Queues a payload. It must be a JSON object with a string `type`; a
    /// non-empty string `uuid` is kept, otherwise `new_uuid()` assigns one —
    /// once: retries resend the same bytes with the same uuid.
    pub fn push(
        &mut self,
        now: u64,
        payload: Value,
        new_uuid: impl FnOnce() -> String,
    ) -> Result<String, SendError> {
        let Value::Object(mut map) = payload else {
            return Err(SendError::NotAMessage);
        };
        let Some(ty) = map
            .get("type")
            .and_then(Value::as_str)
            .map(MessageType::from_tag)
        else {
            return Err(SendError::NotAMessage);
        };
        if self.len() >= self.config.max_queued {
            return Err(SendError::QueueFull(self.len()));
        }
        let stream_event = ty == MessageType::StreamEvent;
        let fire_and_forget = ty == MessageType::KeepAlive;
        let uuid = match map.get("uuid").and_then(Value::as_str) {
            Some(u) if !u.is_empty() => u.to_owned(),
            _ => {
                let u = new_uuid();
                map.insert("uuid".into(), Value::String(u.clone()));
                u
            }
        };
        self.queue.push_back(Item {
            uuid: uuid.clone(),
            payload: Value::Object(map),
            stream_event,
            fire_and_forget,
            enqueued_at: now,
        });
        Ok(uuid)
    }

    /// The next request to make at `now`, if any. `draining` sends
    /// `stream_event`s without waiting.
    pub fn poll_post(&mut self, now: u64, draining: bool) -> Option<Outgoing> {
        if self.in_flight.is_some()
            || self.queue.is_empty()
            || self.retry_at.is_some_and(|t| now < t)
        {
            return None;
        }
        self.retry_at = None;
        let only_stream_events = self.queue.iter().all(|i| i.stream_event);
        if only_stream_events && !draining {
            let oldest = self.queue.front().map_or(now, |i| i.enqueued_at);
            if now < oldest + self.config.stream_event_wait_ms {
                return None;
            }
        }
        let n = if self.singles > 0 {
            1
        } else {
            self.config.max_batch.min(self.queue.len())
        };
        let items: Vec<Item> = self.queue.drain(..n).collect();
        let id = self.next_id;
        self.next_id += 1;
        let payloads = items.iter().map(|i| i.payload.clone()).collect();
        self.in_flight = Some(InFlight {
            id,
            confirmed: vec![false; items.len()],
            items,
        });
        Some(Outgoing::Post { id, payloads })
    }

    /// The next WebSocket frame to send at `now`, if any. `already_received`
    /// tells whether the relay's echo of a uuid was already seen (a caller
    /// that re-sends an applied message is confirmed at once).
    pub fn poll_frame(
        &mut self,
        now: u64,
        out: &mut Vec<Outcome>,
        already_received: impl Fn(&str) -> bool,
    ) -> Option<Outgoing> {
        if self.awaiting_echo.is_some() {
            return None;
        }
        let item = self.queue.pop_front()?;
        {
            let text = item.payload.to_string();
            if item.fire_and_forget || already_received(&item.uuid) {
                out.push(Outcome::Delivered {
                    uuid: item.uuid.clone(),
                    event_id: None,
                    seq: None,
                });
                return Some(Outgoing::Frame {
                    uuid: item.uuid,
                    text,
                });
            }
            let uuid = item.uuid.clone();
            self.awaiting_echo = Some(AwaitingEcho { item, sent_at: now });
            Some(Outgoing::Frame { uuid, text })
        }
    }

    /// The result of POST `id`.
    pub fn on_post_result(
        &mut self,
        now: u64,
        id: u64,
        outcome: PostOutcome,
        rand: f64,
    ) -> Vec<Outcome> {
        let mut out = Vec::new();
        let Some(flight) = self.in_flight.take_if(|f| f.id == id) else {
            return out;
        };
        match outcome {
            PostOutcome::Accepted(results) => {
                self.failures = 0;
                self.singles = self.singles.saturating_sub(flight.items.len());
                for (i, item) in flight.items.into_iter().enumerate() {
                    if flight.confirmed[i] {
                        continue;
                    }
                    let (event_id, seq) = results.get(i).cloned().unwrap_or((None, None));
                    out.push(Outcome::Delivered {
                        uuid: item.uuid,
                        event_id,
                        seq,
                    });
                }
            }
            PostOutcome::Rejected {
                status,
                kind,
                message,
            } => {
                self.failures = 0;
                let pending: Vec<Item> = unconfirmed(flight);
                if pending.len() > 1 {
                    // All-or-nothing validation: find the offender one by one.
                    self.singles = pending.len();
                    for item in pending.into_iter().rev() {
                        self.queue.push_front(item);
                    }
                } else {
                    self.singles = self.singles.saturating_sub(1);
                    for item in pending {
                        out.push(Outcome::Failed {
                            uuid: item.uuid,
                            error: SendError::Rejected {
                                status,
                                kind: kind.clone(),
                                message: message.clone(),
                            },
                        });
                    }
                }
            }
            PostOutcome::Retryable {
                error,
                retry_after_ms,
            } => {
                self.failures += 1;
                let pending = unconfirmed(flight);
                if self.failures >= self.config.max_attempts {
                    self.failures = 0;
                    self.singles = self.singles.saturating_sub(pending.len());
                    for item in pending {
                        out.push(Outcome::Failed {
                            uuid: item.uuid,
                            error: SendError::Exhausted {
                                attempts: self.config.max_attempts,
                                last_error: error.clone(),
                            },
                        });
                    }
                } else {
                    for item in pending.into_iter().rev() {
                        self.queue.push_front(item);
                    }
                    let exp = self
                        .config
                        .retry_base_ms
                        .saturating_mul(1 << (self.failures - 1).min(20))
                        .min(self.config.retry_max_ms);
                    let mut delay = exp - (exp as f64 * 0.5 * rand.clamp(0.0, 1.0)) as u64;
                    if let Some(hint) = retry_after_ms {
                        delay = delay.max(hint.min(60_000));
                    }
                    self.retry_at = Some(now + delay);
                }
            }
        }
        out
    }

    /// The relay echoed a durable event with this uuid: confirms the message
    /// if it is in flight. Returns `true` if the uuid belonged to this outbox.
    pub fn on_echo(
        &mut self,
        uuid: &str,
        event_id: Option<&str>,
        seq: u64,
        out: &mut Vec<Outcome>,
    ) -> bool {
        if let Some(a) = self.awaiting_echo.take_if(|a| a.item.uuid == uuid) {
            out.push(Outcome::Delivered {
                uuid: a.item.uuid,
                event_id: event_id.map(str::to_owned),
                seq: Some(seq),
            });
            return true;
        }
        if let Some(f) = &mut self.in_flight
            && let Some(i) = f.items.iter().position(|i| i.uuid == uuid)
        {
            if !f.confirmed[i] {
                f.confirmed[i] = true;
                out.push(Outcome::Delivered {
                    uuid: uuid.to_owned(),
                    event_id: event_id.map(str::to_owned),
                    seq: Some(seq),
                });
            }
            return true;
        }
        false
    }

    /// The relay refused the WebSocket frame in flight.
    pub fn on_frame_error(&mut self, status: u16, kind: &str, message: &str) -> Option<Outcome> {
        let a = self.awaiting_echo.take()?;
        Some(Outcome::Failed {
            uuid: a.item.uuid,
            error: SendError::Rejected {
                status,
                kind: kind.to_owned(),
                message: message.to_owned(),
            },
        })
    }

    /// The connection dropped: an unconfirmed frame goes back to the head of
    /// the queue, to be resent after the reconnect. (A POST in flight is not
    /// affected: its own result will come.)
    pub fn on_disconnect(&mut self) {
        if let Some(a) = self.awaiting_echo.take() {
            self.queue.push_front(a.item);
        }
    }

    /// Checks the echo timeout of the frame in flight at `now`.
    pub fn check_frame_timeout(&mut self, now: u64) -> Option<Outcome> {
        let timeout = self.config.ws_ack_timeout_ms;
        let a = self.awaiting_echo.take_if(|a| now >= a.sent_at + timeout)?;
        Some(Outcome::Failed {
            uuid: a.item.uuid,
            error: SendError::Unconfirmed(timeout),
        })
    }

    /// The earliest time something may become ready on its own: a retry, a
    /// `stream_event` hold ending, or a frame's echo timeout.
    pub fn next_deadline(&self) -> Option<u64> {
        let mut d: Option<u64> = None;
        let mut consider = |t: u64| d = Some(d.map_or(t, |x| x.min(t)));
        if let Some(t) = self.retry_at {
            consider(t);
        }
        if self.in_flight.is_none()
            && !self.queue.is_empty()
            && self.queue.iter().all(|i| i.stream_event)
            && let Some(i) = self.queue.front()
        {
            consider(i.enqueued_at + self.config.stream_event_wait_ms);
        }
        if let Some(a) = &self.awaiting_echo {
            consider(a.sent_at + self.config.ws_ack_timeout_ms);
        }
        d
    }

    /// Fails everything pending (the transport is closing for good).
    pub fn fail_all(&mut self, reason: &str) -> Vec<Outcome> {
        let mut items: Vec<Item> = Vec::new();
        if let Some(a) = self.awaiting_echo.take() {
            items.push(a.item);
        }
        if let Some(f) = self.in_flight.take() {
            items.extend(unconfirmed(f));
        }
        items.extend(self.queue.drain(..));
        self.retry_at = None;
        items
            .into_iter()
            .map(|i| Outcome::Failed {
                uuid: i.uuid,
                error: SendError::Closed(reason.to_owned()),
            })
            .collect()
    }

    /// The uuids still pending, oldest first (for persisting across reloads).
    pub fn pending_uuids(&self) -> Vec<String> {
        let mut v = Vec::new();
        if let Some(f) = &self.in_flight {
            v.extend(f.items.iter().map(|i| i.uuid.clone()));
        }
        if let Some(a) = &self.awaiting_echo {
            v.push(a.item.uuid.clone());
        }
        v.extend(self.queue.iter().map(|i| i.uuid.clone()));
        v
    }
}

fn unconfirmed(f: InFlight) -> Vec<Item> {
    f.items
        .into_iter()
        .zip(f.confirmed)
        .filter(|(_, c)| !c)
        .map(|(i, _)| i)
        .collect()
}

/// The POST body the relay expects.
pub fn post_body(session_id: &str, payloads: Vec<Value>) -> Value {
    let events: Vec<Value> = payloads
        .into_iter()
        .map(|p| {
            let mut m = Map::new();
            m.insert("payload".into(), p);
            Value::Object(m)
        })
        .collect();
    let mut body = Map::new();
    body.insert("session_id".into(), Value::String(session_id.to_owned()));
    body.insert("events".into(), Value::Array(events));
    Value::Object(body)
}

#[cfg(test)]
mod tests;
