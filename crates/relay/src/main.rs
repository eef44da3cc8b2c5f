//! `bridge-relay` entry point: parse arguments, bind, serve. See `bridge_relay::core::config::Args`.

use std::io::{IsTerminal as _, Write as _};

use anyhow::Context as _;
use axum::serve::ListenerExt as _;
use clap::Parser as _;
use tracing_subscriber::EnvFilter;

use bridge_relay::features::tls::{Provenance, TlsListener};
use bridge_relay::{Args, Relay, SpawnMode, app};

fn main() -> anyhow::Result<()> {
    let mut argv = std::env::args();
    let _program = argv.next();
    let rest: Vec<String> = argv.collect();
    // Hidden subcommand: the relay is its own demo agent (`--demo` spawns `<exe> demo-agent …`).
    if rest.first().map(String::as_str) == Some("demo-agent") {
        return bridge_demo_agent::run_cli(rest[1..].to_vec());
    }
    // `bridge-relay service print|install|uninstall [-- ARGS]`: a systemd user unit (service.rs).
    if rest.first().map(String::as_str) == Some("service") {
        return bridge_relay::features::service::run(&rest[1..]);
    }
    // `bridge-relay hooks install|uninstall|status`: Claude Code's hooks for terminal sessions.
    if rest.first().map(String::as_str) == Some("hooks") {
        return bridge_relay::features::hooks::install::run(&rest[1..]);
    }
    let args = Args::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_env("BRIDGE_RELAY_LOG").unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    args.validate()?;
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(serve(args))
}

async fn serve(mut args: Args) -> anyhow::Result<()> {
    // No --static-dir: the console built into this binary, else a dist/ beside it — never the
    // directory the relay is started in (it may be a repository with a dist/ of its own). Neither:
    // the API still works (scripts, SDK clients, an embedding page elsewhere), the page is a
    // placeholder saying how to get the console.
    if args.static_dir.is_none() && bridge_relay::edge::assets::embedded_build().is_none() {
        args.static_dir =
            bridge_relay::core::config::console_beside(std::env::current_exe().ok().as_deref());
        if args.static_dir.is_none() {
            eprintln!(
                "WARNING: this bridge-relay carries no console and no dist/ lies beside it: the page \
                 says how to get one (scripts/install.sh builds a relay with the console inside)"
            );
        }
    }
    let listener = tokio::net::TcpListener::bind(args.bind)
        .await
        .with_context(|| format!("cannot bind {}", args.bind))?;
    let addr = listener.local_addr()?;
    if !addr.ip().is_loopback() {
        eprintln!(
            "WARNING: listening on non-loopback address {addr}. Anyone who can reach it and holds a token can run \
             commands on this machine. Accepted Host names: --allowed-host, --tls-name."
        );
    }
    let tls_source = args.tls_source();
    // Read before anything else: a bad token file stops the start with a clear message.
    let given_token = args.controller_token()?;
    let header_read_timeout_secs = args.header_read_timeout_secs;
    let cluster_secret = args.cluster_secret(given_token.as_deref())?;
    let mut config = args.into_config(addr)?;
    if let (Some(c), Some(secret)) = (config.cluster.as_mut(), cluster_secret) {
        c.keys = Some(std::sync::Arc::new(
            bridge_relay::cluster::seal::Keys::derive(secret.as_bytes()),
        ));
    }
    let tls = tls_source
        .map(|s| bridge_relay::features::tls::load(&s, &config.data_dir, &config.tls_names))
        .transpose()?;
    // The local CA's certificate is served at /tls/ca.pem and /tls/ca.crt.
    config.tls_ca = tls
        .as_ref()
        .and_then(|t| t.ca.as_ref())
        .map(|ca| ca.cert.clone());
    let public_url = config.public_url.clone();
    tracing::info!(?config, "starting");
    let spawn_mode = config.spawn_mode;
    let cluster = config.cluster.clone();
    let relay = bridge_relay::open(config)?;
    if let Some(c) = cluster {
        bridge_relay::cluster::start(&relay, c).await?;
    }
    let boot = relay
        .auth
        .bootstrap(given_token.as_deref(), relay.config.login_code_ttl_secs)?;
    drop(given_token);
    let login = boot.login_code;
    let generated_token_file = boot
        .generated_token
        .map(|t| save_generated_token(&relay.config.data_dir, &t))
        .transpose()?;
    if spawn_mode == SpawnMode::SingleSession {
        let s = relay
            .start_single_session()
            .await
            .map_err(|e| anyhow::anyhow!("{}", e.message))?;
        tracing::info!(session = %s.id, "single session started");
    }
    {
        // Scripts read these lines: the login URL first, `listening on ADDR` last.
        let mut out = std::io::stdout().lock();
        let login_url = format!("{public_url}/#login={login}");
        // The one-time code goes to a person at a terminal, never into a journal or a log file: with
        // stdout elsewhere (a service, a pipe) it is written to an owner-only file instead, unless
        // BRIDGE_PRINT_LOGIN_URL=1 asks for it (scripts that read it).
        let forced = std::env::var("BRIDGE_PRINT_LOGIN_URL").is_ok_and(|v| v == "1");
        if out.is_terminal() || forced {
            writeln!(out, "{login_url}")?;
            if out.is_terminal() {
                write_qr(&mut out, &login_url)?;
            }
        } else {
            let path = save_owner_only(&relay.config.data_dir, "login-url", &login_url)?;
            writeln!(
                out,
                "Login link (one-time code) saved to {} (owner-only): stdout is not a terminal, so it is not printed here.",
                path.display()
            )?;
        }
        writeln!(
            out,
            "The login link works once and expires in {} s; a new one: restart, or POST /v1/auth/login-codes with the controller token.",
            relay.config.login_code_ttl_secs
        )?;
        if let Some(path) = &generated_token_file {
            writeln!(
                out,
                "Controller token generated now and saved to {} (owner-only); start with --token-file {} to keep it.",
                path.display(),
                path.display()
            )?;
        }
        if let Some(t) = &tls {
            let how = match t.provenance {
                Provenance::Given => "from --tls-cert",
                Provenance::Made => "issued now by the local CA",
                Provenance::Reused => "issued by the local CA, kept from an earlier start",
            };
            writeln!(out, "TLS certificate: {} ({how})", t.cert_path.display())?;
            writeln!(out, "TLS SHA-256 fingerprint: {}", t.fingerprint())?;
            if let Some(ca) = &t.ca {
                let how = match ca.provenance {
                    Provenance::Made => "made now",
                    _ => "kept from an earlier start",
                };
                writeln!(out, "TLS local CA: {} ({how})", ca.path.display())?;
                let key = ca.path.with_file_name("ca-key.pem");
                if key.exists() {
                    writeln!(
                        out,
                        "TLS local CA key: {} — once your devices trust the CA, delete it: the relay keeps its certificate and makes a new CA (devices install it again) only to renew it or for a new --tls-name.",
                        key.display()
                    )?;
                }
                writeln!(
                    out,
                    "TLS local CA SHA-256 fingerprint: {}",
                    ca.fingerprint()
                )?;
                // Installed on a phone, the CA makes the relay trusted there: the installed app
                // and notifications need that (see README, "Use it from your phone").
                writeln!(
                    out,
                    "Install the local CA on a phone from: {public_url}/tls/ca.crt"
                )?;
            }
        }
        writeln!(out, "listening on {addr}")?;
        out.flush()?;
    }
    // Where this relay answers on this machine: `bridge-relay hooks install` points Claude Code's
    // hooks here unless told otherwise.
    let scheme = if tls.is_some() { "https" } else { "http" };
    if let Err(e) = save_owner_only(
        &relay.config.data_dir,
        "relay-url",
        &format!("{scheme}://{addr}"),
    ) {
        tracing::warn!(error = %e, "cannot record the relay's URL for `hooks install`");
    }
    let shutdown = shutdown_signal(relay.clone(), relay.exit_requested());
    // Handlers see the peer address (X-Forwarded-* are trusted from loopback only); a connection
    // that does not send its headers in time is closed (bridge_relay::edge::serve).
    let service = app(relay.clone());
    let header_timeout = std::time::Duration::from_secs(header_read_timeout_secs.max(1));
    match tls {
        None => {
            // Small SSE frames must not wait for Nagle + delayed ACK (tens of ms).
            let listener = listener.tap_io(|tcp| {
                if let Err(e) = tcp.set_nodelay(true) {
                    tracing::debug!(error = %e, "cannot set TCP_NODELAY");
                }
            });
            bridge_relay::edge::serve::serve(listener, service, header_timeout, shutdown).await;
        }
        Some(tls) => {
            // TlsListener sets TCP_NODELAY itself.
            let listener = TlsListener::new(listener, tls.server_config)?;
            bridge_relay::edge::serve::serve(listener, service, header_timeout, shutdown).await;
        }
    }
    relay.shutdown().await;
    Ok(())
}

/// Resolves on ctrl-c, SIGTERM or an exit request, after ending the streams (they never end by
/// themselves, and the graceful shutdown waits for them).
async fn shutdown_signal(
    relay: std::sync::Arc<Relay>,
    mut exit: tokio::sync::watch::Receiver<bool>,
) {
    tokio::select! {
        _ = tokio::signal::ctrl_c() => tracing::info!("interrupted"),
        () = sigterm() => tracing::info!("terminated"),
        _ = exit.wait_for(|v| *v) => {}
    }
    relay.begin_shutdown();
}

/// Writes a generated controller token to `<data dir>/controller-token` (mode 0600) so the operator
/// can use it (`--token-file`) without it ever being printed.
fn save_generated_token(
    data_dir: &std::path::Path,
    token: &str,
) -> anyhow::Result<std::path::PathBuf> {
    save_owner_only(data_dir, "controller-token", token)
}

/// Writes `text` and a newline to `data_dir/name`, readable by the owner only (replacing a file
/// there; never following a symlink planted in its place).
fn save_owner_only(
    data_dir: &std::path::Path,
    name: &str,
    text: &str,
) -> anyhow::Result<std::path::PathBuf> {
    let path = data_dir.join(name);
    let mut f = bridge_relay::core::util::create_fresh(&path, 0o600)
        .with_context(|| format!("cannot write {}", path.display()))?;
    writeln!(f, "{text}")?;
    Ok(path)
}

/// The login URL as a QR code a phone can scan: black on white whatever the terminal's colours.
fn write_qr(out: &mut impl std::io::Write, url: &str) -> anyhow::Result<()> {
    use qrcode::render::unicode::Dense1x2;
    let code =
        qrcode::QrCode::new(url.as_bytes()).context("cannot encode the login URL as a QR code")?;
    let text = code
        .render::<Dense1x2>()
        .dark_color(Dense1x2::Dark)
        .light_color(Dense1x2::Light)
        .quiet_zone(true)
        .build();
    for line in text.lines() {
        writeln!(out, "\x1b[30;107m{line}\x1b[0m")?;
    }
    Ok(())
}

async fn sigterm() {
    match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(mut s) => {
            s.recv().await;
        }
        Err(_) => std::future::pending().await,
    }
}
