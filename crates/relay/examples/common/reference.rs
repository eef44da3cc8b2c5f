//! The reference broadcaster of the fan-out benchmark: the least a server can do to deliver one
//! session's frames to many SSE readers, as a bound for the relay (issue 29). tokio + hyper, one
//! HTTP/1 connection task per reader, every frame serialized once (`Bytes`, shared), a reader's
//! frames that arrived meanwhile written in one chunk; no auth, no store, no logging.
//!
//! Run as `<example> --reference-server`: prints its port, serves `GET /events` (the stream) and
//! `POST /go?count=N&rate=R` (N frames at R/s, stamped like the bench agent's, then `result`).

use std::convert::Infallible;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Request, Response};
use tokio::sync::broadcast;

type Body = axum::body::Body;

pub fn serve() -> anyhow::Result<()> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(run())
}

async fn run() -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    println!("{}", listener.local_addr()?.port());
    let (tx, _) = broadcast::channel::<Bytes>(8192);
    loop {
        let (io, _) = listener.accept().await?;
        let tx = tx.clone();
        tokio::spawn(async move {
            let service = service_fn(move |req: Request<Incoming>| {
                let tx = tx.clone();
                async move { Ok::<_, Infallible>(handle(req, tx)) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(io), service)
                .await;
        });
    }
}

fn handle(req: Request<Incoming>, tx: broadcast::Sender<Bytes>) -> Response<Body> {
    if req.uri().path() == "/go" {
        let q = req.uri().query().unwrap_or("");
        let get = |k: &str| {
            q.split('&')
                .find_map(|kv| kv.strip_prefix(k)?.strip_prefix('='))
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0)
        };
        tokio::spawn(produce(tx, get("count"), get("rate")));
        return Response::new(Body::empty());
    }
    let rx = tx.subscribe();
    let stream = futures::stream::unfold(rx, |mut rx| async move {
        // One chunk: the frame that woke this reader and every one that came meanwhile.
        let first = loop {
            match rx.recv().await {
                Ok(b) => break b,
                Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        };
        let mut chunk = BytesMut::from(&first[..]);
        while let Ok(b) = rx.try_recv() {
            chunk.extend_from_slice(&b);
        }
        Some((Ok::<_, Infallible>(chunk.freeze()), rx))
    });
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(Body::from_stream(stream))
        .expect("a valid response")
}

async fn produce(tx: broadcast::Sender<Bytes>, count: u64, rate: u64) {
    let text = "x".repeat(120);
    let start = Instant::now();
    for n in 0..count {
        if let Some(at) = (n * 1_000_000_000).checked_div(rate) {
            let due = start + Duration::from_nanos(at);
            tokio::time::sleep_until(due.into()).await;
        }
        let t = super::now_ns();
        let frame = format!(
            "event: client_event\nid: {n}\ndata: {{\"payload\":{{\"type\":\"assistant\",\"message\":{{\"content\":[{{\"type\":\"text\",\"text\":\"{text}\"}}]}},\"n\":{n},\"t_ns\":{t}}},\"sequence_num\":{n}}}\n\n"
        );
        let _ = tx.send(Bytes::from(frame));
    }
}
