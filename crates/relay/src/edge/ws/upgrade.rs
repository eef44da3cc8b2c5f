//! The WebSocket handshake (RFC 6455 over HTTP/1.1, RFC 8441's extended CONNECT over HTTP/2), done
//! here instead of by axum's `WebSocketUpgrade` so that the socket reads through a [`ReadBudget`]:
//! before its client has authenticated, a socket may send at most
//! [`crate::core::limits::UNAUTHENTICATED_BODY_BYTES`] (plus frame headers) — not one message of
//! `--max-body-bytes` held in memory only to be refused — and whatever that cap allows afterwards.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, ready};

use axum::body::Body;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Version, header};
use axum::response::Response;
use hyper::upgrade::{OnUpgrade, Upgraded};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::{Role, WebSocketConfig};

use crate::edge::error::ApiError;

/// What an unauthenticated socket may send in all: its auth message and the largest frame header
/// a client writes (2 + 8 length + 4 mask bytes), with room for a ping before it.
pub const UNAUTHENTICATED_READ_BYTES: usize = crate::core::limits::UNAUTHENTICATED_BODY_BYTES + 64;

/// The bytes a socket may still read: [`UNAUTHENTICATED_READ_BYTES`] until [`ReadBudget::lift`]
/// (its client authenticated), then no limit beyond the per-message cap.
#[derive(Clone)]
pub struct ReadBudget(Arc<AtomicUsize>);

impl ReadBudget {
    pub fn unauthenticated() -> Self {
        Self(Arc::new(AtomicUsize::new(UNAUTHENTICATED_READ_BYTES)))
    }

    pub fn unlimited() -> Self {
        Self(Arc::new(AtomicUsize::new(usize::MAX)))
    }

    /// The client is known: its messages are bounded by the per-message cap alone.
    pub fn lift(&self) {
        self.0.store(usize::MAX, Ordering::Relaxed);
    }
}

/// The upgraded connection, read through a [`ReadBudget`].
pub struct Budgeted<T> {
    inner: T,
    budget: ReadBudget,
}

pub type Socket = WebSocketStream<Budgeted<TokioIo<Upgraded>>>;

impl<T: AsyncRead + Unpin> AsyncRead for Budgeted<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let left = self.budget.0.load(Ordering::Relaxed);
        if left == usize::MAX {
            return Pin::new(&mut self.inner).poll_read(cx, buf);
        }
        if left == 0 {
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "more than {UNAUTHENTICATED_READ_BYTES} bytes before authenticating: not read"
                ),
            )));
        }
        // Read into a small buffer of its own (a few KB, before authentication only), then copy.
        let mut scratch = [0u8; UNAUTHENTICATED_READ_BYTES];
        let want = left.min(buf.remaining()).min(scratch.len());
        let mut part = ReadBuf::new(&mut scratch[..want]);
        ready!(Pin::new(&mut self.inner).poll_read(cx, &mut part))?;
        let n = part.filled().len();
        buf.put_slice(part.filled());
        // Lifted meanwhile (another task authenticated it)? Then it stays lifted.
        let _ = self
            .budget
            .0
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |b| {
                (b != usize::MAX).then(|| b.saturating_sub(n))
            });
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Budgeted<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

/// A WebSocket handshake request: `GET` with `Upgrade: websocket` (HTTP/1.1) or `CONNECT` with
/// `:protocol websocket` (HTTP/2), version 13.
pub struct Upgrade {
    /// HTTP/1.1's `Sec-WebSocket-Key`; `None` over HTTP/2.
    key: Option<HeaderValue>,
    on_upgrade: OnUpgrade,
}

fn header_has(headers: &HeaderMap, name: header::HeaderName, token: &str) -> bool {
    headers.get_all(name).iter().any(|v| {
        v.to_str()
            .is_ok_and(|s| s.split(',').any(|t| t.trim().eq_ignore_ascii_case(token)))
    })
}

fn not_websocket(why: &str) -> ApiError {
    ApiError::new(
        StatusCode::UPGRADE_REQUIRED,
        "invalid_request_error",
        format!("this is a WebSocket endpoint: {why}"),
    )
}

impl<S: Send + Sync> FromRequestParts<S> for Upgrade {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        let key = if parts.version <= Version::HTTP_11 {
            if parts.method != Method::GET {
                return Err(not_websocket("the handshake is a GET"));
            }
            if !header_has(&parts.headers, header::CONNECTION, "upgrade")
                || !header_has(&parts.headers, header::UPGRADE, "websocket")
            {
                return Err(not_websocket(
                    "send Connection: upgrade and Upgrade: websocket",
                ));
            }
            Some(
                parts
                    .headers
                    .get(header::SEC_WEBSOCKET_KEY)
                    .cloned()
                    .ok_or_else(|| not_websocket("Sec-WebSocket-Key is missing"))?,
            )
        } else {
            if parts.method != Method::CONNECT
                || parts
                    .extensions
                    .get::<hyper::ext::Protocol>()
                    .is_none_or(|p| p.as_str() != "websocket")
            {
                return Err(not_websocket(
                    "over HTTP/2 the handshake is a CONNECT with :protocol websocket",
                ));
            }
            None
        };
        if parts
            .headers
            .get(header::SEC_WEBSOCKET_VERSION)
            .is_none_or(|v| v.as_bytes() != b"13")
        {
            return Err(not_websocket("Sec-WebSocket-Version must be 13"));
        }
        let on_upgrade = parts
            .extensions
            .remove::<OnUpgrade>()
            .ok_or_else(|| not_websocket("this connection cannot be upgraded"))?;
        Ok(Self { key, on_upgrade })
    }
}

impl Upgrade {
    /// Answers the handshake and runs `callback` on the socket once the connection is upgraded.
    /// Each message (and frame) is at most `max_message` bytes; the socket reads through `budget`.
    pub fn on_upgrade<F, Fut>(self, max_message: usize, budget: ReadBudget, callback: F) -> Response
    where
        F: FnOnce(Socket) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let on_upgrade = self.on_upgrade;
        tokio::spawn(async move {
            let upgraded = match on_upgrade.await {
                Ok(u) => u,
                Err(e) => {
                    tracing::debug!(error = %e, "websocket upgrade failed");
                    return;
                }
            };
            let io = Budgeted {
                inner: TokioIo::new(upgraded),
                budget,
            };
            let config = WebSocketConfig::default()
                .max_message_size(Some(max_message))
                .max_frame_size(Some(max_message));
            let socket = WebSocketStream::from_raw_socket(io, Role::Server, Some(config)).await;
            callback(socket).await;
        });
        match self.key {
            Some(key) => Response::builder()
                .status(StatusCode::SWITCHING_PROTOCOLS)
                .header(header::CONNECTION, "upgrade")
                .header(header::UPGRADE, "websocket")
                .header(
                    header::SEC_WEBSOCKET_ACCEPT,
                    derive_accept_key(key.as_bytes()),
                )
                .body(Body::empty())
                .expect("static headers"),
            // HTTP/2 (RFC 9113 8.5): a 2xx with no body.
            None => Response::new(Body::empty()),
        }
    }
}
