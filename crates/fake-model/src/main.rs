//! `bridge-fake-model --bind 127.0.0.1:0 [--scenario FILE] [--record FILE]`: prints `listening on ADDR`.

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context as _;
use bridge_fake_model::{FakeModel, Scenario};
use clap::Parser;

/// A scripted Anthropic Messages API on loopback, so the real Claude Code CLI runs offline.
#[derive(Parser, Debug)]
#[command(name = "bridge-fake-model", version)]
struct Args {
    /// Address to listen on (loopback only; port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:0")]
    bind: SocketAddr,
    /// Scenario file (JSON list of model turns, or {"turns":[…],"default":{…}}).
    #[arg(long)]
    scenario: Option<PathBuf>,
    /// Append every received request (with its body) to this JSONL file.
    #[arg(long)]
    record: Option<PathBuf>,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("FAKE_MODEL_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    let args = Args::parse();
    anyhow::ensure!(
        args.bind.ip().is_loopback(),
        "refusing to listen on {}: the fake model only binds loopback addresses",
        args.bind
    );
    let scenario = match &args.scenario {
        Some(path) => Scenario::load(path)?,
        None => Scenario::default(),
    };
    let model = match &args.record {
        Some(path) => FakeModel::with_record_file(scenario, path)?,
        None => FakeModel::new(scenario),
    };
    let listener = tokio::net::TcpListener::bind(args.bind)
        .await
        .with_context(|| format!("binding {}", args.bind))?;
    let addr = listener.local_addr()?;
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "listening on {addr}")?;
        out.flush()?;
    }
    bridge_fake_model::serve(listener, model, shutdown_signal()).await?;
    Ok(())
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
}
