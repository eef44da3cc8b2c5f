//! `bridge-relay` entry point: parse arguments, bind, serve. See `bridge_relay::config::Args`.

use std::io::Write as _;

use anyhow::Context as _;
use axum::serve::ListenerExt as _;
use clap::Parser as _;
use tracing_subscriber::EnvFilter;

use bridge_relay::{Args, Relay, SpawnMode, app};

fn main() -> anyhow::Result<()> {
    let mut argv = std::env::args();
    let _program = argv.next();
    let rest: Vec<String> = argv.collect();
    // Hidden subcommand: the relay is its own demo agent (`--demo` spawns `<exe> demo-agent …`).
    if rest.first().map(String::as_str) == Some("demo-agent") {
        return bridge_demo_agent::run_cli(rest[1..].to_vec());
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

async fn serve(args: Args) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(args.bind)
        .await
        .with_context(|| format!("cannot bind {}", args.bind))?;
    let addr = listener.local_addr()?;
    if !addr.ip().is_loopback() {
        eprintln!(
            "WARNING: listening on non-loopback address {addr}. Anyone who can reach it and holds a token can run \
             commands on this machine. Put TLS in front of it; accepted Host names: --allowed-host."
        );
    }
    let config = args.into_config(addr)?;
    tracing::info!(?config, "starting");
    let spawn_mode = config.spawn_mode;
    let relay = Relay::open(config)?;
    let env_token = std::env::var("BRIDGE_RELAY_TOKEN").ok();
    let login = relay.auth.bootstrap(env_token.as_deref())?;
    if spawn_mode == SpawnMode::SingleSession {
        let s = relay
            .start_single_session()
            .await
            .map_err(|e| anyhow::anyhow!("{}", e.message))?;
        tracing::info!(session = %s.id, "single session started");
    }
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "http://{addr}/#login={login}")?;
        writeln!(out, "listening on {addr}")?;
        out.flush()?;
    }
    let mut exit = relay.exit_requested();
    let streams = relay.clone();
    // Small SSE frames must not wait for Nagle + delayed ACK (tens of ms).
    let listener = listener.tap_io(|tcp| {
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "cannot set TCP_NODELAY");
        }
    });
    axum::serve(listener, app(relay.clone()))
        .with_graceful_shutdown(async move {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => tracing::info!("interrupted"),
                () = sigterm() => tracing::info!("terminated"),
                _ = exit.wait_for(|v| *v) => {}
            }
            // Streams never end by themselves: end them so the graceful shutdown can finish.
            streams.begin_shutdown();
        })
        .await
        .context("server failed")?;
    relay.shutdown().await;
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
