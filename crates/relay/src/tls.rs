//! HTTPS: the certificate (PEM files given with `--tls-cert`/`--tls-key`, or a self-signed one made once
//! and kept in `<data-dir>/tls/`), its SHA-256 fingerprint, and [`TlsListener`], which hands
//! `axum::serve` finished TLS streams. So the TLS relay keeps everything the plain one has: graceful
//! shutdown, HTTP/1.1 upgrades (WebSockets become wss), `ConnectInfo`, TCP_NODELAY.
//!
//! rustls with the ring provider only: no OpenSSL, no aws-lc-rs.

use std::fs;
use std::io::Write as _;
use std::net::SocketAddr;
use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use rustls_pki_types::pem::PemObject as _;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use sha2::{Digest as _, Sha256};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::client::danger::ServerCertVerifier as _;
use tokio_rustls::rustls::{self, RootCertStore, ServerConfig};
use tokio_rustls::server::TlsStream;

/// Where the certificate comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CertSource {
    /// `--tls-cert FILE --tls-key FILE` (PEM).
    Files { cert: PathBuf, key: PathBuf },
    /// `--tls-self-signed`: `<data-dir>/tls/cert.pem` and `key.pem`.
    SelfSigned,
}

/// What happened to the self-signed certificate at startup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provenance {
    /// Read from `--tls-cert`/`--tls-key`.
    Given,
    /// Made now (there was none, or the old one did not cover the names or was about to expire).
    Made,
    /// The one made at an earlier start.
    Reused,
}

/// A loaded certificate and the rustls configuration that serves it.
pub struct Tls {
    pub server_config: Arc<ServerConfig>,
    /// The leaf certificate (first of the chain).
    pub cert: CertificateDer<'static>,
    pub cert_path: PathBuf,
    pub provenance: Provenance,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tls")
            .field("cert_path", &self.cert_path)
            .field("provenance", &self.provenance)
            .field("fingerprint", &self.fingerprint())
            .finish_non_exhaustive()
    }
}

impl Tls {
    /// SHA-256 of the leaf certificate's DER, as browsers show it (`AB:CD:…`).
    pub fn fingerprint(&self) -> String {
        fingerprint(&self.cert)
    }
}

/// SHA-256 of `der` in upper-case hex pairs joined by colons.
pub fn fingerprint(der: &[u8]) -> String {
    Sha256::digest(der)
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// A self-signed certificate lives this long. Apple platforms refuse server certificates valid for
/// more than 825 days, even ones a user trusts by hand.
pub const SELF_SIGNED_DAYS: i64 = 800;
/// A self-signed certificate is made again when it expires within this time.
pub const RENEW_BEFORE: Duration = Duration::from_secs(30 * 24 * 3600);

/// The certificate directory under a data dir.
pub fn tls_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("tls")
}

/// Loads (or for [`CertSource::SelfSigned`], reuses or makes) the certificate. `names` are the DNS
/// names and IPs a self-signed certificate must cover.
pub fn load(source: &CertSource, data_dir: &Path, names: &[String]) -> anyhow::Result<Tls> {
    match source {
        CertSource::Files { cert, key } => {
            let chain =
                read_chain(cert).with_context(|| format!("--tls-cert {}", cert.display()))?;
            let private = read_key(key).with_context(|| format!("--tls-key {}", key.display()))?;
            let server_config = server_config(chain.clone(), private).with_context(|| {
                format!(
                    "--tls-cert {} with --tls-key {}: is this the key of that certificate?",
                    cert.display(),
                    key.display()
                )
            })?;
            Ok(Tls {
                server_config,
                cert: chain[0].clone(),
                cert_path: cert.clone(),
                provenance: Provenance::Given,
            })
        }
        CertSource::SelfSigned => self_signed(&tls_dir(data_dir), names),
    }
}

fn self_signed(dir: &Path, names: &[String]) -> anyhow::Result<Tls> {
    let cert_path = dir.join("cert.pem");
    let key_path = dir.join("key.pem");
    if cert_path.exists() && key_path.exists() {
        match reuse(&cert_path, &key_path, names) {
            Ok(tls) => return Ok(tls),
            Err(why) => {
                tracing::info!(reason = %format!("{why:#}"), "making a new self-signed certificate")
            }
        }
    }
    fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
        .with_context(|| format!("cannot restrict {}", dir.display()))?;
    let (cert_pem, key_pem) = make_self_signed(names)?;
    write_atomically(&key_path, key_pem.as_bytes(), 0o600)?;
    write_atomically(&cert_path, cert_pem.as_bytes(), 0o644)?;
    let chain = read_chain(&cert_path)?;
    let server_config = server_config(chain.clone(), read_key(&key_path)?)?;
    Ok(Tls {
        server_config,
        cert: chain[0].clone(),
        cert_path,
        provenance: Provenance::Made,
    })
}

/// The certificate kept from an earlier start, if it covers every name and stays valid long enough.
fn reuse(cert_path: &Path, key_path: &Path, names: &[String]) -> anyhow::Result<Tls> {
    let chain = read_chain(cert_path)?;
    let leaf = chain[0].clone();
    let renew_at = UnixTime::since_unix_epoch(
        UnixTime::now()
            .as_secs()
            .checked_add(RENEW_BEFORE.as_secs())
            .map_or(Duration::MAX, Duration::from_secs),
    );
    if let Some(name) = names.iter().find(|n| !covers(&leaf, n, renew_at)) {
        anyhow::bail!("the kept certificate does not cover {name:?} or expires within 30 days");
    }
    let server_config = server_config(chain, read_key(key_path)?)?;
    Ok(Tls {
        server_config,
        cert: leaf,
        cert_path: cert_path.to_owned(),
        provenance: Provenance::Reused,
    })
}

/// Would a client that trusts the self-signed `cert` accept it for `name` at time `at`?
pub fn covers(cert: &CertificateDer<'static>, name: &str, at: UnixTime) -> bool {
    let Ok(server_name) = ServerName::try_from(name.to_owned()) else {
        return false;
    };
    let mut roots = RootCertStore::empty();
    if roots.add(cert.clone()).is_err() {
        return false;
    }
    let Ok(verifier) =
        rustls::client::WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider())
            .build()
    else {
        return false;
    };
    verifier
        .verify_server_cert(cert, &[], &server_name, &[], at)
        .is_ok()
}

/// A new ECDSA P-256 certificate for `names` (PEM certificate, PEM PKCS#8 key).
pub fn make_self_signed(names: &[String]) -> anyhow::Result<(String, String)> {
    let mut params = rcgen::CertificateParams::new(names.to_vec())
        .context("cannot make a certificate for these --tls-name names")?;
    let first = names.first().map_or("localhost", String::as_str);
    params.distinguished_name = rcgen::DistinguishedName::new();
    params.distinguished_name.push(
        rcgen::DnType::CommonName,
        format!("Bridge Console relay ({first})"),
    );
    params.distinguished_name.push(
        rcgen::DnType::OrganizationName,
        "Bridge Console (self-signed)",
    );
    let now = time::OffsetDateTime::now_utc();
    params.not_before = now - time::Duration::days(1);
    params.not_after = now + time::Duration::days(SELF_SIGNED_DAYS);
    params.key_usages = vec![rcgen::KeyUsagePurpose::DigitalSignature];
    params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
    let key = rcgen::KeyPair::generate().context("cannot generate a key pair")?;
    let cert = params
        .self_signed(&key)
        .context("cannot sign the certificate")?;
    Ok((cert.pem(), key.serialize_pem()))
}

fn write_atomically(path: &Path, bytes: &[u8], mode: u32) -> anyhow::Result<()> {
    let tmp = path.with_extension("pem.tmp");
    let _ = fs::remove_file(&tmp);
    let mut f = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(&tmp)
        .with_context(|| format!("cannot create {}", tmp.display()))?;
    f.write_all(bytes)
        .and_then(|()| f.sync_all())
        .with_context(|| format!("cannot write {}", tmp.display()))?;
    fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
}

fn read_chain(path: &Path) -> anyhow::Result<Vec<CertificateDer<'static>>> {
    let chain = CertificateDer::pem_file_iter(path)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(|e| {
            anyhow::anyhow!("cannot read PEM certificates from {}: {e}", path.display())
        })?;
    if chain.is_empty() {
        anyhow::bail!("{} holds no PEM CERTIFICATE block", path.display());
    }
    Ok(chain)
}

fn read_key(path: &Path) -> anyhow::Result<PrivateKeyDer<'static>> {
    PrivateKeyDer::from_pem_file(path).map_err(|e| {
        anyhow::anyhow!(
            "cannot read a PEM private key (PKCS#8, PKCS#1 or SEC1) from {}: {e}",
            path.display()
        )
    })
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// TLS 1.2 and 1.3 with the ring provider; ALPN offers HTTP/1.1 only (the relay's server speaks
/// HTTP/1.1, and WebSockets upgrade from it).
pub fn server_config(
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
) -> anyhow::Result<Arc<ServerConfig>> {
    let mut config = ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .context("TLS protocol versions")?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .context("the certificate and key do not make a usable pair")?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

// ------------------------------------------------------------------ listener

/// A handshake that has not finished by then is dropped.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// An `axum::serve` listener yielding TLS streams. A background task accepts TCP connections and runs
/// each handshake in its own task, so a slow or silent client never holds up the others; it stops
/// when the listener is dropped (when the server shuts down).
pub struct TlsListener {
    ready: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
    local: SocketAddr,
}

impl TlsListener {
    /// Starts accepting on `tcp`. Needs a Tokio runtime.
    pub fn new(tcp: TcpListener, config: Arc<ServerConfig>) -> std::io::Result<TlsListener> {
        let local = tcp.local_addr()?;
        let (tx, ready) = mpsc::channel(64);
        tokio::spawn(accept_loop(tcp, TlsAcceptor::from(config), tx));
        Ok(TlsListener { ready, local })
    }
}

async fn accept_loop(
    tcp: TcpListener,
    acceptor: TlsAcceptor,
    tx: mpsc::Sender<(TlsStream<TcpStream>, SocketAddr)>,
) {
    loop {
        let accepted = tokio::select! {
            r = tcp.accept() => r,
            () = tx.closed() => return,
        };
        let (stream, peer) = match accepted {
            Ok(x) => x,
            Err(e) => {
                // As axum's own TCP listener does: per-connection errors are the client's business;
                // anything else (out of file descriptors) gets a pause before the next try.
                if !matches!(
                    e.kind(),
                    std::io::ErrorKind::ConnectionAborted
                        | std::io::ErrorKind::ConnectionReset
                        | std::io::ErrorKind::ConnectionRefused
                ) {
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
                continue;
            }
        };
        // Small SSE frames (and the handshake's flights) must not wait for Nagle + delayed ACK.
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!(error = %e, "cannot set TCP_NODELAY");
        }
        let acceptor = acceptor.clone();
        let tx = tx.clone();
        tokio::spawn(async move {
            match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await {
                Ok(Ok(tls)) => {
                    let _ = tx.send((tls, peer)).await;
                }
                Ok(Err(e)) => tracing::debug!(%peer, error = %e, "TLS handshake failed"),
                Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
            }
        });
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.ready.recv().await {
            Some(conn) => conn,
            // The accept task only ends once this receiver is gone; never reached.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<SocketAddr> {
        Ok(self.local)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn a_self_signed_certificate_is_kept_and_made_again_when_names_change() {
        let dir = tempfile::tempdir().unwrap();
        let first = load(
            &CertSource::SelfSigned,
            dir.path(),
            &names(&["localhost", "127.0.0.1"]),
        )
        .unwrap();
        assert_eq!(first.provenance, Provenance::Made);
        let key = dir.path().join("tls/key.pem");
        assert_eq!(
            fs::metadata(&key).unwrap().permissions().mode() & 0o777,
            0o600
        );
        let pem = fs::read_to_string(dir.path().join("tls/cert.pem")).unwrap();
        assert!(pem.starts_with("-----BEGIN CERTIFICATE-----"));

        // Same names (or fewer): reused.
        let again = load(&CertSource::SelfSigned, dir.path(), &names(&["127.0.0.1"])).unwrap();
        assert_eq!(again.provenance, Provenance::Reused);
        assert_eq!(again.fingerprint(), first.fingerprint());

        // A new name: made again, and it covers all of them.
        let wider = names(&["mybox.lan", "192.168.1.20", "localhost"]);
        let new = load(&CertSource::SelfSigned, dir.path(), &wider).unwrap();
        assert_eq!(new.provenance, Provenance::Made);
        assert_ne!(new.fingerprint(), first.fingerprint());
        let now = UnixTime::now();
        for n in &wider {
            assert!(covers(&new.cert, n, now), "{n}");
        }
        assert!(!covers(&new.cert, "127.0.0.1", now));
        assert!(!covers(&new.cert, "other.lan", now));
        // Not valid forever: made again before it expires.
        let later = UnixTime::since_unix_epoch(Duration::from_secs(
            now.as_secs() + (SELF_SIGNED_DAYS as u64 + 1) * 24 * 3600,
        ));
        assert!(!covers(&new.cert, "mybox.lan", later));
    }

    #[test]
    fn given_files_must_be_a_matching_pair() {
        let dir = tempfile::tempdir().unwrap();
        let (cert_a, key_a) = make_self_signed(&names(&["a.lan"])).unwrap();
        let (_, key_b) = make_self_signed(&names(&["b.lan"])).unwrap();
        let p = |n: &str, s: &str| {
            let path = dir.path().join(n);
            fs::write(&path, s).unwrap();
            path
        };
        let (ca, ka, kb) = (p("a.pem", &cert_a), p("a.key", &key_a), p("b.key", &key_b));
        let tls = load(
            &CertSource::Files {
                cert: ca.clone(),
                key: ka,
            },
            dir.path(),
            &[],
        )
        .unwrap();
        assert_eq!(tls.provenance, Provenance::Given);
        let der = CertificateDer::from_pem_slice(cert_a.as_bytes()).unwrap();
        assert_eq!(tls.fingerprint(), fingerprint(&der));
        assert_eq!(tls.fingerprint().len(), 32 * 3 - 1);
        let err = load(
            &CertSource::Files {
                cert: ca.clone(),
                key: kb,
            },
            dir.path(),
            &[],
        )
        .unwrap_err();
        assert!(format!("{err:#}").contains("is this the key"), "{err:#}");
        let err = load(
            &CertSource::Files {
                cert: ca,
                key: dir.path().join("none"),
            },
            dir.path(),
            &[],
        )
        .unwrap_err();
        assert!(format!("{err:#}").contains("--tls-key"), "{err:#}");
    }
}
