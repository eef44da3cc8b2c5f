//! Where a relay's subscriptions and VAPID key are: its own SQLite file and key file, or, in a
//! cluster, the cluster's ([`super::cluster`]). The API and the dispatcher go through [`Subs`].

use std::sync::Arc;
#[cfg(feature = "cluster")]
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

#[cfg(feature = "cluster")]
use super::cluster::ClusterSubs;
use super::store::{NewSubscription, PushStore, StoreError, Subscription};
use super::vapid::VapidKey;

pub struct Subs {
    local: Arc<PushStore>,
    local_vapid: Arc<VapidKey>,
    /// Set when the relay was started with `--nats`: from then on the local store is not used.
    clustered: AtomicBool,
    #[cfg(feature = "cluster")]
    cluster: OnceLock<Arc<ClusterSubs>>,
}

enum Which<'a> {
    Local(&'a PushStore),
    #[cfg(feature = "cluster")]
    Cluster(&'a ClusterSubs),
}

fn not_yet() -> StoreError {
    StoreError::Cluster(
        "push subscriptions are shared through NATS, which has not been reachable since this relay started: try again once it is".into(),
    )
}

impl Subs {
    pub fn new(local: Arc<PushStore>, local_vapid: Arc<VapidKey>) -> Self {
        Self {
            local,
            local_vapid,
            clustered: AtomicBool::new(false),
            #[cfg(feature = "cluster")]
            cluster: OnceLock::new(),
        }
    }

    /// This relay's own key pair (in a cluster: its candidate for the cluster's key).
    pub fn local_vapid(&self) -> &Arc<VapidKey> {
        &self.local_vapid
    }

    /// This relay's own table (in a cluster: read once, to move its rows into the cluster's bucket).
    pub fn local_store(&self) -> &Arc<PushStore> {
        &self.local
    }

    /// The relay is part of a cluster: until [`Self::join_cluster`], nothing is read or sent.
    pub fn expect_cluster(&self) {
        self.clustered.store(true, Ordering::SeqCst);
    }

    #[cfg(feature = "cluster")]
    pub fn join_cluster(&self, c: Arc<ClusterSubs>) {
        self.clustered.store(true, Ordering::SeqCst);
        let _ = self.cluster.set(c);
    }

    fn which(&self) -> Result<Which<'_>, StoreError> {
        #[cfg(feature = "cluster")]
        if let Some(c) = self.cluster.get() {
            return Ok(Which::Cluster(c));
        }
        if self.clustered.load(Ordering::SeqCst) {
            return Err(not_yet());
        }
        Ok(Which::Local(&self.local))
    }

    /// The VAPID key every push is signed with (and the browser's `applicationServerKey`).
    pub fn vapid(&self) -> Result<Arc<VapidKey>, StoreError> {
        Ok(match self.which()? {
            Which::Local(_) => self.local_vapid.clone(),
            #[cfg(feature = "cluster")]
            Which::Cluster(c) => c.vapid().clone(),
        })
    }

    pub async fn upsert(&self, s: &NewSubscription) -> Result<(String, bool), StoreError> {
        match self.which()? {
            Which::Local(l) => l.upsert(s),
            #[cfg(feature = "cluster")]
            Which::Cluster(c) => c.upsert(s).await,
        }
    }

    /// All subscriptions, oldest first (in a cluster: from memory).
    pub fn list(&self) -> Result<Vec<Subscription>, StoreError> {
        match self.which()? {
            Which::Local(l) => l.list(),
            #[cfg(feature = "cluster")]
            Which::Cluster(c) => Ok(c.list()),
        }
    }

    pub async fn get(&self, id: &str) -> Result<Option<Subscription>, StoreError> {
        match self.which()? {
            Which::Local(l) => l.get(id),
            #[cfg(feature = "cluster")]
            Which::Cluster(c) => c.get(id).await,
        }
    }

    /// What a delivery attempt reads (in a cluster: from memory, never waiting for NATS).
    pub fn get_now(&self, id: &str) -> Result<Option<Subscription>, StoreError> {
        match self.which()? {
            Which::Local(l) => l.get(id),
            #[cfg(feature = "cluster")]
            Which::Cluster(c) => Ok(c.get_cached(id)),
        }
    }

    pub async fn delete(&self, id: &str) -> Result<bool, StoreError> {
        match self.which()? {
            Which::Local(l) => l.delete(id),
            #[cfg(feature = "cluster")]
            Which::Cluster(c) => c.delete(id).await,
        }
    }

    pub async fn record_success(&self, id: &str) -> Result<(), StoreError> {
        match self.which()? {
            Which::Local(l) => l.record_success(id),
            #[cfg(feature = "cluster")]
            Which::Cluster(c) => {
                let now = crate::core::util::now_rfc3339();
                c.record(id, |s| {
                    s.last_success_at = Some(now);
                    s.last_error = None;
                    s.last_error_at = None;
                })
                .await;
                Ok(())
            }
        }
    }

    pub async fn record_error(&self, id: &str, error: &str) -> Result<(), StoreError> {
        match self.which()? {
            Which::Local(l) => l.record_error(id, error),
            #[cfg(feature = "cluster")]
            Which::Cluster(c) => {
                let now = crate::core::util::now_rfc3339();
                c.record(id, |s| {
                    s.last_error = Some(error.to_owned());
                    s.last_error_at = Some(now);
                })
                .await;
                Ok(())
            }
        }
    }
}
