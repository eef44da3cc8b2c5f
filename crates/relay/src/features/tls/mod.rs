//! HTTPS: the certificate (PEM files given with `--tls-cert`/`--tls-key`, or with `--tls-self-signed` one
//! issued by a small local certificate authority made once and kept in `<data-dir>/tls/`), its SHA-256
//! fingerprint, the CA certificate served at `/tls/ca.pem` and `/tls/ca.crt`, and [`TlsListener`],
//! which hands `axum::serve` finished TLS streams. So the TLS relay keeps everything the plain one has:
//! graceful shutdown, HTTP/1.1 upgrades (WebSockets become wss), `ConnectInfo`, TCP_NODELAY.
//!
//! Why a CA and not one self-signed certificate: a browser lets a person click through the warning of
//! an unknown certificate for a page, but refuses a service worker behind it, so the installed app and
//! push notifications need a certificate the phone really trusts. A phone can trust an installed CA
//! (as with mkcert), not a bare server certificate. The CA's key never leaves the data dir (mode 0600),
//! and its name constraints limit it to the configured names and private names and addresses.
//!
//! rustls with the ring provider only: no OpenSSL, no aws-lc-rs.

use std::fs;
use std::io::Write as _;
use std::net::IpAddr;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use base64::Engine as _;
use rustls_pki_types::pem::PemObject as _;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use sha2::{Digest as _, Sha256};
use tokio_rustls::rustls::client::danger::ServerCertVerifier as _;
use tokio_rustls::rustls::{self, RootCertStore, ServerConfig};

mod api;
mod der;
mod listener;

pub use api::routes;
use der::{not_after, spki_of};
pub use listener::{HANDSHAKE_TIMEOUT, TlsListener};

pub use crate::core::config::tls::CertSource;

/// Where a certificate came from at startup.
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
    /// Of the leaf certificate.
    pub provenance: Provenance,
    /// With `--tls-self-signed`: the local CA that issued the leaf.
    pub ca: Option<LocalCa>,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tls")
            .field("cert_path", &self.cert_path)
            .field("provenance", &self.provenance)
            .field("fingerprint", &self.fingerprint())
            .field("ca", &self.ca)
            .finish_non_exhaustive()
    }
}

impl Tls {
    /// SHA-256 of the leaf certificate's DER, as browsers show it (`AB:CD:…`).
    pub fn fingerprint(&self) -> String {
        fingerprint(&self.cert)
    }
}

/// The local certificate authority behind `--tls-self-signed` (its certificate only: the key stays in
/// `ca-key.pem`). Public: phones install it to trust the relay.
#[derive(Clone, PartialEq, Eq)]
pub struct LocalCa {
    pub cert: CertificateDer<'static>,
    /// `<data-dir>/tls/ca.pem`.
    pub path: PathBuf,
    /// [`Provenance::Made`] or [`Provenance::Reused`].
    pub provenance: Provenance,
}

impl std::fmt::Debug for LocalCa {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalCa")
            .field("path", &self.path)
            .field("provenance", &self.provenance)
            .field("fingerprint", &self.fingerprint())
            .finish()
    }
}

impl LocalCa {
    /// SHA-256 of the CA certificate's DER (`AB:CD:…`), as phones show it before installing.
    pub fn fingerprint(&self) -> String {
        fingerprint(&self.cert)
    }

    /// The CA certificate as PEM.
    pub fn pem(&self) -> String {
        pem_certificate(&self.cert)
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

/// `der` as one PEM `CERTIFICATE` block (64-character lines).
pub fn pem_certificate(der: &[u8]) -> String {
    let b64 = base64::engine::general_purpose::STANDARD.encode(der);
    let mut out = String::from("-----BEGIN CERTIFICATE-----\n");
    for line in b64.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(line).unwrap_or_default());
        out.push('\n');
    }
    out.push_str("-----END CERTIFICATE-----\n");
    out
}

/// A server certificate from `--tls-self-signed` lives this long. Apple platforms refuse server
/// certificates valid for more than 825 days, even ones issued by a CA a user trusts by hand.
pub const SELF_SIGNED_DAYS: i64 = 800;
/// The local CA lives this long: as long as a server certificate it signs may (Apple's 825 days),
/// so a stolen CA key is worth as little time as possible.
pub const CA_DAYS: i64 = 825;
/// A server certificate (or the CA) is made again when it expires within this time.
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
                ca: None,
            })
        }
        CertSource::SelfSigned => self_signed(&tls_dir(data_dir), names),
    }
}

/// The CA certificate and its key, as kept in `ca.pem` / `ca-key.pem`.
struct CaMaterial {
    der: CertificateDer<'static>,
    pem: String,
    key: rcgen::KeyPair,
}

impl CaMaterial {
    fn issuer(&self) -> anyhow::Result<rcgen::Issuer<'static, &rcgen::KeyPair>> {
        rcgen::Issuer::from_ca_cert_der(&self.der, &self.key)
            .context("cannot read the local CA certificate")
    }
}

fn self_signed(dir: &Path, names: &[String]) -> anyhow::Result<Tls> {
    let cert_path = dir.join("cert.pem");
    let key_path = dir.join("key.pem");
    let ca_path = dir.join("ca.pem");
    let ca_key_path = dir.join("ca-key.pem");
    fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
        .with_context(|| format!("cannot restrict {}", dir.display()))?;
    let now = UnixTime::now();
    let renew_at = UnixTime::since_unix_epoch(
        now.as_secs()
            .checked_add(RENEW_BEFORE.as_secs())
            .map_or(Duration::MAX, Duration::from_secs),
    );

    // The CA key was deleted once the devices trusted the CA (the banner offers it): the server
    // certificate it issued is used until it must be renewed; only then is a new CA made.
    if ca_path.exists()
        && !ca_key_path.exists()
        && cert_path.exists()
        && key_path.exists()
        && let Ok(ca_pem) = fs::read_to_string(&ca_path)
        && let Ok(ca_der) = CertificateDer::from_pem_slice(ca_pem.as_bytes())
        && not_after(&ca_der).is_some_and(|t| t > renew_at.as_secs())
    {
        match reuse_leaf(&cert_path, &key_path, ca_der, &ca_path, names, renew_at) {
            Ok(tls) => return Ok(tls),
            Err(why) => tracing::warn!(reason = %format!("{why:#}"),
                "the local CA's key was deleted and its server certificate cannot be used: making a new local CA (devices must install it again)"),
        }
    }

    let kept_ca = if ca_path.exists() || ca_key_path.exists() {
        match read_ca(&ca_path, &ca_key_path, renew_at) {
            Ok(ca) => Some(ca),
            Err(why) => {
                tracing::warn!(reason = %format!("{why:#}"), "making a new local CA: phones that trusted the old one must install the new one");
                None
            }
        }
    } else {
        None
    };

    if let Some(ca) = &kept_ca
        && cert_path.exists()
        && key_path.exists()
    {
        match reuse_leaf(
            &cert_path,
            &key_path,
            ca.der.clone(),
            &ca_path,
            names,
            renew_at,
        ) {
            Ok(tls) => return Ok(tls),
            Err(why) => {
                tracing::info!(reason = %format!("{why:#}"), "issuing a new server certificate with the local CA")
            }
        }
    }

    let (mut ca, mut ca_provenance) = match kept_ca {
        Some(ca) => (ca, Provenance::Reused),
        None => (make_ca(names)?, Provenance::Made),
    };
    // What `ca` issues for `names`: the certificate's PEM, its key's PEM, and the certificate.
    let issue = |ca: &CaMaterial| -> anyhow::Result<(String, String, CertificateDer<'static>)> {
        let (pem, key) = issue_leaf(ca, names)?;
        let der = CertificateDer::from_pem_slice(pem.as_bytes())
            .context("cannot read the certificate just made")?;
        Ok((pem, key, der))
    };
    let (mut leaf_pem, mut leaf_key, mut leaf) = issue(&ca)?;
    if ca_provenance == Provenance::Reused
        && let Some(name) = names.iter().find(|n| !covers(&leaf, &ca.der, n, now))
    {
        // The kept CA's name constraints (made for other names) do not allow this one.
        tracing::warn!(
            name = %name,
            "the local CA may not vouch for this name; making a new local CA: phones that trusted the old one must install the new one"
        );
        ca = make_ca(names)?;
        ca_provenance = Provenance::Made;
        (leaf_pem, leaf_key, leaf) = issue(&ca)?;
    }
    if let Some(name) = names.iter().find(|n| !covers(&leaf, &ca.der, n, now)) {
        anyhow::bail!("the certificate made for --tls-self-signed does not verify for {name:?}");
    }
    if ca_provenance == Provenance::Made {
        // The CA first: a crash before the server certificate is written leaves a CA whose
        // certificate is made again at the next start, never a server certificate of a lost CA.
        write_atomically(&ca_key_path, ca.key.serialize_pem().as_bytes(), 0o600)?;
        write_atomically(&ca_path, ca.pem.as_bytes(), 0o644)?;
    }
    write_atomically(&key_path, leaf_key.as_bytes(), 0o600)?;
    // The leaf first (the e2e harness pins the first certificate's key), then the CA: `cert.pem` is
    // a full chain, so `curl --cacert cert.pem` works too.
    write_atomically(
        &cert_path,
        format!("{leaf_pem}{}", ca.pem).as_bytes(),
        0o644,
    )?;
    let server_config = server_config(vec![leaf.clone(), ca.der.clone()], read_key(&key_path)?)?;
    Ok(Tls {
        server_config,
        cert: leaf,
        cert_path,
        provenance: Provenance::Made,
        ca: Some(LocalCa {
            cert: ca.der,
            path: ca_path,
            provenance: ca_provenance,
        }),
    })
}

/// The kept CA, if both files read, the key is the certificate's, and it stays valid long enough.
fn read_ca(cert_path: &Path, key_path: &Path, renew_at: UnixTime) -> anyhow::Result<CaMaterial> {
    let pem = fs::read_to_string(cert_path)
        .with_context(|| format!("cannot read {}", cert_path.display()))?;
    let der = CertificateDer::from_pem_slice(pem.as_bytes())
        .map_err(|e| anyhow::anyhow!("no certificate in {}: {e}", cert_path.display()))?;
    let key_pem = fs::read_to_string(key_path)
        .with_context(|| format!("cannot read {}", key_path.display()))?;
    let key = rcgen::KeyPair::from_pem(&key_pem)
        .with_context(|| format!("no usable private key in {}", key_path.display()))?;
    if rcgen::PublicKeyData::subject_public_key_info(&key) != spki_of(&der).unwrap_or_default() {
        anyhow::bail!(
            "{} is not the key of {}",
            key_path.display(),
            cert_path.display()
        );
    }
    match not_after(&der) {
        Some(t) if t > renew_at.as_secs() => {}
        _ => anyhow::bail!("the local CA expires within 30 days"),
    }
    if not_after(&der)
        .is_some_and(|t| t > UnixTime::now().as_secs() + (CA_DAYS as u64 + 2) * 24 * 3600)
    {
        // Made by an older relay: valid for 10 years and for every private network.
        anyhow::bail!("the local CA is an older one, valid for 10 years and every private network");
    }
    let ca = CaMaterial {
        pem: pem_certificate(&der),
        der,
        key,
    };
    ca.issuer()?;
    Ok(ca)
}

/// A new local CA: ECDSA P-256, CA:TRUE with path length 0 (it signs server certificates only),
/// keyCertSign, name constraints to exactly `names` (the configured names and bound addresses):
/// its key, stolen, vouches for nothing else.
fn make_ca(names: &[String]) -> anyhow::Result<CaMaterial> {
    let mut params = rcgen::CertificateParams::default();
    params.distinguished_name = rcgen::DistinguishedName::new();
    params.distinguished_name.push(
        rcgen::DnType::CommonName,
        format!(
            "Bridge Console local CA ({})",
            crate::features::push::hostname()
        ),
    );
    params
        .distinguished_name
        .push(rcgen::DnType::OrganizationName, "Bridge Console");
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Constrained(0));
    params.key_usages = vec![
        rcgen::KeyUsagePurpose::KeyCertSign,
        rcgen::KeyUsagePurpose::CrlSign,
        rcgen::KeyUsagePurpose::DigitalSignature,
    ];
    params.name_constraints = Some(name_constraints(names));
    let now = time::OffsetDateTime::now_utc();
    params.not_before = now - time::Duration::days(1);
    params.not_after = now + time::Duration::days(CA_DAYS);
    let key = rcgen::KeyPair::generate().context("cannot generate a key pair")?;
    let cert = params
        .self_signed(&key)
        .context("cannot sign the local CA certificate")?;
    Ok(CaMaterial {
        der: cert.der().clone(),
        pem: cert.pem(),
        key,
    })
}

/// Permitted subtrees: exactly the configured names (a DNS name with the names under it, as DNS
/// constraints go) and addresses (one address each).
fn name_constraints(names: &[String]) -> rcgen::NameConstraints {
    let mut dns: Vec<String> = Vec::new();
    let mut nets: Vec<rcgen::CidrSubnet> = Vec::new();
    for n in names {
        match n.parse::<IpAddr>() {
            Ok(ip) => {
                let host = if ip.is_ipv4() { 32 } else { 128 };
                let net = rcgen::CidrSubnet::from_addr_prefix(ip, host);
                if !nets.contains(&net) {
                    nets.push(net);
                }
            }
            Err(_) => {
                let n = n.trim_end_matches('.').to_ascii_lowercase();
                if !dns.contains(&n) {
                    dns.push(n);
                }
            }
        }
    }
    rcgen::NameConstraints {
        permitted_subtrees: dns
            .into_iter()
            .map(rcgen::GeneralSubtree::DnsName)
            .chain(nets.into_iter().map(rcgen::GeneralSubtree::IpAddress))
            .collect(),
        excluded_subtrees: Vec::new(),
    }
}

/// A new server certificate for `names` issued by `ca` (PEM certificate, PEM PKCS#8 key): ECDSA
/// P-256, not a CA, serverAuth, at most [`SELF_SIGNED_DAYS`] and never past the CA's end.
fn issue_leaf(ca: &CaMaterial, names: &[String]) -> anyhow::Result<(String, String)> {
    let mut params = leaf_params(names)?;
    if let Some(ca_end) = not_after(&ca.der)
        .and_then(|t| i64::try_from(t).ok())
        .and_then(|t| time::OffsetDateTime::from_unix_timestamp(t).ok())
        && ca_end < params.not_after
    {
        params.not_after = ca_end;
    }
    params.is_ca = rcgen::IsCa::ExplicitNoCa;
    params.use_authority_key_identifier_extension = true;
    let key = rcgen::KeyPair::generate().context("cannot generate a key pair")?;
    let cert = params
        .signed_by(&key, &ca.issuer()?)
        .context("cannot sign the server certificate")?;
    Ok((cert.pem(), key.serialize_pem()))
}

/// Subject, names, validity and usages of a server certificate for `names`.
fn leaf_params(names: &[String]) -> anyhow::Result<rcgen::CertificateParams> {
    let mut params = rcgen::CertificateParams::new(names.to_vec())
        .context("cannot make a certificate for these --tls-name names")?;
    let first = names.first().map_or("localhost", String::as_str);
    params.distinguished_name = rcgen::DistinguishedName::new();
    params.distinguished_name.push(
        rcgen::DnType::CommonName,
        format!("Bridge Console relay ({first})"),
    );
    params
        .distinguished_name
        .push(rcgen::DnType::OrganizationName, "Bridge Console");
    let now = time::OffsetDateTime::now_utc();
    params.not_before = now - time::Duration::days(1);
    params.not_after = now + time::Duration::days(SELF_SIGNED_DAYS);
    params.key_usages = vec![rcgen::KeyUsagePurpose::DigitalSignature];
    params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
    Ok(params)
}

/// The server certificate kept from an earlier start, if `ca` issued it, it covers every name and
/// stays valid long enough, and `key_path` holds its key. Served with the CA after it; both are
/// [`Provenance::Reused`] (the CA's certificate is at `ca_path`).
fn reuse_leaf(
    cert_path: &Path,
    key_path: &Path,
    ca: CertificateDer<'static>,
    ca_path: &Path,
    names: &[String],
    renew_at: UnixTime,
) -> anyhow::Result<Tls> {
    let leaf = read_chain(cert_path)?.swap_remove(0);
    if let Some(name) = names.iter().find(|n| !covers(&leaf, &ca, n, renew_at)) {
        anyhow::bail!(
            "the kept certificate does not cover {name:?}, expires within 30 days or was not issued by the local CA"
        );
    }
    let server_config = server_config(vec![leaf.clone(), ca.clone()], read_key(key_path)?)?;
    Ok(Tls {
        server_config,
        cert: leaf,
        cert_path: cert_path.to_owned(),
        provenance: Provenance::Reused,
        ca: Some(LocalCa {
            cert: ca,
            path: ca_path.to_owned(),
            provenance: Provenance::Reused,
        }),
    })
}

/// Would a client that trusts exactly `ca` accept `leaf` (sent with `ca` behind it) for `name` at
/// time `at`? Checks the signature, validity, serverAuth, the name and `ca`'s name constraints.
pub fn covers(
    leaf: &CertificateDer<'static>,
    ca: &CertificateDer<'static>,
    name: &str,
    at: UnixTime,
) -> bool {
    let Ok(server_name) = ServerName::try_from(name.to_owned()) else {
        return false;
    };
    let mut roots = RootCertStore::empty();
    if roots.add(ca.clone()).is_err() {
        return false;
    }
    let Ok(verifier) =
        rustls::client::WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider())
            .build()
    else {
        return false;
    };
    verifier
        .verify_server_cert(leaf, std::slice::from_ref(ca), &server_name, &[], at)
        .is_ok()
}

/// A new self-signed ECDSA P-256 server certificate for `names` (PEM certificate, PEM PKCS#8 key),
/// no CA behind it: for tests and `--tls-cert` experiments.
pub fn make_self_signed(names: &[String]) -> anyhow::Result<(String, String)> {
    let params = leaf_params(names)?;
    let key = rcgen::KeyPair::generate().context("cannot generate a key pair")?;
    let cert = params
        .self_signed(&key)
        .context("cannot sign the certificate")?;
    Ok((cert.pem(), key.serialize_pem()))
}

fn write_atomically(path: &Path, bytes: &[u8], mode: u32) -> anyhow::Result<()> {
    let tmp = path.with_extension("pem.tmp");
    let mut f = crate::core::util::create_fresh(&tmp, mode)
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

#[cfg(test)]
mod tests;
