//! Resource limits that are not a single number in a handler: login attempts per peer (a token
//! bucket, time passed in) and SSE/WebSocket streams per principal (a counter whose slots are held by
//! guards). The numbers come from the command line (see `config.rs`).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::core::error::{Error, Fault};

/// Largest body accepted on a path that needs no credentials (`/v1/auth/login`, or any request
/// without them), and the largest WebSocket auth message.
pub const UNAUTHENTICATED_BODY_BYTES: usize = 4096;
/// Login attempts per peer: this many at once, refilled at this many per minute.
pub const LOGIN_BURST: u32 = 10;
pub const LOGIN_PER_MINUTE: u32 = 10;
/// Peers remembered by the login limiter before the fullest buckets are forgotten.
const MAX_PEERS: usize = 4096;

/// A token bucket per peer: an IPv4 address, or an IPv6 /64 (one host usually holds a whole /64,
/// so per-/128 buckets would give it 2^64 of them). `None` is the peer of a router driven without
/// `ConnectInfo` (tests): one shared bucket.
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

    /// `Err(wait)` when `peer`'s bucket is empty; takes nothing.
    pub fn peek(&self, peer: Option<IpAddr>, now: Instant) -> Result<(), Duration> {
        self.take(peer, now, 0.0)
    }

    /// Gives back the token an attempt took (a login that succeeded): charged before the attempt,
    /// so that attempts racing each other cannot all pass one check.
    pub fn refund(&self, peer: Option<IpAddr>) {
        let key = bucket_of(peer);
        let mut b = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((tokens, _)) = b.get_mut(&key) {
            *tokens = (*tokens + 1.0).min(self.burst);
        }
    }

    fn take(&self, peer: Option<IpAddr>, now: Instant, cost: f64) -> Result<(), Duration> {
        let peer = bucket_of(peer);
        let mut b = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        if b.len() >= MAX_PEERS && !b.contains_key(&peer) {
            // Forget the peers whose buckets have refilled: they lose nothing.
            let (burst, rate) = (self.burst, self.per_sec);
            let level = |tokens: f64, at: Instant| {
                (tokens + now.saturating_duration_since(at).as_secs_f64() * rate).min(burst)
            };
            b.retain(|_, (tokens, at)| level(*tokens, *at) < burst);
            if b.len() >= MAX_PEERS {
                // Still full: forget the fuller half, never the drained buckets (clearing them all
                // would hand a flood of addresses a fresh burst for each).
                let mut levels: Vec<f64> = b.values().map(|(t, at)| level(*t, *at)).collect();
                levels.sort_by(f64::total_cmp);
                let cut = levels[levels.len() / 2];
                b.retain(|_, (tokens, at)| level(*tokens, *at) < cut);
                if b.len() >= MAX_PEERS {
                    // Every bucket at the same level: a new peer waits for room.
                    return Err(Duration::from_secs_f64(1.0 / rate));
                }
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

/// The bucket of `peer`: IPv4 as is, IPv6 by its /64.
fn bucket_of(peer: Option<IpAddr>) -> Option<IpAddr> {
    peer.map(|ip| match ip.to_canonical() {
        IpAddr::V6(v6) => {
            let bits = u128::from(v6) & !((1u128 << 64) - 1);
            IpAddr::V6(std::net::Ipv6Addr::from(bits))
        }
        v4 => v4,
    })
}

/// WebSockets that have not authenticated yet (waiting for their first frame, at most
/// `WS_AUTH_TIMEOUT`), in all and per peer (IPv6 per /64).
pub const PENDING_AUTH_TOTAL: usize = 64;
pub const PENDING_AUTH_PER_PEER: usize = 8;

/// How many are waiting in all, and per peer.
type Pending = (usize, HashMap<Option<IpAddr>, usize>);

/// Counts the WebSockets waiting to authenticate: each may hold one frame of up to
/// `--max-body-bytes` while it is read, so their number is bounded before anyone is known.
#[derive(Default)]
pub struct PendingAuth {
    open: Arc<Mutex<Pending>>,
}

/// One WebSocket's place among [`PendingAuth`]; given back when dropped (once it authenticated,
/// or closed).
#[derive(Debug)]
pub struct PendingSlot {
    peer: Option<IpAddr>,
    open: Arc<Mutex<Pending>>,
}

impl PendingAuth {
    pub fn acquire(&self, peer: Option<IpAddr>) -> Result<PendingSlot, Error> {
        let peer = bucket_of(peer);
        let mut g = self.open.lock().unwrap_or_else(|p| p.into_inner());
        let (total, by_peer) = &mut *g;
        let mine = by_peer.get(&peer).copied().unwrap_or(0);
        if *total >= PENDING_AUTH_TOTAL || mine >= PENDING_AUTH_PER_PEER {
            return Err(Error::new(
                Fault::TooMany,
                "rate_limit_error",
                "too many WebSockets are waiting to authenticate (from this address, or in all); \
                 send the credential in the first frame at once, or in the Authorization header",
            ));
        }
        *total += 1;
        *by_peer.entry(peer).or_insert(0) += 1;
        Ok(PendingSlot {
            peer,
            open: self.open.clone(),
        })
    }

    pub fn open(&self) -> usize {
        self.open.lock().unwrap_or_else(|p| p.into_inner()).0
    }
}

impl Drop for PendingSlot {
    fn drop(&mut self) {
        let mut g = self.open.lock().unwrap_or_else(|p| p.into_inner());
        let (total, by_peer) = &mut *g;
        *total = total.saturating_sub(1);
        if let Some(n) = by_peer.get_mut(&self.peer) {
            *n -= 1;
            if *n == 0 {
                by_peer.remove(&self.peer);
            }
        }
    }
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
    pub fn acquire(&self, principal: &str) -> Result<StreamSlot, Error> {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        let n = open.entry(principal.to_owned()).or_insert(0);
        if *n >= self.max {
            return Err(Error::new(
                Fault::TooMany,
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
    pub pending_auth: PendingAuth,
}

impl Limits {
    pub fn new(max_streams_per_principal: usize) -> Self {
        Self {
            login: RateLimiter::new(LOGIN_BURST, LOGIN_PER_MINUTE),
            streams: StreamSlots::new(max_streams_per_principal),
            pending_auth: PendingAuth::default(),
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
    fn unauthenticated_websockets_are_bounded_in_all_and_per_peer() {
        let p = PendingAuth::default();
        let a = Some("10.0.0.1".parse::<IpAddr>().unwrap());
        let mine: Vec<_> = (0..PENDING_AUTH_PER_PEER)
            .map(|_| p.acquire(a).unwrap())
            .collect();
        assert_eq!(p.acquire(a).unwrap_err().fault, Fault::TooMany);
        let others: Vec<_> = (0..PENDING_AUTH_TOTAL - PENDING_AUTH_PER_PEER)
            .map(|i| {
                p.acquire(Some(IpAddr::from(std::net::Ipv4Addr::from(
                    0x0a01_0000 + i as u32,
                ))))
                .unwrap()
            })
            .collect();
        let c = Some("10.2.0.1".parse::<IpAddr>().unwrap());
        assert!(p.acquire(c).is_err(), "full in all");
        drop(mine);
        assert!(p.acquire(c).is_ok(), "given back when dropped");
        assert_eq!(p.open(), others.len());
    }

    #[test]
    fn ipv6_is_limited_per_64_and_a_refund_gives_back_one() {
        let l = RateLimiter::new(2, 60);
        let t0 = Instant::now();
        let ip = |s: &str| Some(s.parse::<IpAddr>().unwrap());
        assert!(l.check(ip("2001:db8:1:2::1"), t0).is_ok());
        assert!(l.check(ip("2001:db8:1:2:ffff::9"), t0).is_ok());
        assert!(
            l.check(ip("2001:db8:1:2:dead:beef::1"), t0).is_err(),
            "another address of the same /64 shares the bucket"
        );
        assert!(l.check(ip("2001:db8:1:3::1"), t0).is_ok(), "another /64");
        l.refund(ip("2001:db8:1:2::7"));
        assert!(l.check(ip("2001:db8:1:2::1"), t0).is_ok(), "refunded once");
        assert!(l.check(ip("2001:db8:1:2::1"), t0).is_err());
    }

    #[test]
    fn a_flood_of_addresses_never_resets_a_drained_bucket() {
        let l = RateLimiter::new(2, 1);
        let t0 = Instant::now();
        let guesser = Some("10.9.9.9".parse::<IpAddr>().unwrap());
        assert!(l.check(guesser, t0).is_ok());
        assert!(l.check(guesser, t0).is_ok());
        assert!(l.check(guesser, t0).is_err());
        // Thousands of other addresses, each with one failed attempt.
        for i in 0..(MAX_PEERS as u32 * 2) {
            let _ = l.check(
                Some(IpAddr::from(std::net::Ipv4Addr::from(0x0b00_0000 + i))),
                t0,
            );
        }
        assert!(
            l.check(guesser, t0).is_err(),
            "still drained after the flood"
        );
    }

    #[test]
    fn stream_slots_free_on_drop() {
        let s = StreamSlots::new(2);
        let a = s.acquire("p").unwrap();
        let _b = s.acquire("p").unwrap();
        let err = s.acquire("p").err().unwrap();
        assert_eq!(err.fault, Fault::TooMany);
        assert!(err.message.contains("--max-streams-per-principal"));
        assert!(s.acquire("q").is_ok());
        drop(a);
        assert_eq!(s.open("p"), 1);
        assert!(s.acquire("p").is_ok());
    }
}
