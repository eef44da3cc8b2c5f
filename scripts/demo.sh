#!/usr/bin/env bash
# Starts Bridge Console on the scripted demo agent: builds the console (the split release build,
# scripts/build-console.sh, skipped when nothing changed) and runs a release relay that carries it
# (built into the binary, as scripts/install.sh installs it).
# Open the printed URL (it carries a one-time login code). Extra arguments go to bridge-relay,
# e.g. `scripts/demo.sh --bind 127.0.0.1:9000`.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
target_dir=${CARGO_TARGET_DIR:-target}
# On a first run the relay's dependencies compile beside the tools and the console (their own cargo
# process and profile directory): the console's single-threaded final link, wasm-opt and the tools'
# links leave a core idle that they fill. Later runs skip this (only the relay crate is rebuilt).
prebuild=""
if [ ! -x "$target_dir/release/bridge-relay" ]; then
  prebuild_log=$(mktemp)
  (BRIDGE_CONSOLE_DIR="" cargo build --release -q -p bridge-relay 2>"$prebuild_log" || true) &
  prebuild=$!
fi
scripts/setup.sh
scripts/build-console.sh
if [ -n "$prebuild" ]; then wait "$prebuild"; rm -f "$prebuild_log"; fi
BRIDGE_CONSOLE_DIR="$PWD/dist" exec cargo run --release -q -p bridge-relay -- --demo "$@"
