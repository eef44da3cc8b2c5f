//! The native I/O edge (feature `native`): tokio, reqwest (streaming body,
//! token in the `Authorization` header), tokio-tungstenite.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use futures::channel::mpsc;
use futures::{SinkExt as _, StreamExt as _};
use serde_json::Value;
use tokio_tungstenite::tungstenite::{self, Message, client::IntoClientRequest as _};

use crate::backoff::parse_retry_after;
use crate::core::{Config, Core, Entropy, EventsPage, Failure, ReadMode, Resume};
use crate::driver::{BoxFut, Clock, Connection, Incoming, Io, Transport};
use crate::endpoint::{Endpoint, classify_post_status, error_type, events_page};
use crate::outbox::PostOutcome;

/// POSTs and REST fetches give up after this long (the relay answers fast).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// The native edge.
#[derive(Debug, Clone)]
pub struct NativeIo {
    client: reqwest::Client,
    endpoint: Endpoint,
    start: Instant,
}

impl NativeIo {
    /// An edge talking to `endpoint`.
    pub fn new(endpoint: Endpoint) -> Self {
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(15))
            .build()
            .expect("a default reqwest client builds");
        Self {
            client,
            endpoint,
            start: Instant::now(),
        }
    }

    fn auth(&self, rb: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.endpoint.token {
            Some(t) => rb.bearer_auth(t),
            None => rb,
        }
    }
}

/// Connects a transport natively; spawns its driver on the current tokio
/// runtime. Call from within a runtime.
pub fn connect(endpoint: Endpoint, config: Config, resume: Resume) -> Transport {
    let io = NativeIo::new(endpoint);
    let start = io.start;
    let clock: Clock = std::sync::Arc::new(move || start.elapsed().as_millis() as u64);
    let core = Core::new(config, resume, Entropy::system(), clock());
    let (transport, driver) = Transport::new(io, core, clock);
    tokio::spawn(driver);
    transport
}

fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// The `Retry-After` header's text, if it has one.
fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<&str> {
    headers
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
}

/// Sends `rb`: its response when the status is a success, else the failure it stands for.
async fn send(rb: reqwest::RequestBuilder) -> Result<reqwest::Response, Failure> {
    let resp = rb
        .send()
        .await
        .map_err(|e| Failure::Network(e.to_string()))?;
    if !resp.status().is_success() {
        return Err(http_failure(resp).await);
    }
    Ok(resp)
}

async fn http_failure(resp: reqwest::Response) -> Failure {
    let status = resp.status().as_u16();
    let retry_after_ms = retry_after(resp.headers()).and_then(|v| parse_retry_after(v, unix_ms()));
    let body = resp.text().await.unwrap_or_default();
    Failure::Http {
        status,
        retry_after_ms,
        reason: error_type(&body).0,
    }
}

impl Io for NativeIo {
    fn now_ms(&self) -> u64 {
        self.start.elapsed().as_millis() as u64
    }

    fn sleep(&self, ms: u64) -> BoxFut<()> {
        Box::pin(tokio::time::sleep(Duration::from_millis(ms)))
    }

    fn connect(&self, mode: ReadMode, from: u64) -> BoxFut<Result<Connection, Failure>> {
        match mode {
            ReadMode::Sse => {
                let mut rb = self
                    .auth(self.client.get(self.endpoint.stream_url(from)))
                    .header(reqwest::header::ACCEPT, "text/event-stream");
                if from > 0 {
                    rb = rb.header("Last-Event-ID", from.to_string());
                }
                Box::pin(async move {
                    let incoming = send(rb).await?.bytes_stream().map(|r| match r {
                        Ok(b) => Incoming::Bytes(b.to_vec()),
                        Err(e) => Incoming::Failed(Failure::Network(e.to_string())),
                    });
                    Ok(Connection {
                        incoming: Box::pin(incoming),
                        outgoing: None,
                    })
                })
            }
            ReadMode::WebSocket => {
                let url = self.endpoint.ws_url(from);
                let token = self.endpoint.token.clone();
                Box::pin(async move {
                    let mut req = url
                        .as_str()
                        .into_client_request()
                        .map_err(|e| Failure::Network(e.to_string()))?;
                    if let Some(t) = token {
                        let v = format!("Bearer {t}").parse().map_err(|_| {
                            Failure::Network("the token is not a valid header value".into())
                        })?;
                        req.headers_mut().insert("authorization", v);
                    }
                    let (ws, _) = match tokio_tungstenite::connect_async(req).await {
                        Ok(ok) => ok,
                        Err(tungstenite::Error::Http(resp)) => {
                            let body = resp
                                .body()
                                .as_deref()
                                .map(String::from_utf8_lossy)
                                .unwrap_or_default()
                                .into_owned();
                            return Err(Failure::Http {
                                status: resp.status().as_u16(),
                                retry_after_ms: retry_after(resp.headers())
                                    .and_then(|v| parse_retry_after(v, unix_ms())),
                                reason: error_type(&body).0,
                            });
                        }
                        Err(e) => return Err(Failure::Network(e.to_string())),
                    };
                    let (mut sink, stream) = ws.split();
                    let (tx, mut rx) = mpsc::unbounded::<String>();
                    tokio::spawn(async move {
                        while let Some(text) = rx.next().await {
                            if sink.send(Message::text(text)).await.is_err() {
                                return;
                            }
                        }
                        let _ = sink.close().await;
                    });
                    let incoming = stream.map(|m| match m {
                        Ok(Message::Text(t)) => Incoming::Text(t.as_str().to_owned()),
                        Ok(Message::Close(frame)) => Incoming::Failed(match frame {
                            Some(f) => Failure::WsClosed {
                                code: f.code.into(),
                                reason: f.reason.as_str().to_owned(),
                            },
                            None => Failure::WsClosed {
                                code: 1005,
                                reason: String::new(),
                            },
                        }),
                        Ok(_) => Incoming::Activity,
                        Err(e) => Incoming::Failed(Failure::Network(e.to_string())),
                    });
                    Ok(Connection {
                        incoming: Box::pin(incoming),
                        outgoing: Some(tx),
                    })
                })
            }
        }
    }

    fn post(&self, body: Value) -> BoxFut<PostOutcome> {
        let rb = self
            .auth(self.client.post(self.endpoint.send_url()))
            .timeout(REQUEST_TIMEOUT)
            .json(&body);
        Box::pin(async move {
            let resp = match rb.send().await {
                Ok(r) => r,
                Err(e) => {
                    return PostOutcome::Retryable {
                        error: e.to_string(),
                        retry_after_ms: None,
                    };
                }
            };
            let status = resp.status().as_u16();
            let retry_after = retry_after(resp.headers()).map(str::to_owned);
            match resp.text().await {
                Ok(text) => classify_post_status(status, retry_after.as_deref(), &text, unix_ms()),
                Err(e) => PostOutcome::Retryable {
                    error: format!("HTTP {status}, body unreadable: {e}"),
                    retry_after_ms: None,
                },
            }
        })
    }

    fn fetch_events(&self, after: u64, limit: usize) -> BoxFut<Result<EventsPage, Failure>> {
        let rb = self
            .auth(self.client.get(self.endpoint.events_url(after, limit)))
            .timeout(REQUEST_TIMEOUT);
        Box::pin(async move {
            let text = send(rb)
                .await?
                .text()
                .await
                .map_err(|e| Failure::Network(e.to_string()))?;
            events_page(&text)
        })
    }
}
