#!/usr/bin/env bash
# Runs the benchmarks and prints their figures (also saved under pkg/bench/):
#   protocol decode throughput (MB/s, messages/s), dedup operations/s, relay SSE fan-out latency + RSS, relay CPU per streamed delta,
#   console streaming frame times / script time per delta of a growing 30 KB paragraph / 10,000-message
#   first paint / DOM size (headless Chromium; streaming and the paragraph again at 4x CPU),
#   console transfer size (gzipped wasm + js + css), the bytes the relay really sends (br / gzip), and
#   the first load on a throttled phone (bytes before the session list is usable, time to list / transcript),
#   the end-to-end latency of a streamed delta (agent stdout line to its paint, p50/p99 over 1,000), and
#   the scale-out figures (scripts/bench-cluster.sh; skipped without nats-server).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$BRIDGE_CACHE/target}"
export CHROMEDRIVER="${CHROMEDRIVER:-/usr/bin/chromedriver}"
# wasm-bindgen-test-runner gives the whole browser run 20 s unless told (and each of its 100 ms reads of the
# page at most what is left of it); the console benchmarks take about a minute on a busy machine.
export WASM_BINDGEN_TEST_TIMEOUT="${WASM_BINDGEN_TEST_TIMEOUT:-300}"
export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner
out=pkg/bench; mkdir -p "$out"
scripts/setup.sh --test --dev >/dev/null

echo "== protocol decode (criterion)"
cargo bench -q -p bridge-protocol --bench decode -- --warm-up-time 1 --measurement-time 3 2>&1 | tee "$out/protocol-decode.txt"
echo "== dedup (criterion)"
cargo bench -q -p bridge-dedup --bench dedup -- --warm-up-time 1 --measurement-time 3 2>&1 | tee "$out/dedup.txt"
echo "== relay fan-out: 200, then 1,000 SSE subscribers at 2,000 events/s, beside a reference broadcaster"
cargo build -q --release -p bridge-relay --bin bridge-relay --example fanout
{
  "$CARGO_TARGET_DIR/release/examples/fanout"
  "$CARGO_TARGET_DIR/release/examples/fanout" --subscribers 1000 --seconds 5
} 2>&1 | tee "$out/relay-fanout.txt"
echo "== relay CPU per streamed delta: 100,000 deltas at 20,000/s, then 1,000,000 as fast as the agent writes"
cargo build -q --release -p bridge-relay --bin bridge-relay --example delta_cpu
{
  "$CARGO_TARGET_DIR/release/examples/delta_cpu"
  "$CARGO_TARGET_DIR/release/examples/delta_cpu" --rate 0 --deltas 1000000 | tail -1
} 2>&1 | tee "$out/relay-delta-cpu.txt"
echo "== console in headless Chromium (streaming, 10,000 messages)"
# The runner's Chromium options (headless, no sandbox, …), as for scripts/test.sh's wasm tests.
scripts/webdriver-json.sh .
BRIDGE_BENCH_PROFILE=release cargo test --release --target wasm32-unknown-unknown -p bridge-console --test bench -- --include-ignored --nocapture 2>&1 | tee "$out/console.txt"
echo "== console on a phone's CPU: streaming and the growing paragraph again, CPU slowed down 4x (CDP)"
# wasm-bindgen-test-runner serves the benchmark page (interactive mode); Playwright opens it throttled.
for b in benchmark_streaming benchmark_paragraph; do
  NO_HEADLESS=1 WASM_BINDGEN_TEST_ADDRESS=127.0.0.1:8765 BRIDGE_BENCH_PROFILE=release cargo test --release \
    --target wasm32-unknown-unknown -p bridge-console --test bench -- --include-ignored --nocapture "$b" >/dev/null 2>&1 &
  runner=$!
  (cd tests/e2e && node bench/wasm-bench-throttled.mjs http://127.0.0.1:8765/ 4) || true
  pkill -f 'wasm-bindgen-test-runner.*bench' 2>/dev/null || true
  kill "$runner" 2>/dev/null || true
  wait "$runner" 2>/dev/null || true
done 2>&1 | tee "$out/console-4x.txt"
echo "== typed decode in headless Chromium, built as users get it (profile wasm-release: opt-level z, LTO)"
BRIDGE_BENCH_PROFILE=wasm-release cargo test --profile wasm-release --target wasm32-unknown-unknown -p bridge-console --test bench -- --include-ignored --nocapture benchmark_decode 2>&1 | tee "$out/console-decode-wasm-release.txt"
echo "== console transfer size (raw and gzip -9): one module (trunk build --release) vs split (scripts/build-console.sh)"
# The console's wasm, JS and CSS under a dist directory (the split build keeps them in console-<hash>/).
console_files() { (cd "$1" && find . -type f \( -name '*.wasm' -o -name '*.js' -o -name '*.css' \) | sed 's|^\./||' | LC_ALL=C sort); }
trunk_dist=$(mktemp -d)
trunk build --release --dist "$trunk_dist" >/dev/null 2>&1
scripts/build-console.sh dist >/dev/null 2>&1
# Every file raw and gzip -9 (the split build: main, each part, the shared chunks), the sum of what
# loads before the session list and the whole app, for both builds (scripts/console-sizes.sh).
{
  scripts/console-sizes.sh "$trunk_dist" "one module (trunk build --release)"
  scripts/console-sizes.sh dist "split (scripts/build-console.sh -> dist/)"
} | tee "$out/transfer-size.txt"
echo "== the biggest functions of the main module and the session part (the split build's raw modules, names kept)"
{
  top=$(mktemp -d)
  "$BRIDGE_CACHE/wasm-split/bin/wasm-split-cli" --target web --out-name bridge-console \
    "$CARGO_TARGET_DIR/wasm32-unknown-unknown/wasm-release/bridge-console.wasm" "$top" >/dev/null
  python3 scripts/wasm-top.py "$top/bridge-console.wasm" 30
  python3 scripts/wasm-top.py "$top/split_session.wasm" 30
  rm -rf "$top"
} 2>&1 | tee "$out/wasm-top.txt"
echo "== what the relay sends (release relay, console read at start)"
{
  log=$(mktemp); data=$(mktemp -d); log1=$(mktemp); data1=$(mktemp -d)
  BRIDGE_RELAY_TOKEN=bench-token-0123456789abcdef "$CARGO_TARGET_DIR/release/bridge-relay" --demo --bind 127.0.0.1:0 \
    --static-dir dist --data-dir "$data" --cwd "$data" >"$log" 2>&1 &
  relay=$!
  # The same relay serving the one-module Trunk build, for the side-by-side first load.
  BRIDGE_RELAY_TOKEN=bench-token-0123456789abcdef "$CARGO_TARGET_DIR/release/bridge-relay" --demo --bind 127.0.0.1:0 \
    --static-dir "$trunk_dist" --data-dir "$data1" >"$log1" 2>&1 &
  relay1=$!
  trap 'kill $relay $relay1 2>/dev/null || true; rm -rf "$log" "$data" "$log1" "$data1" "$trunk_dist"' EXIT
  for _ in $(seq 1 300); do grep -q 'listening on' "$log" && break; sleep 0.1; done
  # The relay's last start-up line: `listening on ADDR` (the login link goes only to a terminal).
  base=http://$(sed -n 's/^listening on \(127\.0\.0\.1:[0-9]*\).*/\1/p' "$log" | head -1)
  for enc in br gzip identity; do
    total=0
    for f in $(console_files dist); do
      n=$(curl -sf -o /dev/null -w '%{size_download}' -H "Accept-Encoding: $enc" "$base/$f")
      total=$((total + n))
    done
    printf '%-10s wasm + js + css on the wire: %8d bytes\n' "$enc" "$total"
  done
  echo "== first load on a throttled phone (headless Chromium: 4x CPU, 1.6 Mbps, 150 ms RTT)"
  # A session to open; then every file fetched before the session list is usable,
  # and the time to the list and to a live transcript, cold and warm.
  sid=$(curl -sf -H "Authorization: Bearer bench-token-0123456789abcdef" -H 'content-type: application/json' \
    -d '{"title":"first-load bench"}' "$base/v1/code/sessions" | sed 's/.*"session_id":"\([^"]*\)".*/\1/')
  for _ in $(seq 1 300); do grep -q '^listening on' "$log1" && break; sleep 0.1; done
  base1=http://$(sed -n 's/^listening on \(127\.0\.0\.1:[0-9]*\).*/\1/p' "$log1" | head -1)
  sid1=$(curl -sf -H "Authorization: Bearer bench-token-0123456789abcdef" -H 'content-type: application/json' \
    -d '{"title":"first-load bench"}' "$base1/v1/code/sessions" | sed 's/.*"session_id":"\([^"]*\)".*/\1/')
  node tests/e2e/bench/first-load.mjs bench-token-0123456789abcdef "$sid" "trunk=$base1@$sid1" "split=$base" 2>&1 | tee "$out/first-load.txt"
  kill $relay $relay1 2>/dev/null || true
  echo "== notification -> Allow interactive on the throttled phone (demo and 10,000-message sessions, cold and warm)"
  node tests/e2e/bench/notify-allow.mjs "$CARGO_TARGET_DIR/release/bridge-relay" dist 2>&1 | tee "$out/notify-allow.txt"
} | tee "$out/relay-transfer.txt"
echo "== end-to-end latency: an agent's stdout line to its paint in the console (release relay, loopback, 1,000 deltas)"
node tests/e2e/bench/latency.mjs "$CARGO_TARGET_DIR/release/bridge-relay" dist 2>&1 | tee "$out/latency.txt"
echo "== scale-out through NATS JetStream: fan-out over 4 gateways, 100 sessions on 2 hosts, resume after a gateway kill"
if command -v nats-server >/dev/null 2>&1 || [ -n "${NATS_SERVER_BIN:-}" ]; then
  scripts/bench-cluster.sh 2>&1 | tee "$out/cluster.txt"
else
  echo "nats-server is not installed: skipped (scripts/setup.sh --test installs it)" | tee "$out/cluster.txt"
fi
