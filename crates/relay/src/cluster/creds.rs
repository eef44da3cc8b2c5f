//! Credentials shared by every relay of the cluster: observer tokens, logins (cookies) and one-time
//! login codes live in the KV bucket [`CREDENTIALS_BUCKET`], keyed by the SHA-256 of their secret
//! (entries: [`crate::core::auth::shared::Shared`]; hashes only). A token or cookie minted through one
//! gateway works at every gateway; each relay follows the bucket into the maps it authenticates
//! from, so a revocation anywhere (a deleted key) ends that credential's open streams on every relay
//! at their next check ([`crate::edge::extract::until_revoked`], 250 ms). A login code is redeemed by deleting
//! its key at the revision that was read: exactly one relay succeeds.
//!
//! Expired entries are purged from the bucket by every relay's sweep ([`sweep`], every minute;
//! idempotent: a key's messages are removed, whoever gets there first): NATS 2.9 has no per-key
//! TTL, and the bucket's max-age would also end credentials that have not expired. An expired
//! credential is refused everywhere from the moment it expires, before or after the purge.
//!
//! Writes go to the bucket before they are answered (a mint or revocation NATS does not confirm is
//! refused with 503 and changes nothing); the controller token is not shared (every relay is given it).

use std::sync::{Arc, Weak};
use std::time::Duration;

use super::Cluster;
use crate::core::auth::shared::{self, Shared};
use crate::edge::error::ApiError;

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
            let sealed = self.seal_kv(CREDENTIALS_BUCKET, &key, &body);
            tokio::time::timeout(WRITE_TIMEOUT, self.ready()?.creds_kv.put(key, sealed))
                .await
                .map_err(|_| unreachable(what, "timed out"))?
                .map_err(|e| unreachable(what, e))?;
        }
        Ok(())
    }

    /// Deletes entries from the bucket: every relay forgets them within a moment.
    pub async fn unshare_credentials(&self, keys: Vec<String>, what: &str) -> Result<(), ApiError> {
        for key in keys {
            tokio::time::timeout(WRITE_TIMEOUT, self.ready()?.creds_kv.delete(key))
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
        let kv = &self.ready()?.creds_kv;
        let entry = tokio::time::timeout(WRITE_TIMEOUT, kv.entry(key.clone()))
            .await
            .map_err(|_| unreachable("logging in", "timed out"))?
            .map_err(|e| unreachable("logging in", e))?;
        let Some(entry) =
            entry.filter(|e| e.operation == async_nats::jetstream::kv::Operation::Put)
        else {
            return Ok(false);
        };
        let Some(value) = self.open_kv(CREDENTIALS_BUCKET, &key, &entry.value) else {
            return Ok(false);
        };
        let Ok(Shared::Code { expires_at }) = serde_json::from_slice(&value) else {
            return Ok(false);
        };
        if expires_at <= crate::core::util::unix_now() {
            return Ok(false);
        }
        // Only the first delete at the revision read succeeds: the code works once.
        match tokio::time::timeout(
            WRITE_TIMEOUT,
            kv.delete_expect_revision(key, Some(entry.revision)),
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
pub async fn knows_session(relay: &crate::core::relay::Relay, id: &str) -> bool {
    match crate::cluster::Cluster::of(relay) {
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
        let Some(n) = c.nats() else { return };
        let watch = n.creds_kv.watch_with_history(">").await;
        let keys = c.keys.clone();
        drop(c);
        match watch {
            Ok(mut watch) => {
                if first {
                    relay.auth.forget_all_shared();
                    first = false;
                }
                let take = |e: async_nats::jetstream::kv::Entry| {
                    apply(&relay.auth, &keys, e);
                    true
                };
                super::follow_watch(&mut watch, &mut reconnected, "the credential bucket", take)
                    .await;
            }
            Err(e) => tracing::warn!(error = %e, "cannot follow the credential bucket"),
        }
        drop(relay);
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// One change of the bucket: a put counts only with the cluster's seal (a NATS client without the
/// cluster secret cannot add a login, an observer token or a code).
fn apply(
    auth: &crate::core::auth::Auth,
    keys: &super::seal::Keys,
    e: async_nats::jetstream::kv::Entry,
) {
    use async_nats::jetstream::kv::Operation;
    match e.operation {
        Operation::Put => {
            let Some(value) = keys.open_value(CREDENTIALS_BUCKET, &e.key, &e.value) else {
                tracing::warn!(key = %e.key, "ignoring a credential entry without the cluster's seal");
                return;
            };
            apply_put(auth, &e.key, value);
        }
        Operation::Delete | Operation::Purge => auth.forget_shared(&e.key),
    }
}

fn apply_put(auth: &crate::core::auth::Auth, key: &str, value: &[u8]) {
    {
        match serde_json::from_slice::<Shared>(value) {
            Ok(entry) => auth.apply_shared(key, entry),
            Err(err) => {
                tracing::warn!(key = %key, error = %err, "an unreadable credential entry")
            }
        }
    }
}

/// Opens (or makes) the bucket.
pub(super) async fn bucket(
    js: &async_nats::jetstream::Context,
) -> anyhow::Result<async_nats::jetstream::kv::Store> {
    super::bucket(js, CREDENTIALS_BUCKET, Duration::ZERO).await
}

/// Starts following the bucket, and sweeping expired entries out of it.
pub(super) fn spawn(cluster: &Arc<Cluster>) {
    tokio::spawn(follow(Arc::downgrade(cluster)));
    tokio::spawn(sweep(Arc::downgrade(cluster)));
}

/// How often expired credentials are purged; `BRIDGE_CREDENTIALS_SWEEP_MS` sets it (tests).
fn sweep_every() -> Duration {
    std::env::var("BRIDGE_CREDENTIALS_SWEEP_MS")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .map_or(Duration::from_secs(60), Duration::from_millis)
}

/// When an entry stops working (`None`: never).
fn expiry(entry: &Shared) -> Option<i64> {
    match entry {
        Shared::Observer { expires_at, .. } => *expires_at,
        Shared::Login { expires_at, .. } | Shared::Code { expires_at } => Some(*expires_at),
    }
}

/// Purges expired entries from the bucket and from this relay's memory, every [`sweep_every`].
async fn sweep(cluster: Weak<Cluster>) {
    let mut tick = tokio::time::interval(sweep_every());
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let Some(c) = cluster.upgrade() else { return };
        if let Some(relay) = c.relay() {
            relay.auth.forget_expired_shared();
        }
        match c.purge_expired_credentials().await {
            Ok(0) => {}
            Ok(n) => tracing::info!(purged = n, "expired credentials purged from NATS"),
            Err(e) => tracing::debug!(error = %e, "expired credentials not purged this round"),
        }
    }
}

impl Cluster {
    /// Removes every expired entry's messages from the bucket (no delete marker is left: nothing
    /// needs to hear of it, an expired credential is refused by its expiry). How many.
    async fn purge_expired_credentials(&self) -> anyhow::Result<usize> {
        let kv = &self
            .nats()
            .ok_or_else(|| anyhow::anyhow!("NATS not reached yet"))?
            .creds_kv;
        let now = crate::core::util::unix_now();
        let keys = super::kv_keys(kv).await?;
        let mut purged = 0;
        for key in keys {
            let Ok(Some(e)) = kv.entry(&key).await else {
                continue;
            };
            let expired = e.operation == async_nats::jetstream::kv::Operation::Put
                && self
                    .keys
                    .open_value(CREDENTIALS_BUCKET, &key, &e.value)
                    .and_then(|v| serde_json::from_slice::<Shared>(v).ok())
                    .and_then(|s| expiry(&s))
                    .is_some_and(|t| t <= now);
            if expired {
                kv.stream
                    .purge()
                    .filter(format!("$KV.{CREDENTIALS_BUCKET}.{key}"))
                    .await?;
                purged += 1;
            }
        }
        Ok(purged)
    }
}
