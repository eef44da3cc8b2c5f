//! The HTTP server loop: what `axum::serve` does, plus the limits a server on a network needs
//! before anyone is known. Each connection must send its request headers within
//! [`HEADER_READ_TIMEOUT`] (a client that opens connections and trickles bytes — slowloris — holds
//! nothing for long), with HTTP/1 and HTTP/2 (and WebSocket upgrades) served by hyper.
//! Handlers see the peer address as `ConnectInfo<SocketAddr>`, as with
//! `into_make_service_with_connect_info`. On shutdown every connection is asked to finish its
//! requests and the loop returns once they have.

use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use axum::extract::ConnectInfo;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use hyper_util::service::TowerToHyperService;

/// How long a connection may take to send a request's headers (the first, and each next one on a
/// kept-alive connection).
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Serves `router` on `listener` until `shutdown` resolves, then waits for open connections to
/// finish (streams are ended by the relay's own shutdown first).
pub async fn serve<L>(
    mut listener: L,
    router: Router,
    header_read_timeout: Duration,
    shutdown: impl Future<Output = ()> + Send,
) where
    L: axum::serve::Listener<Addr = SocketAddr>,
{
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut conns = tokio::task::JoinSet::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (io, addr) = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        let router = router.clone();
        let mut stop = stop_rx.clone();
        conns.spawn(async move {
            let svc = tower::ServiceBuilder::new()
                .map_request(move |mut req: axum::http::Request<hyper::body::Incoming>| {
                    req.extensions_mut().insert(ConnectInfo(addr));
                    req.map(axum::body::Body::new)
                })
                .service(router);
            let mut builder = Builder::new(TokioExecutor::new());
            builder
                .http1()
                .timer(TokioTimer::new())
                .header_read_timeout(header_read_timeout);
            builder
                .http2()
                .timer(TokioTimer::new())
                .enable_connect_protocol();
            let conn = builder
                .serve_connection_with_upgrades(TokioIo::new(io), TowerToHyperService::new(svc));
            let mut conn = std::pin::pin!(conn);
            tokio::select! {
                r = conn.as_mut() => {
                    if let Err(e) = r {
                        tracing::trace!(error = %e, peer = %addr, "connection ended");
                    }
                    return;
                }
                _ = stop.wait_for(|s| *s) => conn.as_mut().graceful_shutdown(),
            }
            if let Err(e) = conn.await {
                tracing::trace!(error = %e, peer = %addr, "connection ended while shutting down");
            }
        });
        // Reap the finished ones as we go (the set would grow with every connection otherwise).
        while conns.try_join_next().is_some() {}
    }
    let _ = stop_tx.send(true);
    while conns.join_next().await.is_some() {}
}
