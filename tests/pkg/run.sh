#!/usr/bin/env bash
# Runs the client package's tests (node:test): tests/pkg/*.test.mjs against pkg/ (build it first with
# scripts/pack.sh) and the relay binary ($BRIDGE_RELAY_BIN, else $CARGO_TARGET_DIR/debug/bridge-relay).
# The Chromium test uses /usr/bin/chromium and tests/e2e/node_modules/playwright-core (scripts/setup.sh --test).
#   tests/pkg/run.sh [extra node --test arguments, e.g. --test-name-pattern=reconnect]
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -f pkg/bridge_console_client_bg.wasm ] || { echo "tests/pkg: pkg/ is not built: run scripts/pack.sh" >&2; exit 1; }
flags=()
# Node 20 has a global WebSocket (for the 'ws' and 'hybrid' turns) only behind this flag.
if ! node -e 'process.exit(typeof WebSocket === "function" ? 0 : 1)'; then
  flags+=(--experimental-websocket)
fi
exec timeout 600 node "${flags[@]}" --test "$@" tests/pkg/*.test.mjs
