//! Scale-out when the relay is built without it (`--no-default-features`: no `cluster` feature, no
//! async-nats): the names the routes use, none of which can be reached — there is never a
//! [`Cluster`] — and [`start`] refusing `--nats` with a clear error.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;

use crate::core::auth::Principal;
use crate::core::relay::Relay;
use crate::edge::error::ApiError;
use crate::edge::extract::AppState;

pub use crate::core::config::cluster::{ClusterConfig, Role};
pub use crate::core::seal;

/// A relay of a cluster: never, in this build.
pub enum Cluster {}

impl Cluster {
    /// Never a cluster in this build.
    pub fn of(_: &Relay) -> Option<Arc<Cluster>> {
        None
    }

    pub async fn redeem_login_code(&self, _: &str) -> Result<bool, ApiError> {
        match *self {}
    }

    pub async fn share_credentials(
        &self,
        _: Vec<(String, crate::core::auth::shared::Shared)>,
        _: &str,
    ) -> Result<(), ApiError> {
        match *self {}
    }

    pub async fn unshare_credentials(&self, _: Vec<String>, _: &str) -> Result<(), ApiError> {
        match *self {}
    }

    pub fn set_routes(&self, _: axum::Router) {
        match *self {}
    }

    /// Whether this node serves every session (a gateway or `--role all`).
    pub fn serves_all(&self) -> bool {
        match *self {}
    }
}

/// No other node knows a session.
pub async fn knows_session(_: &Relay, _: &str) -> bool {
    false
}

/// The session list of a cluster (never called in this build).
pub async fn session_list(
    cluster: &Cluster,
    _: &Principal,
    _: bool,
    _: bool,
) -> Result<bridge_protocol::api::SessionList, ApiError> {
    match *cluster {}
}

/// The gateway's middleware: passes everything through.
pub async fn middleware(State(_): State<AppState>, req: Request, next: Next) -> Response {
    next.run(req).await
}

/// `--nats` in a build without scale-out.
pub async fn start(_: &Arc<Relay>, _: ClusterConfig) -> anyhow::Result<()> {
    anyhow::bail!(
        "--nats: this bridge-relay was built without scale-out (the `cluster` feature); rebuild with default features"
    )
}
