#!/usr/bin/env bash
# Starts Bridge Console on the scripted demo agent: builds the console (the split release build,
# scripts/build-console.sh, skipped when nothing changed) and runs a release relay that carries it
# (built into the binary, as scripts/install.sh installs it).
# Open the printed URL (it carries a one-time login code). Extra arguments go to bridge-relay,
# e.g. `scripts/demo.sh --bind 127.0.0.1:9000`.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
scripts/setup.sh
scripts/build-console.sh
BRIDGE_CONSOLE_DIR="$PWD/dist" exec cargo run --release -q -p bridge-relay -- --demo "$@"
