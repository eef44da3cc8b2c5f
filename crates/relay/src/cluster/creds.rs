//! Credentials shared by every relay of the cluster: observer tokens, logins (cookies) and one-time
//! login codes live in the KV bucket [`CREDENTIALS_BUCKET`], keyed by the SHA-256 of their secret
//! (entries: [`crate::auth::shared::Shared`]; hashes only). A token or cookie minted through one
//! gateway works at every gateway; each relay follows the bucket into the maps it authenticates
//! from, so a revocation anywhere (a deleted key) ends that credential's open streams on every relay
//! at their next check ([`crate::auth::until_revoked`], 250 ms). A login code is redeemed by deleting
//! its key at the revision that was read: exactly one relay succeeds.
//!
//! Writes go to the bucket before they are answered (a mint or revocation NATS does not confirm is
//! refused with 503 and changes nothing); the controller token is not shared (every relay is given it).

use std::sync::{Arc, Weak};
use std::time::Duration;

use futures::StreamExt as _;

use super::Cluster;
use crate::auth::shared::{self, Shared};
use crate::error::ApiError;

/// Credential hashes: key ([`shared::OBSERVER_KEY`], [`shared::LOGIN_KEY`] or
/// [`shared::CODE_KEY`] + hex SHA-256) → [`Shared`].
pub const CREDENTIALS_BUCKET: &str = "bridge_credentials";
/// How long a credential write waits for NATS.
const WRITE_TIMEOUT: Duration = Duration::from_secs(5);

fn unreachable(what: &str, e: impl std::fmt::Display) -> ApiError {
    tracing::warn!(error = %e, "{what}: the credential bucket on NATS did not answer");
    super::unavailable(format!(
        "{what} needs NATS (credentials are shared by every gateway), which did not answer: try again"
    ))
}

impl Cluster {
    /// Writes entries to the bucket (after they were made here).
    pub async fn share_credentials(
        &self,
        entries: Vec<(String, Shared)>,
        what: &str,
    ) -> Result<(), ApiError> {
        for (key, entry) in entries {
            let body = serde_json::to_vec(&entry).map_err(|e| ApiError::internal(e.to_string()))?;
            tokio::time::timeout(WRITE_TIMEOUT, self.creds_kv.put(key, body.into()))
                .await
                .map_err(|_| unreachable(what, "timed out"))?
                .map_err(|e| unreachable(what, e))?;
        }
        Ok(())
    }

    /// Deletes entries from the bucket: every relay forgets them within a moment.
    pub async fn unshare_credentials(&self, keys: Vec<String>, what: &str) -> Result<(), ApiError> {
        for key in keys {
            tokio::time::timeout(WRITE_TIMEOUT, self.creds_kv.delete(key))
                .await
                .map_err(|_| unreachable(what, "timed out"))?
                .map_err(|e| unreachable(what, e))?;
        }
        Ok(())
    }

    /// Redeems a one-time login code: `true` for exactly one caller across the cluster, while it
    /// has not expired.
    pub async fn redeem_login_code(&self, code: &str) -> Result<bool, ApiError> {
        let key = shared::code_key(code);
        let entry = tokio::time::timeout(WRITE_TIMEOUT, self.creds_kv.entry(key.clone()))
            .await
            .map_err(|_| unreachable("logging in", "timed out"))?
            .map_err(|e| unreachable("logging in", e))?;
        let Some(entry) =
            entry.filter(|e| e.operation == async_nats::jetstream::kv::Operation::Put)
        else {
            return Ok(false);
        };
        let Ok(Shared::Code { expires_at }) = serde_json::from_slice(&entry.value) else {
            return Ok(false);
        };
        if expires_at <= crate::util::unix_now() {
            return Ok(false);
        }
        // Only the first delete at the revision read succeeds: the code works once.
        match tokio::time::timeout(
            WRITE_TIMEOUT,
            self.creds_kv
                .delete_expect_revision(key, Some(entry.revision)),
        )
        .await
        {
            Ok(Ok(())) => Ok(true),
            Ok(Err(e)) => {
                tracing::info!(error = %e, "a login code was redeemed elsewhere first");
                Ok(false)
            }
            Err(_) => Err(unreachable("logging in", "timed out")),
        }
    }
}

/// Whether the cluster's registry has session `id` (an observer token may be scoped to a session
/// another node runs). Without `--nats`: `false`.
pub async fn knows_session(relay: &crate::relay::Relay, id: &str) -> bool {
    match relay.cluster.get() {
        Some(c) => c.entry(id).await.is_some(),
        None => false,
    }
}

/// Follows the bucket into this relay's credential maps: every entry at start (what this relay had
/// in memory is dropped first: the bucket is the authority), then each change; again from the start
/// after NATS comes back.
pub(super) async fn follow(cluster: Weak<Cluster>) {
    let mut first = true;
    loop {
        let Some(c) = cluster.upgrade() else { return };
        let Some(relay) = c.relay() else { return };
        let mut reconnected = c.connected.clone();
        reconnected.mark_unchanged();
        let watch = c.creds_kv.watch_with_history(">").await;
        drop(c);
        match watch {
            Ok(mut watch) => {
                if first {
                    relay.auth.forget_all_shared();
                    first = false;
                }
                loop {
                    tokio::select! {
                        next = watch.next() => match next {
                            Some(Ok(e)) => apply(&relay.auth, e),
                            Some(Err(e)) => {
                                tracing::warn!(error = %e, "following the credential bucket");
                                break;
                            }
                            None => break,
                        },
                        _ = reconnected.changed() => break,
                    }
                }
            }
            Err(e) => tracing::warn!(error = %e, "cannot follow the credential bucket"),
        }
        drop(relay);
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

fn apply(auth: &crate::auth::Auth, e: async_nats::jetstream::kv::Entry) {
    use async_nats::jetstream::kv::Operation;
    match e.operation {
        Operation::Put => match serde_json::from_slice::<Shared>(&e.value) {
            Ok(entry) => auth.apply_shared(&e.key, entry),
            Err(err) => {
                tracing::warn!(key = %e.key, error = %err, "an unreadable credential entry")
            }
        },
        Operation::Delete | Operation::Purge => auth.forget_shared(&e.key),
    }
}

/// Opens (or makes) the bucket.
pub(super) async fn bucket(
    js: &async_nats::jetstream::Context,
) -> anyhow::Result<async_nats::jetstream::kv::Store> {
    super::bucket(js, CREDENTIALS_BUCKET, Duration::ZERO).await
}

/// Starts following the bucket.
pub(super) fn spawn(cluster: &Arc<Cluster>) {
    tokio::spawn(follow(Arc::downgrade(cluster)));
}
