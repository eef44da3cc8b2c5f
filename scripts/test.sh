#!/usr/bin/env bash
# Runs every test of Bridge Console: format, lints, native tests, wasm tests in headless Chromium,
# the release build of the console, and the end-to-end Playwright flows against the demo agent and the
# real Claude Code CLI (driven offline by the fake Messages API). Installs what it needs first.
#
#   scripts/test.sh            everything
#   SKIP_E2E=1 scripts/test.sh everything but Playwright
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh

# One build of the workspace shared by every step (and by later runs, from a cache outside the repo).
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$BRIDGE_CACHE/target}"
export CARGO_TERM_COLOR=never
export CHROMEDRIVER="${CHROMEDRIVER:-/usr/bin/chromedriver}"
export WASM_BINDGEN_TEST_TIMEOUT=120
export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner

started=$(date +%s)
step() { printf '\n\033[1m==> %s\033[0m  (+%ss)\n' "$*" $(( $(date +%s) - started )); }

step "setup"
scripts/setup.sh --test

step "cargo fmt --check"
cargo fmt --all -- --check

step "clippy (native, all targets)"
cargo clippy --workspace --all-targets --features bridge-transport/native -- -D warnings

step "clippy (wasm32: console, protocol, dedup, transport)"
cargo clippy --target wasm32-unknown-unknown -p bridge-console -p bridge-protocol -p bridge-dedup -p bridge-transport --all-targets -- -D warnings
# The split build's code (src/lazy.rs's wasm-split entry points) only compiles with the feature.
cargo clippy --target wasm32-unknown-unknown -p bridge-console --features split -- -D warnings

step "build binaries used by the tests"
cargo build -p bridge-relay -p bridge-fake-model -p bridge-demo-agent
export BRIDGE_RELAY_BIN="$CARGO_TARGET_DIR/debug/bridge-relay"
export BRIDGE_FAKE_MODEL_BIN="$CARGO_TARGET_DIR/debug/bridge-fake-model"

step "native tests (incl. the transport chaos test, which prints cuts / events / lost / duplicated)"
# One invocation with the same features as clippy, so dependencies are built once.
cargo test --workspace --features bridge-transport/native --no-fail-fast -- --nocapture

step "official browser SDK (@anthropic-ai/claude-agent-sdk/browser) against the relay"
tests/sdk-compat/run.sh

step "official browser SDK against a scale-out gateway (NATS, one agents node, two gateways)"
tests/sdk-compat/cluster.sh

step "check the real CLI captures with the protocol crate"
cargo run -q -p bridge-protocol --example check -- tests/fixtures/real-cli-2.1.332/*.ndjson

step "fuzz each target for 20 s (scripts/fuzz.sh: NDJSON, SSE, envelope, partial JSON, markdown, relay HTTP; prints executions and crashes)"
scripts/fuzz.sh 20

step "wasm tests in headless Chromium"
# A relay for the transport's browser test (its URL is baked in at compile time).
relay_log=$(mktemp); relay_data=$(mktemp -d)
# The test runner serves its page from a fixed address so that the relay can allow exactly that origin.
runner_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
export WASM_BINDGEN_TEST_ADDRESS="127.0.0.1:$runner_port"
BRIDGE_RELAY_TOKEN=wasm-test-token-0123456789abc BRIDGE_DEMO_SPEED=0 "$BRIDGE_RELAY_BIN" --demo --bind 127.0.0.1:0 \
  --data-dir "$relay_data" --allowed-origin "http://127.0.0.1:$runner_port" >"$relay_log" 2>&1 &
relay_pid=$!
trap 'kill $relay_pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q 'listening on' "$relay_log" && break; sleep 0.1; done
addr=$(sed -n 's/.*listening on \([0-9.:]*\).*/\1/p' "$relay_log" | head -1)
export BRIDGE_TEST_RELAY_URL="http://$addr" BRIDGE_TEST_RELAY_TOKEN=wasm-test-token-0123456789abc
# wasm-bindgen-test-runner reads the Chromium options from webdriver.json in each crate's directory.
scripts/webdriver-json.sh
cargo test --target wasm32-unknown-unknown -p bridge-protocol -p bridge-dedup -p bridge-transport -p bridge-console
kill $relay_pid 2>/dev/null || true

step "console release build, split into lazily loaded chunks (scripts/build-console.sh -> dist/)"
scripts/build-console.sh

step "client package (pkg/): clippy wasm32, scripts/pack.sh (prints the gzipped wasm size), Node + Chromium tests"
cargo clippy --target wasm32-unknown-unknown -p bridge-console-client --all-targets -- -D warnings
scripts/pack.sh
tests/pkg/run.sh

if [ "${SKIP_E2E:-0}" != 1 ]; then
  step "end-to-end (Playwright: 29 flows x desktop + phone x demo agent + real CLI 2.1.332)"
  E2E_REQUIRE_REAL=1 tests/e2e/run.sh

  # Second, non-blocking job: the newest published CLI, when it differs from the pinned one.
  latest_bin=$(scripts/install-claude.sh latest 2>/dev/null || true)
  pinned_bin=$(scripts/install-claude.sh)
  if [ -n "$latest_bin" ] && [ "$latest_bin" != "$pinned_bin" ]; then
    step "non-blocking: e2e against the latest CLI ($latest_bin)"
    CLAUDE_BIN="$latest_bin" E2E_BACKENDS=real tests/e2e/run.sh --project real-desktop \
      || echo "NOTE: the latest CLI differs from the pinned one (non-blocking); see the failures above"
  else
    echo "latest published CLI is the pinned one; no second job needed"
  fi
fi

step "all tests passed"
