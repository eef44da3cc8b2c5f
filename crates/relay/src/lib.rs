//! `bridge-relay`: a self-hosted session ingress. It runs Claude Code (or the scripted demo agent) as
//! child processes over stdio stream-json and serves them to browsers with the wire shapes of
//! Anthropic's session ingress (CCR v2: SSE down, POST up; plus a WebSocket), so the official browser
//! SDK and the Bridge Console both work against it. See `docs` in the README and CONTRACTS.md.
//!
//! Floors, from the ground up (docs/architecture.md draws them): [`core`] (sessions, store,
//! agents, auth, config), [`edge`] (what routes share, the streams), [`features`] (push, changes,
//! transcripts, TLS, terminal sessions), [`cluster`] (scale-out, plugged in from the top), and
//! [`http`], whose [`app`] builds the router from a [`Relay`]; `main.rs` parses arguments and binds.

#[cfg(feature = "cluster")]
pub mod cluster;
#[cfg(not(feature = "cluster"))]
#[path = "cluster_off.rs"]
pub mod cluster;
pub mod core;
pub mod edge;
pub mod features;
pub mod http;

pub use crate::core::config::{Args, Config, SpawnMode};
pub use crate::core::relay::Relay;
pub use crate::core::store::{EventStore, MemoryStore, SqliteStore};
pub use http::{AppState, app};

/// Opens a relay as `bridge-relay` runs it: the core ([`Relay::open`]) with Web Push plugged in
/// (the VAPID key `vapid_private.pem` in the data dir, subscriptions in `relay.db`).
pub fn open(config: Config) -> anyhow::Result<std::sync::Arc<Relay>> {
    crate::core::relay::prepare_data_dir(&config.data_dir)?;
    let db = config.data_dir.join("relay.db");
    let push = crate::features::push::Push::open(&config.data_dir, &db, config.push.clone())
        .map_err(|e| anyhow::anyhow!("push notifications: {e}"))?;
    let relay = Relay::open(config, Some(push.handle()))?;
    relay.plugs.set(push);
    Ok(relay)
}
