//! A Web Push service for tests, on 127.0.0.1:0, that also plays the browser: it holds each
//! subscription's P-256 key pair and auth secret, checks every request's VAPID JWT (ES256 over the
//! `k=` key, `aud` = its origin, `exp` within 12 h, a `sub`), decrypts the `aes128gcm` body with the
//! private key, and keeps the payload. Replies can be scripted (status + `Retry-After`, or never).

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use bridge_relay::features::push::crypto;
use p256::SecretKey;
use p256::ecdsa::signature::Verifier as _;
use p256::ecdsa::{Signature, VerifyingKey};
use serde_json::{Value, json};

use super::T;

/// How the push service answers a request.
#[derive(Clone, Debug)]
pub enum Reply {
    Status(u16, Option<&'static str>),
    /// Never answers.
    Hang,
}

/// One push, verified and decrypted.
#[derive(Clone, Debug)]
pub struct Received {
    pub device: String,
    pub headers: HeaderMap,
    pub payload: Value,
    pub plaintext_len: usize,
    pub claims: Value,
    pub k: String,
    pub at: Instant,
}

impl Received {
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }
}

struct Device {
    secret: SecretKey,
    auth: [u8; 16],
}

#[derive(Default)]
struct PsState {
    devices: HashMap<String, Device>,
    received: Vec<Received>,
    /// Every request's path, verified or not.
    paths: Vec<String>,
    rejected: Vec<String>,
    script: VecDeque<Reply>,
}

#[derive(Clone)]
pub struct PushService {
    pub origin: String,
    state: Arc<Mutex<PsState>>,
}

impl PushService {
    pub async fn start() -> PushService {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr: SocketAddr = listener.local_addr().unwrap();
        let ps = PushService {
            origin: format!("http://{addr}"),
            state: Arc::default(),
        };
        let app = axum::Router::new().fallback(receive).with_state(ps.clone());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        ps
    }

    /// The relay flag admitting this service.
    pub fn allow_flag(&self) -> String {
        format!("{}/", self.origin)
    }

    /// A new browser subscription (key pair + auth secret): what `PushSubscription.toJSON()` gives.
    pub fn device(&self, name: &str) -> Value {
        let secret = crypto::random_secret_key();
        let auth: [u8; 16] = rand::random();
        let p256dh = URL_SAFE_NO_PAD.encode(crypto::public_key_bytes(&secret.public_key()));
        self.state
            .lock()
            .unwrap()
            .devices
            .insert(name.to_owned(), Device { secret, auth });
        json!({
            "endpoint": format!("{}/push/{name}", self.origin),
            "expirationTime": null,
            "keys": {"p256dh": p256dh, "auth": URL_SAFE_NO_PAD.encode(auth)},
        })
    }

    pub fn script(&self, replies: impl IntoIterator<Item = Reply>) {
        self.state.lock().unwrap().script.extend(replies);
    }

    pub fn received(&self) -> Vec<Received> {
        let s = self.state.lock().unwrap();
        assert!(
            s.rejected.is_empty(),
            "pushes failed verification: {:?}",
            s.rejected
        );
        s.received.clone()
    }

    pub fn paths(&self) -> Vec<String> {
        self.state.lock().unwrap().paths.clone()
    }

    /// Waits for a push matching `pred`.
    pub async fn wait_for(&self, what: &str, pred: impl Fn(&Received) -> bool) -> Received {
        let deadline = Instant::now() + T;
        loop {
            if let Some(r) = self.received().into_iter().find(|r| pred(r)) {
                return r;
            }
            assert!(
                Instant::now() < deadline,
                "no push {what} within {T:?}; got {:#?}",
                self.received()
                    .iter()
                    .map(|r| (&r.device, &r.payload))
                    .collect::<Vec<_>>()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Waits until `n` requests arrived (verified or not).
    pub async fn wait_requests(&self, n: usize) {
        let deadline = Instant::now() + T;
        while self.paths().len() < n {
            assert!(
                Instant::now() < deadline,
                "push service got {:?}",
                self.paths()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

pub fn b64(s: &str) -> Vec<u8> {
    URL_SAFE_NO_PAD.decode(s).expect("base64url")
}

/// RFC 8292: `vapid t=<JWT>, k=<key>`; the JWT is ES256 over `k`.
fn verify_vapid(authz: &str, origin: &str) -> Result<(Value, String), String> {
    let rest = authz
        .strip_prefix("vapid t=")
        .ok_or_else(|| format!("Authorization is not `vapid t=…`: {authz:?}"))?;
    let (jwt, k) = rest
        .split_once(", k=")
        .ok_or("Authorization lacks `, k=`")?;
    let parts: Vec<&str> = jwt.split('.').collect();
    let [h, c, s] = parts[..] else {
        return Err("the JWT does not have three parts".into());
    };
    let key = VerifyingKey::from_sec1_bytes(&b64(k)).map_err(|e| format!("k: {e}"))?;
    let sig = Signature::from_slice(&b64(s)).map_err(|e| format!("signature: {e}"))?;
    key.verify(format!("{h}.{c}").as_bytes(), &sig)
        .map_err(|_| "the JWT signature does not verify with k".to_owned())?;
    let header: Value = serde_json::from_slice(&b64(h)).map_err(|e| e.to_string())?;
    let claims: Value = serde_json::from_slice(&b64(c)).map_err(|e| e.to_string())?;
    if header["alg"] != "ES256" {
        return Err(format!("alg {}", header["alg"]));
    }
    if claims["aud"] != origin {
        return Err(format!("aud {} is not {origin}", claims["aud"]));
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let exp = claims["exp"].as_i64().ok_or("no exp")?;
    if !(exp > now && exp <= now + 12 * 3600) {
        return Err(format!("exp {exp} is not within 12 h of {now}"));
    }
    if claims["sub"].as_str().is_none_or(str::is_empty) {
        return Err("no sub".into());
    }
    Ok((claims, k.to_owned()))
}

fn open(ps: &PushService, uri: &Uri, headers: &HeaderMap, body: &[u8]) -> Result<Received, String> {
    let device = uri
        .path()
        .strip_prefix("/push/")
        .ok_or("not under /push/")?
        .to_owned();
    let h = |n: &str| headers.get(n).and_then(|v| v.to_str().ok()).unwrap_or("");
    if h("content-encoding") != "aes128gcm" {
        return Err(format!("Content-Encoding {:?}", h("content-encoding")));
    }
    if h("ttl").parse::<u32>().is_err() {
        return Err("no TTL".into());
    }
    let (claims, k) = verify_vapid(h("authorization"), &ps.origin)?;
    let st = ps.state.lock().unwrap();
    let d = st.devices.get(&device).ok_or("unknown device")?;
    let plain = crypto::decrypt(body, &d.secret, &d.auth).map_err(|e| e.to_string())?;
    let payload =
        serde_json::from_slice(&plain).map_err(|e| format!("payload is not JSON: {e}"))?;
    Ok(Received {
        device,
        headers: headers.clone(),
        payload,
        plaintext_len: plain.len(),
        claims,
        k,
        at: Instant::now(),
    })
}

async fn receive(
    State(ps): State<PushService>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let reply = {
        let mut st = ps.state.lock().unwrap();
        st.paths.push(uri.path().to_owned());
        st.script.pop_front()
    };
    match open(&ps, &uri, &headers, &body) {
        Ok(r) => ps.state.lock().unwrap().received.push(r),
        Err(e) => {
            ps.state
                .lock()
                .unwrap()
                .rejected
                .push(format!("{uri}: {e}"));
            return StatusCode::BAD_REQUEST.into_response();
        }
    }
    match reply.unwrap_or(Reply::Status(201, None)) {
        Reply::Status(s, ra) => {
            let mut resp = StatusCode::from_u16(s).unwrap().into_response();
            if let Some(ra) = ra {
                resp.headers_mut()
                    .insert("retry-after", ra.parse().unwrap());
            }
            resp
        }
        Reply::Hang => std::future::pending().await,
    }
}
