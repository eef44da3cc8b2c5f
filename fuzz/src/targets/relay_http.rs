//! The relay's request handlers: `bridge_relay::app(state)` driven through `tower::ServiceExt::oneshot`
//! on a current-thread runtime, no socket.
//!
//! Each input is up to four requests separated by the byte 0x1E (record separator). A request is text:
//! `METHOD PATH` on the first line, `Name: value` header lines, a blank line, then the body. The
//! relay (memory store, in-memory auth with a known controller token, audit disabled, no push) has
//! one restored session `cse_fuzz` holding a few events, and an agent launcher whose program does
//! not exist (creating a session answers 502 without running anything).
//!
//! Building that relay and its router costs more than most inputs (the auth store's SQLite schema,
//! the route table), so it is built once and kept while inputs leave it as it was. After an input
//! it is rebuilt from scratch when any request may have changed something: a write that was not
//! refused (a method other than GET/HEAD/OPTIONS answered below 400), a 401 or 429 (a failed login
//! is charged to the per-peer rate limit), a `Set-Cookie` (a login), or a change in what the relay
//! shows — every session's summary (state, archived, worktree, last sequence number), every
//! credential and login (without their last-use times), and the streams still open. So each input
//! starts from the same relay. Shared between inputs, by design: the tokio runtime and its clock,
//! the parsed configuration, and the last-use times of the controller token.
//!
//! Properties: no panic; no 5xx except the documented ones (502 the agent could not be started, 503
//! a queue is full / push is not configured); every answer is JSON or a stream the client can read.

use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Method, Request};
use bridge_relay::core::agent::{AgentLauncher, SpawnSpec};
use bridge_relay::core::audit::AuditLog;
use bridge_relay::core::auth::Auth;
use bridge_relay::core::session::SessionMeta;
use bridge_relay::core::store::{EventStore as _, MemoryStore, Source, StoredEvent};
use bridge_relay::{Args, Relay, app};
use clap::Parser as _;
use futures::FutureExt as _;
use http_body::Body as _;
use tower::ServiceExt as _;

const TOKEN: &str = "fuzz-controller-token-0123456789abcdef";
const SESSION: &str = "cse_fuzz";

struct NoAgent;

impl AgentLauncher for NoAgent {
    fn command(&self, _spec: &SpawnSpec) -> tokio::process::Command {
        tokio::process::Command::new("/nonexistent/bridge-fuzz-agent")
    }
    fn describe(&self) -> String {
        "no agent (fuzzing)".into()
    }
}

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    })
}

fn config() -> bridge_relay::Config {
    static BASE: OnceLock<bridge_relay::Config> = OnceLock::new();
    BASE.get_or_init(|| {
        let dir = std::env::temp_dir().join("bridge-fuzz-relay");
        let args = Args::try_parse_from([
            "bridge-relay",
            "--data-dir",
            dir.to_str().unwrap(),
            "--static-dir",
            dir.join("no-static").to_str().unwrap(),
            "--cwd",
            "/tmp",
        ])
        .unwrap();
        let mut config = args.into_config("127.0.0.1:8787".parse().unwrap()).unwrap();
        config.launcher = Arc::new(NoAgent);
        config
    })
    .clone()
}

fn store() -> Arc<MemoryStore> {
    let store = Arc::new(MemoryStore::default());
    let mut meta = SessionMeta::new(
        SESSION.into(),
        "/tmp".into(),
        None,
        None,
        Some("fuzz".into()),
    );
    meta.state = bridge_relay::core::session::SessionState::Ended;
    store.save_session(&meta).unwrap();
    let payloads = [
        r#"{"type":"user","message":{"role":"user","content":"hi"},"uuid":"00000000-0000-4000-8000-000000000001"}"#,
        r#"{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"hello"}]}}"#,
        r#"{"type":"result","subtype":"success","is_error":false,"result":"hello"}"#,
    ];
    for (i, p) in payloads.iter().enumerate() {
        store
            .append(&StoredEvent {
                session_id: SESSION.into(),
                seq: i as u64 + 1,
                event_id: format!("evt_{i}"),
                event_type: "client_event".into(),
                source: if i == 0 {
                    Source::Client
                } else {
                    Source::Worker
                },
                created_at: "2026-01-01T00:00:00Z".into(),
                payload: (*p).into(),
                client_uuid: (i == 0).then(|| "00000000-0000-4000-8000-000000000001".into()),
            })
            .unwrap();
    }
    store
}

fn request(text: &[u8]) -> Option<Request<Body>> {
    let head_end = text
        .windows(2)
        .position(|w| w == b"\n\n")
        .map_or((text.len(), text.len()), |p| (p, p + 2));
    let head = std::str::from_utf8(&text[..head_end.0]).ok()?;
    let body = text[head_end.1..].to_vec();
    let mut lines = head.lines();
    let (method, path) = lines.next()?.split_once(' ')?;
    let mut builder = Request::builder()
        .method(Method::from_bytes(method.as_bytes()).ok()?)
        .uri(path);
    for line in lines {
        let (name, value) = line.split_once(':')?;
        builder = builder.header(name.trim(), value.trim());
    }
    let mut req = builder.body(Body::from(body)).ok()?;
    req.extensions_mut().insert(ConnectInfo::<SocketAddr>(
        "127.0.0.1:40000".parse().unwrap(),
    ));
    Some(req)
}

/// The relay and its router, and what it showed when it was built.
struct Harness {
    relay: Arc<Relay>,
    router: axum::Router,
    pristine: String,
}

fn build() -> Harness {
    let relay = Relay::with_parts(
        config(),
        store(),
        {
            let auth = Auth::open_in_memory().unwrap();
            auth.set_controller(TOKEN).unwrap();
            auth
        },
        Arc::new(AuditLog::disabled()),
        None,
    )
    .unwrap();
    let router = app(relay.clone());
    let pristine = fingerprint(&relay);
    Harness {
        relay,
        router,
        pristine,
    }
}

/// What an input could have changed, as the relay shows it.
fn fingerprint(relay: &Relay) -> String {
    let mut credentials = relay.auth.list_credentials();
    for c in &mut credentials {
        if let Some(o) = c.as_object_mut() {
            o.remove("last_used_at");
        }
    }
    format!(
        "{}\n{}\n{}",
        serde_json::to_string(&relay.summaries(bridge_relay::core::relay::Archived::All, None))
            .unwrap_or_default(),
        serde_json::Value::Array(credentials),
        relay
            .limits
            .streams
            .open(bridge_relay::core::auth::CONTROLLER_ID),
    )
}

thread_local! {
    static HARNESS: std::cell::RefCell<Option<Harness>> = const { std::cell::RefCell::new(None) };
}

/// One input, as libFuzzer gives it (`fuzz_targets/relay_http.rs`) and as the relay's test replays the
/// committed corpus (`crates/relay/tests/fuzz_corpus.rs`).
pub fn input(data: &[u8]) {
    let rt = runtime();
    let harness = HARNESS
        .with(|h| h.borrow_mut().take())
        .unwrap_or_else(|| rt.block_on(async { build() }));
    let dirty = rt.block_on(async {
        let mut dirty = false;
        for part in data.split(|&b| b == 0x1e).take(4) {
            let Some(req) = request(part) else { continue };
            let described = format!("{} {}", req.method(), req.uri());
            let write = !matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS);
            let res = harness.router.clone().oneshot(req).await.unwrap();
            let status = res.status().as_u16();
            assert!(
                status < 500 || matches!(status, 502 | 503),
                "{described} answered {status}"
            );
            dirty |= (write && status < 400)
                || matches!(status, 401 | 429)
                || res.headers().contains_key(axum::http::header::SET_COOKIE);
            // Read what the body has ready (an event stream never ends), a bounded number of frames.
            let mut body = res.into_body();
            for _ in 0..64 {
                tokio::task::yield_now().await;
                let next = std::future::poll_fn(|cx| std::pin::Pin::new(&mut body).poll_frame(cx))
                    .now_or_never();
                match next {
                    Some(Some(Ok(_))) => continue,
                    Some(Some(Err(_))) | Some(None) | None => break,
                }
            }
        }
        // Let what the requests started (stream tasks, an archive's agent shutdown) settle.
        for _ in 0..8 {
            tokio::task::yield_now().await;
        }
        dirty || fingerprint(&harness.relay) != harness.pristine
    });
    if dirty {
        harness.relay.begin_shutdown();
        drop(harness);
        // The old relay's tasks see it gone and end.
        rt.block_on(async {
            for _ in 0..4 {
                tokio::task::yield_now().await;
            }
        });
    } else {
        HARNESS.with(|h| *h.borrow_mut() = Some(harness));
    }
}
