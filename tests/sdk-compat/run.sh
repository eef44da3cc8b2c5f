#!/usr/bin/env bash
# Runs the official-browser-SDK compatibility check against bridge-relay (see run.mjs for the details).
#   BRIDGE_RELAY_BIN=path   relay binary (default: ../../target/debug/bridge-relay; build it with
#                           `cargo build -p bridge-relay`)
#   SDK_COMPAT_EXTENDED=0   skip the agent-crash and permission-timeout checks (on by default)
# Installs the pinned SDK with `npm ci` when node_modules is missing or stale. The SDK's optional
# per-platform `claude` binaries (~400 MB) are not used by the browser entry point and are skipped.
set -euo pipefail
if [ -n "${BRIDGE_RELAY_BIN:-}" ] && [ "${BRIDGE_RELAY_BIN#/}" = "$BRIDGE_RELAY_BIN" ]; then
  BRIDGE_RELAY_BIN="$PWD/$BRIDGE_RELAY_BIN" # relative to the caller's directory
  export BRIDGE_RELAY_BIN
fi
cd "$(dirname "$0")"

if ! command -v node >/dev/null 2>&1; then
  echo "sdk-compat: node not found (Node 20 or newer is required)" >&2
  exit 1
fi
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 20 ]; then
  echo "sdk-compat: Node $(node --version) is too old; Node 20 or newer is required" >&2
  exit 1
fi

pinned=$(node -p 'require("./package.json").dependencies["@anthropic-ai/claude-agent-sdk"]')
installed=$(node -p 'try { require("./node_modules/@anthropic-ai/claude-agent-sdk/package.json").version } catch { "" }')
if [ ! -f node_modules/.package-lock.json ] \
  || [ package-lock.json -nt node_modules/.package-lock.json ] \
  || [ package.json -nt node_modules/.package-lock.json ] \
  || [ "$installed" != "$pinned" ]; then
  echo "sdk-compat: npm ci (node_modules missing or stale)"
  timeout 300 npm ci --omit=optional --no-audit --no-fund --loglevel=error
fi

# Node 20 exposes globalThis.WebSocket (needed by the SDK's websocket transport) only behind a flag.
flags=()
if ! node -e 'process.exit(typeof WebSocket === "function" ? 0 : 1)'; then
  flags+=(--experimental-websocket)
fi
exec timeout 300 node "${flags[@]}" run.mjs "$@"
