#!/usr/bin/env bash
# Starts Bridge Console on the scripted demo agent: builds the console (the split release build,
# scripts/build-console.sh) and runs the relay.
# Open the printed URL (it carries a one-time login fragment). Extra arguments go to bridge-relay,
# e.g. `scripts/demo.sh --bind 127.0.0.1:9000`.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
scripts/setup.sh
scripts/build-console.sh
exec cargo run --release -p bridge-relay -- --demo --static-dir dist "$@"
