//! Push notifications (Web Push: RFC 8030, 8291, 8292), sent by the relay itself.
//!
//! * [`vapid`]: the relay's P-256 key pair (`<data-dir>/vapid_private.pem`, mode 0600) and the VAPID JWT;
//! * [`crypto`]: `aes128gcm` payload encryption (RFC 8291 / RFC 8188);
//! * [`endpoint`]: the SSRF guard (known push services, or `--push-endpoint-allow` prefixes);
//! * [`store`]: subscriptions in the relay's SQLite file;
//! * [`cluster`]: in a cluster (`--nats`), the cluster's VAPID key and subscriptions, on NATS;
//! * [`subs`]: which of the two a relay uses;
//! * [`payload`]: what sessions report ([`PushEvent`]) and the JSON a service worker receives;
//! * [`deliver`]: the dispatcher, per-device workers, the HTTP client and the retry policy;
//! * [`api`]: `/v1/push/*` (controller only).
//!
//! Sessions hold a [`PushHandle`] whose [`PushHandle::notify`] never blocks.

pub mod api;
#[cfg(feature = "cluster")]
pub mod cluster;
pub mod crypto;
pub mod deliver;
pub use crate::core::config::endpoint;
pub mod payload;
pub mod store;
pub mod subs;
pub mod vapid;

use std::path::Path;
use std::sync::Arc;

pub use api::routes;
pub use endpoint::AllowedPrefix;
pub use payload::{Event, Prompt, PushEvent, Resolution};
pub use store::EventKind;

use deliver::{Attempt, Sender, Shared};
use payload::Message;
use store::{PushStore, Subscription};
use subs::Subs;
use vapid::VapidKey;

pub use crate::core::config::push::{DEFAULT_MIN_TURN_SECS, PushConfig};
pub use crate::core::notice::{Device, PushHandle};
pub use crate::core::util::hostname;

/// Why push could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum PushError {
    #[error(transparent)]
    Vapid(#[from] vapid::VapidError),
    #[error(transparent)]
    Store(#[from] store::StoreError),
}

/// The push service of a relay: keys, subscriptions and the running dispatcher.
pub struct Push {
    /// Subscriptions and the VAPID key: the relay's own, or the cluster's.
    pub subs: Arc<Subs>,
    pub config: PushConfig,
    shared: Arc<Shared>,
    handle: PushHandle,
}

impl Push {
    /// The relay's Web Push, when it has it ([`crate::open`] plugs it in).
    pub fn of(relay: &crate::core::relay::Relay) -> Option<Arc<Push>> {
        relay.plugs.get::<Push>()
    }

    /// Loads or makes the VAPID key in `data_dir`, opens the subscriptions in `db` and starts the
    /// dispatcher (needs a Tokio runtime).
    pub fn open(data_dir: &Path, db: &Path, config: PushConfig) -> Result<Arc<Push>, PushError> {
        let vapid = Arc::new(VapidKey::load_or_create(data_dir)?);
        let store = Arc::new(PushStore::open(db)?);
        Ok(Self::with_parts(store, vapid, config))
    }

    pub fn with_parts(
        store: Arc<PushStore>,
        vapid: Arc<VapidKey>,
        config: PushConfig,
    ) -> Arc<Push> {
        let subs = Arc::new(Subs::new(store, vapid));
        let shared = Arc::new(Shared {
            subs: subs.clone(),
            sender: Sender::new(config.contact.clone(), config.endpoint_allow.clone()),
            min_turn: config.min_turn,
        });
        let (handle, rx) = PushHandle::channel(deliver::EVENT_QUEUE);
        tokio::spawn(deliver::dispatch(rx, shared.clone()));
        Arc::new(Push {
            subs,
            config,
            shared,
            handle,
        })
    }

    pub fn handle(&self) -> PushHandle {
        self.handle.clone()
    }

    /// One attempt, now, outside the queue (the test notification).
    pub async fn send_now(&self, sub: &Subscription, msg: &Message) -> Attempt {
        match self.subs.vapid() {
            Ok(vapid) => self.shared.sender.send(&vapid, sub, msg).await,
            Err(e) => Attempt::Transport(e.to_string()),
        }
    }
}
