//! Where the TLS certificate comes from (`--tls-cert`/`--tls-key`, `--tls-self-signed`).

use std::path::PathBuf;

/// Where the certificate comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CertSource {
    /// `--tls-cert FILE --tls-key FILE` (PEM).
    Files { cert: PathBuf, key: PathBuf },
    /// `--tls-self-signed`: `<data-dir>/tls/cert.pem` and `key.pem`, issued by the local CA in
    /// `ca.pem` and `ca-key.pem`.
    SelfSigned,
}
