//! Sending: the HTTP client, the retry policy and the dispatcher.
//!
//! Sessions hand events to a bounded channel with `try_send` (a full channel drops the event and logs:
//! a slow or dead push service never slows a session). The dispatcher renders each event once and
//! queues it for every subscription that wants it. Each subscription has its own worker, so messages to
//! one device stay in order (a `resolved` never overtakes its `needs_you`) while a slow push service
//! holds up only its own devices. A worker retries 429 / 5xx / network failures with backoff (see
//! [`decide`]), deletes the subscription on 404 / 410, and records other failures on it.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use reqwest::Url;
use tokio::sync::mpsc;

use super::crypto;
use super::endpoint::{self, AllowedPrefix};
use super::payload::{Message, PushEvent, render};
use super::store::Subscription;
use super::subs::Subs;
use super::vapid::VapidKey;

/// Connection timeout towards a push service.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Whole-request timeout (connect, send, response headers and the little body we read).
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);
/// Attempts per message (the first send included).
pub const MAX_ATTEMPTS: u32 = 4;
/// Backoff before the second attempt; doubled each time, then jittered.
pub const BACKOFF_BASE: Duration = Duration::from_secs(1);
/// Longest wait between attempts, whatever `Retry-After` says.
pub const MAX_RETRY_DELAY: Duration = Duration::from_secs(300);
/// Events waiting for the dispatcher; more are dropped.
pub const EVENT_QUEUE: usize = 256;
/// Messages waiting per subscription; more are dropped.
const DEVICE_QUEUE: usize = 64;
/// A worker with nothing to send for this long exits (the next message starts a new one).
const WORKER_IDLE: Duration = Duration::from_secs(60);
/// How much of a push service's error body is kept.
const ERROR_BODY_BYTES: usize = 300;

/// What one attempt got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Attempt {
    /// The push service answered: status and `Retry-After` (raw) if any, and the start of its body.
    Status {
        status: u16,
        retry_after: Option<String>,
        body: String,
    },
    /// No answer: connect failure, timeout, TLS error…
    Transport(String),
}

/// What to do after an attempt.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    Delivered {
        status: u16,
    },
    /// 404 / 410: the subscription is gone; delete it.
    Gone {
        status: u16,
    },
    /// Try again after this long.
    Retry(Duration),
    /// Stop; record this error on the subscription.
    Fail(String),
}

/// Parses `Retry-After` (delay-seconds or an HTTP-date) as a delay from `now`.
pub fn retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// The retry policy. `attempt` counts from 1; `jitter` is uniform in `[0, 1)`. 2xx is delivered, 404 and
/// 410 mean gone, 429 / 5xx / transport errors are retried up to [`MAX_ATTEMPTS`] after
/// `max(Retry-After, backoff)` (backoff = base · 2^(attempt-1), scaled by 0.5–1.0 with the jitter),
/// clamped to [`MAX_RETRY_DELAY`]; anything else fails at once.
pub fn decide(attempt: u32, got: &Attempt, now: SystemTime, jitter: f64) -> Decision {
    let (retryable, hint, error) = match got {
        Attempt::Status { status, .. } if (200..300).contains(status) => {
            return Decision::Delivered { status: *status };
        }
        Attempt::Status { status, .. } if matches!(status, 404 | 410) => {
            return Decision::Gone { status: *status };
        }
        Attempt::Status {
            status,
            retry_after: ra,
            body,
        } => {
            let mut error = format!("push service answered {status}");
            if (300..400).contains(status) {
                error.push_str(" (redirects are not followed)");
            }
            if !body.is_empty() {
                error.push_str(": ");
                error.push_str(body);
            }
            let retryable = *status == 429 || (500..600).contains(status);
            let hint = ra.as_deref().and_then(|v| retry_after(v, now));
            (retryable, hint, error)
        }
        Attempt::Transport(e) => (true, None, format!("push service unreachable: {e}")),
    };
    if !retryable {
        return Decision::Fail(error);
    }
    if attempt >= MAX_ATTEMPTS {
        return Decision::Fail(format!("{error} (gave up after {attempt} attempts)"));
    }
    let exp = 2u32.saturating_pow(attempt.saturating_sub(1).min(16));
    let backoff = BACKOFF_BASE.saturating_mul(exp).mul_f64(
        0.5 + 0.5
            * if jitter.is_finite() {
                jitter.clamp(0.0, 1.0)
            } else {
                0.0
            },
    );
    Decision::Retry(
        hint.unwrap_or(Duration::ZERO)
            .max(backoff)
            .min(MAX_RETRY_DELAY),
    )
}

/// Encrypts, signs and POSTs messages.
pub struct Sender {
    /// Uses the environment's proxy settings, like any outbound HTTPS client.
    client: reqwest::Client,
    /// No proxy: for endpoints on this machine.
    direct: reqwest::Client,
    contact: String,
    allowed: Vec<AllowedPrefix>,
}

fn client(proxy: bool) -> reqwest::Client {
    let b = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(CONNECT_TIMEOUT)
        .timeout(REQUEST_TIMEOUT)
        .user_agent(concat!("bridge-relay/", env!("CARGO_PKG_VERSION")));
    let b = if proxy { b } else { b.no_proxy() };
    b.build().expect("the HTTP client configuration is valid")
}

impl Sender {
    pub fn new(contact: String, allowed: Vec<AllowedPrefix>) -> Self {
        Self {
            client: client(true),
            direct: client(false),
            contact,
            allowed,
        }
    }

    /// One attempt, signed with `vapid`. The endpoint is checked again (flags may have changed since
    /// it was registered): a refused endpoint is never contacted.
    pub async fn send(&self, vapid: &VapidKey, sub: &Subscription, msg: &Message) -> Attempt {
        let url = match endpoint::check(&sub.registration.endpoint, &self.allowed) {
            Ok(u) => u,
            Err(e) => {
                return Attempt::Status {
                    status: 400,
                    retry_after: None,
                    body: format!("not sent: {e}"),
                };
            }
        };
        let body = match encrypt_for(sub, &msg.plaintext) {
            Ok(b) => b,
            Err(e) => {
                return Attempt::Transport(format!("cannot encrypt for this subscription: {e}"));
            }
        };
        self.post(vapid, url, body, msg).await
    }

    async fn post(&self, vapid: &VapidKey, url: Url, body: Vec<u8>, msg: &Message) -> Attempt {
        let aud = endpoint::origin(&url);
        let client = if endpoint::is_loopback(&url) {
            &self.direct
        } else {
            &self.client
        };
        let auth = vapid.authorization(&aud, &self.contact, crate::core::util::unix_now());
        let mut req = client
            .post(url)
            .header("TTL", msg.ttl.to_string())
            .header("Urgency", msg.urgency.as_str())
            .header("Content-Encoding", "aes128gcm")
            .header("Content-Type", "application/octet-stream")
            .header("Authorization", auth)
            .body(body);
        if let Some(t) = &msg.topic {
            req = req.header("Topic", t);
        }
        let mut resp = match req.send().await {
            Ok(r) => r,
            Err(e) => return Attempt::Transport(error_chain(&e)),
        };
        let status = resp.status().as_u16();
        let retry_after = resp
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let mut text = Vec::new();
        if !(200..300).contains(&status) {
            while text.len() < ERROR_BODY_BYTES {
                match resp.chunk().await {
                    Ok(Some(c)) => text.extend_from_slice(&c),
                    _ => break,
                }
            }
        }
        let body = String::from_utf8_lossy(&text);
        let body = crate::core::util::truncate_utf8(body.trim(), ERROR_BODY_BYTES).to_owned();
        Attempt::Status {
            status,
            retry_after,
            body,
        }
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}

/// Decodes base64url with or without padding (browsers send it unpadded).
pub fn b64url(s: &str) -> Option<Vec<u8>> {
    URL_SAFE_NO_PAD.decode(s.trim().trim_end_matches('=')).ok()
}

fn encrypt_for(sub: &Subscription, plaintext: &[u8]) -> Result<Vec<u8>, crypto::CryptoError> {
    let key = b64url(&sub.registration.p256dh).ok_or(crypto::CryptoError::BadPublicKey)?;
    let auth = b64url(&sub.registration.auth).ok_or(crypto::CryptoError::BadAuthSecret(0))?;
    crypto::encrypt(plaintext, &crypto::parse_public_key(&key)?, &auth)
}

/// What the dispatcher and workers share.
pub struct Shared {
    pub subs: Arc<Subs>,
    pub sender: Sender,
    pub min_turn: Duration,
}

struct Job {
    msg: Arc<Message>,
    what: &'static str,
}

/// Runs until every [`super::PushHandle`] is gone.
pub async fn dispatch(mut rx: mpsc::Receiver<PushEvent>, shared: Arc<Shared>) {
    let mut workers: HashMap<String, mpsc::Sender<Job>> = HashMap::new();
    while let Some(ev) = rx.recv().await {
        if let super::payload::Event::TurnDone { duration, .. } = &ev.event
            && *duration < shared.min_turn
        {
            continue;
        }
        let kind = ev.event.kind();
        let subs = match shared.subs.list() {
            Ok(s) => s,
            Err(e) => {
                tracing::error!(error = %e, "cannot read push subscriptions; notification dropped");
                continue;
            }
        };
        let subs: Vec<Subscription> = subs
            .into_iter()
            .filter(|s| s.wants(kind, &ev.session_id))
            .collect();
        if subs.is_empty() {
            continue;
        }
        let msg = Arc::new(render(&ev));
        for sub in subs {
            let mut job = Job {
                msg: msg.clone(),
                what: kind.as_str(),
            };
            for _ in 0..2 {
                let tx = workers
                    .entry(sub.id.clone())
                    .or_insert_with(|| spawn_worker(sub.id.clone(), shared.clone()));
                match tx.try_send(job) {
                    Ok(()) => break,
                    Err(mpsc::error::TrySendError::Full(_)) => {
                        tracing::warn!(subscription = %sub.id, "push queue of this device is full; notification dropped");
                        break;
                    }
                    // The worker exited while idle: start a new one and hand it the job.
                    Err(mpsc::error::TrySendError::Closed(j)) => {
                        workers.remove(&sub.id);
                        job = j;
                    }
                }
            }
        }
        workers.retain(|_, tx| !tx.is_closed());
    }
}

fn spawn_worker(id: String, shared: Arc<Shared>) -> mpsc::Sender<Job> {
    let (tx, mut rx) = mpsc::channel::<Job>(DEVICE_QUEUE);
    tokio::spawn(async move {
        loop {
            match tokio::time::timeout(WORKER_IDLE, rx.recv()).await {
                Ok(Some(job)) => deliver(&id, &job, &shared).await,
                Ok(None) => return,
                Err(_) => {
                    // Refuse new jobs, then finish what was queued meanwhile.
                    rx.close();
                    while let Ok(job) = rx.try_recv() {
                        deliver(&id, &job, &shared).await;
                    }
                    return;
                }
            }
        }
    });
    tx
}

/// Sends one message to one subscription, with retries, and records the outcome.
async fn deliver(id: &str, job: &Job, shared: &Shared) {
    let mut attempt = 1;
    loop {
        // Read fresh each attempt: the device may have re-registered (new keys) or been removed.
        let (sub, vapid) = match (shared.subs.get_now(id), shared.subs.vapid()) {
            (Ok(Some(s)), Ok(v)) => (s, v),
            (Ok(None), _) => return,
            (Err(e), _) | (_, Err(e)) => {
                tracing::error!(error = %e, "cannot read a push subscription");
                return;
            }
        };
        let got = shared.sender.send(&vapid, &sub, &job.msg).await;
        let decision = decide(attempt, &got, SystemTime::now(), rand::random::<f64>());
        let recorded = match decision {
            Decision::Delivered { status } => {
                tracing::debug!(subscription = %id, status, what = job.what, "push delivered");
                shared.subs.record_success(id).await
            }
            Decision::Gone { status } => {
                tracing::info!(subscription = %id, status, "the push service says this subscription is gone; removed it");
                shared.subs.delete(id).await.map(|_| ())
            }
            Decision::Retry(delay) => {
                tracing::info!(subscription = %id, attempt, ?delay, outcome = ?got, "push failed; retrying");
                tokio::time::sleep(delay).await;
                attempt += 1;
                continue;
            }
            Decision::Fail(error) => {
                tracing::warn!(subscription = %id, what = job.what, %error, "push not delivered");
                shared.subs.record_error(id, &error).await
            }
        };
        if let Err(e) = recorded {
            tracing::error!(error = %e, "cannot update a push subscription");
        }
        return;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(s: u16, ra: Option<&str>) -> Attempt {
        Attempt::Status {
            status: s,
            retry_after: ra.map(str::to_owned),
            body: String::new(),
        }
    }

    const NOW: SystemTime = SystemTime::UNIX_EPOCH;

    fn at(secs: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(secs)
    }

    #[test]
    fn success_gone_and_hard_failures() {
        for s in [200, 201, 202, 204] {
            assert_eq!(
                decide(1, &status(s, None), NOW, 0.5),
                Decision::Delivered { status: s }
            );
        }
        for s in [404, 410] {
            assert_eq!(
                decide(1, &status(s, None), NOW, 0.5),
                Decision::Gone { status: s }
            );
        }
        for s in [400, 401, 403, 413, 301, 302] {
            let Decision::Fail(e) = decide(1, &status(s, Some("1")), NOW, 0.5) else {
                panic!("{s} must fail at once");
            };
            assert!(e.contains(&s.to_string()), "{e}");
        }
        let got = Attempt::Status {
            status: 400,
            retry_after: None,
            body: "UnauthorizedRegistration".into(),
        };
        assert_eq!(
            decide(1, &got, NOW, 0.0),
            Decision::Fail("push service answered 400: UnauthorizedRegistration".into())
        );
    }

    #[test]
    fn backoff_doubles_with_jitter_and_gives_up() {
        for s in [429, 500, 502, 503] {
            let d1 = decide(1, &status(s, None), NOW, 0.0);
            let d2 = decide(2, &status(s, None), NOW, 0.999);
            let d3 = decide(3, &Attempt::Transport("refused".into()), NOW, 0.5);
            assert_eq!(d1, Decision::Retry(Duration::from_millis(500)));
            let Decision::Retry(d2) = d2 else { panic!() };
            assert!(d2 > Duration::from_millis(1990) && d2 <= Duration::from_secs(2));
            assert_eq!(d3, Decision::Retry(Duration::from_secs(3)));
            let Decision::Fail(e) = decide(MAX_ATTEMPTS, &status(s, None), NOW, 0.5) else {
                panic!()
            };
            assert!(e.contains("gave up after 4 attempts"), "{e}");
        }
    }

    #[test]
    fn retry_after_is_honoured_and_clamped() {
        // Seconds: waits at least that long.
        assert_eq!(
            decide(1, &status(503, Some("7")), NOW, 0.0),
            Decision::Retry(Duration::from_secs(7))
        );
        // A hint shorter than the backoff does not shorten it.
        assert_eq!(
            decide(3, &status(429, Some("0")), NOW, 1.0),
            Decision::Retry(Duration::from_secs(4))
        );
        // HTTP-date, relative to `now`.
        let now = at(1_445_412_400); // 2015-10-21T07:26:40Z
        assert_eq!(
            decide(
                1,
                &status(503, Some("Wed, 21 Oct 2015 07:28:00 GMT")),
                now,
                0.0
            ),
            Decision::Retry(Duration::from_secs(80))
        );
        // A date in the past means now (then the backoff applies).
        assert_eq!(
            decide(
                1,
                &status(503, Some("Wed, 21 Oct 2015 07:28:00 GMT")),
                at(1_500_000_000),
                0.0
            ),
            Decision::Retry(Duration::from_millis(500))
        );
        // Clamped.
        assert_eq!(
            decide(1, &status(429, Some("86400")), NOW, 0.0),
            Decision::Retry(MAX_RETRY_DELAY)
        );
        // Garbage is ignored.
        assert_eq!(
            decide(1, &status(503, Some("soon")), NOW, 0.0),
            Decision::Retry(Duration::from_millis(500))
        );
        assert_eq!(retry_after(" 12 ", NOW), Some(Duration::from_secs(12)));
        assert_eq!(retry_after("-1", NOW), None);
    }

    #[test]
    fn delays_are_bounded_for_any_jitter() {
        for attempt in 1..MAX_ATTEMPTS {
            for j in [-1.0, 0.0, 0.3, 0.99, 7.0, f64::NAN] {
                match decide(attempt, &status(500, None), NOW, j) {
                    Decision::Retry(d) => assert!(d <= MAX_RETRY_DELAY, "{d:?}"),
                    other => panic!("{other:?}"),
                }
            }
        }
    }
}
