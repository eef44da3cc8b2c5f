//! `bridge-transport`: the console's connection to a session.
//!
//! Three transports behind one interface — SSE + POST (default), WebSocket,
//! and Hybrid (WebSocket down, POST up) — that all yield the same stream of
//! decoded, deduplicated [`TransportEvent`]s and take the same `send`.
//!
//! The policy is a pure state machine ([`Core`]) fed with bytes, frames,
//! failures and the current time; it answers with [`Action`]s. Everything in
//! [`sse`], [`envelope`], [`backoff`], [`outbox`] and [`core`] is sans-IO and
//! compiles on wasm32 with no features. The async [`driver`] is generic over
//! an [`driver::Io`] edge; the edges are [`native`] (feature `native`: tokio,
//! reqwest, tokio-tungstenite) and `web` (wasm32: fetch streaming, web-sys
//! WebSocket, gloo-timers).

pub mod backoff;
pub mod core;
pub mod driver;
pub mod endpoint;
pub mod envelope;
pub mod outbox;
pub mod payload;
pub mod sse;

#[cfg(all(feature = "native", not(target_arch = "wasm32")))]
pub mod native;
#[cfg(target_arch = "wasm32")]
pub mod web;

pub use crate::backoff::{Backoff, BackoffConfig, Retry};
pub use crate::core::{
    Action, CloseReason, Config, ConnectionState, Core, Counters, Entropy, EventsPage, Failure,
    Inbound, ReadMode, Resume, TransportEvent, TransportKind, WriteMode,
};
pub use crate::driver::{Transport, TransportHandle};
pub use crate::endpoint::Endpoint;
pub use crate::envelope::{DeliveryUpdate, PayloadCheck, Source};
pub use crate::outbox::{OutboxConfig, PostOutcome, SendError};
pub use crate::payload::Payload;
