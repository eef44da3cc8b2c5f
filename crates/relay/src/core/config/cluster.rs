//! Scale-out settings (`--nats`, `--role`, `--node-name` and the NATS credentials), checked.

use std::net::SocketAddr;
use std::sync::Arc;

use clap::ValueEnum;

/// What a relay does in a cluster (`--role`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Role {
    /// Runs agents and serves every session.
    All,
    /// Runs agents; publishes their logs.
    Agents,
    /// Serves every session from JetStream; runs no agent.
    Gateway,
}

impl Role {
    pub fn runs_agents(self) -> bool {
        matches!(self, Role::All | Role::Agents)
    }
    pub fn serves_all(self) -> bool {
        matches!(self, Role::All | Role::Gateway)
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Role::All => "all",
            Role::Agents => "agents",
            Role::Gateway => "gateway",
        }
    }
}

#[derive(Debug, Clone)]
pub struct ClusterConfig {
    pub url: String,
    pub role: Role,
    /// This node's name: one NATS subject token.
    pub node: String,
    /// The keys every message and value is sealed with ([`crate::core::seal`]): derived from
    /// `--cluster-secret-file`, else the controller token. Set before the cluster starts.
    pub keys: Option<Arc<crate::core::seal::Keys>>,
    /// `--nats-creds FILE`: a NATS credentials file (user JWT and nkey seed).
    pub creds_file: Option<std::path::PathBuf>,
    /// `--nats-nkey FILE`: an nkey seed file (a user the server knows by its public key).
    pub nkey_file: Option<std::path::PathBuf>,
    /// `--nats-tls-ca FILE`: the CA that signed the NATS server's certificate (TLS required then).
    pub tls_ca: Option<std::path::PathBuf>,
}

impl ClusterConfig {
    /// `url` may hold credentials only when it came from the environment (`BRIDGE_NATS_URL`:
    /// `from_env`); in the arguments anyone on this machine sees them.
    pub fn new(
        url: &str,
        from_env: bool,
        role: Role,
        node_name: Option<&str>,
        addr: SocketAddr,
    ) -> anyhow::Result<ClusterConfig> {
        let url = url.trim();
        if !from_env && url.contains('@') {
            anyhow::bail!(
                "--nats {:?} holds credentials: anyone on this machine sees a program's arguments (`ps`). \
                 Give them in a file instead (--nats-creds FILE, --nats-nkey FILE), or the whole URL in \
                 the environment variable BRIDGE_NATS_URL",
                redact_url(url)
            );
        }
        if !(url.starts_with("nats://") || url.starts_with("tls://")) {
            anyhow::bail!(
                "--nats {:?} is not a NATS URL: write nats://HOST:PORT",
                redact_url(url)
            );
        }
        let node = match node_name {
            Some(n) => {
                if !crate::core::util::valid_session_id(n) {
                    anyhow::bail!(
                        "--node-name {n:?} may hold only letters, digits, `_` and `-` (it names NATS subjects)"
                    );
                }
                n.to_owned()
            }
            None => {
                let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
                    .unwrap_or_default()
                    .trim()
                    .to_owned();
                let host = if host.is_empty() {
                    format!("node{}", uuid::Uuid::new_v4().simple())
                } else {
                    host
                };
                let raw = format!("{host}-{}", addr.port());
                raw.chars()
                    .map(|c| {
                        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                            c
                        } else {
                            '-'
                        }
                    })
                    .collect()
            }
        };
        Ok(ClusterConfig {
            url: url.to_owned(),
            role,
            node,
            keys: None,
            creds_file: None,
            nkey_file: None,
            tls_ca: None,
        })
    }
}

/// The URL without its user and password (`nats://user:pass@host` → `nats://…@host`), for logs
/// and errors.
pub fn redact_url(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => format!("{}…{}", &url[..s + 3], &url[at..]),
        _ => url.to_owned(),
    }
}
