#!/usr/bin/env bash
# Console development: a debug relay on the demo agent on 127.0.0.1:8787 and `trunk serve` on
# http://127.0.0.1:8080 (one wasm module, rebuilt on every change; the relay's API proxied, see
# Trunk.toml). Installs trunk on first use (scripts/setup.sh --dev, ~10 min once).
# Sign in at http://127.0.0.1:8080/#login=dev-token-0123456789abcdef (the dev token, this script only).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
scripts/setup.sh --dev
BRIDGE_RELAY_TOKEN=dev-token-0123456789abcdef cargo run -p bridge-relay -- --demo \
  --allowed-origin http://127.0.0.1:8080 "$@" &
relay=$!
trap 'kill $relay 2>/dev/null || true' EXIT
trunk serve
