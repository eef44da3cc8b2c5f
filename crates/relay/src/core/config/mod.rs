//! Command line and runtime configuration; host names and origins are in [`hosts`].

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use clap::{Parser, ValueEnum};

use crate::core::agent::{AgentLauncher, CommandLauncher};

pub mod cluster;
pub mod endpoint;
mod hosts;
pub mod push;
pub mod tls;
pub mod token;

use hosts::{host_without_port, normalize_origin, normalize_tls_name};

pub use hosts::{
    default_allowed_hosts, host_with_port, is_bare_loopback_host, is_embed_origin, public_url,
    tls_names,
};

/// Where the relay listens unless `--bind` says otherwise (also what `hooks install` points at).
pub const DEFAULT_BIND: &str = "127.0.0.1:8787";

/// How sessions map to agent processes and directories.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SpawnMode {
    /// One session in the cwd, started at launch; the relay exits when it ends.
    SingleSession,
    /// Persistent; every session runs in the same cwd.
    SameDir,
    /// Persistent; every session gets its own `git worktree` (removed on archive).
    Worktree,
}

/// What one relay takes on at most: the same flags on the command line ([`Args`]) and at run time
/// ([`Config`], where the counts are at least 1).
#[derive(Debug, Clone, clap::Args)]
pub struct Quotas {
    /// Largest accepted request body in bytes; also the largest WebSocket message.
    #[arg(long, default_value_t = 8 * 1024 * 1024, value_name = "BYTES")]
    pub max_body_bytes: usize,
    /// Most sessions with a live agent at once; creating another answers 429.
    #[arg(long, default_value_t = 32, value_name = "N")]
    pub max_sessions: usize,
    /// Most SSE streams and WebSockets open at once per credential; another answers 429.
    #[arg(long, default_value_t = 64, value_name = "N")]
    pub max_streams_per_principal: usize,
    /// Messages queued for one agent's stdin (it is not reading); a POST that would exceed it
    /// answers 503 and changes nothing.
    #[arg(long, default_value_t = 256, value_name = "N")]
    pub max_stdin_queue: usize,
}

/// `bridge-relay`: runs Claude Code sessions over stdio and serves them to browsers (CCR v2 wire shapes).
#[derive(Debug, Clone, Parser)]
#[command(
    name = "bridge-relay",
    version = concat!(env!("CARGO_PKG_VERSION"), " (console: ", env!("BRIDGE_CONSOLE_BUILD"), ")"),
    about
)]
pub struct Args {
    /// Run the built-in scripted demo agent instead of `claude` (no account needed).
    #[arg(long)]
    pub demo: bool,
    /// Demo scenario: a builtin name (default, long, edit, ask, …) or a JSON file. Implies --demo.
    #[arg(long, value_name = "NAME|FILE")]
    pub demo_scenario: Option<String>,
    /// Address to listen on. Anything but loopback needs --allow-remote and TLS (or --behind-proxy).
    #[arg(long, default_value = DEFAULT_BIND)]
    pub bind: SocketAddr,
    /// Allow binding a non-loopback address (the relay is a remote shell: it then also needs
    /// --tls-self-signed, --tls-cert/--tls-key or --behind-proxy).
    #[arg(long)]
    pub allow_remote: bool,
    /// Serve HTTPS with this certificate chain (PEM); needs --tls-key.
    #[arg(long, value_name = "FILE")]
    pub tls_cert: Option<PathBuf>,
    /// The private key (PEM: PKCS#8, PKCS#1 or SEC1) for --tls-cert.
    #[arg(long, value_name = "FILE")]
    pub tls_key: Option<PathBuf>,
    /// Serve HTTPS with a self-signed certificate made once and kept in <data-dir>/tls/ (made again
    /// when it no longer covers the --tls-name names or is about to expire).
    #[arg(long)]
    pub tls_self_signed: bool,
    /// A DNS name or IP address clients use to reach the relay over TLS (repeatable): accepted as Host,
    /// put in the self-signed certificate, and the first DNS name goes in the printed URL. `localhost`,
    /// `127.0.0.1` and the bind address are always included.
    #[arg(long = "tls-name", value_name = "NAME")]
    pub tls_names: Vec<String>,
    /// A reverse proxy on this machine terminates TLS: trust X-Forwarded-Proto and X-Forwarded-Host,
    /// from loopback peers only. Name the public host with --allowed-host.
    #[arg(long)]
    pub behind_proxy: bool,
    /// Extra accepted Host header values (host:port), e.g. the name users reach a remote bind by.
    #[arg(long = "allowed-host", value_name = "HOST:PORT")]
    pub allowed_hosts: Vec<String>,
    /// Extra accepted Origins; these also get CORS headers (e.g. http://localhost:8080 for `trunk serve`).
    #[arg(long = "allowed-origin", value_name = "ORIGIN")]
    pub allowed_origins: Vec<String>,
    /// A page origin (scheme://host[:port]) that may embed the console in an iframe and talk to it
    /// with postMessage (repeatable). Goes in `Content-Security-Policy: frame-ancestors`; no CORS.
    #[arg(long = "embed-origin", value_name = "ORIGIN")]
    pub embed_origins: Vec<String>,
    /// The agent binary.
    #[arg(long, default_value = "claude", value_name = "PATH")]
    pub claude: PathBuf,
    #[arg(long, value_enum, default_value = "same-dir")]
    pub spawn_mode: SpawnMode,
    /// Working directory for sessions (the repository in worktree mode). Default: the current directory.
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Where the event log, tokens and audit log live. Default: $XDG_DATA_HOME/bridge-console or
    /// ~/.local/share/bridge-console.
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Serve the console from this directory (development; `scripts/build-console.sh` writes one),
    /// read once at start. Default: the console built into this binary, else a dist/ next to the
    /// relay's executable — never the directory the relay is started in. Refused when it lies
    /// inside the sessions' working directory (--cwd), where an agent or a repository could replace it.
    #[arg(long, value_name = "DIR")]
    pub static_dir: Option<PathBuf>,
    /// Deny a permission prompt nobody answered after this many seconds (default: wait forever).
    #[arg(long, value_name = "SECS")]
    pub permission_timeout_secs: Option<u64>,
    /// Keep at least this many events per session (default: all). Older ones are pruned; resuming
    /// from before them yields catch_up_truncated.
    #[arg(long, value_name = "N")]
    pub retention_events: Option<u64>,
    /// Delete archived sessions (their events and record) whose last activity is older than this
    /// many days; checked at startup and hourly (default: keep them).
    #[arg(long, value_name = "DAYS")]
    pub retention_days: Option<u64>,
    #[command(flatten)]
    pub quotas: Quotas,
    /// Default --model for new sessions.
    #[arg(long)]
    pub model: Option<String>,
    /// Default --permission-mode for new sessions.
    #[arg(long)]
    pub permission_mode: Option<String>,
    /// Let clients start sessions in (or switch to) permission mode `bypassPermissions`; passes
    /// --allow-dangerously-skip-permissions to every agent. Without it (or that flag among the extra
    /// args) such requests are refused with 403.
    #[arg(long)]
    pub allow_bypass_permissions: bool,
    /// Push notifications: the VAPID contact push services may reach the operator at (`mailto:` or
    /// `https:`). Default: mailto:bridge-relay@<hostname>.
    #[arg(long, value_name = "URI")]
    pub push_contact: Option<String>,
    /// Also accept push endpoints starting with this prefix (repeatable), e.g. a test push service at
    /// http://127.0.0.1:9000/. Otherwise only FCM, Mozilla, Apple and Windows push services are used.
    #[arg(long = "push-endpoint-allow", value_name = "PREFIX")]
    pub push_endpoint_allow: Vec<String>,
    /// Send `turn_done` notifications only for turns that ran at least this long.
    #[arg(long, default_value_t = push::DEFAULT_MIN_TURN_SECS, value_name = "SECS")]
    pub push_min_turn_secs: u64,
    /// Read the controller token from FILE at start (owner-only permissions, at least 24 characters).
    /// The recommended way: the token never enters the relay's environment, which an agent running as
    /// the same user could read from /proc/<pid>/environ. `BRIDGE_RELAY_TOKEN` is for tests and scripts.
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// How long the one-time login code printed at start (and minted by POST /v1/auth/login-codes)
    /// stays valid.
    #[arg(long, default_value_t = token::LOGIN_CODE_DEFAULT_TTL_SECS, value_name = "SECS")]
    pub login_code_ttl_secs: u64,
    /// SSE keepalive comment interval.
    #[arg(long, default_value_t = 15, hide = true)]
    pub sse_keepalive_secs: u64,
    /// Least time between two writes to one SSE subscriber (frames arriving meanwhile share the next
    /// write) while its session has at most 50 live subscribers; past that it widens as the square
    /// root of their number, up to 8 times this (`sse::coalesce_window`); 0 writes every batch at once.
    #[arg(long, default_value_t = DEFAULT_SSE_COALESCE_MS, hide = true)]
    pub sse_coalesce_ms: u64,
    /// Claude Code's config dir, whose `projects/` transcripts are listed beside the relay's sessions
    /// (default: `$CLAUDE_CONFIG_DIR`, else `$HOME/.claude`).
    #[arg(long, value_name = "DIR")]
    pub claude_config_dir: Option<PathBuf>,
    /// Scale out through NATS JetStream (`nats://HOST:PORT`): this process shares its sessions with
    /// the other relays on that server (see --role). Without it nothing is shared. A URL holding a
    /// user and password goes in the environment (BRIDGE_NATS_URL), never in the arguments.
    #[arg(
        long,
        value_name = "URL",
        env = "BRIDGE_NATS_URL",
        hide_env_values = true
    )]
    pub nats: Option<String>,
    /// With --nats: a file holding the secret every relay of the cluster shares (owner-only, at least
    /// 24 characters); every NATS message and value is authenticated with a key derived from it.
    /// Default: the controller token (the same --token-file / BRIDGE_RELAY_TOKEN on every relay).
    #[arg(long, value_name = "FILE", requires = "nats")]
    pub cluster_secret_file: Option<PathBuf>,
    /// With --nats: a NATS credentials file (user JWT and nkey seed, `nsc generate creds`).
    #[arg(long, value_name = "FILE", requires = "nats")]
    pub nats_creds: Option<PathBuf>,
    /// With --nats: a file holding the nkey seed of a NATS user (`nk -gen user`).
    #[arg(
        long,
        value_name = "FILE",
        requires = "nats",
        conflicts_with = "nats_creds"
    )]
    pub nats_nkey: Option<PathBuf>,
    /// With --nats: the CA certificate (PEM) that signed the NATS server's; TLS is then required.
    #[arg(long, value_name = "FILE", requires = "nats")]
    pub nats_tls_ca: Option<PathBuf>,
    /// With --nats: `agents` runs agent processes and publishes their logs, `gateway` serves every
    /// host's sessions from JetStream and runs no agent, `all` does both.
    #[arg(long, value_enum, default_value = "all", requires = "nats")]
    pub role: cluster::Role,
    /// With --nats: this process's name among the relays (default: hostname and port).
    #[arg(long, value_name = "NAME", requires = "nats")]
    pub node_name: Option<String>,
    /// Seconds a connection may take to send a request's headers (then it is closed).
    #[arg(long, default_value_t = 10, value_name = "SECS", hide = true)]
    pub header_read_timeout_secs: u64,
    /// Extra arguments for every agent, after `--`.
    #[arg(last = true, value_name = "EXTRA CLAUDE ARGS")]
    pub extra: Vec<String>,
}

/// Default `--sse-coalesce-ms`.
pub const DEFAULT_SSE_COALESCE_MS: u64 = 2;

/// Everything the relay runs with. Built from [`Args`] once the listener is bound.
#[derive(Clone)]
pub struct Config {
    pub addr: SocketAddr,
    pub data_dir: PathBuf,
    /// The console's directory; `None`: the console built into the binary (or none).
    pub static_dir: Option<PathBuf>,
    pub spawn_mode: SpawnMode,
    pub cwd: PathBuf,
    pub permission_timeout: Option<Duration>,
    pub retention_events: Option<u64>,
    /// Archived sessions idle longer than this are deleted (--retention-days).
    pub retention_age: Option<Duration>,
    /// --max-body-bytes, --max-sessions, --max-streams-per-principal, --max-stdin-queue.
    pub quotas: Quotas,
    /// Accepted Host header values, lower case.
    pub allowed_hosts: Vec<String>,
    /// Configured cross-origin origins (CORS), lower case, no trailing slash.
    pub cors_origins: Vec<String>,
    /// Origins that may frame the console and talk to it (--embed-origin), lower case, no slash.
    pub embed_origins: Vec<String>,
    pub sse_keepalive: Duration,
    pub sse_coalesce: Duration,
    /// --login-code-ttl-secs.
    pub login_code_ttl_secs: u64,
    pub default_model: Option<String>,
    pub default_permission_mode: Option<String>,
    /// Clients may ask for `bypassPermissions` (--allow-bypass-permissions, or
    /// --allow-dangerously-skip-permissions among the agent's extra args).
    pub allow_bypass_permissions: bool,
    /// Web Push settings (--push-*).
    pub push: push::PushConfig,
    pub launcher: Arc<dyn AgentLauncher>,
    /// The relay serves HTTPS itself (--tls-cert/--tls-key or --tls-self-signed).
    pub tls: bool,
    /// Names the TLS certificate must cover, lower case: the --tls-name names, then `localhost`,
    /// `127.0.0.1` and the bound IP. Empty without TLS.
    pub tls_names: Vec<String>,
    /// A trusted reverse proxy on loopback terminates TLS (--behind-proxy).
    pub behind_proxy: bool,
    /// With --tls-self-signed, the local CA's certificate (DER), served at `/tls/ca.pem` and
    /// `/tls/ca.crt`; set once the certificate is loaded (`tls::load`), `None` before and otherwise.
    pub tls_ca: Option<rustls_pki_types::CertificateDer<'static>>,
    /// Where people open the console, `scheme://host[:port]` (the printed login URL's start).
    pub public_url: String,
    /// Claude Code's config dir (--claude-config-dir): its `projects/` transcripts are listed.
    pub claude_config_dir: PathBuf,
    /// Scale-out through NATS (--nats, --role, --node-name); `None`: a single relay.
    pub cluster: Option<cluster::ClusterConfig>,
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("addr", &self.addr)
            .field("data_dir", &self.data_dir)
            .field("static_dir", &self.static_dir)
            .field("spawn_mode", &self.spawn_mode)
            .field("cwd", &self.cwd)
            .field("agent", &self.launcher.describe())
            .field("tls", &self.tls)
            .field("behind_proxy", &self.behind_proxy)
            .finish_non_exhaustive()
    }
}

pub fn default_data_dir() -> PathBuf {
    if let Some(x) = std::env::var_os("XDG_DATA_HOME").filter(|x| !x.is_empty()) {
        return PathBuf::from(x).join("bridge-console");
    }
    if let Some(h) = std::env::var_os("HOME").filter(|x| !x.is_empty()) {
        return PathBuf::from(h).join(".local/share/bridge-console");
    }
    PathBuf::from(".bridge-console")
}

/// The `dist/` next to the executable `exe`, when it holds an `index.html`: where a relay that
/// carries no console (`cargo install` without a built console) finds one copied beside it. Never
/// the directory the relay is started in, nor a path of the checkout the binary was built in.
pub fn console_beside(exe: Option<&Path>) -> Option<PathBuf> {
    let dir = exe?.parent()?.join("dist");
    dir.join("index.html").is_file().then_some(dir)
}

/// Refuses a console directory inside the sessions' working directory: an agent (or a repository
/// that commits a `dist/`) could put a page there that runs in the relay's origin.
pub fn check_static_dir(static_dir: &Path, cwd: &Path) -> anyhow::Result<PathBuf> {
    let dir = std::fs::canonicalize(static_dir)
        .map_err(|e| anyhow::anyhow!("--static-dir {}: {e}", static_dir.display()))?;
    if dir.starts_with(cwd) {
        anyhow::bail!(
            "refusing to serve the console from {}: it is inside the sessions' working directory {} \
             (--cwd), where an agent or the repository's own files could replace it with a page that \
             runs in the relay's origin. Use the console built into the binary (scripts/install.sh), \
             or build it elsewhere (scripts/build-console.sh OUT_DIR) and pass --static-dir OUT_DIR",
            dir.display(),
            cwd.display()
        );
    }
    Ok(dir)
}

impl Args {
    /// The controller token given by the operator: `--token-file` (refused when others may read it),
    /// else `BRIDGE_RELAY_TOKEN`; at least [`token::MIN_TOKEN_LEN`] characters either way.
    pub fn controller_token(&self) -> anyhow::Result<Option<String>> {
        if let Some(path) = &self.token_file {
            let token = read_token_file(path)?;
            token::check_token(&token, &format!("--token-file {}", path.display()))
                .map_err(anyhow::Error::msg)?;
            return Ok(Some(token));
        }
        match std::env::var("BRIDGE_RELAY_TOKEN") {
            Ok(t) if !t.is_empty() => {
                token::check_token(&t, "BRIDGE_RELAY_TOKEN").map_err(anyhow::Error::msg)?;
                Ok(Some(t))
            }
            _ => Ok(None),
        }
    }

    /// Checks the flags that must be refused before binding.
    pub fn validate(&self) -> anyhow::Result<()> {
        match (&self.tls_cert, &self.tls_key) {
            (Some(_), None) => anyhow::bail!(
                "--tls-cert needs --tls-key FILE: the PEM private key of that certificate"
            ),
            (None, Some(_)) => anyhow::bail!(
                "--tls-key needs --tls-cert FILE: the PEM certificate chain for that key"
            ),
            _ => {}
        }
        if self.tls_cert.is_some() && self.tls_self_signed {
            anyhow::bail!(
                "--tls-self-signed and --tls-cert/--tls-key both give a certificate: pick one"
            );
        }
        if self.tls() && self.behind_proxy {
            anyhow::bail!(
                "--behind-proxy means a reverse proxy terminates TLS, so the relay must not serve TLS itself: \
                 pick one of --behind-proxy and --tls-self-signed / --tls-cert"
            );
        }
        if !self.tls_names.is_empty() && !self.tls() {
            anyhow::bail!(
                "--tls-name needs --tls-self-signed or --tls-cert FILE --tls-key FILE \
                 (behind a reverse proxy, name the public host with --allowed-host instead)"
            );
        }
        for o in &self.embed_origins {
            if !is_embed_origin(&normalize_origin(o)) {
                anyhow::bail!(
                    "--embed-origin {o:?} is not an origin: write scheme://host[:port] \
                     (e.g. https://app.example.com), without a path"
                );
            }
        }
        for n in &self.tls_names {
            let n = normalize_tls_name(n);
            if rustls_pki_types::ServerName::try_from(n.as_str()).is_err() {
                anyhow::bail!("--tls-name {n:?} is neither a DNS name nor an IP address");
            }
        }
        if !self.bind.ip().is_loopback() {
            if !self.allow_remote {
                anyhow::bail!(
                    "refusing to bind {}: not a loopback address, and the relay is a remote shell. To serve other \
                     machines add --allow-remote and --tls-self-signed (or --tls-cert FILE --tls-key FILE), or keep a \
                     loopback bind with --behind-proxy when a reverse proxy on this machine terminates TLS",
                    self.bind
                );
            }
            if self.behind_proxy {
                anyhow::bail!(
                    "refusing to serve plain HTTP on {}: with --behind-proxy the proxy on this machine reaches the \
                     relay over loopback (--bind 127.0.0.1:PORT); a proxy on another machine would carry the \
                     relay's traffic across the network in clear. There, drop --behind-proxy and give the relay \
                     its own certificate (--tls-cert FILE --tls-key FILE, or --tls-self-signed)",
                    self.bind
                );
            }
            if !self.tls() {
                anyhow::bail!(
                    "refusing to serve plain HTTP on {}: a non-loopback bind needs TLS. Add --tls-self-signed \
                     (or --tls-cert FILE --tls-key FILE), or bind loopback with --behind-proxy when a reverse proxy \
                     on this machine terminates TLS",
                    self.bind
                );
            }
        }
        if self.quotas.max_body_bytes < 1024 {
            anyhow::bail!("--max-body-bytes must be at least 1024");
        }
        Ok(())
    }

    /// The relay serves TLS itself.
    pub fn tls(&self) -> bool {
        self.tls_self_signed || self.tls_cert.is_some()
    }

    /// Where the certificate comes from, if the relay serves TLS.
    pub fn tls_source(&self) -> Option<tls::CertSource> {
        match (&self.tls_cert, &self.tls_key) {
            (Some(cert), Some(key)) => Some(tls::CertSource::Files {
                cert: cert.clone(),
                key: key.clone(),
            }),
            _ if self.tls_self_signed => Some(tls::CertSource::SelfSigned),
            _ => None,
        }
    }

    pub fn into_config(self, addr: SocketAddr) -> anyhow::Result<Config> {
        let cwd = match self.cwd {
            Some(c) => c,
            None => std::env::current_dir()?,
        };
        let cwd = std::fs::canonicalize(&cwd)
            .map_err(|e| anyhow::anyhow!("--cwd {}: {e}", cwd.display()))?;
        let mut extra = self.extra;
        let allow_bypass_permissions = self.allow_bypass_permissions
            || extra.iter().any(|a| {
                a == crate::core::validate::ALLOW_BYPASS_FLAG
                    || a == "--dangerously-skip-permissions"
            });
        if allow_bypass_permissions
            && !extra
                .iter()
                .any(|a| a == crate::core::validate::ALLOW_BYPASS_FLAG)
        {
            extra.push(crate::core::validate::ALLOW_BYPASS_FLAG.to_owned());
        }
        let launcher: Arc<dyn AgentLauncher> = if self.demo || self.demo_scenario.is_some() {
            let exe = std::env::current_exe()?;
            Arc::new(CommandLauncher::demo(exe, self.demo_scenario, extra))
        } else {
            Arc::new(CommandLauncher::claude(self.claude, extra))
        };
        let tls = self.tls_self_signed || self.tls_cert.is_some();
        let public_url = public_url(
            tls,
            &self.tls_names,
            self.behind_proxy,
            &self.allowed_hosts,
            addr,
        );
        let tls_names = if tls {
            tls_names(&self.tls_names, addr)
        } else {
            Vec::new()
        };
        let mut allowed_hosts = default_allowed_hosts(addr);
        for n in &tls_names {
            // On 443 browsers leave the port out of the Host header.
            let bare = (addr.port() == 443).then(|| host_without_port(n));
            for h in [host_with_port(n, addr.port())].into_iter().chain(bare) {
                if !allowed_hosts.contains(&h) {
                    allowed_hosts.push(h);
                }
            }
        }
        allowed_hosts.extend(
            self.allowed_hosts
                .iter()
                .map(|h| h.trim().to_ascii_lowercase()),
        );
        // The binary resolves the default before it starts (the built-in console, else
        // [`console_beside`] the binary); a directory inside the sessions' cwd is refused.
        let static_dir = match &self.static_dir {
            // A missing directory is a relay without a console page (tests, API-only use).
            Some(dir) if dir.exists() => Some(check_static_dir(dir, &cwd)?),
            other => other.clone(),
        };
        let cluster = self
            .nats
            .as_deref()
            .map(|url| {
                // Credentials are welcome in the environment, refused in the arguments (`ps`).
                let from_env =
                    std::env::var("BRIDGE_NATS_URL").is_ok_and(|e| e.trim() == url.trim());
                let mut c = cluster::ClusterConfig::new(
                    url,
                    from_env,
                    self.role,
                    self.node_name.as_deref(),
                    addr,
                )?;
                for (flag, path) in [
                    ("--nats-creds", &self.nats_creds),
                    ("--nats-nkey", &self.nats_nkey),
                ] {
                    if let Some(p) = path {
                        check_private(p, flag)?;
                    }
                }
                c.creds_file = self.nats_creds.clone();
                c.nkey_file = self.nats_nkey.clone();
                c.tls_ca = self.nats_tls_ca.clone();
                anyhow::Ok(c)
            })
            .transpose()?;
        Ok(Config {
            addr,
            data_dir: self.data_dir.unwrap_or_else(default_data_dir),
            static_dir,
            spawn_mode: self.spawn_mode,
            cwd,
            permission_timeout: self.permission_timeout_secs.map(Duration::from_secs),
            retention_events: self.retention_events,
            retention_age: self
                .retention_days
                .map(|d| Duration::from_secs(d.saturating_mul(86_400))),
            quotas: Quotas {
                max_body_bytes: self.quotas.max_body_bytes,
                max_sessions: self.quotas.max_sessions.max(1),
                max_streams_per_principal: self.quotas.max_streams_per_principal.max(1),
                max_stdin_queue: self.quotas.max_stdin_queue.max(1),
            },
            allowed_hosts,
            cors_origins: self
                .allowed_origins
                .iter()
                .map(|o| normalize_origin(o))
                .collect(),
            embed_origins: self
                .embed_origins
                .iter()
                .map(|o| normalize_origin(o))
                .collect(),
            sse_keepalive: Duration::from_secs(self.sse_keepalive_secs.max(1)),
            sse_coalesce: Duration::from_millis(self.sse_coalesce_ms),
            login_code_ttl_secs: self.login_code_ttl_secs.max(1),
            default_model: self.model,
            default_permission_mode: self.permission_mode,
            allow_bypass_permissions,
            push: push::PushConfig::new(
                self.push_contact,
                &self.push_endpoint_allow,
                self.push_min_turn_secs,
            )
            .map_err(anyhow::Error::msg)?,
            launcher,
            tls,
            tls_names,
            behind_proxy: self.behind_proxy,
            tls_ca: None,
            public_url,
            claude_config_dir: self.claude_config_dir.unwrap_or_else(default_config_dir),
            cluster,
        })
    }
}

/// Reads a token file: the first line, trimmed. Refuses a file that group or others may read.
pub fn read_token_file(path: &std::path::Path) -> anyhow::Result<String> {
    read_secret_file(path, "--token-file")
}

/// The first line of an owner-only secret file given with `flag`.
pub fn read_secret_file(path: &std::path::Path, flag: &str) -> anyhow::Result<String> {
    check_private(path, flag)?;
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow::anyhow!("cannot read {flag} {}: {e}", path.display()))?;
    Ok(text.lines().next().unwrap_or("").trim().to_owned())
}

/// Refuses a secret file other users can read.
fn check_private(path: &std::path::Path, flag: &str) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    let meta = std::fs::metadata(path)
        .map_err(|e| anyhow::anyhow!("cannot read {flag} {}: {e}", path.display()))?;
    let mode = meta.permissions().mode();
    if mode & 0o077 != 0 {
        anyhow::bail!(
            "{flag} {} can be read by other users (mode {:o}); make it private with `chmod 600 {}`",
            path.display(),
            mode & 0o777,
            path.display()
        );
    }
    Ok(())
}

impl Args {
    /// The secret the cluster's keys derive from: `--cluster-secret-file`, else the controller
    /// token given to this relay. `None` without --nats.
    pub fn cluster_secret(&self, given_token: Option<&str>) -> anyhow::Result<Option<String>> {
        if self.nats.is_none() {
            return Ok(None);
        }
        if let Some(path) = &self.cluster_secret_file {
            let s = read_secret_file(path, "--cluster-secret-file")?;
            if s.len() < 24 {
                anyhow::bail!(
                    "--cluster-secret-file {} holds {} characters: use at least 24 (e.g. `openssl rand -hex 32`)",
                    path.display(),
                    s.len()
                );
            }
            return Ok(Some(s));
        }
        match given_token {
            Some(t) => Ok(Some(t.to_owned())),
            None => anyhow::bail!(
                "--nats needs a secret every relay of the cluster shares, to authenticate what they send each other: \
                 give each the same --cluster-secret-file FILE, or the same controller token (--token-file FILE)"
            ),
        }
    }
}

/// The default config dir: `$CLAUDE_CONFIG_DIR`, else `$HOME/.claude`.
pub fn default_config_dir() -> std::path::PathBuf {
    if let Some(d) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return d.into();
    }
    let home = std::env::var_os("HOME").unwrap_or_else(|| "/".into());
    std::path::Path::new(&home).join(".claude")
}

#[cfg(test)]
mod tests;
