//! Command line and runtime configuration.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use clap::{Parser, ValueEnum};

use crate::agent::{AgentLauncher, CommandLauncher};

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

/// `bridge-relay`: runs Claude Code sessions over stdio and serves them to browsers (CCR v2 wire shapes).
#[derive(Debug, Clone, Parser)]
#[command(name = "bridge-relay", version, about)]
pub struct Args {
    /// Run the built-in scripted demo agent instead of `claude` (no account needed).
    #[arg(long)]
    pub demo: bool,
    /// Demo scenario: a builtin name (default, long, edit, ask, …) or a JSON file. Implies --demo.
    #[arg(long, value_name = "NAME|FILE")]
    pub demo_scenario: Option<String>,
    /// Address to listen on. Anything but loopback needs --allow-remote and TLS (or --behind-proxy).
    #[arg(long, default_value = "127.0.0.1:8787")]
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
    /// The built console (Trunk's dist/). Default: ./dist (from the directory the relay is started
    /// in), else dist/ next to the relay's executable.
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
    #[arg(long, default_value_t = crate::push::DEFAULT_MIN_TURN_SECS, value_name = "SECS")]
    pub push_min_turn_secs: u64,
    /// Read the controller token from FILE at start (owner-only permissions, at least 24 characters).
    /// The recommended way: the token never enters the relay's environment, which an agent running as
    /// the same user could read from /proc/<pid>/environ. `BRIDGE_RELAY_TOKEN` is for tests and scripts.
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// How long the one-time login code printed at start (and minted by POST /v1/auth/login-codes)
    /// stays valid.
    #[arg(long, default_value_t = crate::auth::LOGIN_CODE_DEFAULT_TTL_SECS, value_name = "SECS")]
    pub login_code_ttl_secs: u64,
    /// SSE keepalive comment interval.
    #[arg(long, default_value_t = 15, hide = true)]
    pub sse_keepalive_secs: u64,
    /// Least time between two writes to one SSE subscriber (frames arriving meanwhile share the next
    /// write); 0 writes every batch at once.
    #[arg(long, default_value_t = DEFAULT_SSE_COALESCE_MS, hide = true)]
    pub sse_coalesce_ms: u64,
    /// Claude Code's config dir, whose `projects/` transcripts are listed beside the relay's sessions
    /// (default: `$CLAUDE_CONFIG_DIR`, else `$HOME/.claude`).
    #[arg(long, value_name = "DIR")]
    pub claude_config_dir: Option<PathBuf>,
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
    pub static_dir: PathBuf,
    pub spawn_mode: SpawnMode,
    pub cwd: PathBuf,
    pub permission_timeout: Option<Duration>,
    pub retention_events: Option<u64>,
    /// Archived sessions idle longer than this are deleted (--retention-days).
    pub retention_age: Option<Duration>,
    pub max_body_bytes: usize,
    /// --max-sessions: live agents at once.
    pub max_sessions: usize,
    /// --max-streams-per-principal.
    pub max_streams_per_principal: usize,
    /// --max-stdin-queue: messages queued per agent stdin.
    pub max_stdin_queue: usize,
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
    pub push: crate::push::PushConfig,
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

/// Where the console is served from without `--static-dir`: `dist/` in `start_dir` (the directory
/// the relay is started in), else `dist/` next to the executable `exe`: the first holding an
/// `index.html`. Never a path of the checkout the binary was built in (a copied binary would serve
/// that, or nothing). None found: an error naming every path tried.
pub fn default_static_dir(start_dir: &Path, exe: Option<&Path>) -> anyhow::Result<PathBuf> {
    let mut tried = vec![start_dir.join("dist")];
    if let Some(dir) = exe.and_then(Path::parent) {
        let beside = dir.join("dist");
        if !tried.contains(&beside) {
            tried.push(beside);
        }
    }
    if let Some(found) = tried.iter().find(|d| d.join("index.html").is_file()) {
        return Ok(found.clone());
    }
    anyhow::bail!(
        "no console build found: tried {} (none holds an index.html). Build it with `trunk build \
         --release` in the repository and start the relay there, put a dist/ beside the relay \
         binary, or pass --static-dir DIR",
        tried
            .iter()
            .map(|d| d.display().to_string())
            .collect::<Vec<_>>()
            .join(" and ")
    )
}

/// Host header values accepted by default: the bound address, `localhost:PORT`, and loopback aliases
/// when bound to an unspecified address.
pub fn default_allowed_hosts(addr: SocketAddr) -> Vec<String> {
    let port = addr.port();
    let mut hosts = vec![format!("localhost:{port}")];
    if addr.ip().is_unspecified() {
        hosts.push(format!("127.0.0.1:{port}"));
        hosts.push(format!("[::1]:{port}"));
    } else {
        hosts.push(addr.to_string());
    }
    hosts
}

/// A Host header naming a loopback address without a port, as a reverse proxy on this machine sends
/// it (Trunk's does), is accepted when the relay listens on loopback (or everywhere): an IP literal
/// or `localhost` cannot be rebound by DNS, so it keeps the rebinding protection. It never counts
/// for the Origin check: a page on another local port is a different origin.
pub fn is_bare_loopback_host(host: &str, addr: SocketAddr) -> bool {
    (addr.ip().is_loopback() || addr.ip().is_unspecified())
        && matches!(host, "localhost" | "127.0.0.1" | "[::1]")
}

/// The names a TLS certificate for `addr` must cover: `extra` (as given, lower case) followed by
/// `localhost`, `127.0.0.1` and the bound IP when it is not unspecified; no duplicates.
pub fn tls_names(extra: &[String], addr: SocketAddr) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let defaults = ["localhost".to_owned(), "127.0.0.1".to_owned()];
    let bound = (!addr.ip().is_unspecified()).then(|| addr.ip().to_string());
    for n in extra
        .iter()
        .map(|n| normalize_tls_name(n))
        .chain(defaults)
        .chain(bound)
    {
        if !names.contains(&n) {
            names.push(n);
        }
    }
    names
}

/// `NAME` or `[v6]` → lower case, brackets removed.
fn normalize_tls_name(n: &str) -> String {
    let n = n.trim().to_ascii_lowercase();
    n.strip_prefix('[')
        .and_then(|x| x.strip_suffix(']'))
        .map(str::to_owned)
        .unwrap_or(n)
}

/// `name:port` as a Host header carries it (IPv6 in brackets).
pub fn host_with_port(name: &str, port: u16) -> String {
    if name.parse::<std::net::Ipv6Addr>().is_ok() {
        format!("[{name}]:{port}")
    } else {
        format!("{name}:{port}")
    }
}

/// Where people open the console (`scheme://host[:port]`, no trailing slash): with TLS the first
/// `--tls-name` that is a DNS name, else the first IP one, else the bound IP (`127.0.0.1` when bound to
/// every address); behind a proxy `https://` and the first `--allowed-host`, the public name; else
/// `http://` and the bound address.
pub fn public_url(
    tls: bool,
    user_tls_names: &[String],
    behind_proxy: bool,
    user_allowed_hosts: &[String],
    addr: SocketAddr,
) -> String {
    if tls {
        let names: Vec<String> = user_tls_names
            .iter()
            .map(|n| normalize_tls_name(n))
            .collect();
        let is_ip = |n: &&String| n.parse::<std::net::IpAddr>().is_ok();
        let bound = (!addr.ip().is_unspecified()).then(|| addr.ip().to_string());
        let name = names
            .iter()
            .find(|n| !is_ip(n))
            .or_else(|| names.iter().find(is_ip))
            .cloned()
            .or(bound)
            .unwrap_or_else(|| "127.0.0.1".to_owned());
        let host = if addr.port() == 443 {
            host_without_port(&name)
        } else {
            host_with_port(&name, addr.port())
        };
        return format!("https://{host}");
    }
    if behind_proxy && let Some(h) = user_allowed_hosts.first() {
        return format!("https://{}", h.trim().to_ascii_lowercase());
    }
    format!("http://{addr}")
}

/// `name` as a Host header carries it without a port (IPv6 in brackets).
fn host_without_port(name: &str) -> String {
    if name.parse::<std::net::Ipv6Addr>().is_ok() {
        format!("[{name}]")
    } else {
        name.to_owned()
    }
}

fn normalize_origin(o: &str) -> String {
    o.trim().trim_end_matches('/').to_ascii_lowercase()
}

/// Whether `o` (normalized) is `http(s)://host[:port]` and nothing else: it goes verbatim into a
/// `Content-Security-Policy` header, so no spaces, quotes, semicolons, paths or wildcards.
pub fn is_embed_origin(o: &str) -> bool {
    let Some(rest) = o
        .strip_prefix("https://")
        .or_else(|| o.strip_prefix("http://"))
    else {
        return false;
    };
    !rest.is_empty()
        && rest
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b':' | b'[' | b']'))
}

impl Args {
    /// The controller token given by the operator: `--token-file` (refused when others may read it),
    /// else `BRIDGE_RELAY_TOKEN`; at least [`crate::auth::MIN_TOKEN_LEN`] characters either way.
    pub fn controller_token(&self) -> anyhow::Result<Option<String>> {
        if let Some(path) = &self.token_file {
            let token = read_token_file(path)?;
            crate::auth::check_token(&token, &format!("--token-file {}", path.display()))
                .map_err(anyhow::Error::msg)?;
            return Ok(Some(token));
        }
        match std::env::var("BRIDGE_RELAY_TOKEN") {
            Ok(t) if !t.is_empty() => {
                crate::auth::check_token(&t, "BRIDGE_RELAY_TOKEN").map_err(anyhow::Error::msg)?;
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
                     machines add --allow-remote, and either --tls-self-signed (or --tls-cert FILE --tls-key FILE) \
                     or --behind-proxy when a reverse proxy on this machine terminates TLS",
                    self.bind
                );
            }
            if !self.tls() && !self.behind_proxy {
                anyhow::bail!(
                    "refusing to serve plain HTTP on {}: a non-loopback bind needs TLS. Add --tls-self-signed \
                     (or --tls-cert FILE --tls-key FILE), or --behind-proxy when a reverse proxy on this machine \
                     terminates TLS",
                    self.bind
                );
            }
        }
        if self.max_body_bytes < 1024 {
            anyhow::bail!("--max-body-bytes must be at least 1024");
        }
        Ok(())
    }

    /// The relay serves TLS itself.
    pub fn tls(&self) -> bool {
        self.tls_self_signed || self.tls_cert.is_some()
    }

    /// Where the certificate comes from, if the relay serves TLS.
    pub fn tls_source(&self) -> Option<crate::tls::CertSource> {
        match (&self.tls_cert, &self.tls_key) {
            (Some(cert), Some(key)) => Some(crate::tls::CertSource::Files {
                cert: cert.clone(),
                key: key.clone(),
            }),
            _ if self.tls_self_signed => Some(crate::tls::CertSource::SelfSigned),
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
                a == crate::validate::ALLOW_BYPASS_FLAG || a == "--dangerously-skip-permissions"
            });
        if allow_bypass_permissions
            && !extra
                .iter()
                .any(|a| a == crate::validate::ALLOW_BYPASS_FLAG)
        {
            extra.push(crate::validate::ALLOW_BYPASS_FLAG.to_owned());
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
        // The binary resolves the default before it starts ([`default_static_dir`], an error when
        // there is no build); here (library use, tests) it is just ./dist.
        let static_dir = self.static_dir.unwrap_or_else(|| PathBuf::from("dist"));
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
            max_body_bytes: self.max_body_bytes,
            max_sessions: self.max_sessions.max(1),
            max_streams_per_principal: self.max_streams_per_principal.max(1),
            max_stdin_queue: self.max_stdin_queue.max(1),
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
            push: crate::push::PushConfig::new(
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
            claude_config_dir: self
                .claude_config_dir
                .unwrap_or_else(crate::transcripts::default_config_dir),
        })
    }
}

/// Reads a token file: the first line, trimmed. Refuses a file that group or others may read.
pub fn read_token_file(path: &std::path::Path) -> anyhow::Result<String> {
    use std::os::unix::fs::PermissionsExt as _;
    let meta = std::fs::metadata(path)
        .map_err(|e| anyhow::anyhow!("cannot read --token-file {}: {e}", path.display()))?;
    let mode = meta.permissions().mode();
    if mode & 0o077 != 0 {
        anyhow::bail!(
            "--token-file {} can be read by other users (mode {:o}); make it private with `chmod 600 {}`",
            path.display(),
            mode & 0o777,
            path.display()
        );
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow::anyhow!("cannot read --token-file {}: {e}", path.display()))?;
    Ok(text.lines().next().unwrap_or("").trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_console_is_dist_in_the_start_dir_then_beside_the_binary() {
        let start = tempfile::tempdir().unwrap();
        let bin = tempfile::tempdir().unwrap();
        let exe = bin.path().join("bridge-relay");
        // Neither has a build: the error names both places.
        let err = default_static_dir(start.path(), Some(&exe))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&start.path().join("dist").display().to_string()),
            "{err}"
        );
        assert!(
            err.contains(&bin.path().join("dist").display().to_string()),
            "{err}"
        );
        assert!(err.contains("--static-dir"), "{err}");
        // Beside the binary (a copied relay).
        std::fs::create_dir_all(bin.path().join("dist")).unwrap();
        std::fs::write(bin.path().join("dist/index.html"), "<html>").unwrap();
        assert_eq!(
            default_static_dir(start.path(), Some(&exe)).unwrap(),
            bin.path().join("dist")
        );
        // ./dist wins.
        std::fs::create_dir_all(start.path().join("dist")).unwrap();
        std::fs::write(start.path().join("dist/index.html"), "<html>").unwrap();
        assert_eq!(
            default_static_dir(start.path(), Some(&exe)).unwrap(),
            start.path().join("dist")
        );
    }

    #[test]
    fn parses_the_documented_command_line() {
        let a = Args::try_parse_from([
            "bridge-relay",
            "--demo",
            "--bind",
            "127.0.0.1:0",
            "--spawn-mode",
            "worktree",
            "--allowed-origin",
            "http://a:1",
            "--allowed-origin",
            "http://b:2/",
            "--permission-timeout-secs",
            "12",
            "--",
            "--foo",
            "bar",
        ])
        .unwrap();
        assert!(a.demo);
        assert_eq!(a.spawn_mode, SpawnMode::Worktree);
        assert_eq!(a.extra, ["--foo", "bar"]);
        a.validate().unwrap();
        let c = a.into_config("127.0.0.1:4321".parse().unwrap()).unwrap();
        assert_eq!(c.cors_origins, ["http://a:1", "http://b:2"]);
        assert!(c.embed_origins.is_empty());
        assert_eq!(c.allowed_hosts, ["localhost:4321", "127.0.0.1:4321"]);
        assert_eq!(c.permission_timeout, Some(Duration::from_secs(12)));
    }

    fn parse(flags: &[&str]) -> Args {
        let mut argv = vec!["bridge-relay"];
        argv.extend_from_slice(flags);
        Args::try_parse_from(argv).unwrap()
    }

    fn refusal(flags: &[&str]) -> String {
        format!("{:#}", parse(flags).validate().unwrap_err())
    }

    #[test]
    fn remote_bind_needs_the_flag_and_tls_or_a_proxy() {
        let e = refusal(&["--bind", "0.0.0.0:80"]);
        for flag in [
            "--allow-remote",
            "--tls-self-signed",
            "--tls-cert",
            "--behind-proxy",
        ] {
            assert!(e.contains(flag), "{flag}: {e}");
        }
        let e = refusal(&["--bind", "0.0.0.0:80", "--allow-remote"]);
        assert!(e.contains("plain HTTP"), "{e}");
        for flag in ["--tls-self-signed", "--tls-cert", "--behind-proxy"] {
            assert!(e.contains(flag), "{flag}: {e}");
        }
        let e = refusal(&["--bind", "192.168.1.20:8787", "--tls-self-signed"]);
        assert!(e.contains("--allow-remote"), "{e}");
        for ok in [
            &["--tls-self-signed"][..],
            &["--tls-cert", "c.pem", "--tls-key", "k.pem"],
            &["--behind-proxy"],
        ] {
            let mut flags = vec!["--bind", "0.0.0.0:80", "--allow-remote"];
            flags.extend_from_slice(ok);
            parse(&flags).validate().unwrap();
        }
        // Loopback needs none of it.
        parse(&["--bind", "[::1]:0"]).validate().unwrap();
        assert!(
            default_allowed_hosts("0.0.0.0:80".parse().unwrap())
                .contains(&"127.0.0.1:80".to_owned())
        );
    }

    #[test]
    fn tls_flags_come_in_consistent_sets() {
        assert!(refusal(&["--tls-cert", "c.pem"]).contains("--tls-key FILE"));
        assert!(refusal(&["--tls-key", "k.pem"]).contains("--tls-cert FILE"));
        let e = refusal(&[
            "--tls-cert",
            "c.pem",
            "--tls-key",
            "k.pem",
            "--tls-self-signed",
        ]);
        assert!(e.contains("pick one"), "{e}");
        let e = refusal(&["--tls-self-signed", "--behind-proxy"]);
        assert!(e.contains("pick one"), "{e}");
        let e = refusal(&["--tls-name", "mybox.lan"]);
        assert!(
            e.contains("--tls-self-signed") && e.contains("--allowed-host"),
            "{e}"
        );
        let e = refusal(&["--tls-self-signed", "--tls-name", "bad name!"]);
        assert!(e.contains("neither a DNS name nor an IP"), "{e}");
        parse(&[
            "--tls-self-signed",
            "--tls-name",
            "MyBox.local",
            "--tls-name",
            "192.168.1.20",
            "--tls-name",
            "[fd00::1]",
        ])
        .validate()
        .unwrap();
    }

    #[test]
    fn tls_names_feed_the_certificate_the_host_list_and_the_login_url() {
        let a = parse(&[
            "--demo",
            "--bind",
            "0.0.0.0:8787",
            "--allow-remote",
            "--tls-self-signed",
            "--tls-name",
            "192.168.1.20",
            "--tls-name",
            "MyBox.local",
            "--tls-name",
            "fd00::1",
        ]);
        a.validate().unwrap();
        assert!(a.tls_source() == Some(crate::tls::CertSource::SelfSigned));
        let c = a.into_config("0.0.0.0:8787".parse().unwrap()).unwrap();
        assert!(c.tls && !c.behind_proxy);
        assert_eq!(
            c.tls_names,
            [
                "192.168.1.20",
                "mybox.local",
                "fd00::1",
                "localhost",
                "127.0.0.1"
            ]
        );
        for h in [
            "localhost:8787",
            "127.0.0.1:8787",
            "192.168.1.20:8787",
            "mybox.local:8787",
            "[fd00::1]:8787",
        ] {
            assert!(
                c.allowed_hosts.contains(&h.to_owned()),
                "{h}: {:?}",
                c.allowed_hosts
            );
        }
        assert!(!c.allowed_hosts.contains(&"mybox.local".to_owned()));
        // The first DNS name, with the port.
        assert_eq!(c.public_url, "https://mybox.local:8787");

        // On 443 the portless names are accepted too, and the URL has no port.
        let a = parse(&[
            "--demo",
            "--tls-cert",
            "c.pem",
            "--tls-key",
            "k.pem",
            "--tls-name",
            "relay.example.org",
        ]);
        let c = a.into_config("127.0.0.1:443".parse().unwrap()).unwrap();
        assert!(c.allowed_hosts.contains(&"relay.example.org".to_owned()));
        assert!(
            c.allowed_hosts
                .contains(&"relay.example.org:443".to_owned())
        );
        assert_eq!(c.public_url, "https://relay.example.org");

        // Without a name: the bound IP; bound everywhere: 127.0.0.1 (both are in the certificate).
        assert_eq!(
            public_url(true, &[], false, &[], "127.0.0.1:9".parse().unwrap()),
            "https://127.0.0.1:9"
        );
        assert_eq!(
            public_url(true, &[], false, &[], "0.0.0.0:9".parse().unwrap()),
            "https://127.0.0.1:9"
        );
        assert_eq!(
            tls_names(&[], "0.0.0.0:9".parse().unwrap()),
            ["localhost", "127.0.0.1"]
        );
        assert_eq!(
            public_url(
                true,
                &["10.0.0.2".into()],
                false,
                &[],
                "0.0.0.0:9".parse().unwrap()
            ),
            "https://10.0.0.2:9"
        );
        // Plain: as before. Behind a proxy: https and the public name.
        assert_eq!(
            public_url(false, &[], false, &[], "127.0.0.1:9".parse().unwrap()),
            "http://127.0.0.1:9"
        );
        assert_eq!(
            public_url(
                false,
                &[],
                true,
                &["Box.tail1234.ts.net".into()],
                "127.0.0.1:9".parse().unwrap()
            ),
            "https://box.tail1234.ts.net"
        );
        let c = parse(&["--demo"])
            .into_config("127.0.0.1:9".parse().unwrap())
            .unwrap();
        assert!(!c.tls && c.tls_names.is_empty());
        assert_eq!(c.public_url, "http://127.0.0.1:9");
    }

    #[test]
    fn bare_loopback_hosts_only_on_a_loopback_relay() {
        let lo: SocketAddr = "127.0.0.1:8787".parse().unwrap();
        for h in ["localhost", "127.0.0.1", "[::1]"] {
            assert!(is_bare_loopback_host(h, lo), "{h}");
        }
        for h in [
            "localhost.evil.example",
            "127.0.0.2",
            "evil.example",
            "127.0.0.1:9",
        ] {
            assert!(!is_bare_loopback_host(h, lo), "{h}");
        }
        assert!(!is_bare_loopback_host(
            "127.0.0.1",
            "192.168.1.5:8787".parse().unwrap()
        ));
    }

    #[test]
    fn embed_origins_are_plain_origins() {
        let c = parse(&[
            "--demo",
            "--embed-origin",
            "https://App.example.com/",
            "--embed-origin",
            "http://127.0.0.1:5173",
        ]);
        c.validate().unwrap();
        let c = c.into_config("127.0.0.1:9".parse().unwrap()).unwrap();
        assert_eq!(
            c.embed_origins,
            ["https://app.example.com", "http://127.0.0.1:5173"]
        );
        for bad in [
            "app.example.com",
            "https://a.example/path",
            "https://*.example.com",
            "https://a.example 'unsafe-inline'",
            "https://a.example;script-src *",
            "javascript://x",
            "https://",
        ] {
            assert!(
                parse(&["--demo", "--embed-origin", bad])
                    .validate()
                    .is_err(),
                "{bad}"
            );
        }
    }
}
