#!/usr/bin/env bash
# Chaos at scale (issue 13), with printed figures. scripts/test.sh runs the same test at a small
# size (3,000 events, 60 cuts), the 10,000-event / 200-cut transport chaos tests and the relay's
# SIGKILL and race tests.
#
#   scripts/chaos.sh                  50,000 events, 1,000 cuts, hybrid transport (~5-10 min)
#   scripts/chaos.sh all              the same over SSE+POST, WebSocket and hybrid in turn
#   BRIDGE_CHAOS_EVENTS=5000 BRIDGE_CHAOS_CUTS=100 scripts/chaos.sh sse     a smaller run
#
# Prints: cuts, connections, durable events, delivered, lost, shown twice, mismatched, turns,
# prompts answered, control responses read by the agent (duplicates, missing), posts (lost,
# applied twice, not read exactly once by the agent), reconnects; then the relay's SIGKILL-restart
# and ten-client race tests.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$BRIDGE_CACHE/target}"
export CARGO_TERM_COLOR=never
export BRIDGE_CHAOS_EVENTS="${BRIDGE_CHAOS_EVENTS:-50000}" BRIDGE_CHAOS_CUTS="${BRIDGE_CHAOS_CUTS:-1000}"

which="${1:-hybrid}"
case "$which" in
  all) kinds=(sse ws hybrid) ;;
  sse | ws | hybrid) kinds=("$which") ;;
  *) echo "usage: scripts/chaos.sh [sse|ws|hybrid|all]" >&2; exit 2 ;;
esac

cargo build -q -p bridge-relay
for kind in "${kinds[@]}"; do
  echo "==> chaos at scale over $kind: $BRIDGE_CHAOS_EVENTS events, $BRIDGE_CHAOS_CUTS cuts"
  BRIDGE_CHAOS_TRANSPORT=$kind cargo test -q -p bridge-transport --features native --test integration \
    -- --nocapture chaos_scale:: 2>&1 | grep -E '^(chaos at scale|  …|test result|thread|failures)|panicked' 
done
echo "==> relay: SIGKILL mid-turn and restart; ten clients race to answer one prompt"
cargo test -q -p bridge-relay --test integration -- --nocapture chaos:: 2>&1 | grep -E '^(race of ten|test result)|panicked'
