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
    /// Address to listen on. Anything but loopback needs --allow-remote.
    #[arg(long, default_value = "127.0.0.1:8787")]
    pub bind: SocketAddr,
    /// Allow binding a non-loopback address (the relay is a remote shell: put TLS in front of it).
    #[arg(long)]
    pub allow_remote: bool,
    /// Extra accepted Host header values (host:port), e.g. the name users reach a remote bind by.
    #[arg(long = "allowed-host", value_name = "HOST:PORT")]
    pub allowed_hosts: Vec<String>,
    /// Extra accepted Origins; these also get CORS headers (e.g. http://localhost:8080 for `trunk serve`).
    #[arg(long = "allowed-origin", value_name = "ORIGIN")]
    pub allowed_origins: Vec<String>,
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
    /// The built console (Trunk's dist/). Default: ./dist, else the workspace's dist/.
    #[arg(long, value_name = "DIR")]
    pub static_dir: Option<PathBuf>,
    /// Deny a permission prompt nobody answered after this many seconds (default: wait forever).
    #[arg(long, value_name = "SECS")]
    pub permission_timeout_secs: Option<u64>,
    /// Keep at least this many events per session (default: all). Older ones are pruned; resuming
    /// from before them yields catch_up_truncated.
    #[arg(long, value_name = "N")]
    pub retention_events: Option<u64>,
    /// Largest accepted request body in bytes.
    #[arg(long, default_value_t = 8 * 1024 * 1024, value_name = "BYTES")]
    pub max_body_bytes: usize,
    /// Default --model for new sessions.
    #[arg(long)]
    pub model: Option<String>,
    /// Default --permission-mode for new sessions.
    #[arg(long)]
    pub permission_mode: Option<String>,
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
    /// SSE keepalive comment interval.
    #[arg(long, default_value_t = 15, hide = true)]
    pub sse_keepalive_secs: u64,
    /// Least time between two writes to one SSE subscriber (frames arriving meanwhile share the next
    /// write); 0 writes every batch at once.
    #[arg(long, default_value_t = DEFAULT_SSE_COALESCE_MS, hide = true)]
    pub sse_coalesce_ms: u64,
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
    pub max_body_bytes: usize,
    /// Accepted Host header values, lower case.
    pub allowed_hosts: Vec<String>,
    /// Configured cross-origin origins (CORS), lower case, no trailing slash.
    pub cors_origins: Vec<String>,
    pub sse_keepalive: Duration,
    pub sse_coalesce: Duration,
    pub default_model: Option<String>,
    pub default_permission_mode: Option<String>,
    /// Web Push settings (--push-*).
    pub push: crate::push::PushConfig,
    pub launcher: Arc<dyn AgentLauncher>,
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

pub fn default_static_dir(cwd: &Path) -> PathBuf {
    let local = cwd.join("dist");
    if local.join("index.html").exists() {
        return local;
    }
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../dist");
    if workspace.join("index.html").exists() {
        return workspace;
    }
    local
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

fn normalize_origin(o: &str) -> String {
    o.trim().trim_end_matches('/').to_ascii_lowercase()
}

impl Args {
    /// Checks the flags that must be refused before binding.
    pub fn validate(&self) -> anyhow::Result<()> {
        if !self.bind.ip().is_loopback() && !self.allow_remote {
            anyhow::bail!(
                "refusing to bind {}: not a loopback address. The relay is a remote shell; pass --allow-remote \
                 (and put TLS in front of it) if you really mean it",
                self.bind
            );
        }
        if self.max_body_bytes < 1024 {
            anyhow::bail!("--max-body-bytes must be at least 1024");
        }
        Ok(())
    }

    pub fn into_config(self, addr: SocketAddr) -> anyhow::Result<Config> {
        let cwd = match self.cwd {
            Some(c) => c,
            None => std::env::current_dir()?,
        };
        let cwd = std::fs::canonicalize(&cwd)
            .map_err(|e| anyhow::anyhow!("--cwd {}: {e}", cwd.display()))?;
        let launcher: Arc<dyn AgentLauncher> = if self.demo || self.demo_scenario.is_some() {
            let exe = std::env::current_exe()?;
            Arc::new(CommandLauncher::demo(exe, self.demo_scenario, self.extra))
        } else {
            Arc::new(CommandLauncher::claude(self.claude, self.extra))
        };
        let mut allowed_hosts = default_allowed_hosts(addr);
        allowed_hosts.extend(
            self.allowed_hosts
                .iter()
                .map(|h| h.trim().to_ascii_lowercase()),
        );
        let static_dir = self.static_dir.unwrap_or_else(|| default_static_dir(&cwd));
        Ok(Config {
            addr,
            data_dir: self.data_dir.unwrap_or_else(default_data_dir),
            static_dir,
            spawn_mode: self.spawn_mode,
            cwd,
            permission_timeout: self.permission_timeout_secs.map(Duration::from_secs),
            retention_events: self.retention_events,
            max_body_bytes: self.max_body_bytes,
            allowed_hosts,
            cors_origins: self
                .allowed_origins
                .iter()
                .map(|o| normalize_origin(o))
                .collect(),
            sse_keepalive: Duration::from_secs(self.sse_keepalive_secs.max(1)),
            sse_coalesce: Duration::from_millis(self.sse_coalesce_ms),
            default_model: self.model,
            default_permission_mode: self.permission_mode,
            push: crate::push::PushConfig::new(
                self.push_contact,
                &self.push_endpoint_allow,
                self.push_min_turn_secs,
            )
            .map_err(anyhow::Error::msg)?,
            launcher,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(c.allowed_hosts, ["localhost:4321", "127.0.0.1:4321"]);
        assert_eq!(c.permission_timeout, Some(Duration::from_secs(12)));
    }

    #[test]
    fn remote_bind_needs_the_flag() {
        let a = Args::try_parse_from(["bridge-relay", "--bind", "0.0.0.0:80"]).unwrap();
        assert!(a.validate().is_err());
        let a = Args::try_parse_from(["bridge-relay", "--bind", "0.0.0.0:80", "--allow-remote"])
            .unwrap();
        a.validate().unwrap();
        assert!(
            default_allowed_hosts("0.0.0.0:80".parse().unwrap())
                .contains(&"127.0.0.1:80".to_owned())
        );
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
}
