#!/usr/bin/env bash
# Runs every test of Bridge Console: format, lints, native tests, wasm tests in headless Chromium,
# the release build of the console, and the end-to-end Playwright flows against the demo agent and the
# real Claude Code CLI (driven offline by the fake Messages API). Installs what it needs first.
#
#   scripts/test.sh            everything
#   SKIP_E2E=1 scripts/test.sh everything but Playwright
#
# Ends with a table of each step's seconds. Not here (run them at each stop, they take long or
# explore): scripts/fuzz.sh (libFuzzer; this run replays the committed corpus in the relay's tests),
# scripts/test-latest-cli.sh (the Playwright flows against the newest published CLI), scripts/bench.sh.
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
# Each step's seconds, printed as a table at the end (and when a step fails).
steps=() times=() current="" step_started=$started
close_step() {
  if [ -n "$current" ]; then
    steps+=("$current"); times+=($(( $(date +%s) - step_started )))
  fi
}
table() {
  close_step; current=""
  printf '\n%-64s %8s\n' "step" "seconds"
  for i in "${!steps[@]}"; do printf '%-64s %8d\n' "${steps[$i]:0:64}" "${times[$i]}"; done
  printf '%-64s %8d\n' "total" $(( $(date +%s) - started ))
}
relay_pid=""
on_exit() {
  local status=$?
  if [ -n "$relay_pid" ]; then kill "$relay_pid" 2>/dev/null || true; fi
  if [ $status -ne 0 ]; then
    local failed=$current
    table
    echo "FAILED in: $failed"
  fi
  exit $status
}
trap on_exit EXIT
step() {
  close_step
  current="$*" step_started=$(date +%s)
  printf '\n\033[1m==> %s\033[0m  (+%ss)\n' "$*" $(( step_started - started ))
}

step "setup"
scripts/setup.sh --test

step "cargo fmt --check"
cargo fmt --all -- --check

step "clippy (native, all targets)"
cargo clippy --workspace --all-targets --features bridge-transport/native -- -D warnings
# The relay without scale-out (no `cluster` feature: no async-nats) still builds, warning-free.
cargo clippy -p bridge-relay --no-default-features --all-targets -- -D warnings

step "clippy (wasm32: console, protocol, dedup, transport, client package; then the split build)"
cargo clippy --target wasm32-unknown-unknown -p bridge-console -p bridge-protocol -p bridge-dedup -p bridge-transport \
  -p bridge-console-client --all-targets -- -D warnings
# The browser benchmarks (a test target `cargo test` leaves out, so not in --all-targets): checked too.
cargo clippy --target wasm32-unknown-unknown -p bridge-console --test bench -- -D warnings
# The split build's code (src/lazy.rs's wasm-split entry points) only compiles with the feature.
cargo clippy --target wasm32-unknown-unknown -p bridge-console --features split -- -D warnings

step "build binaries used by the tests"
cargo build -p bridge-relay -p bridge-fake-model -p bridge-demo-agent
export BRIDGE_RELAY_BIN="$CARGO_TARGET_DIR/debug/bridge-relay"
export BRIDGE_FAKE_MODEL_BIN="$CARGO_TARGET_DIR/debug/bridge-fake-model"

step "native tests (one integration binary per crate; incl. the transport chaos test and the fuzz corpus replay)"
# One invocation with the same features as clippy, so dependencies are built once.
cargo test --workspace --features bridge-transport/native --no-fail-fast -- --nocapture

step "official browser SDK (@anthropic-ai/claude-agent-sdk/browser) against the relay"
tests/sdk-compat/run.sh

step "official browser SDK against a scale-out gateway (NATS, one agents node, two gateways)"
tests/sdk-compat/cluster.sh

step "check the real CLI captures with the protocol crate"
cargo run -q -p bridge-protocol --example check -- tests/fixtures/real-cli-2.1.332/*.ndjson

step "wasm tests in headless Chromium"
# A relay for the transport's browser test (its URL is baked in at compile time).
relay_log=$(mktemp); relay_data=$(mktemp -d)
# The test runner serves its page from a fixed address so that the relay can allow exactly that origin.
runner_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
export WASM_BINDGEN_TEST_ADDRESS="127.0.0.1:$runner_port"
BRIDGE_RELAY_TOKEN=wasm-test-token-0123456789abc BRIDGE_DEMO_SPEED=0 "$BRIDGE_RELAY_BIN" --demo --bind 127.0.0.1:0 \
  --data-dir "$relay_data" --allowed-origin "http://127.0.0.1:$runner_port" >"$relay_log" 2>&1 &
relay_pid=$!
for _ in $(seq 100); do grep -q 'listening on' "$relay_log" && break; sleep 0.1; done
addr=$(sed -n 's/.*listening on \([0-9.:]*\).*/\1/p' "$relay_log" | head -1)
export BRIDGE_TEST_RELAY_URL="http://$addr" BRIDGE_TEST_RELAY_TOKEN=wasm-test-token-0123456789abc
# wasm-bindgen-test-runner reads the Chromium options from webdriver.json in each crate's directory.
scripts/webdriver-json.sh
cargo test --target wasm32-unknown-unknown -p bridge-protocol -p bridge-dedup -p bridge-transport -p bridge-console
kill $relay_pid 2>/dev/null || true

step "console release build, split into lazily loaded chunks (scripts/build-console.sh -> dist/)"
scripts/build-console.sh

step "client package (pkg/): scripts/pack.sh (prints the gzipped wasm size), Node + Chromium tests"
scripts/pack.sh
tests/pkg/run.sh

if [ "${SKIP_E2E:-0}" != 1 ]; then
  step "end-to-end (Playwright: every flow on demo-desktop, the CLI's flows on real CLI 2.1.332, layout flows on the phone)"
  E2E_REQUIRE_REAL=1 tests/e2e/run.sh
fi

step "all tests passed"
table
