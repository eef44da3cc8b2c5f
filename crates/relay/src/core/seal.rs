//! What makes a NATS message the cluster's own: every request, reply, event and KV value a relay
//! writes carries a MAC under a key all relays derive from a secret they share (the controller token,
//! or `--cluster-secret-file`), and every relay drops what it reads without a valid one. A client of
//! the NATS server that does not hold the secret can publish on every subject and write every
//! bucket, and none of it is served, created, answered or believed.
//!
//! - **Messages** (requests `bridge.in.<id>`, `bridge.create.<node>`, `bridge.cli.<node>`, their
//!   replies, events on `bridge.ev.<id>`, live frames on `bridge.live.<id>`): headers
//!   `Bridge-Ts` (unix milliseconds), `Bridge-Nonce` (16 random bytes, hex) and `Bridge-Mac`
//!   (HMAC-SHA256 over the subject, the two headers and the body). Requests and replies must be
//!   fresh ([`FRESH`]) and a request's nonce is accepted once: a captured request replayed later, or
//!   again, is refused. Events are history (read again after a restart): their MAC binds them to
//!   their subject, and the log's own sequence numbers and `Nats-Msg-Id` keep them in order.
//! - **KV values** (registry, heartbeats, credentials, push subscriptions): `bcv1.<mac>.` before the
//!   value, the MAC over the bucket, the key and the value.
//! - **Secrets in KV** (the VAPID private key): AES-256-GCM under a second derived key.
//!
//! The MAC key and the encryption key come from HKDF-SHA256 of the secret with distinct labels.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use aes_gcm::aead::{Aead as _, KeyInit as _, Payload};
use aes_gcm::{Aes256Gcm, Nonce};
#[cfg(feature = "cluster")]
use async_nats::HeaderMap;
use bytes::Bytes;
use hmac::Mac as _;

/// Header names.
pub const TS_HEADER: &str = "Bridge-Ts";
pub const NONCE_HEADER: &str = "Bridge-Nonce";
pub const MAC_HEADER: &str = "Bridge-Mac";
/// How far a request's or reply's time may be from this relay's clock.
pub const FRESH: Duration = Duration::from_secs(60);
/// Prefix of a sealed KV value.
const VALUE_PREFIX: &[u8] = b"bcv1.";
/// Nonces remembered at most (each for twice [`FRESH`]); past it the oldest half is forgotten and
/// requests older than the newest forgotten one are refused.
#[cfg_attr(not(feature = "cluster"), allow(dead_code))]
const NONCES_KEPT: usize = 200_000;

type HmacSha256 = hmac::Hmac<sha2::Sha256>;

/// Why a message or value was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// No MAC, or not one made with the cluster's key.
    Forged,
    /// Outside [`FRESH`] of this relay's clock.
    Stale,
    /// This nonce was accepted before.
    Replayed,
}

impl Refused {
    pub fn as_str(self) -> &'static str {
        match self {
            Refused::Forged => "no valid cluster MAC (a client without the cluster secret)",
            Refused::Stale => "too old or from the future (replayed, or a clock far off)",
            Refused::Replayed => "already seen (a replayed request)",
        }
    }
}

/// The cluster's keys.
pub struct Keys {
    mac: [u8; 32],
    enc: [u8; 32],
    #[cfg_attr(not(feature = "cluster"), allow(dead_code))]
    nonces: Mutex<Nonces>,
}

#[cfg_attr(not(feature = "cluster"), allow(dead_code))]
#[derive(Default)]
struct Nonces {
    seen: HashMap<[u8; 16], Instant>,
    /// Requests stamped before this (unix ms) are refused: their nonces may have been forgotten.
    floor_ms: u64,
}

impl std::fmt::Debug for Keys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Keys(..)")
    }
}

#[cfg_attr(not(feature = "cluster"), allow(dead_code))]
fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl Keys {
    /// The keys every relay holding `secret` derives.
    pub fn derive(secret: &[u8]) -> Keys {
        let hk = hkdf::Hkdf::<sha2::Sha256>::new(Some(b"bridge-console cluster v1"), secret);
        let mut mac = [0u8; 32];
        let mut enc = [0u8; 32];
        hk.expand(b"message and value MAC", &mut mac)
            .expect("32 bytes is a valid HKDF length");
        hk.expand(b"secret values in KV", &mut enc)
            .expect("32 bytes is a valid HKDF length");
        Keys {
            mac,
            enc,
            nonces: Mutex::new(Nonces::default()),
        }
    }

    /// The MAC of `parts`, each preceded by its length (so no two lists of parts read alike).
    fn framed_mac(&self, parts: &[&[u8]]) -> HmacSha256 {
        let mut m = <HmacSha256 as hmac::Mac>::new_from_slice(&self.mac).expect("any key length");
        for part in parts {
            m.update(&(part.len() as u64).to_be_bytes());
            m.update(part);
        }
        m
    }

    #[cfg_attr(not(feature = "cluster"), allow(dead_code))]
    fn message_mac(&self, subject: &str, ts: &str, nonce: &str, body: &[u8]) -> HmacSha256 {
        self.framed_mac(&[
            b"msg",
            subject.as_bytes(),
            ts.as_bytes(),
            nonce.as_bytes(),
            body,
        ])
    }

    /// Adds the time, nonce and MAC of a message on `subject` with `body` to `headers`.
    #[cfg(feature = "cluster")]
    pub fn sign(&self, headers: &mut HeaderMap, subject: &str, body: &[u8]) {
        let ts = now_ms().to_string();
        let nonce = hex::encode(rand::random::<[u8; 16]>());
        let mac = hex::encode(
            self.message_mac(subject, &ts, &nonce, body)
                .finalize()
                .into_bytes(),
        );
        headers.insert(TS_HEADER, ts.as_str());
        headers.insert(NONCE_HEADER, nonce.as_str());
        headers.insert(MAC_HEADER, mac.as_str());
    }

    /// Headers holding only the signature of a message on `subject` with `body`.
    #[cfg(feature = "cluster")]
    pub fn signed(&self, subject: &str, body: &[u8]) -> HeaderMap {
        let mut h = HeaderMap::new();
        self.sign(&mut h, subject, body);
        h
    }

    /// The message's time (unix ms) when its MAC is the cluster's.
    #[cfg(feature = "cluster")]
    fn verify(
        &self,
        subject: &str,
        headers: Option<&HeaderMap>,
        body: &[u8],
    ) -> Result<(u64, [u8; 16]), Refused> {
        let h = headers.ok_or(Refused::Forged)?;
        let get = |name: &str| h.get(name).map(|v| v.as_str().to_owned());
        let (Some(ts), Some(nonce), Some(mac)) =
            (get(TS_HEADER), get(NONCE_HEADER), get(MAC_HEADER))
        else {
            return Err(Refused::Forged);
        };
        let mac = hex::decode(mac).map_err(|_| Refused::Forged)?;
        self.message_mac(subject, &ts, &nonce, body)
            .verify_slice(&mac)
            .map_err(|_| Refused::Forged)?;
        let ts: u64 = ts.parse().map_err(|_| Refused::Forged)?;
        let mut n = [0u8; 16];
        hex::decode_to_slice(&nonce, &mut n).map_err(|_| Refused::Forged)?;
        Ok((ts, n))
    }

    /// A message the cluster wrote at any time (an event of a log, read again later).
    #[cfg(feature = "cluster")]
    pub fn check_event(
        &self,
        subject: &str,
        headers: Option<&HeaderMap>,
        body: &[u8],
    ) -> Result<(), Refused> {
        self.verify(subject, headers, body).map(|_| ())
    }

    /// A reply: the cluster's, and fresh.
    #[cfg(feature = "cluster")]
    pub fn check_reply(
        &self,
        subject: &str,
        headers: Option<&HeaderMap>,
        body: &[u8],
    ) -> Result<(), Refused> {
        let (ts, _) = self.verify(subject, headers, body)?;
        fresh(ts)
    }

    /// A request: the cluster's, fresh, and never seen before.
    #[cfg(feature = "cluster")]
    pub fn check_request(
        &self,
        subject: &str,
        headers: Option<&HeaderMap>,
        body: &[u8],
    ) -> Result<(), Refused> {
        let (ts, nonce) = self.verify(subject, headers, body)?;
        fresh(ts)?;
        let mut n = self.nonces.lock().unwrap_or_else(|p| p.into_inner());
        if ts < n.floor_ms {
            return Err(Refused::Stale);
        }
        let keep = FRESH * 2;
        if n.seen.len() >= NONCES_KEPT {
            n.seen.retain(|_, at| at.elapsed() < keep);
            if n.seen.len() >= NONCES_KEPT {
                // Flooded with fresh nonces: forget them all and refuse anything stamped before now.
                n.seen.clear();
                n.floor_ms = now_ms();
                return Err(Refused::Stale);
            }
        }
        if n.seen.insert(nonce, Instant::now()).is_some() {
            return Err(Refused::Replayed);
        }
        Ok(())
    }

    fn value_mac(&self, bucket: &str, key: &str, value: &[u8]) -> HmacSha256 {
        self.framed_mac(&[b"kv", bucket.as_bytes(), key.as_bytes(), value])
    }

    /// `value` as stored under `bucket`/`key`: `bcv1.<mac>.` then the value.
    pub fn seal_value(&self, bucket: &str, key: &str, value: &[u8]) -> Bytes {
        let mac = hex::encode(self.value_mac(bucket, key, value).finalize().into_bytes());
        let mut out = Vec::with_capacity(VALUE_PREFIX.len() + mac.len() + 1 + value.len());
        out.extend_from_slice(VALUE_PREFIX);
        out.extend_from_slice(mac.as_bytes());
        out.push(b'.');
        out.extend_from_slice(value);
        Bytes::from(out)
    }

    /// The value a relay stored under `bucket`/`key`, or `None` (anything else written there).
    pub fn open_value<'a>(&self, bucket: &str, key: &str, stored: &'a [u8]) -> Option<&'a [u8]> {
        let rest = stored.strip_prefix(VALUE_PREFIX)?;
        if rest.len() < 65 || rest[64] != b'.' {
            return None;
        }
        let mac = hex::decode(&rest[..64]).ok()?;
        let value = &rest[65..];
        self.value_mac(bucket, key, value).verify_slice(&mac).ok()?;
        Some(value)
    }

    /// `plaintext` encrypted for `bucket`/`key` (a random nonce first).
    pub fn encrypt(&self, bucket: &str, key: &str, plaintext: &[u8]) -> Vec<u8> {
        let cipher = Aes256Gcm::new_from_slice(&self.enc).expect("a 32-byte key");
        let nonce: [u8; 12] = rand::random();
        let aad = format!("{bucket}/{key}");
        let mut out = nonce.to_vec();
        out.extend(
            cipher
                .encrypt(
                    Nonce::from_slice(&nonce),
                    Payload {
                        msg: plaintext,
                        aad: aad.as_bytes(),
                    },
                )
                .expect("AES-GCM encryption does not fail for these sizes"),
        );
        out
    }

    /// What [`Keys::encrypt`] made for `bucket`/`key`, or `None`.
    pub fn decrypt(&self, bucket: &str, key: &str, sealed: &[u8]) -> Option<Vec<u8>> {
        if sealed.len() < 12 + 16 {
            return None;
        }
        let cipher = Aes256Gcm::new_from_slice(&self.enc).ok()?;
        let aad = format!("{bucket}/{key}");
        cipher
            .decrypt(
                Nonce::from_slice(&sealed[..12]),
                Payload {
                    msg: &sealed[12..],
                    aad: aad.as_bytes(),
                },
            )
            .ok()
    }
}

#[cfg_attr(not(feature = "cluster"), allow(dead_code))]
fn fresh(ts: u64) -> Result<(), Refused> {
    let now = now_ms();
    let window = u64::try_from(FRESH.as_millis()).unwrap_or(u64::MAX);
    if ts.abs_diff(now) > window {
        return Err(Refused::Stale);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "cluster")]
    #[test]
    fn messages_verify_once_and_only_with_the_key_subject_and_body_they_were_made_with() {
        let k = Keys::derive(b"the shared secret 0123456789abcdef");
        let other = Keys::derive(b"another secret 0123456789abcdefgh");
        let h = k.signed("bridge.in.cse_1", b"{\"op\":\"detail\"}");
        assert_eq!(
            other.check_request("bridge.in.cse_1", Some(&h), b"{\"op\":\"detail\"}"),
            Err(Refused::Forged)
        );
        assert_eq!(
            k.check_request("bridge.in.cse_2", Some(&h), b"{\"op\":\"detail\"}"),
            Err(Refused::Forged)
        );
        assert_eq!(
            k.check_request("bridge.in.cse_1", Some(&h), b"{\"op\":\"delete\"}"),
            Err(Refused::Forged)
        );
        assert_eq!(
            k.check_request("bridge.in.cse_1", None, b"{\"op\":\"detail\"}"),
            Err(Refused::Forged)
        );
        assert_eq!(
            k.check_request("bridge.in.cse_1", Some(&h), b"{\"op\":\"detail\"}"),
            Ok(())
        );
        assert_eq!(
            k.check_request("bridge.in.cse_1", Some(&h), b"{\"op\":\"detail\"}"),
            Err(Refused::Replayed),
            "the same request again"
        );
        // Events are history: the same one verifies every time it is read.
        let e = k.signed("bridge.ev.cse_1", b"x");
        assert_eq!(k.check_event("bridge.ev.cse_1", Some(&e), b"x"), Ok(()));
        assert_eq!(k.check_event("bridge.ev.cse_1", Some(&e), b"x"), Ok(()));
        assert_eq!(
            k.check_event("bridge.ev.cse_2", Some(&e), b"x"),
            Err(Refused::Forged)
        );
    }

    #[cfg(feature = "cluster")]
    #[test]
    fn stale_requests_and_replies_are_refused() {
        let k = Keys::derive(b"s");
        let old = (now_ms() - 5 * 60 * 1000).to_string();
        let nonce = hex::encode([7u8; 16]);
        let mac = hex::encode(
            k.message_mac("bridge.create.n1", &old, &nonce, b"{}")
                .finalize()
                .into_bytes(),
        );
        let mut h = HeaderMap::new();
        h.insert(TS_HEADER, old.as_str());
        h.insert(NONCE_HEADER, nonce.as_str());
        h.insert(MAC_HEADER, mac.as_str());
        assert_eq!(
            k.check_event("bridge.create.n1", Some(&h), b"{}"),
            Ok(()),
            "the MAC is right"
        );
        assert_eq!(
            k.check_request("bridge.create.n1", Some(&h), b"{}"),
            Err(Refused::Stale)
        );
        assert_eq!(
            k.check_reply("bridge.create.n1", Some(&h), b"{}"),
            Err(Refused::Stale)
        );
    }

    #[test]
    fn values_open_only_where_and_as_they_were_sealed() {
        let k = Keys::derive(b"s");
        let v = k.seal_value("bridge_creds", "lgn.abc", b"{\"token_id\":\"obs_1\"}");
        assert_eq!(
            k.open_value("bridge_creds", "lgn.abc", &v),
            Some(b"{\"token_id\":\"obs_1\"}".as_slice())
        );
        assert_eq!(
            k.open_value("bridge_creds", "lgn.other", &v),
            None,
            "moved to another key"
        );
        assert_eq!(
            k.open_value("bridge_nodes", "lgn.abc", &v),
            None,
            "moved to another bucket"
        );
        let mut tampered = v.to_vec();
        let last = tampered.len() - 3;
        tampered[last] ^= 1;
        assert_eq!(k.open_value("bridge_creds", "lgn.abc", &tampered), None);
        assert_eq!(
            k.open_value("bridge_creds", "lgn.abc", b"{\"token_id\":\"controller\"}"),
            None,
            "unsealed"
        );
        assert_eq!(
            Keys::derive(b"t").open_value("bridge_creds", "lgn.abc", &v),
            None
        );
    }

    #[test]
    fn secrets_decrypt_only_with_the_key_and_where_they_were_stored() {
        let k = Keys::derive(b"s");
        let c = k.encrypt("bridge_push", "vapid", b"-----BEGIN PRIVATE KEY-----");
        assert!(!c.windows(5).any(|w| w == b"BEGIN"));
        assert_eq!(
            k.decrypt("bridge_push", "vapid", &c).as_deref(),
            Some(b"-----BEGIN PRIVATE KEY-----".as_slice())
        );
        assert_eq!(k.decrypt("bridge_push", "other", &c), None);
        assert_eq!(Keys::derive(b"t").decrypt("bridge_push", "vapid", &c), None);
    }
}
