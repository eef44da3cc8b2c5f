//! The relay's request handlers: `bridge_relay::app(state)` driven through `tower::ServiceExt::oneshot`
//! on a current-thread runtime, no socket.
//!
//! Each input is up to four requests separated by the byte 0x1E (record separator). A request is text:
//! `METHOD PATH` on the first line, `Name: value` header lines, a blank line, then the body. The
//! relay is built fresh for every input (memory store, in-memory auth with a known controller token,
//! audit disabled, no push) with one restored session `cse_fuzz` holding a few events, and an agent
//! launcher whose program does not exist (creating a session answers 502 without running anything).
//!
//! Properties: no panic; no 5xx except the documented ones (502 the agent could not be started, 503
//! a queue is full / push is not configured); every answer is JSON or a stream the client can read.
#![no_main]

use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Method, Request};
use bridge_relay::agent::{AgentLauncher, SpawnSpec};
use bridge_relay::audit::AuditLog;
use bridge_relay::auth::Auth;
use bridge_relay::session::SessionMeta;
use bridge_relay::store::{EventStore as _, MemoryStore, Source, StoredEvent};
use bridge_relay::{Args, Relay, app};
use clap::Parser as _;
use futures::FutureExt as _;
use http_body::Body as _;
use libfuzzer_sys::fuzz_target;
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
    meta.state = bridge_relay::session::SessionState::Ended;
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

fuzz_target!(|data: &[u8]| {
    let rt = runtime();
    rt.block_on(async {
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
        for part in data.split(|&b| b == 0x1e).take(4) {
            let Some(req) = request(part) else { continue };
            let described = format!("{} {}", req.method(), req.uri());
            let res = router.clone().oneshot(req).await.unwrap();
            let status = res.status().as_u16();
            assert!(
                status < 500 || matches!(status, 502 | 503),
                "{described} answered {status}"
            );
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
        relay.begin_shutdown();
    });
});
