//! The shared state of a `BridgeClient`: the transport handle, the handlers, messages waiting for
//! delivery and the Promises waiting for the relay; `pump` feeds it the transport's events.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;

use bridge_transport::{
    CloseReason, ConnectionState, Source, Transport, TransportEvent, TransportHandle,
};
use futures::channel::oneshot;
use js_sys::Function;
use wasm_bindgen::prelude::*;

use super::values::*;
use crate::{SeenPermission, connect_hint, permission_request, settled_request, state_name};

pub(super) type Waiter = oneshot::Sender<Result<(), String>>;

/// One message waiting for (or being handed to) the `onMessage` handler.
pub(super) struct Delivery {
    pub(super) message: JsValue,
    pub(super) seq: JsValue,
    pub(super) info: JsValue,
}

pub(super) struct Inner {
    pub(super) handle: TransportHandle,
    pub(super) session_id: String,
    pub(super) state: Cell<&'static str>,
    pub(super) inbox: RefCell<VecDeque<Delivery>>,
    pub(super) notices: RefCell<VecDeque<JsValue>>,
    pub(super) on_message: RefCell<Option<Function>>,
    pub(super) on_state: RefCell<Option<Function>>,
    /// The state handler was told a state since it was registered.
    pub(super) state_told: Cell<bool>,
    pub(super) on_notice: RefCell<Option<Function>>,
    /// Sends waiting for the relay, by payload uuid, oldest first (confirmations come in order, so
    /// the search ends at the front).
    pub(super) waiters: RefCell<VecDeque<(String, Waiter)>>,
    /// `can_use_tool` requests seen and not settled yet, by request id (a handful at most).
    pub(super) permissions: RefCell<Vec<(String, SeenPermission)>>,
    /// Settles `connect`: the first connection is live, or it failed.
    pub(super) ready: RefCell<Option<Waiter>>,
    pub(super) delivering: Cell<bool>,
}

impl Inner {
    /// Hands held messages and notices to their handlers, in order. Messages stay held while no
    /// handler is registered.
    pub(super) fn deliver(&self) {
        if self.delivering.replace(true) {
            return;
        }
        loop {
            let Some(cb) = self.on_message.borrow().clone() else {
                break;
            };
            let Some(d) = self.inbox.borrow_mut().pop_front() else {
                break;
            };
            report(cb.call3(&JsValue::NULL, &d.message, &d.seq, &d.info));
        }
        loop {
            let Some(cb) = self.on_notice.borrow().clone() else {
                break;
            };
            let Some(n) = self.notices.borrow_mut().pop_front() else {
                break;
            };
            report(cb.call1(&JsValue::NULL, &n));
        }
        self.delivering.set(false);
    }

    pub(super) fn set_state(&self, name: &'static str) {
        if self.state.replace(name) == name {
            return;
        }
        let cb = self.on_state.borrow().clone();
        if let Some(cb) = cb {
            self.state_told.set(true);
            report(cb.call1(&JsValue::NULL, &JsValue::from_str(name)));
        }
    }

    /// Settles `connect` on the first decisive state.
    pub(super) fn settle_ready(&self, state: &ConnectionState) {
        let outcome = match state {
            ConnectionState::Connecting { .. } | ConnectionState::Suspended => return,
            ConnectionState::Open => Ok(()),
            ConnectionState::Closed { .. } if state_name(state) == "ended" => Ok(()),
            ConnectionState::Reconnecting { last_error, .. } => Err(last_error.clone()),
            ConnectionState::Closed { reason } => Err(match reason {
                CloseReason::Permanent(why) => why.clone(),
                other => other.to_string(),
            }),
        };
        let Some(tx) = self.ready.borrow_mut().take() else {
            return;
        };
        let outcome = outcome.map_err(|e| {
            // No reconnecting behind the caller's back when the first connection failed.
            self.handle.close();
            format!(
                "connect: could not connect to session {}: {e}{}",
                self.session_id,
                connect_hint(&e)
            )
        });
        let _ = tx.send(outcome);
    }

    pub(super) fn settle_send(&self, uuid: &str, outcome: Result<(), String>) {
        let mut waiters = self.waiters.borrow_mut();
        if let Some(i) = waiters.iter().position(|(u, _)| u == uuid)
            && let Some((_, tx)) = waiters.remove(i)
        {
            let _ = tx.send(outcome);
        }
    }

    pub(super) fn on_event(&self, event: TransportEvent) {
        match event {
            TransportEvent::Message(inbound) => {
                let message = &inbound.message.value();
                if let Some(seen) = permission_request(message) {
                    self.permissions.borrow_mut().push(seen);
                } else if let Some(id) = settled_request(message) {
                    self.permissions.borrow_mut().retain(|(r, _)| r != id);
                }
                let source = inbound.source.as_ref().map(|s| match s {
                    Source::Worker => "worker",
                    Source::Client => "client",
                    Source::Relay => "relay",
                    Source::Other(o) => o.as_str(),
                });
                let info = object(&[
                    ("source", opt_str(source)),
                    ("eventId", opt_str(inbound.event_id.as_deref())),
                    ("createdAt", opt_str(inbound.created_at.as_deref())),
                ]);
                self.inbox.borrow_mut().push_back(Delivery {
                    message: to_js(message),
                    seq: inbound.seq.map_or(JsValue::NULL, number),
                    info,
                });
                self.deliver();
            }
            TransportEvent::Delivered { uuid, .. } => self.settle_send(&uuid, Ok(())),
            TransportEvent::SendFailed { uuid, error } => {
                self.settle_send(&uuid, Err(error.to_string()));
            }
            TransportEvent::DeliveryUpdate(_) => {}
            TransportEvent::Gap { after, next } => {
                self.notices.borrow_mut().push_back(object(&[
                    ("kind", "gap".into()),
                    ("after", number(after)),
                    ("next", number(next)),
                    (
                        "message",
                        format!(
                            "the relay no longer has events {} to {}: they are missing here",
                            after + 1,
                            next.saturating_sub(1)
                        )
                        .into(),
                    ),
                ]));
                self.deliver();
            }
            TransportEvent::Malformed { seq, error } => {
                self.notices.borrow_mut().push_back(object(&[
                    ("kind", "malformed".into()),
                    ("seq", seq.map_or(JsValue::NULL, number)),
                    (
                        "message",
                        format!("a frame could not be read: {error}").into(),
                    ),
                ]));
                self.deliver();
            }
            TransportEvent::State(state) => {
                self.settle_ready(&state);
                self.set_state(state_name(&state));
            }
        }
    }
}

pub(super) async fn pump(inner: Rc<Inner>, mut transport: Transport) {
    while let Some(event) = transport.next_event().await {
        inner.on_event(event);
    }
    let waiting: Vec<(String, Waiter)> = inner.waiters.borrow_mut().drain(..).collect();
    for (_, tx) in waiting {
        let _ = tx.send(Err(
            "the connection closed before the relay confirmed it".into()
        ));
    }
    if let Some(tx) = inner.ready.borrow_mut().take() {
        let _ = tx.send(Err("connect: the connection closed".into()));
    }
}
