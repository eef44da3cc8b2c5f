//! The session connection: bridge-transport (SSE + POST with reconnect, resume, dedup, outbox).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use futures::future::LocalBoxFuture;
use serde_json::Value;

use super::{ConnState, Incoming, NetError, Sender, StreamEvent};
#[cfg(target_arch = "wasm32")]
use super::{bearer, login_secret};
use crate::state::Source;

/// Maps the transport's connection state to what the header shows.
pub fn conn_state(state: &bridge_transport::ConnectionState, now_ms: f64) -> ConnState {
    use bridge_transport::ConnectionState as C;
    match state {
        C::Connecting { .. } => ConnState::Connecting,
        C::Open => ConnState::Live,
        C::Reconnecting {
            attempt,
            next_retry_ms,
            ..
        } => ConnState::Reconnecting {
            at_ms: now_ms + *next_retry_ms as f64,
            attempt: *attempt,
        },
        C::Suspended => ConnState::Paused,
        // The relay answers the stream of an ended session (cursor at its end) with 404
        // `session_ended`: final, and not an outage.
        C::Closed {
            reason: bridge_transport::CloseReason::Permanent(why),
        } if why.contains("session_ended") => ConnState::Ended,
        C::Closed { reason } => ConnState::Offline(reason.to_string()),
    }
}

/// Maps the transport's send error.
pub fn send_error(e: &bridge_transport::SendError) -> NetError {
    match e {
        bridge_transport::SendError::Rejected {
            status, message, ..
        } => NetError::Status(*status, message.clone()),
        other => NetError::Network(other.to_string()),
    }
}

/// Turns a transport event into what the store applies (None: nothing to show).
pub fn stream_event(ev: bridge_transport::TransportEvent, now_ms: f64) -> Option<StreamEvent> {
    use bridge_transport::TransportEvent as E;
    Some(match ev {
        E::Message(inbound) => {
            let source = match inbound.source {
                Some(bridge_transport::Source::Client) => Source::Client,
                Some(bridge_transport::Source::Relay) => Source::Relay,
                _ => Source::Worker,
            };
            StreamEvent::Frame(Incoming {
                source,
                seq: inbound.seq,
                payload: inbound.message,
            })
        }
        E::State(s) => StreamEvent::State(conn_state(&s, now_ms)),
        E::Gap { .. } => StreamEvent::Truncated,
        E::Malformed { seq, error } => StreamEvent::Frame(Incoming {
            source: Source::Relay,
            seq,
            payload: serde_json::json!({"type": "relay_error", "error": format!("A frame could not be read: {error}")}).into(),
        }),
        E::Delivered { .. } | E::SendFailed { .. } | E::DeliveryUpdate(_) => return None,
    })
}

type Waiters =
    Rc<RefCell<HashMap<String, futures::channel::oneshot::Sender<Result<(), NetError>>>>>;

/// A live connection to one session. Dropping it (or [`Subscription::close`]) closes the transport.
pub struct Subscription {
    #[cfg(target_arch = "wasm32")]
    handle: bridge_transport::TransportHandle,
    waiters: Waiters,
    stopped: Rc<Cell<bool>>,
}

impl Subscription {
    /// Stops the stream (pending sends get a short grace period).
    pub fn close(&self) {
        if !self.stopped.replace(true) {
            #[cfg(target_arch = "wasm32")]
            self.handle.close();
        }
    }
}

impl Subscription {
    /// Stops reading while the page is hidden (nothing is lost: [`Subscription::resume`]
    /// reconnects from the cursor).
    pub fn suspend(&self) {
        #[cfg(target_arch = "wasm32")]
        if !self.stopped.get() {
            self.handle.suspend();
        }
    }

    /// Reconnects at once after [`Subscription::suspend`].
    pub fn resume(&self) {
        #[cfg(target_arch = "wasm32")]
        if !self.stopped.get() {
            self.handle.resume();
        }
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.close();
    }
}

impl Sender for Subscription {
    /// Queues the payload in the transport's outbox; resolves when the relay confirmed it (its
    /// echo) or it failed for good.
    fn post_event(
        &self,
        _session_id: &str,
        payload: Value,
    ) -> LocalBoxFuture<'static, Result<(), NetError>> {
        #[cfg(target_arch = "wasm32")]
        {
            let (tx, rx) = futures::channel::oneshot::channel();
            match self.handle.send(payload) {
                Ok(uuid) => {
                    self.waiters.borrow_mut().insert(uuid, tx);
                    Box::pin(async move {
                        rx.await
                            .unwrap_or_else(|_| Err(NetError::Network("connection closed".into())))
                    })
                }
                Err(e) => {
                    let err = send_error(&e);
                    Box::pin(async move { Err(err) })
                }
            }
        }
        #[cfg(not(target_arch = "wasm32"))]
        {
            let _ = (&self.waiters, payload);
            Box::pin(async { Err(NetError::Network("no browser".into())) })
        }
    }
}

/// Connects to a session's event stream (from the start, `from_seq` = 0, or after a cursor) with
/// bridge-transport's SSE + POST transport and feeds `sink`; sends go through the returned
/// subscription (a [`Sender`]).
#[cfg(target_arch = "wasm32")]
pub fn subscribe(
    session_id: &str,
    from_seq: u64,
    sink: Rc<dyn Fn(StreamEvent)>,
) -> Rc<Subscription> {
    use bridge_transport::{Config, Endpoint, Resume, TransportEvent, TransportKind};
    let endpoint = Endpoint::new("", session_id, bearer()).with_login_secret(login_secret());
    let config = Config::new(TransportKind::SsePost, session_id);
    let resume = Resume {
        from_sequence_num: from_seq,
        ..Resume::default()
    };
    let mut transport = bridge_transport::web::connect(endpoint, config, resume);
    let waiters: Waiters = Rc::default();
    let stopped = Rc::new(Cell::new(false));
    let sub = Rc::new(Subscription {
        handle: transport.handle(),
        waiters: waiters.clone(),
        stopped: stopped.clone(),
    });
    wasm_bindgen_futures::spawn_local(async move {
        while let Some(ev) = transport.next_event().await {
            match ev {
                TransportEvent::Delivered { uuid, .. } => {
                    if let Some(tx) = waiters.borrow_mut().remove(&uuid) {
                        let _ = tx.send(Ok(()));
                    }
                }
                TransportEvent::SendFailed { uuid, error } => {
                    if let Some(tx) = waiters.borrow_mut().remove(&uuid) {
                        let _ = tx.send(Err(send_error(&error)));
                    }
                }
                other => {
                    if let Some(se) = stream_event(other, js_sys::Date::now()) {
                        sink(se);
                    }
                }
            }
        }
        for (_, tx) in waiters.borrow_mut().drain() {
            let _ = tx.send(Err(NetError::Network("connection closed".into())));
        }
    });
    sub
}

/// Native builds (tests) have no browser: a subscription that never connects.
#[cfg(not(target_arch = "wasm32"))]
pub fn subscribe(
    _session_id: &str,
    _from_seq: u64,
    _sink: Rc<dyn Fn(StreamEvent)>,
) -> Rc<Subscription> {
    Rc::new(Subscription {
        waiters: Rc::default(),
        stopped: Rc::new(Cell::new(true)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transport_states_map_to_the_header() {
        use bridge_transport::{CloseReason, ConnectionState as C};
        assert_eq!(conn_state(&C::Open, 0.0), ConnState::Live);
        assert_eq!(
            conn_state(&C::Connecting { attempt: 2 }, 0.0).as_str(),
            "connecting"
        );
        let r = conn_state(
            &C::Reconnecting {
                attempt: 3,
                next_retry_ms: 4_000,
                last_error: "x".into(),
            },
            1_000.0,
        );
        assert_eq!(
            r,
            ConnState::Reconnecting {
                at_ms: 5_000.0,
                attempt: 3
            }
        );
        assert_eq!(r.label_at(2_100.0), "Reconnecting in 3s");
        let closed = conn_state(
            &C::Closed {
                reason: CloseReason::Client,
            },
            0.0,
        );
        assert_eq!(closed.as_str(), "offline");
        assert_eq!(conn_state(&C::Suspended, 0.0), ConnState::Paused);
        let ended = conn_state(
            &C::Closed {
                reason: CloseReason::Permanent("HTTP 404 (session_ended)".into()),
            },
            0.0,
        );
        assert_eq!(ended, ConnState::Ended);
        assert_eq!(ended.label_at(0.0), "Session ended");
        // The WebSocket says the same with close code 4404.
        let ws_failure = bridge_transport::Failure::WsClosed {
            code: 4404,
            reason: "session_ended: nothing after sequence number 9".into(),
        };
        assert!(ws_failure.is_permanent());
        let ws_ended = conn_state(
            &C::Closed {
                reason: CloseReason::Permanent(ws_failure.to_string()),
            },
            0.0,
        );
        assert_eq!(ws_ended, ConnState::Ended);
        let gone = conn_state(
            &C::Closed {
                reason: CloseReason::Permanent("HTTP 404 (not_found)".into()),
            },
            0.0,
        );
        assert_eq!(gone.as_str(), "offline");
    }

    #[test]
    fn rejected_sends_keep_their_status() {
        let e = bridge_transport::SendError::Rejected {
            status: 409,
            kind: "conflict".into(),
            message: "already answered".into(),
        };
        assert_eq!(
            send_error(&e),
            NetError::Status(409, "already answered".into())
        );
    }
}
