//! Resource limits that are not a single number in a handler: login attempts per peer (a token
//! bucket, time passed in) and SSE/WebSocket streams per principal (a counter whose slots are held by
//! guards). The numbers come from the command line (see `config.rs`).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse as _, Response};

use crate::error::ApiError;

/// Largest body accepted on a path that needs no credentials (`/v1/auth/login`, or any request
/// without them), and the largest WebSocket auth message.
pub const UNAUTHENTICATED_BODY_BYTES: usize = 4096;
/// Login attempts per peer: this many at once, refilled at this many per minute.
pub const LOGIN_BURST: u32 = 10;
pub const LOGIN_PER_MINUTE: u32 = 10;
/// Peers remembered by the login limiter before the fullest buckets are forgotten.
const MAX_PEERS: usize = 4096;

/// A token bucket per peer. `None` is the peer of a router driven without `ConnectInfo` (tests):
/// one shared bucket.
pub struct RateLimiter {
    burst: f64,
    per_sec: f64,
    buckets: Mutex<HashMap<Option<IpAddr>, (f64, Instant)>>,
}

impl RateLimiter {
    pub fn new(burst: u32, per_minute: u32) -> Self {
        Self {
            burst: f64::from(burst.max(1)),
            per_sec: f64::from(per_minute.max(1)) / 60.0,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Takes one token for `peer` at `now`; `Err(wait)` when the bucket is empty (`wait`: until the
    /// next token).
    pub fn check(&self, peer: Option<IpAddr>, now: Instant) -> Result<(), Duration> {
        self.take(peer, now, 1.0)
    }

    /// `Err(wait)` when `peer`'s bucket is empty; takes nothing (for attempts charged only when
    /// they fail).
    pub fn peek(&self, peer: Option<IpAddr>, now: Instant) -> Result<(), Duration> {
        self.take(peer, now, 0.0)
    }

    fn take(&self, peer: Option<IpAddr>, now: Instant, cost: f64) -> Result<(), Duration> {
        let mut b = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        if b.len() >= MAX_PEERS && !b.contains_key(&peer) {
            // Forget the peers whose buckets have refilled: they lose nothing.
            let (burst, rate) = (self.burst, self.per_sec);
            b.retain(|_, (tokens, at)| {
                *tokens + now.saturating_duration_since(*at).as_secs_f64() * rate < burst
            });
            if b.len() >= MAX_PEERS {
                b.clear();
            }
        }
        let (tokens, at) = b.entry(peer).or_insert((self.burst, now));
        let refill = now.saturating_duration_since(*at).as_secs_f64() * self.per_sec;
        *tokens = (*tokens + refill).min(self.burst);
        *at = now;
        if *tokens >= 1.0 {
            *tokens -= cost;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - *tokens) / self.per_sec))
        }
    }
}

/// The 429 of an exhausted login bucket, with `Retry-After`.
pub fn too_many_login_attempts(wait: Duration) -> Response {
    let secs = (wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).max(1);
    let mut resp = ApiError::new(
        StatusCode::TOO_MANY_REQUESTS,
        "rate_limit_error",
        format!(
            "too many login attempts from this address ({LOGIN_PER_MINUTE} per minute); try again in {secs} s"
        ),
    )
    .into_response();
    resp.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    resp
}

/// Open SSE streams and WebSockets per principal (`token_id`).
pub struct StreamSlots {
    max: usize,
    open: Arc<Mutex<HashMap<String, usize>>>,
}

/// One open stream; the slot frees when it drops.
pub struct StreamSlot {
    key: String,
    open: Arc<Mutex<HashMap<String, usize>>>,
}

impl StreamSlots {
    pub fn new(max: usize) -> Self {
        Self {
            max,
            open: Arc::default(),
        }
    }

    /// A slot for `principal`, or 429 naming the flag that raises the cap.
    pub fn acquire(&self, principal: &str) -> Result<StreamSlot, ApiError> {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        let n = open.entry(principal.to_owned()).or_insert(0);
        if *n >= self.max {
            return Err(ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "too_many_streams",
                format!(
                    "this credential already has {} open event streams (SSE or WebSocket); close one, \
                     or start the relay with a larger --max-streams-per-principal",
                    self.max
                ),
            ));
        }
        *n += 1;
        Ok(StreamSlot {
            key: principal.to_owned(),
            open: self.open.clone(),
        })
    }

    pub fn open(&self, principal: &str) -> usize {
        let open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        open.get(principal).copied().unwrap_or(0)
    }
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = open.get_mut(&self.key) {
            *n -= 1;
            if *n == 0 {
                open.remove(&self.key);
            }
        }
    }
}

/// Caps the relay runs with (shared by the handlers).
pub struct Limits {
    pub login: RateLimiter,
    pub streams: StreamSlots,
}

impl Limits {
    pub fn new(max_streams_per_principal: usize) -> Self {
        Self {
            login: RateLimiter::new(LOGIN_BURST, LOGIN_PER_MINUTE),
            streams: StreamSlots::new(max_streams_per_principal),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_refill_per_peer() {
        let l = RateLimiter::new(3, 60);
        let t0 = Instant::now();
        let a = Some("10.0.0.1".parse().unwrap());
        let b = Some("10.0.0.2".parse().unwrap());
        for _ in 0..3 {
            assert!(l.check(a, t0).is_ok());
        }
        let wait = l.check(a, t0).unwrap_err();
        assert!(
            wait <= Duration::from_secs(1) && wait > Duration::ZERO,
            "{wait:?}"
        );
        assert!(l.check(b, t0).is_ok(), "another peer has its own bucket");
        assert!(l.check(None, t0).is_ok(), "unknown peers share one");
        assert!(l.check(a, t0 + Duration::from_millis(500)).is_err());
        assert!(l.peek(a, t0 + Duration::from_millis(500)).is_err());
        assert!(l.peek(b, t0).is_ok());
        assert!(l.peek(b, t0).is_ok(), "peeking takes nothing");
        assert!(l.check(a, t0 + Duration::from_millis(1600)).is_ok());
        assert!(l.check(a, t0 + Duration::from_secs(100)).is_ok());
    }

    #[test]
    fn stream_slots_free_on_drop() {
        let s = StreamSlots::new(2);
        let a = s.acquire("p").unwrap();
        let _b = s.acquire("p").unwrap();
        let err = s.acquire("p").err().unwrap();
        assert_eq!(err.status, axum::http::StatusCode::TOO_MANY_REQUESTS);
        assert!(err.message.contains("--max-streams-per-principal"));
        assert!(s.acquire("q").is_ok());
        drop(a);
        assert_eq!(s.open("p"), 1);
        assert!(s.acquire("p").is_ok());
    }
}
