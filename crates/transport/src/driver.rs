//! The async driver shared by the native and wasm backends: it carries out the
//! [`Core`]'s actions through an [`Io`] edge and feeds back what happened.
//! It is runtime-agnostic (only `futures`); the backend spawns it.

use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::Poll;

use futures::channel::mpsc;
use futures::stream::{FuturesUnordered, Stream};
use futures::{FutureExt as _, StreamExt as _};
use serde_json::Value;

use crate::core::{
    Action, ConnectionState, Core, Counters, EventsPage, Failure, ReadMode, TransportEvent,
};
use crate::outbox::{PostOutcome, SendError};

/// A boxed future: `Send` natively (for `tokio::spawn`), not on wasm32.
#[cfg(not(target_arch = "wasm32"))]
pub type BoxFut<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;
/// A boxed future: `Send` natively (for `tokio::spawn`), not on wasm32.
#[cfg(target_arch = "wasm32")]
pub type BoxFut<T> = Pin<Box<dyn Future<Output = T> + 'static>>;
/// A boxed stream, `Send` natively.
#[cfg(not(target_arch = "wasm32"))]
pub type BoxStream<T> = Pin<Box<dyn Stream<Item = T> + Send + 'static>>;
/// A boxed stream, `Send` natively.
#[cfg(target_arch = "wasm32")]
pub type BoxStream<T> = Pin<Box<dyn Stream<Item = T> + 'static>>;

/// The clock the handle uses to timestamp `send`s (ms, monotonic enough).
pub type Clock = Arc<dyn Fn() -> u64 + Send + Sync>;

/// Something that arrived on a connection.
#[derive(Debug)]
pub enum Incoming {
    /// A chunk of the SSE body.
    Bytes(Vec<u8>),
    /// A WebSocket text frame.
    Text(String),
    /// Any other sign of life (ping, pong, binary frame).
    Activity,
    /// The connection failed or closed; the stream ends after this.
    Failed(Failure),
}

/// An established connection.
pub struct Connection {
    /// What arrives (the stream ending means [`Failure::Ended`]).
    pub incoming: BoxStream<Incoming>,
    /// Where WebSocket text frames go (None for SSE).
    pub outgoing: Option<mpsc::UnboundedSender<String>>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("outgoing", &self.outgoing.is_some())
            .finish()
    }
}

/// The I/O edge a backend provides.
pub trait Io: 'static {
    /// Milliseconds on a monotonic clock.
    fn now_ms(&self) -> u64;
    /// Resolves after `ms`.
    fn sleep(&self, ms: u64) -> BoxFut<()>;
    /// Opens the read side (resolves once headers / the socket are open).
    fn connect(
        &self,
        mode: ReadMode,
        from_sequence_num: u64,
    ) -> BoxFut<Result<Connection, Failure>>;
    /// POSTs `body` to the events URL.
    fn post(&self, body: Value) -> BoxFut<PostOutcome>;
    /// `GET …/events?after=&limit=`.
    fn fetch_events(&self, after: u64, limit: usize) -> BoxFut<Result<EventsPage, Failure>>;
}

struct Shared {
    core: Arc<Mutex<Core>>,
    wake: mpsc::UnboundedSender<()>,
    clock: Clock,
}

/// A cloneable handle: `send`, state, counters, suspend/resume, close.
#[derive(Clone)]
pub struct TransportHandle {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for TransportHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TransportHandle")
            .field("state", &self.state())
            .finish()
    }
}

impl TransportHandle {
    fn core(&self) -> MutexGuard<'_, Core> {
        self.shared.core.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn now(&self) -> u64 {
        (self.shared.clock)()
    }

    fn wake(&self) {
        let _ = self.shared.wake.unbounded_send(());
    }

    /// Runs `act` on the core at the current time, then wakes the driver to carry it out.
    fn act<R>(&self, act: impl FnOnce(&mut Core, u64) -> R) -> R {
        let now = self.now();
        let r = act(&mut self.core(), now);
        self.wake();
        r
    }

    /// Queues a client→CLI payload. Returns its uuid at once; the outcome
    /// comes later as [`TransportEvent::Delivered`] or
    /// [`TransportEvent::SendFailed`]. Refused at once only when the outbox
    /// is full, the payload is not a message, or the transport is closed.
    pub fn send(&self, payload: Value) -> Result<String, SendError> {
        self.act(|core, now| core.send(now, payload))
    }

    /// The connection state.
    pub fn state(&self) -> ConnectionState {
        self.core().state().clone()
    }

    /// The counters.
    pub fn counters(&self) -> Counters {
        self.core().counters().clone()
    }

    /// The highest durable sequence number applied.
    pub fn cursor(&self) -> u64 {
        self.core().cursor()
    }

    /// Sends not yet confirmed.
    pub fn pending_sends(&self) -> usize {
        self.core().pending_sends()
    }

    /// Stops reading (e.g. page hidden); nothing is lost.
    pub fn suspend(&self) {
        self.act(Core::suspend);
    }

    /// Resumes after `suspend`, from the cursor.
    pub fn resume(&self) {
        self.act(Core::resume);
    }

    /// Skips the remaining reconnect delay (e.g. the browser is back online).
    pub fn retry_now(&self) {
        self.act(Core::retry_now);
    }

    /// Closes after draining pending sends (at most `drain_ms`).
    pub fn close(&self) {
        self.act(Core::close);
    }
}

/// A running transport: a [`Stream`] of [`TransportEvent`]s plus the handle
/// methods (through `Deref`). The stream ends after the transport closed.
pub struct Transport {
    handle: TransportHandle,
    events: mpsc::UnboundedReceiver<TransportEvent>,
}

impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.handle.fmt(f)
    }
}

impl Transport {
    /// Builds the transport and the driver future; the backend spawns the
    /// future (`tokio::spawn`, `spawn_local`).
    pub fn new<I: Io>(io: I, core: Core, clock: Clock) -> (Transport, impl Future<Output = ()>) {
        let core = Arc::new(Mutex::new(core));
        let (wake_tx, wake_rx) = mpsc::unbounded();
        let (ev_tx, ev_rx) = mpsc::unbounded();
        let handle = TransportHandle {
            shared: Arc::new(Shared {
                core: core.clone(),
                wake: wake_tx,
                clock,
            }),
        };
        let driver = run(io, core, wake_rx, ev_tx);
        (
            Transport {
                handle,
                events: ev_rx,
            },
            driver,
        )
    }

    /// A cloneable handle to this transport.
    pub fn handle(&self) -> TransportHandle {
        self.handle.clone()
    }

    /// The next event (`None` once the transport closed and everything was
    /// delivered).
    pub async fn next_event(&mut self) -> Option<TransportEvent> {
        self.events.next().await
    }
}

impl std::ops::Deref for Transport {
    type Target = TransportHandle;
    fn deref(&self) -> &TransportHandle {
        &self.handle
    }
}

impl Stream for Transport {
    type Item = TransportEvent;
    fn poll_next(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> Poll<Option<TransportEvent>> {
        self.events.poll_next_unpin(cx)
    }
}

enum Done {
    Connected(u64, Result<Connection, Failure>),
    Posted(u64, PostOutcome),
    Fetched(Result<EventsPage, Failure>),
}

enum Happened {
    Wake,
    HandlesGone,
    Incoming(u64, Option<Incoming>),
    Task(Done),
    Timer,
}

/// At most this many items are taken from the connection per turn, so that
/// POST answers and timers are never starved by a fast stream.
const INCOMING_PER_TURN: usize = 256;

async fn run<I: Io>(
    io: I,
    core: Arc<Mutex<Core>>,
    mut wake: mpsc::UnboundedReceiver<()>,
    events: mpsc::UnboundedSender<TransportEvent>,
) {
    let lock = || core.lock().unwrap_or_else(|p| p.into_inner());
    let mode = lock().config().kind.read_mode();
    let mut conn: Option<(u64, BoxStream<Incoming>)> = None;
    let mut ws_out: Option<(u64, mpsc::UnboundedSender<String>)> = None;
    let mut tasks: FuturesUnordered<BoxFut<Done>> = FuturesUnordered::new();
    let mut sleep: Option<(u64, BoxFut<()>)> = None;
    let mut wake_open = true;
    loop {
        // Carry out what the core asked for; hand events to the consumer.
        let (deadline, shutdown) = {
            let mut c = lock();
            let mut shutdown = false;
            let mut writer_gone = None;
            while let Some(action) = c.poll_action() {
                match action {
                    Action::Connect {
                        conn: id,
                        from_sequence_num,
                    } => {
                        conn = None;
                        ws_out = None;
                        tasks.push(Box::pin(
                            io.connect(mode, from_sequence_num)
                                .map(move |r| Done::Connected(id, r)),
                        ));
                    }
                    Action::Disconnect { conn: id } => {
                        if conn.as_ref().is_some_and(|(c, _)| *c == id) {
                            conn = None;
                        }
                        if ws_out.as_ref().is_some_and(|(c, _)| *c == id) {
                            ws_out = None;
                        }
                    }
                    Action::Post { id, body } => {
                        tasks.push(Box::pin(io.post(body).map(move |o| Done::Posted(id, o))));
                    }
                    Action::SendFrame { conn: id, text } => match &ws_out {
                        Some((c, tx)) if *c == id => {
                            if tx.unbounded_send(text).is_err() {
                                writer_gone = Some(id);
                            }
                        }
                        _ => writer_gone = Some(id),
                    },
                    Action::FetchEvents { after, limit } => {
                        tasks.push(Box::pin(io.fetch_events(after, limit).map(Done::Fetched)));
                    }
                    Action::Shutdown => shutdown = true,
                }
            }
            if let Some(id) = writer_gone {
                let now = io.now_ms();
                c.on_failure(
                    now,
                    id,
                    Failure::Network("the websocket writer stopped".into()),
                );
                // its actions are carried out on the next turn
            }
            while let Some(e) = c.poll_event() {
                let _ = events.unbounded_send(e);
            }
            (c.next_deadline(), shutdown && c.is_closed())
        };
        if shutdown {
            // Everything pending was reported by the core; dropping the
            // connection and the tasks closes sockets and aborts requests.
            return;
        }
        if lock().has_actions() {
            continue;
        }
        match deadline {
            Some(t) if sleep.as_ref().is_none_or(|(at, _)| *at != t) => {
                let wait = t.saturating_sub(io.now_ms());
                sleep = Some((t, io.sleep(wait)));
            }
            Some(_) => {}
            None => sleep = None,
        }

        let happened = poll_fn(|cx| {
            let mut out = Vec::new();
            if wake_open {
                loop {
                    match wake.poll_next_unpin(cx) {
                        Poll::Ready(Some(())) => {
                            if !matches!(out.last(), Some(Happened::Wake)) {
                                out.push(Happened::Wake);
                            }
                        }
                        Poll::Ready(None) => {
                            wake_open = false;
                            out.push(Happened::HandlesGone);
                            break;
                        }
                        Poll::Pending => break,
                    }
                }
            }
            if let Some((id, stream)) = conn.as_mut() {
                for _ in 0..INCOMING_PER_TURN {
                    match stream.poll_next_unpin(cx) {
                        Poll::Ready(Some(item)) => {
                            let end = matches!(item, Incoming::Failed(_));
                            out.push(Happened::Incoming(*id, Some(item)));
                            if end {
                                break;
                            }
                        }
                        Poll::Ready(None) => {
                            out.push(Happened::Incoming(*id, None));
                            break;
                        }
                        Poll::Pending => break,
                    }
                }
                if out.iter().any(|h| {
                    matches!(
                        h,
                        Happened::Incoming(_, None)
                            | Happened::Incoming(_, Some(Incoming::Failed(_)))
                    )
                }) {
                    conn = None;
                }
            }
            while let Poll::Ready(Some(done)) = tasks.poll_next_unpin(cx) {
                out.push(Happened::Task(done));
            }
            if let Some((_, s)) = sleep.as_mut()
                && s.poll_unpin(cx).is_ready()
            {
                sleep = None;
                out.push(Happened::Timer);
            }
            if out.is_empty() {
                Poll::Pending
            } else {
                Poll::Ready(out)
            }
        })
        .await;

        let now = io.now_ms();
        let mut c = lock();
        for h in happened {
            match h {
                Happened::Wake => {}
                Happened::HandlesGone => c.close(now),
                Happened::Incoming(id, Some(Incoming::Bytes(b))) => c.on_bytes(now, id, &b),
                Happened::Incoming(id, Some(Incoming::Text(t))) => c.on_text(now, id, &t),
                Happened::Incoming(id, Some(Incoming::Activity)) => c.on_activity(now, id),
                Happened::Incoming(id, Some(Incoming::Failed(f))) => {
                    if ws_out.as_ref().is_some_and(|(c, _)| *c == id) {
                        ws_out = None;
                    }
                    c.on_failure(now, id, f);
                }
                Happened::Incoming(id, None) => {
                    if ws_out.as_ref().is_some_and(|(c, _)| *c == id) {
                        ws_out = None;
                    }
                    c.on_failure(now, id, Failure::Ended);
                }
                Happened::Task(Done::Connected(id, Ok(connection))) => {
                    if c.on_connected(now, id) {
                        conn = Some((id, connection.incoming));
                        ws_out = connection.outgoing.map(|tx| (id, tx));
                    }
                    // else: stale or no longer wanted; dropping it closes it
                }
                Happened::Task(Done::Connected(id, Err(f))) => c.on_failure(now, id, f),
                Happened::Task(Done::Posted(id, o)) => c.on_post_result(now, id, o),
                Happened::Task(Done::Fetched(r)) => c.on_events_page(now, r),
                Happened::Timer => c.on_timer(now),
            }
        }
    }
}
