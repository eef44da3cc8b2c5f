//! Push in a cluster (`--nats`): every node serves the same VAPID key and sees the same
//! subscriptions, so a device subscribed through one gateway is notified by whichever agents node
//! runs the session, and can be listed, tested or removed through any gateway.
//!
//! - The VAPID key pair is one entry ([`VAPID_KEY`]) of the bucket [`KEYS_BUCKET`], made once with
//!   create-if-absent from the key of the first node that gets there (so a single relay moved into a
//!   cluster keeps its key, and its devices stay subscribed); every other node reads it. It is the
//!   private key itself (a signature needs it): anyone who can read the NATS account can read it,
//!   as they can read every session's log. It is never logged.
//! - Subscriptions are entries of the bucket [`SUBSCRIPTIONS_BUCKET`], one per push endpoint, keyed
//!   by the SHA-256 of the endpoint ([`endpoint_key`]: registering an endpoint again through any
//!   gateway finds the same entry, and keeps its id), valued with the [`Subscription`] as JSON (the
//!   same fields and ids as the single relay's SQLite rows). Every node follows the bucket into
//!   memory ([`ClusterSubs::apply`]); writes go to the bucket before they are answered (503
//!   `cluster_unavailable` when NATS does not confirm), with compare-and-set on the revision read,
//!   so a delivery record never brings back a subscription removed meanwhile.
//! - A relay whose own key became the cluster's (a single relay moved into a cluster) moves the
//!   subscriptions of its own table into the bucket once, and empties the table: its devices keep
//!   being notified, and one removed later is not brought back by the node's next start.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use async_nats::jetstream::kv;
use futures::StreamExt as _;
use sha2::{Digest as _, Sha256};

use super::store::{MAX_SUBSCRIPTIONS, NewSubscription, StoreError, Subscription};
use super::vapid::VapidKey;
use crate::core::util::now_rfc3339;

/// Subscriptions: [`endpoint_key`] → [`Subscription`] (JSON).
pub const SUBSCRIPTIONS_BUCKET: &str = "bridge_push";
/// The cluster's VAPID key pair.
pub const KEYS_BUCKET: &str = "bridge_push_keys";
/// Its key in [`KEYS_BUCKET`]: the private key, PKCS#8 PEM.
pub const VAPID_KEY: &str = "vapid";
/// How long a write (or a read that must be fresh) waits for NATS.
const NATS_TIMEOUT: Duration = Duration::from_secs(5);
/// Compare-and-set attempts of one registration before it gives up (concurrent writers).
const CAS_ATTEMPTS: usize = 5;

/// The bucket key of a push endpoint: hex SHA-256 (an endpoint is a URL; a key is one token).
pub fn endpoint_key(endpoint: &str) -> String {
    hex::encode(Sha256::digest(endpoint.as_bytes()))
}

fn unavailable(e: impl std::fmt::Display) -> StoreError {
    StoreError::Cluster(format!(
        "push subscriptions are shared by every relay of the cluster through NATS, which did not answer ({e}): try again"
    ))
}

async fn timed<T, E: std::fmt::Display>(
    f: impl std::future::Future<Output = Result<T, E>>,
) -> Result<T, StoreError> {
    tokio::time::timeout(NATS_TIMEOUT, f)
        .await
        .map_err(|_| unavailable("timed out"))?
        .map_err(unavailable)
}

/// The cluster's VAPID key: the one in the bucket, or `local` put there first if there is none
/// (when two nodes start together, one `create` wins and the other reads the winner's).
/// The private key is stored encrypted under the cluster's key ([`crate::core::seal`]): a NATS
/// client without the cluster secret can neither read it nor plant its own.
pub async fn agree_vapid(
    keys: &kv::Store,
    seal: &crate::core::seal::Keys,
    local: &VapidKey,
) -> anyhow::Result<VapidKey> {
    for _ in 0..CAS_ATTEMPTS {
        let found = timed(keys.entry(VAPID_KEY))
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        if let Some(e) = found.filter(|e| e.operation == kv::Operation::Put) {
            let pem = seal
                .decrypt(KEYS_BUCKET, VAPID_KEY, &e.value)
                .ok_or_else(|| {
                    anyhow::anyhow!(
                        "the cluster's VAPID key ({KEYS_BUCKET}/{VAPID_KEY} on NATS) is not encrypted under this cluster's \
                         secret (written before the cluster authenticated its values, by a relay with another secret, or \
                         planted); delete that entry to make a new key pair (every device must then enable notifications again)"
                    )
                })?;
            let pem = String::from_utf8(pem).unwrap_or_default();
            return VapidKey::from_pem(&pem).ok_or_else(|| {
                anyhow::anyhow!(
                    "the cluster's VAPID key ({KEYS_BUCKET}/{VAPID_KEY} on NATS) is not a P-256 private key in PEM; \
                     delete that entry to make a new key pair (every device must then enable notifications again)"
                )
            });
        }
        let pem = local.to_pem();
        match tokio::time::timeout(
            NATS_TIMEOUT,
            keys.create(
                VAPID_KEY,
                bytes::Bytes::from(seal.encrypt(KEYS_BUCKET, VAPID_KEY, pem.as_bytes())),
            ),
        )
        .await
        {
            Ok(Ok(_)) => {
                tracing::info!(
                    public = local.public_key(),
                    "this node's VAPID key is now the cluster's"
                );
                return VapidKey::from_pem(&pem)
                    .ok_or_else(|| anyhow::anyhow!("the VAPID key does not read back"));
            }
            // Another node was first: read its key.
            Ok(Err(e)) if e.kind() == kv::CreateErrorKind::AlreadyExists => continue,
            Ok(Err(e)) => anyhow::bail!("cannot store the cluster's VAPID key on NATS: {e}"),
            Err(_) => anyhow::bail!("cannot store the cluster's VAPID key on NATS: timed out"),
        }
    }
    anyhow::bail!("the cluster's VAPID key on NATS keeps changing; retry")
}

/// An entry as this node last saw it: its revision, and the subscription (`None`: deleted then).
struct Seen {
    revision: u64,
    sub: Option<Subscription>,
}

/// The cluster's subscriptions: the bucket, followed into memory.
pub struct ClusterSubs {
    kv: kv::Store,
    client: async_nats::Client,
    vapid: Arc<VapidKey>,
    /// Subscriptions are stored encrypted (their keys are secrets): [`crate::core::seal`].
    seal: Arc<crate::core::seal::Keys>,
    seen: RwLock<HashMap<String, Seen>>,
}

impl ClusterSubs {
    pub fn new(
        kv: kv::Store,
        client: async_nats::Client,
        vapid: Arc<VapidKey>,
        seal: Arc<crate::core::seal::Keys>,
    ) -> Self {
        Self {
            kv,
            client,
            vapid,
            seal,
            seen: RwLock::new(HashMap::new()),
        }
    }

    /// A subscription as stored under `key`: encrypted under the cluster's key.
    fn encode(&self, key: &str, sub: &Subscription) -> bytes::Bytes {
        let json = serde_json::to_vec(sub).expect("serializes");
        bytes::Bytes::from(self.seal.encrypt(SUBSCRIPTIONS_BUCKET, key, &json))
    }

    /// The subscription a relay of this cluster stored under `key`; `None` for anything else.
    fn decode(&self, key: &str, value: &[u8]) -> Option<Subscription> {
        let json = self.seal.decrypt(SUBSCRIPTIONS_BUCKET, key, value);
        if json.is_none() {
            tracing::warn!(key = %key, "ignoring a push subscription on NATS that this cluster did not write");
        }
        serde_json::from_slice(&json?).ok()
    }

    pub fn vapid(&self) -> &Arc<VapidKey> {
        &self.vapid
    }

    /// The bucket (the cluster follows it into [`Self::apply`]).
    pub fn kv_store(&self) -> kv::Store {
        self.kv.clone()
    }

    /// Reads every entry of the bucket (before the node serves; the watch keeps it current after).
    pub async fn load(&self) -> Result<(), StoreError> {
        let mut keys = timed(self.kv.keys()).await?;
        let mut names = Vec::new();
        while let Some(k) = keys.next().await {
            names.push(k.map_err(unavailable)?);
        }
        for k in names {
            if let Some(e) = timed(self.kv.entry(k)).await? {
                self.apply(e);
            }
        }
        Ok(())
    }

    /// One change of the bucket (the watch, or a write of this node's): kept when it is newer than
    /// what this node has.
    pub fn apply(&self, e: kv::Entry) {
        let sub = match e.operation {
            kv::Operation::Put => self.decode(&e.key, &e.value),
            kv::Operation::Delete | kv::Operation::Purge => None,
        };
        self.set(&e.key, e.revision, sub);
    }

    fn set(&self, key: &str, revision: u64, sub: Option<Subscription>) {
        let mut seen = self.seen.write().unwrap_or_else(|p| p.into_inner());
        match seen.get(key) {
            Some(s) if s.revision >= revision => {}
            _ => {
                seen.insert(key.to_owned(), Seen { revision, sub });
            }
        }
    }

    fn connected(&self) -> Result<(), StoreError> {
        if self.client.connection_state() == async_nats::connection::State::Connected {
            Ok(())
        } else {
            Err(StoreError::Cluster(
                "push subscriptions are shared by every relay of the cluster through NATS, which is unreachable: try again once it is back".into(),
            ))
        }
    }

    /// Every subscription, oldest first (from memory: the dispatcher reads it for each event).
    pub fn list(&self) -> Vec<Subscription> {
        let seen = self.seen.read().unwrap_or_else(|p| p.into_inner());
        let mut v: Vec<Subscription> = seen.values().filter_map(|s| s.sub.clone()).collect();
        v.sort_by(|a, b| {
            a.created_at
                .cmp(&b.created_at)
                .then_with(|| a.id.cmp(&b.id))
        });
        v
    }

    fn find_cached(&self, id: &str) -> Option<(String, u64, Subscription)> {
        let seen = self.seen.read().unwrap_or_else(|p| p.into_inner());
        seen.iter().find_map(|(k, s)| {
            s.sub
                .as_ref()
                .filter(|sub| sub.id == id)
                .map(|sub| (k.clone(), s.revision, sub.clone()))
        })
    }

    /// Subscription `id` with its key and revision: from memory, else read from the bucket (it may
    /// have been made through another gateway a moment ago).
    async fn find(&self, id: &str) -> Result<Option<(String, u64, Subscription)>, StoreError> {
        if let Some(found) = self.find_cached(id) {
            return Ok(Some(found));
        }
        self.connected()?;
        self.load().await?;
        Ok(self.find_cached(id))
    }

    /// From memory only (a delivery worker, each attempt).
    pub fn get_cached(&self, id: &str) -> Option<Subscription> {
        self.find_cached(id).map(|(_, _, s)| s)
    }

    pub async fn get(&self, id: &str) -> Result<Option<Subscription>, StoreError> {
        Ok(self.find(id).await?.map(|(_, _, s)| s))
    }

    /// Registers `s` as [`super::store::PushStore::upsert`] does: `(id, created)`.
    pub async fn upsert(&self, s: &NewSubscription) -> Result<(String, bool), StoreError> {
        self.connected()?;
        let key = endpoint_key(&s.endpoint);
        for _ in 0..CAS_ATTEMPTS {
            let now = now_rfc3339();
            let current = timed(self.kv.entry(key.clone()))
                .await?
                .filter(|e| e.operation == kv::Operation::Put)
                .and_then(|e| self.decode(&key, &e.value).map(|sub| (e.revision, sub)));
            let revision = current.as_ref().map(|(r, _)| *r);
            let (sub, created) = match current {
                Some((_, old)) => (s.applied_to(old, now), false),
                None => {
                    if self.list().len() >= MAX_SUBSCRIPTIONS {
                        return Err(StoreError::Full);
                    }
                    let id = format!("psub_{}", uuid::Uuid::new_v4().simple());
                    (s.subscription(id, now), true)
                }
            };
            let body = self.encode(&key, &sub);
            let written = match revision {
                Some(rev) => tokio::time::timeout(NATS_TIMEOUT, self.kv.update(&key, body, rev))
                    .await
                    .map_err(|_| unavailable("timed out"))?
                    .map_err(|e| {
                        (
                            e.kind() == kv::UpdateErrorKind::WrongLastRevision,
                            e.to_string(),
                        )
                    }),
                None => tokio::time::timeout(NATS_TIMEOUT, self.kv.create(&key, body))
                    .await
                    .map_err(|_| unavailable("timed out"))?
                    .map_err(|e| {
                        (
                            e.kind() == kv::CreateErrorKind::AlreadyExists,
                            e.to_string(),
                        )
                    }),
            };
            match written {
                Ok(revision) => {
                    let id = sub.id.clone();
                    self.set(&key, revision, Some(sub));
                    return Ok((id, created));
                }
                // Someone else wrote it meanwhile: read it again.
                Err((true, _)) => continue,
                Err((false, e)) => return Err(unavailable(e)),
            }
        }
        Err(unavailable("the subscription kept changing"))
    }

    /// Puts `sub` (from a relay's own table, made before it joined the cluster) into the bucket
    /// unless its endpoint is there already: `true` when it was added.
    pub async fn import(&self, sub: &Subscription) -> Result<bool, StoreError> {
        let key = endpoint_key(&sub.registration.endpoint);
        let body = self.encode(&key, sub);
        match tokio::time::timeout(NATS_TIMEOUT, self.kv.create(&key, body)).await {
            Ok(Ok(revision)) => {
                self.set(&key, revision, Some(sub.clone()));
                Ok(true)
            }
            Ok(Err(e)) if e.kind() == kv::CreateErrorKind::AlreadyExists => Ok(false),
            Ok(Err(e)) => Err(unavailable(e)),
            Err(_) => Err(unavailable("timed out")),
        }
    }

    /// Removes subscription `id` everywhere; `false` if there was none.
    pub async fn delete(&self, id: &str) -> Result<bool, StoreError> {
        self.connected()?;
        let Some((key, revision, _)) = self.find(id).await? else {
            return Ok(false);
        };
        timed(self.kv.delete(&key)).await?;
        self.set(&key, revision + 1, None);
        Ok(true)
    }

    /// Changes subscription `id`'s delivery record, if it still exists and nobody changed it
    /// since this node read it (a record is not worth a conflict; the next delivery writes again).
    /// With NATS unreachable nothing is written (a delivery never waits for NATS).
    pub async fn record(&self, id: &str, f: impl FnOnce(&mut Subscription)) {
        if self.connected().is_err() {
            return;
        }
        let Some((key, revision, mut sub)) = self.find_cached(id) else {
            return;
        };
        f(&mut sub);
        let body = self.encode(&key, &sub);
        match tokio::time::timeout(NATS_TIMEOUT, self.kv.update(&key, body, revision)).await {
            Ok(Ok(rev)) => self.set(&key, rev, Some(sub)),
            Ok(Err(e)) => {
                tracing::debug!(subscription = %id, error = %e, "push delivery record not written")
            }
            Err(_) => {
                tracing::debug!(subscription = %id, "push delivery record not written: NATS timed out")
            }
        }
    }
}
