//! Scale-out through NATS JetStream (`--nats URL --role all|agents|gateway --node-name NAME`).
//! Without `--nats` none of this runs and the relay is exactly the single relay.
//!
//! - **agents** ([`host`], [`serve`]): the single writer of its sessions' logs. Every durable event a
//!   session appends is published, in order, to the JetStream stream [`wire::EVENTS_STREAM`] on
//!   `bridge.ev.<id>` with `Nats-Msg-Id = <id>:<seq>` and `Nats-Expected-Last-Subject-Sequence`
//!   (two writers can never fork a log); ephemeral frames go to core NATS `bridge.live.<id>`. The
//!   registry (`bridge_sessions`) and heartbeats (`bridge_nodes`) are KV buckets. Input for its
//!   sessions arrives on `bridge.in.<id>` and runs through the session's own ingest, so
//!   first-answer-wins has one authority; the verdict (status and body) is the reply.
//! - **gateway** ([`gateway`], [`mirror`]): lists every host's sessions from the registry, serves
//!   SSE / WebSocket / event pages of any session from a local mirror fed by JetStream (the host's
//!   sequence numbers, so `Last-Event-ID` and `after=` mean the same everywhere), and forwards
//!   input, archive, delete and session creation to the hosts.
//! - **all**: both in one process.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use async_nats::jetstream::{self, kv, stream};

use crate::core::audit::AuditLog;
use crate::core::relay::Relay;
use crate::core::session::SessionCtx;

mod cli;
pub mod creds;
mod forward;
mod gateway;
mod host;
mod lost;
mod mirror;
mod objects;
pub mod push;
pub use crate::core::seal;
mod serve;
pub mod wire;

pub use crate::core::config::cluster::{ClusterConfig, Role, redact_url};
pub use creds::knows_session;
pub use gateway::{middleware, session_list};

/// Counters `/healthz` reports.
#[derive(Default)]
pub(crate) struct Health {
    /// Sessions whose publish queue is full right now (NATS slow or down).
    pub backlog_full: AtomicU64,
    /// Publishes that failed and were retried.
    pub publish_errors: AtomicU64,
    /// Sessions whose subject had events this host did not write (publishing stopped).
    pub forks: AtomicU64,
    /// Live frames dropped because the live queue was full.
    pub live_dropped: AtomicU64,
    /// Hosted sessions the cluster ended while this node was out of touch ([`lost`]).
    pub ended_while_away: AtomicU64,
    /// Sessions mirrored here now, and mirrors dropped so far ([`mirror::Limits`]).
    pub mirrors: AtomicU64,
    pub mirrors_evicted: AtomicU64,
}

/// The JetStream stream and buckets, opened (made if missing) once NATS first answered.
pub(crate) struct Nats {
    js: jetstream::Context,
    events: stream::Stream,
    sessions_kv: kv::Store,
    nodes_kv: kv::Store,
    /// Shared credentials ([`creds`]).
    creds_kv: kv::Store,
    /// Messages larger than the server's `max_payload` ([`Cluster::outsized`]).
    objects: jetstream::object_store::ObjectStore,
}

pub struct Cluster {
    pub config: ClusterConfig,
    client: async_nats::Client,
    /// Seals what this relay writes to NATS and checks what it reads ([`seal`]).
    keys: Arc<seal::Keys>,
    /// Set once NATS first answered ([`start`]); until then the relay answers 503.
    nats: std::sync::OnceLock<Nats>,
    relay: Weak<Relay>,
    health: Health,
    /// Mirrors keep their logs in memory (JetStream is the durable copy).
    mirror_ctx: Arc<SessionCtx>,
    mirrors: tokio::sync::Mutex<HashMap<String, Arc<mirror::Feed>>>,
    mirror_limits: mirror::Limits,
    /// Sessions this node hosts: id → the last registry entry it wrote.
    hosted: std::sync::Mutex<HashMap<String, String>>,
    /// Hosted sessions the cluster ended while this node was out of touch: not published further.
    cut: std::sync::Mutex<std::collections::HashSet<String>>,
    live_tx: tokio::sync::mpsc::Sender<(String, bytes::Bytes)>,
    /// Bumped on every (re)connection to NATS.
    connected: tokio::sync::watch::Receiver<u64>,
    /// The relay's API routes (no guard, no gateway middleware): host-only requests a gateway
    /// forwards run through them ([`serve`]). Set by [`crate::http::app`].
    routes: std::sync::OnceLock<axum::Router>,
}

/// How long a gateway waits for a host's verdict.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// Durable events queued per hosted session for NATS; past it they are read back from the store.
pub const PUBLISH_QUEUE: usize = 4096;
const LIVE_QUEUE: usize = 8192;

/// How long the start waits for NATS before it goes on without it ([`start`]).
const FIRST_CONNECT: Duration = Duration::from_secs(3);

/// Connects to NATS, makes the stream and buckets if missing, and starts this node's roles.
///
/// NATS not there yet (containers started in another order, a reboot): the relay starts anyway,
/// answers 503 (`/healthz`: `nats.connected: false`) until NATS arrives, then sets everything up.
/// A URL that cannot be parsed is an error at once; so is a NATS that answers but cannot hold the
/// stream (JetStream off) at start.
pub async fn start(relay: &Arc<Relay>, config: ClusterConfig) -> anyhow::Result<()> {
    let shown = redact_url(&config.url);
    let Some(keys) = config.keys.clone() else {
        anyhow::bail!(
            "--nats needs a secret every relay of the cluster shares: --cluster-secret-file FILE, or the same controller token (--token-file / BRIDGE_RELAY_TOKEN) on every relay"
        );
    };
    // Counts (re)connections: mirrors restart their consumers after NATS comes back.
    let (connected_tx, connected) = tokio::sync::watch::channel(0u64);
    let mut options = async_nats::ConnectOptions::new();
    if let Some(path) = &config.creds_file {
        options = async_nats::ConnectOptions::with_credentials_file(path)
            .await
            .map_err(|e| anyhow::anyhow!("--nats-creds {}: {e}", path.display()))?;
    }
    if let Some(path) = &config.nkey_file {
        let seed = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("--nats-nkey {}: {e}", path.display()))?;
        options = options.nkey(seed.trim().to_owned());
    }
    if let Some(path) = &config.tls_ca {
        options = options
            .add_root_certificates(path.clone())
            .require_tls(true);
    }
    // A user and password in the URL (from BRIDGE_NATS_URL) are given to the client as such, and
    // the URL it connects to carries none.
    let (address, user) = objects::split_credentials(&config.url);
    match user {
        Some((user, Some(pass))) => options = options.user_and_password(user, pass),
        Some((token, None)) => options = options.token(token),
        None => {}
    }
    let client = options
        .name(format!("bridge-relay {}", config.node))
        .retry_on_initial_connect()
        .event_callback(move |ev| {
            let tx = connected_tx.clone();
            async move {
                match ev {
                    async_nats::Event::Connected => {
                        tracing::info!("connected to NATS");
                        tx.send_modify(|n| *n += 1);
                    }
                    async_nats::Event::Disconnected => {
                        tracing::warn!("NATS is unreachable; reconnecting");
                    }
                    _ => {}
                }
            }
        })
        .connect(address.as_str())
        .await
        .map_err(|e| anyhow::anyhow!("--nats {shown}: {e} (write nats://HOST:PORT)"))?;
    let mirror_ctx = Arc::new(SessionCtx {
        store: Arc::new(crate::core::store::MemoryStore::default()),
        audit: Arc::new(AuditLog::disabled()),
        permission_timeout: None,
        retention_events: relay.config.retention_events,
        ended_tx: None,
        push: None,
        allow_bypass_permissions: relay.config.allow_bypass_permissions,
    });
    let (live_tx, live_rx) = tokio::sync::mpsc::channel(LIVE_QUEUE);
    let cluster = Arc::new(Cluster {
        config,
        client,
        keys,
        nats: std::sync::OnceLock::new(),
        relay: Arc::downgrade(relay),
        health: Health::default(),
        mirror_ctx,
        mirrors: tokio::sync::Mutex::new(HashMap::new()),
        mirror_limits: mirror::Limits::from_env(),
        hosted: std::sync::Mutex::new(HashMap::new()),
        cut: std::sync::Mutex::new(Default::default()),
        live_tx,
        connected,
        routes: std::sync::OnceLock::new(),
    });
    if !relay.plugs.set(cluster.clone()) {
        anyhow::bail!("the relay is already connected to NATS");
    }
    push::expect(relay);
    tokio::spawn(host::live_publisher(
        cluster.client.clone(),
        cluster.keys.clone(),
        live_rx,
    ));
    let mut first = cluster.connected.clone();
    if tokio::time::timeout(FIRST_CONNECT, first.wait_for(|n| *n > 0))
        .await
        .is_ok()
    {
        return set_up(&cluster).await;
    }
    tracing::warn!(nats = %shown, role = cluster.config.role.as_str(), node = %cluster.config.node,
        "NATS is not reachable yet: this relay answers 503 until it is, then sets up scale-out");
    let weak = Arc::downgrade(&cluster);
    drop(cluster);
    tokio::spawn(async move {
        let _ = first.wait_for(|n| *n > 0).await;
        loop {
            let Some(c) = weak.upgrade() else { return };
            match set_up(&c).await {
                Ok(()) => return,
                Err(e) => tracing::error!(error = %e, "cannot set up scale-out on NATS; retrying"),
            }
            drop(c);
            tokio::time::sleep(Duration::from_secs(2)).await;
        }
    });
    Ok(())
}

/// Opens the stream and buckets (made if missing), then starts this node's roles.
async fn set_up(cluster: &Arc<Cluster>) -> anyhow::Result<()> {
    let shown = redact_url(&cluster.config.url);
    if !cluster.client.server_info().auth_required {
        tracing::warn!(nats = %shown,
            "the NATS server let this relay in without any authentication: anyone who can reach it can read every \
             session's events (prompts, code, tool output) and fill its streams and buckets. The cluster's MAC keeps \
             them from acting as the controller, not from reading. Give the server users or nkeys with per-subject \
             permissions (README: Scale-out, NATS accounts) and connect with --nats-creds / --nats-nkey");
    }
    let js = jetstream::new(cluster.client.clone());
    let events = js
        .get_or_create_stream(stream::Config {
            name: wire::EVENTS_STREAM.into(),
            subjects: vec!["bridge.ev.>".into()],
            storage: stream::StorageType::File,
            ..Default::default()
        })
        .await
        .map_err(|e| anyhow::anyhow!("NATS at {shown}: cannot open JetStream stream {} ({e}); is JetStream enabled (`nats-server -js`)?", wire::EVENTS_STREAM))?;
    let sessions_kv = bucket(&js, wire::SESSIONS_BUCKET, Duration::ZERO).await?;
    let nodes_kv = bucket(&js, wire::NODES_BUCKET, Duration::from_secs(30)).await?;
    let creds_kv = creds::bucket(&js).await?;
    let objects = match js.get_object_store(wire::OBJECTS_BUCKET).await {
        Ok(o) => o,
        Err(_) => js
            .create_object_store(jetstream::object_store::Config {
                bucket: wire::OBJECTS_BUCKET.into(),
                description: Some(
                    "bridge-relay: events and requests larger than max_payload".into(),
                ),
                storage: stream::StorageType::File,
                ..Default::default()
            })
            .await
            .map_err(|e| {
                anyhow::anyhow!(
                    "cannot make the NATS object store {}: {e}",
                    wire::OBJECTS_BUCKET
                )
            })?,
    };
    push::set_up(cluster, &js).await?;
    if cluster.config.role.runs_agents() {
        serve::start(cluster).await?;
    }
    let nats = Nats {
        js,
        events,
        sessions_kv,
        nodes_kv,
        creds_kv,
        objects,
    };
    if cluster.nats.set(nats).is_err() {
        return Ok(());
    }
    tokio::spawn(host::node_loop(Arc::downgrade(cluster)));
    if cluster.config.role.serves_all() {
        tokio::spawn(mirror::sweeper(Arc::downgrade(cluster)));
    }
    creds::spawn(cluster);
    tracing::info!(nats = %shown, role = cluster.config.role.as_str(), node = %cluster.config.node, "scale-out through NATS JetStream");
    Ok(())
}

/// A KV bucket, made if missing. Its stream is made here with the settings the client's
/// `create_key_value` uses: that call first asks for the account's info, which this client cannot
/// read from a 2.9 server (Debian's).
async fn bucket(
    js: &jetstream::Context,
    name: &str,
    max_age: Duration,
) -> anyhow::Result<kv::Store> {
    if let Ok(b) = js.get_key_value(name).await {
        return Ok(b);
    }
    js.get_or_create_stream(stream::Config {
        name: format!("KV_{name}"),
        subjects: vec![format!("$KV.{name}.>")],
        max_messages_per_subject: 1,
        max_age,
        storage: stream::StorageType::File,
        allow_rollup: true,
        deny_delete: true,
        allow_direct: true,
        discard: stream::DiscardPolicy::New,
        num_replicas: 1,
        ..Default::default()
    })
    .await
    .map_err(|e| anyhow::anyhow!("cannot make the NATS key-value bucket {name}: {e}"))?;
    js.get_key_value(name)
        .await
        .map_err(|e| anyhow::anyhow!("cannot open the NATS key-value bucket {name}: {e}"))
}

impl Cluster {
    /// The relay's cluster, once it has joined one (`--nats`).
    pub fn of(relay: &Relay) -> Option<Arc<Cluster>> {
        relay.plugs.get::<Cluster>()
    }

    /// Keeps the API routes forwarded host-only requests run through (the first call wins).
    /// Whether this node serves every session (a gateway or `--role all`).
    pub fn serves_all(&self) -> bool {
        self.config.role.serves_all()
    }

    pub fn set_routes(&self, routes: axum::Router) {
        let _ = self.routes.set(routes);
    }

    fn relay(&self) -> Option<Arc<Relay>> {
        self.relay.upgrade()
    }

    /// The cluster's keys ([`seal`]).
    pub(crate) fn keys(&self) -> &seal::Keys {
        &self.keys
    }

    /// Sends a sealed request on `subject` and returns the reply once its seal holds; a reply
    /// without it (not from a relay of this cluster) becomes a 502 verdict.
    pub(super) async fn call(
        &self,
        subject: String,
        body: bytes::Bytes,
        timeout: Duration,
    ) -> Result<async_nats::Message, async_nats::RequestError> {
        let mut headers = async_nats::HeaderMap::new();
        let name = format!("req.{}", uuid::Uuid::new_v4().simple());
        let body = self
            .outsized(&name, body, &mut headers)
            .await
            .map_err(|e| {
                tracing::warn!(error = %e, "a large request could not be sent through NATS");
                async_nats::RequestError::with_source(async_nats::RequestErrorKind::Other, e)
            })?;
        self.keys.sign(&mut headers, &subject, &body);
        let request = async_nats::Request::new()
            .payload(body)
            .headers(headers)
            .timeout(Some(timeout));
        let m = self.client.send_request(subject.clone(), request).await?;
        let status = wire::reply_status(&m).unwrap_or(0);
        match self.keys.check_reply(
            m.subject.as_str(),
            m.headers.as_ref(),
            &wire::reply_content(status, &m.payload),
        ) {
            Ok(()) => Ok(m),
            Err(why) => {
                tracing::warn!(subject = %subject, why = why.as_str(), "dropping a reply without the cluster's seal");
                let mut headers = async_nats::HeaderMap::new();
                headers.insert(wire::STATUS_HEADER, "502");
                let body = serde_json::json!({"type": "error", "error": {"type": "api_error",
                    "message": format!("the answer over NATS was refused: {}", why.as_str())}});
                Ok(async_nats::Message {
                    subject: m.subject,
                    reply: None,
                    payload: bytes::Bytes::from(body.to_string()),
                    headers: Some(headers),
                    status: None,
                    description: None,
                    length: 0,
                })
            }
        }
    }

    /// `value` sealed for `bucket`/`key` ([`seal::Keys::seal_value`]).
    pub(crate) fn seal_kv(&self, bucket: &str, key: &str, value: &[u8]) -> bytes::Bytes {
        self.keys.seal_value(bucket, key, value)
    }

    /// The value a relay of this cluster stored under `bucket`/`key`; anything else is dropped
    /// (and said once per read).
    pub(crate) fn open_kv(&self, bucket: &str, key: &str, stored: &[u8]) -> Option<bytes::Bytes> {
        match self.keys.open_value(bucket, key, stored) {
            Some(v) => Some(bytes::Bytes::copy_from_slice(v)),
            None => {
                tracing::warn!(
                    bucket,
                    key,
                    "ignoring a NATS key-value entry without the cluster's seal"
                );
                None
            }
        }
    }

    /// The stream and buckets; `None` until NATS first answered.
    fn nats(&self) -> Option<&Nats> {
        self.nats.get()
    }

    /// The stream and buckets, or 503 while NATS has not answered since the start.
    pub(crate) fn ready(&self) -> Result<&Nats, crate::edge::error::ApiError> {
        self.nats().ok_or_else(|| {
            unavailable(
                "NATS has not been reachable since this relay started: it serves sessions once NATS is up",
            )
        })
    }

    /// Whether this node hosts (runs the agent of) session `id`.
    pub fn hosts(&self, id: &str) -> bool {
        self.hosted
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains_key(id)
    }

    /// The last message on session `id`'s subject; `Ok(None)` when it has none; `Err` when NATS
    /// did not answer.
    pub(super) async fn last_message(
        &self,
        id: &str,
    ) -> anyhow::Result<Option<async_nats::jetstream::message::StreamMessage>> {
        let Some(n) = self.nats() else {
            anyhow::bail!("NATS has not been reachable since this relay started");
        };
        match n
            .events
            .get_last_raw_message_by_subject(&wire::events_subject(id))
            .await
        {
            Ok(m) => Ok(Some(m)),
            Err(e) if e.kind() == stream::LastRawMessageErrorKind::NoMessageFound => Ok(None),
            Err(e) => Err(anyhow::anyhow!("JetStream: {e}")),
        }
    }

    /// `(last stream sequence, host seq)` of a session's subject; `(0, 0)` when it has no events.
    async fn subject_tail(&self, id: &str) -> anyhow::Result<(u64, u64)> {
        let Some(m) = self.last_message(id).await? else {
            return Ok((0, 0));
        };
        if let Err(why) = self
            .keys
            .check_event(&m.subject, Some(&m.headers), &m.payload)
        {
            anyhow::bail!(
                "the last message on {} is not the cluster's ({}): publishing waits (restrict bridge.ev.> to the agents nodes)",
                m.subject,
                why.as_str()
            );
        }
        let seq = m
            .headers
            .get(wire::SEQ_HEADER)
            .and_then(|v| v.as_str().parse().ok())
            .unwrap_or(0);
        Ok((m.sequence, seq))
    }

    /// The `/healthz` answer: ok while NATS is connected and every log is published.
    pub fn health(&self) -> (bool, serde_json::Value) {
        let connected = self.nats().is_some()
            && self.client.connection_state() == async_nats::connection::State::Connected;
        let h = &self.health;
        let backlog = h.backlog_full.load(Ordering::Relaxed);
        let forks = h.forks.load(Ordering::Relaxed);
        let ok = connected && backlog == 0 && forks == 0;
        let v = serde_json::json!({
            "ok": ok,
            "nats": {
                "connected": connected,
                "role": self.config.role.as_str(),
                "node": self.config.node,
                "sessions_with_full_publish_queue": backlog,
                "publish_errors": h.publish_errors.load(Ordering::Relaxed),
                "forked_logs": forks,
                "live_frames_dropped": h.live_dropped.load(Ordering::Relaxed),
                "sessions_ended_while_away": h.ended_while_away.load(Ordering::Relaxed),
                "mirrors": h.mirrors.load(Ordering::Relaxed),
                "mirrors_evicted": h.mirrors_evicted.load(Ordering::Relaxed),
                "problem": if self.nats().is_none() {
                    Some("NATS has not been reachable since this relay started: it serves sessions once NATS is up")
                } else if !connected {
                    Some("NATS is unreachable: hosted sessions keep running and their events are kept in the local store until it returns")
                } else if forks > 0 {
                    Some("a session's log on NATS has events this node did not write: publishing of that log stopped (see the log)")
                } else if backlog > 0 {
                    Some("NATS is slow: a session's publish queue is full; its events are read back from the local store")
                } else { None },
            }
        });
        (ok, v)
    }
}

/// 503: NATS or a host cannot be reached, or a mirror has not caught up.
/// The keys of a KV bucket, sorted: the subjects its stream holds, in one request (deleted keys
/// among them: a read of one finds nothing). Not `kv::Store::keys`: that follows a consumer until it
/// has delivered everything, and a bucket written to all the time (the registry while sessions
/// run) can keep it from ever getting there — a gateway's session list then never answered — and
/// it lists a key written meanwhile twice.
pub(super) async fn kv_keys(kv: &kv::Store) -> anyhow::Result<std::collections::BTreeSet<String>> {
    use futures::StreamExt as _;
    let mut keys = std::collections::BTreeSet::new();
    let mut subjects = kv
        .stream
        .info_with_subjects(format!("{}>", kv.prefix))
        .await?;
    while let Some(s) = subjects.next().await {
        let (subject, _) = s?;
        if let Some(key) = subject.strip_prefix(kv.prefix.as_str()) {
            keys.insert(key.to_owned());
        }
    }
    Ok(keys)
}

pub(crate) fn unavailable(message: impl Into<String>) -> crate::edge::error::ApiError {
    crate::edge::error::ApiError::cluster_unavailable(message)
}

/// Applies each entry of a bucket's `watch` until the watch fails or ends or NATS reconnects
/// (`reconnected` changes): the caller then watches `what` again from the start. `false` when
/// `apply` says there is nothing left to apply entries to (stop for good).
async fn follow_watch(
    watch: &mut kv::Watch,
    reconnected: &mut tokio::sync::watch::Receiver<u64>,
    what: &str,
    mut apply: impl FnMut(kv::Entry) -> bool,
) -> bool {
    use futures::StreamExt as _;
    loop {
        tokio::select! {
            next = watch.next() => match next {
                Some(Ok(e)) => {
                    if !apply(e) {
                        return false;
                    }
                }
                Some(Err(e)) => {
                    tracing::warn!(error = %e, "following {what}");
                    return true;
                }
                None => return true,
            },
            _ = reconnected.changed() => return true,
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn credentials_are_taken_out_of_the_url() {
        assert_eq!(
            super::objects::split_credentials("nats://relay:p%40ss@nats.example:4222"),
            (
                "nats://nats.example:4222".to_owned(),
                Some(("relay".to_owned(), Some("p@ss".to_owned())))
            )
        );
        // A `%` not followed by two hex digits stays as it is (one before a multi-byte character
        // made the hand-written decoder slice inside it and panic).
        assert_eq!(
            super::objects::split_credentials("nats://u%:p%aé@h:1"),
            (
                "nats://h:1".to_owned(),
                Some(("u%".to_owned(), Some("p%aé".to_owned())))
            )
        );
        assert_eq!(
            super::objects::split_credentials("nats://s3cret@127.0.0.1:4222"),
            (
                "nats://127.0.0.1:4222".to_owned(),
                Some(("s3cret".to_owned(), None))
            )
        );
        assert_eq!(
            super::objects::split_credentials("nats://127.0.0.1:4222"),
            ("nats://127.0.0.1:4222".to_owned(), None)
        );
    }

    #[test]
    fn credentials_in_the_nats_url_are_never_shown() {
        assert_eq!(
            super::redact_url("nats://alice:s3cret@nats.example:4222"),
            "nats://…@nats.example:4222"
        );
        assert_eq!(
            super::redact_url("nats://127.0.0.1:4222"),
            "nats://127.0.0.1:4222"
        );
    }
}
