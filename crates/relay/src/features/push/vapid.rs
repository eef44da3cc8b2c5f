//! VAPID (RFC 8292): the relay's application-server key pair and the `Authorization: vapid` header.
//!
//! The key pair is made once, on first start, in `<data-dir>/vapid_private.pem` (PKCS#8 PEM, mode
//! 0600) and reused: browsers bind each subscription to the public key, so a new key pair means every
//! device has to enable notifications again. A SEC1 `EC PRIVATE KEY` PEM (e.g. from
//! `openssl ecparam -name prime256v1 -genkey`) is accepted too.

use std::io::Write as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use p256::SecretKey;
use p256::ecdsa::signature::Signer as _;
use p256::ecdsa::{Signature, SigningKey};
use p256::pkcs8::{DecodePrivateKey as _, EncodePrivateKey as _, LineEnding};

use super::crypto::{public_key_bytes, random_secret_key};

/// File name of the private key in the data dir.
pub const KEY_FILE: &str = "vapid_private.pem";
/// How long a VAPID JWT is valid: under the 12 h that push services accept, with room for clock skew.
pub const JWT_LIFETIME_SECS: i64 = 12 * 3600 - 300;

/// Why the key pair could not be loaded or created.
#[derive(Debug, thiserror::Error)]
pub enum VapidError {
    #[error("cannot read or write the VAPID key {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{path} is not a P-256 private key in PEM (PKCS#8 `PRIVATE KEY` or SEC1 `EC PRIVATE KEY`). Restore it, or \
         delete it to make a new key pair (every device must then enable notifications again)"
    )]
    BadKey { path: PathBuf },
}

/// The relay's VAPID key pair.
pub struct VapidKey {
    signing: SigningKey,
    /// base64url (no padding) of the uncompressed public point: the browser's `applicationServerKey`
    /// and the `k=` of every request.
    public_b64: String,
}

impl std::fmt::Debug for VapidKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VapidKey")
            .field("public", &self.public_b64)
            .finish_non_exhaustive()
    }
}

impl VapidKey {
    pub fn from_secret(secret: &SecretKey) -> Self {
        Self {
            signing: SigningKey::from(secret),
            public_b64: URL_SAFE_NO_PAD.encode(public_key_bytes(&secret.public_key())),
        }
    }

    /// From a PEM private key (PKCS#8, or SEC1); `None` when it is not a P-256 key.
    pub fn from_pem(pem: &str) -> Option<Self> {
        SecretKey::from_pkcs8_pem(pem)
            .or_else(|_| SecretKey::from_sec1_pem(pem))
            .ok()
            .map(|s| Self::from_secret(&s))
    }

    /// The private key as PKCS#8 PEM (the cluster shares it through NATS: [`super::cluster`]).
    /// Wiped from memory when dropped; never logged.
    pub fn to_pem(&self) -> p256::elliptic_curve::zeroize::Zeroizing<String> {
        self.signing
            .to_pkcs8_pem(LineEnding::LF)
            .expect("a P-256 key encodes as PKCS#8")
    }

    /// Loads `<dir>/vapid_private.pem`, making it (mode 0600) when it does not exist yet.
    pub fn load_or_create(dir: &Path) -> Result<Self, VapidError> {
        let path = dir.join(KEY_FILE);
        let io = |source| VapidError::Io {
            path: path.clone(),
            source,
        };
        match std::fs::read_to_string(&path) {
            Ok(pem) => {
                tighten_permissions(&path);
                let secret = SecretKey::from_pkcs8_pem(&pem)
                    .or_else(|_| SecretKey::from_sec1_pem(&pem))
                    .map_err(|_| VapidError::BadKey { path: path.clone() })?;
                Ok(Self::from_secret(&secret))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let secret = random_secret_key();
                let pem = secret
                    .to_pkcs8_pem(LineEnding::LF)
                    .expect("a P-256 key encodes as PKCS#8");
                // Written under a temporary name and renamed: a crash never leaves half a key behind.
                let tmp = dir.join(format!("{KEY_FILE}.{}.tmp", std::process::id()));
                let mut f = crate::core::util::create_fresh(&tmp, 0o600).map_err(io)?;
                f.write_all(pem.as_bytes())
                    .and_then(|()| f.sync_all())
                    .map_err(io)?;
                drop(f);
                std::fs::rename(&tmp, &path).map_err(io)?;
                tracing::info!(path = %path.display(), "made the VAPID key pair for push notifications");
                Ok(Self::from_secret(&secret))
            }
            Err(e) => Err(io(e)),
        }
    }

    /// base64url of the uncompressed public key (`GET /v1/push/vapid-public-key`).
    pub fn public_key(&self) -> &str {
        &self.public_b64
    }

    /// The signed JWT for one push service origin: `{"aud","exp","sub"}`, ES256 (raw `r || s`).
    pub fn jwt(&self, aud: &str, sub: &str, exp: i64) -> String {
        let header = URL_SAFE_NO_PAD.encode(br#"{"typ":"JWT","alg":"ES256"}"#);
        let claims = URL_SAFE_NO_PAD
            .encode(serde_json::json!({"aud": aud, "exp": exp, "sub": sub}).to_string());
        let input = format!("{header}.{claims}");
        let sig: Signature = self.signing.sign(input.as_bytes());
        format!("{input}.{}", URL_SAFE_NO_PAD.encode(sig.to_bytes()))
    }

    /// `Authorization` header value for a push to `aud` (the endpoint's origin), valid from `now`.
    pub fn authorization(&self, aud: &str, sub: &str, now: i64) -> String {
        format!(
            "vapid t={}, k={}",
            self.jwt(aud, sub, now + JWT_LIFETIME_SECS),
            self.public_b64
        )
    }
}

fn tighten_permissions(path: &Path) {
    let Ok(meta) = std::fs::metadata(path) else {
        return;
    };
    if meta.permissions().mode() & 0o077 != 0 {
        tracing::warn!(path = %path.display(), "the VAPID private key was readable by others; setting mode 0600");
        if let Err(e) = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)) {
            tracing::warn!(path = %path.display(), error = %e, "cannot restrict the VAPID key's permissions");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use p256::ecdsa::VerifyingKey;
    use p256::ecdsa::signature::Verifier as _;

    #[test]
    fn key_is_made_once_with_mode_0600_and_reused() {
        let dir = tempfile::tempdir().unwrap();
        let a = VapidKey::load_or_create(dir.path()).unwrap();
        let path = dir.path().join(KEY_FILE);
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert!(
            std::fs::read_to_string(&path)
                .unwrap()
                .starts_with("-----BEGIN PRIVATE KEY-----")
        );
        let b = VapidKey::load_or_create(dir.path()).unwrap();
        assert_eq!(a.public_key(), b.public_key());
        let raw = URL_SAFE_NO_PAD.decode(a.public_key()).unwrap();
        assert_eq!((raw.len(), raw[0]), (65, 4));
        // Loosened permissions are tightened again.
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        VapidKey::load_or_create(dir.path()).unwrap();
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }

    #[test]
    fn the_pem_a_cluster_shares_reads_back_as_the_same_key() {
        let key = VapidKey::from_secret(&random_secret_key());
        let pem = key.to_pem();
        assert!(pem.starts_with("-----BEGIN PRIVATE KEY-----"));
        let back = VapidKey::from_pem(&pem).unwrap();
        assert_eq!(back.public_key(), key.public_key());
        assert!(VapidKey::from_pem("garbage").is_none());
        assert!(
            !format!("{key:?}").contains("PRIVATE"),
            "Debug shows the public key only"
        );
    }

    #[test]
    fn a_damaged_key_is_an_error_not_a_silent_replacement() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(KEY_FILE), "garbage").unwrap();
        let err = VapidKey::load_or_create(dir.path()).unwrap_err();
        assert!(err.to_string().contains("delete it"), "{err}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join(KEY_FILE)).unwrap(),
            "garbage"
        );
    }

    #[test]
    fn jwt_is_es256_over_the_advertised_key() {
        let key = VapidKey::from_secret(&random_secret_key());
        let header = key.authorization("https://fcm.googleapis.com", "mailto:a@b.example", 1000);
        let rest = header.strip_prefix("vapid t=").unwrap();
        let (jwt, k) = rest.split_once(", k=").unwrap();
        assert_eq!(k, key.public_key());
        let parts: Vec<&str> = jwt.split('.').collect();
        assert_eq!(parts.len(), 3);
        let h: serde_json::Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[0]).unwrap()).unwrap();
        let c: serde_json::Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).unwrap()).unwrap();
        assert_eq!(h["alg"], "ES256");
        assert_eq!(c["aud"], "https://fcm.googleapis.com");
        assert_eq!(c["sub"], "mailto:a@b.example");
        assert_eq!(c["exp"], 1000 + JWT_LIFETIME_SECS);
        const { assert!(JWT_LIFETIME_SECS <= 12 * 3600) };
        let sig = URL_SAFE_NO_PAD.decode(parts[2]).unwrap();
        assert_eq!(sig.len(), 64, "raw r || s");
        let vk = VerifyingKey::from_sec1_bytes(&URL_SAFE_NO_PAD.decode(k).unwrap()).unwrap();
        vk.verify(
            format!("{}.{}", parts[0], parts[1]).as_bytes(),
            &Signature::from_slice(&sig).unwrap(),
        )
        .unwrap();
    }
}
