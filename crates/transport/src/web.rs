//! The browser I/O edge (wasm32): `fetch` streaming for SSE (a
//! `ReadableStream` reader, `credentials: same-origin`, an `AbortController`
//! that aborts when the connection is dropped), the browser `WebSocket`,
//! `fetch` for POSTs and REST pages, gloo-timers for delays.
//!
//! Everything is taken from the global scope, not from `window`, so the same
//! edge runs in a page, a worker and Node 20 (which has `fetch`, streams and
//! timers but no `window`; a `WebSocket` only behind a flag).
//!
//! Authentication: the `bridge_session` cookie (same origin) by default; with
//! a token, an `Authorization` header on fetches and a first
//! `{"type":"auth",…}` frame on WebSockets (browsers cannot set WebSocket
//! headers, and tokens never go in URLs).

use std::cell::RefCell;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::channel::{mpsc, oneshot};
use futures::{Stream, StreamExt as _};
use js_sys::{Reflect, Uint8Array};
use serde_json::{Value, json};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast as _, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    AbortController, CloseEvent, Headers, MessageEvent, ReadableStreamDefaultReader,
    RequestCredentials, RequestInit, Response, WebSocket,
};

use crate::backoff::parse_retry_after;
use crate::core::{Config, Core, Entropy, EventsPage, Failure, ReadMode, Resume};
use crate::driver::{BoxFut, Clock, Connection, Incoming, Io, Transport};
use crate::endpoint::{
    Endpoint, LOGIN_SECRET_HEADER, classify_post_status, error_type, events_page,
};
use crate::outbox::PostOutcome;

/// POSTs and REST fetches are aborted after this long.
const REQUEST_TIMEOUT_MS: u32 = 30_000;

/// The browser edge.
#[derive(Debug, Clone)]
pub struct WebIo {
    endpoint: Endpoint,
}

impl WebIo {
    /// An edge for `endpoint`; an empty `base_url` means the page's origin.
    pub fn new(mut endpoint: Endpoint) -> Self {
        if endpoint.base_url.is_empty()
            && let Some(origin) = global_origin()
        {
            endpoint.base_url = origin;
        }
        Self { endpoint }
    }
}

/// `globalThis.location.origin` (a page or a worker); `None` elsewhere (Node).
pub fn global_origin() -> Option<String> {
    let location = Reflect::get(&js_sys::global(), &JsValue::from_str("location")).ok()?;
    if location.is_undefined() || location.is_null() {
        return None;
    }
    Reflect::get(&location, &JsValue::from_str("origin"))
        .ok()?
        .as_string()
        .filter(|o| o.starts_with("http"))
}

#[wasm_bindgen]
extern "C" {
    /// The global scope's `fetch` (a window, a worker, Node 18+).
    #[wasm_bindgen(js_name = fetch, catch)]
    fn global_fetch(input: &str, init: &RequestInit) -> Result<js_sys::Promise, JsValue>;
}

/// Connects a transport in the browser; spawns its driver with `spawn_local`.
pub fn connect(endpoint: Endpoint, config: Config, resume: Resume) -> Transport {
    let io = WebIo::new(endpoint);
    let clock: Clock = Arc::new(|| js_sys::Date::now() as u64);
    let core = Core::new(config, resume, Entropy::system(), clock());
    let (transport, driver) = Transport::new(io, core, clock);
    wasm_bindgen_futures::spawn_local(driver);
    transport
}

fn js_err(e: JsValue) -> String {
    e.as_string()
        .or_else(|| {
            e.dyn_ref::<js_sys::Error>().map(|e| {
                let message = String::from(e.message());
                // Node's fetch says only "fetch failed"; the reason is in `cause`.
                match e.cause().dyn_ref::<js_sys::Error>() {
                    Some(cause) => format!("{message} ({})", String::from(cause.message())),
                    None => message,
                }
            })
        })
        .unwrap_or_else(|| format!("{e:?}"))
}

/// Aborts its fetch when dropped (the connection was given up).
struct AbortOnDrop(AbortController);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

struct Fetched {
    resp: Response,
    abort: AbortOnDrop,
}

async fn fetch(
    method: &str,
    url: &str,
    ep: &Endpoint,
    accept: &str,
    extra: &[(&str, String)],
    body: Option<String>,
) -> Result<Fetched, Failure> {
    let net = |e: JsValue| Failure::Network(js_err(e));
    let controller = AbortController::new().map_err(net)?;
    let abort = AbortOnDrop(controller);
    let headers = Headers::new().map_err(net)?;
    headers.set("Accept", accept).map_err(net)?;
    if let Some(t) = &ep.token {
        headers
            .set("Authorization", &format!("Bearer {t}"))
            .map_err(net)?;
    }
    if let Some(s) = &ep.login_secret {
        headers.set(LOGIN_SECRET_HEADER, s).map_err(net)?;
    }
    for (k, v) in extra {
        headers.set(k, v).map_err(net)?;
    }
    let init = RequestInit::new();
    init.set_method(method);
    init.set_credentials(RequestCredentials::SameOrigin);
    init.set_signal(Some(&abort.0.signal()));
    if let Some(b) = body {
        headers
            .set("Content-Type", "application/json")
            .map_err(net)?;
        init.set_body(&JsValue::from_str(&b));
    }
    init.set_headers(&headers);
    let resp = JsFuture::from(global_fetch(url, &init).map_err(net)?)
        .await
        .map_err(net)?;
    let resp: Response = resp.dyn_into().map_err(net)?;
    Ok(Fetched { resp, abort })
}

async fn text(resp: &Response) -> Result<String, Failure> {
    let p = resp.text().map_err(|e| Failure::Network(js_err(e)))?;
    let v = JsFuture::from(p)
        .await
        .map_err(|e| Failure::Network(js_err(e)))?;
    Ok(v.as_string().unwrap_or_default())
}

fn retry_after(resp: &Response) -> Option<String> {
    resp.headers().get("Retry-After").ok().flatten()
}

async fn http_failure(resp: &Response) -> Failure {
    let body = text(resp).await.unwrap_or_default();
    Failure::Http {
        status: resp.status(),
        retry_after_ms: retry_after(resp)
            .and_then(|v| parse_retry_after(&v, js_sys::Date::now() as u64)),
        reason: error_type(&body).0,
    }
}

/// Races `fut` against a timeout.
async fn with_timeout<T>(ms: u32, fut: impl std::future::Future<Output = T>) -> Option<T> {
    let fut = std::pin::pin!(fut);
    let timer = gloo_timers::future::TimeoutFuture::new(ms);
    match futures::future::select(fut, timer).await {
        futures::future::Either::Left((v, _)) => Some(v),
        futures::future::Either::Right(_) => None,
    }
}

/// A stream that owns something to drop with it (an abort guard, a socket).
struct Guarded<S, G> {
    inner: S,
    _guard: G,
}

impl<S: Stream + Unpin, G> Stream for Guarded<S, G> {
    type Item = S::Item;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        self.inner.poll_next_unpin(cx)
    }
}

impl<S: Stream + Unpin, G> Unpin for Guarded<S, G> {}

struct SocketGuard {
    ws: WebSocket,
    _on_open: Closure<dyn FnMut()>,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
    _on_close: Closure<dyn FnMut(CloseEvent)>,
}

impl Drop for SocketGuard {
    fn drop(&mut self) {
        self.ws.set_onopen(None);
        self.ws.set_onmessage(None);
        self.ws.set_onclose(None);
        let _ = self.ws.close();
    }
}

async fn open_sse(io: WebIo, from: u64) -> Result<Connection, Failure> {
    let mut extra = Vec::new();
    if from > 0 {
        extra.push(("Last-Event-ID", from.to_string()));
    }
    let f = fetch(
        "GET",
        &io.endpoint.stream_url(from),
        &io.endpoint,
        "text/event-stream",
        &extra,
        None,
    )
    .await?;
    if !f.resp.ok() {
        return Err(http_failure(&f.resp).await);
    }
    let body = f
        .resp
        .body()
        .ok_or_else(|| Failure::Network("the stream response has no body".into()))?;
    let reader: ReadableStreamDefaultReader = body.get_reader().unchecked_into();
    let chunks = futures::stream::unfold(Some(reader), |reader| async move {
        let reader = reader?;
        match JsFuture::from(reader.read()).await {
            Ok(chunk) => {
                let done = Reflect::get(&chunk, &JsValue::from_str("done"))
                    .ok()
                    .and_then(|v| v.as_bool())
                    .unwrap_or(true);
                if done {
                    return None;
                }
                let value =
                    Reflect::get(&chunk, &JsValue::from_str("value")).unwrap_or(JsValue::NULL);
                let bytes = Uint8Array::new(&value).to_vec();
                Some((Incoming::Bytes(bytes), Some(reader)))
            }
            Err(e) => Some((Incoming::Failed(Failure::Network(js_err(e))), None)),
        }
    });
    Ok(Connection {
        incoming: Box::pin(Guarded {
            inner: Box::pin(chunks),
            _guard: f.abort,
        }),
        outgoing: None,
    })
}

async fn open_ws(io: WebIo, from: u64) -> Result<Connection, Failure> {
    let ws = WebSocket::new(&io.endpoint.ws_url(from)).map_err(|e| Failure::Network(js_err(e)))?;
    let (in_tx, in_rx) = mpsc::unbounded::<Incoming>();
    let (open_tx, open_rx) = oneshot::channel::<Result<(), Failure>>();
    let open_tx = Rc::new(RefCell::new(Some(open_tx)));

    let o = open_tx.clone();
    let on_open = Closure::<dyn FnMut()>::new(move || {
        if let Some(tx) = o.borrow_mut().take() {
            let _ = tx.send(Ok(()));
        }
    });
    let tx = in_tx.clone();
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
        let item = match e.data().as_string() {
            Some(t) => Incoming::Text(t),
            None => Incoming::Activity,
        };
        let _ = tx.unbounded_send(item);
    });
    let o = open_tx;
    let on_close = Closure::<dyn FnMut(CloseEvent)>::new(move |e: CloseEvent| {
        let failure = Failure::WsClosed {
            code: e.code(),
            reason: e.reason(),
        };
        match o.borrow_mut().take() {
            Some(tx) => {
                let _ = tx.send(Err(failure));
            }
            None => {
                let _ = in_tx.unbounded_send(Incoming::Failed(failure));
            }
        }
    });
    ws.set_onopen(Some(on_open.as_ref().unchecked_ref()));
    ws.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    ws.set_onclose(Some(on_close.as_ref().unchecked_ref()));
    let guard = SocketGuard {
        ws: ws.clone(),
        _on_open: on_open,
        _on_message: on_message,
        _on_close: on_close,
    };
    match open_rx.await {
        Ok(Ok(())) => {}
        Ok(Err(f)) => return Err(f),
        Err(_) => return Err(Failure::Network("websocket dropped before opening".into())),
    }
    // First frame: the token, or the login secret that goes with the login cookie.
    let auth = match (&io.endpoint.token, &io.endpoint.login_secret) {
        (Some(t), _) => Some(json!({"type":"auth","credential":{"type":"oauth","token":t}})),
        (None, Some(s)) => Some(json!({"type":"auth","login_secret":s})),
        (None, None) => None,
    };
    if let Some(auth) = auth {
        ws.send_with_str(&auth.to_string())
            .map_err(|e| Failure::Network(js_err(e)))?;
    }
    let (out_tx, mut out_rx) = mpsc::unbounded::<String>();
    let writer = ws.clone();
    wasm_bindgen_futures::spawn_local(async move {
        while let Some(text) = out_rx.next().await {
            if writer.send_with_str(&text).is_err() {
                return;
            }
        }
    });
    Ok(Connection {
        incoming: Box::pin(Guarded {
            inner: in_rx,
            _guard: guard,
        }),
        outgoing: Some(out_tx),
    })
}

impl Io for WebIo {
    fn now_ms(&self) -> u64 {
        js_sys::Date::now() as u64
    }

    fn sleep(&self, ms: u64) -> BoxFut<()> {
        let ms = u32::try_from(ms).unwrap_or(u32::MAX);
        Box::pin(gloo_timers::future::TimeoutFuture::new(ms))
    }

    fn connect(&self, mode: ReadMode, from: u64) -> BoxFut<Result<Connection, Failure>> {
        let io = self.clone();
        match mode {
            ReadMode::Sse => Box::pin(open_sse(io, from)),
            ReadMode::WebSocket => Box::pin(open_ws(io, from)),
        }
    }

    fn post(&self, body: Value) -> BoxFut<PostOutcome> {
        let io = self.clone();
        Box::pin(async move {
            let url = io.endpoint.send_url();
            let req = async {
                let f = fetch(
                    "POST",
                    &url,
                    &io.endpoint,
                    "application/json",
                    &[],
                    Some(body.to_string()),
                )
                .await?;
                let status = f.resp.status();
                let ra = retry_after(&f.resp);
                let body = text(&f.resp).await?;
                Ok::<_, Failure>(classify_post_status(
                    status,
                    ra.as_deref(),
                    &body,
                    js_sys::Date::now() as u64,
                ))
            };
            match with_timeout(REQUEST_TIMEOUT_MS, req).await {
                Some(Ok(outcome)) => outcome,
                Some(Err(f)) => PostOutcome::Retryable {
                    error: f.to_string(),
                    retry_after_ms: None,
                },
                None => PostOutcome::Retryable {
                    error: "POST timed out".into(),
                    retry_after_ms: None,
                },
            }
        })
    }

    fn fetch_events(&self, after: u64, limit: usize) -> BoxFut<Result<EventsPage, Failure>> {
        let io = self.clone();
        Box::pin(async move {
            let url = io.endpoint.events_url(after, limit);
            let req = async {
                let f = fetch("GET", &url, &io.endpoint, "application/json", &[], None).await?;
                if !f.resp.ok() {
                    return Err(http_failure(&f.resp).await);
                }
                events_page(&text(&f.resp).await?)
            };
            with_timeout(REQUEST_TIMEOUT_MS, req)
                .await
                .unwrap_or_else(|| Err(Failure::Network("event list timed out".into())))
        })
    }
}
