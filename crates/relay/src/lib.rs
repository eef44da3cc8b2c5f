//! `bridge-relay`: a self-hosted session ingress. It runs Claude Code (or the scripted demo agent) as
//! child processes over stdio stream-json and serves them to browsers with the wire shapes of
//! Anthropic's session ingress (CCR v2: SSE down, POST up; plus a WebSocket), so the official browser
//! SDK and the Bridge Console both work against it. See `docs` in the README and CONTRACTS.md.
//!
//! [`app`] builds the router from a [`Relay`]; `main.rs` only parses arguments and binds.

pub mod agent;
pub mod assets;
pub mod audit;
pub mod auth;
pub mod changes;
pub mod cluster;
pub mod config;
pub mod error;
pub mod external;
pub mod extract;
pub mod follow;
pub mod frames;
pub mod headers;
pub mod hooks;
pub mod http;
pub mod limits;
pub mod notice;
pub mod plugs;
pub mod proto;
pub mod push;
pub mod record;
pub mod redact;
pub mod relay;
pub mod seal;
pub mod serve;
pub mod service;
pub mod session;
pub mod sse;
pub mod store;
pub mod tls;
pub mod transcripts;
pub mod util;
pub mod validate;
pub mod worktree;
pub mod ws;

pub use config::{Args, Config, SpawnMode};

/// Opens a relay as `bridge-relay` runs it: the core ([`Relay::open`]) with Web Push plugged in
/// (the VAPID key `vapid_private.pem` in the data dir, subscriptions in `relay.db`).
pub fn open(config: Config) -> anyhow::Result<std::sync::Arc<Relay>> {
    relay::prepare_data_dir(&config.data_dir)?;
    let db = config.data_dir.join("relay.db");
    let push = push::Push::open(&config.data_dir, &db, config.push.clone())
        .map_err(|e| anyhow::anyhow!("push notifications: {e}"))?;
    let relay = Relay::open(config, Some(push.handle()))?;
    relay.plugs.set(push);
    Ok(relay)
}
pub use http::{AppState, app};
pub use relay::Relay;
pub use store::{EventStore, MemoryStore, SqliteStore};
