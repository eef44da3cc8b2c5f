//! `bridge-demo-agent`: see the library docs and the crate README.

fn main() -> anyhow::Result<()> {
    bridge_demo_agent::run_cli(std::env::args().collect())
}
