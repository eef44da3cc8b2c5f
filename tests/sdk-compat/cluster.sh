#!/usr/bin/env bash
# The official-browser-SDK compatibility check (run.sh) against a scale-out gateway: starts a NATS
# server with JetStream (free loopback port, temp store), one `agents` relay and two `gateway`
# relays (demo agent), then runs the SSE and WebSocket checks through gateway A (the extended checks
# need relays of their own and run in run.sh only).
#   BRIDGE_RELAY_BIN=path   relay binary (default: ../../target/debug/bridge-relay)
#   NATS_SERVER_BIN=path    nats-server (default: from PATH or /usr/sbin); missing, this fails
set -euo pipefail
if [ -n "${BRIDGE_RELAY_BIN:-}" ] && [ "${BRIDGE_RELAY_BIN#/}" = "$BRIDGE_RELAY_BIN" ]; then
  BRIDGE_RELAY_BIN="$PWD/$BRIDGE_RELAY_BIN" # relative to the caller's directory
fi
cd "$(dirname "$0")"
relay_bin=${BRIDGE_RELAY_BIN:-$PWD/../../target/debug/bridge-relay}
nats_bin=${NATS_SERVER_BIN:-$(command -v nats-server || true)}
[ -z "$nats_bin" ] && [ -x /usr/sbin/nats-server ] && nats_bin=/usr/sbin/nats-server
if [ -z "$nats_bin" ] || [ ! -x "$nats_bin" ]; then
  echo "sdk-compat cluster: FAIL: nats-server (with JetStream) is not installed; install it with" \
    "\`scripts/setup.sh --test\` (Debian's nats-server) or set NATS_SERVER_BIN" >&2
  exit 1
fi
if [ ! -x "$relay_bin" ]; then
  echo "sdk-compat cluster: FAIL: no relay binary at $relay_bin (cargo build -p bridge-relay, or set BRIDGE_RELAY_BIN)" >&2
  exit 1
fi

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }

nats_port=$(free_port)
"$nats_bin" -a 127.0.0.1 -p "$nats_port" -js -sd "$work/nats" >"$work/nats.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
  (exec 3<>"/dev/tcp/127.0.0.1/$nats_port") 2>/dev/null && break
  sleep 0.1
done
if ! (exec 3<>"/dev/tcp/127.0.0.1/$nats_port") 2>/dev/null; then
  echo "sdk-compat cluster: FAIL: nats-server did not listen on $nats_port" >&2
  tail -20 "$work/nats.log" >&2
  exit 1
fi

token="sdkc_cluster_$(node -p 'require("crypto").randomBytes(24).toString("hex")')"
# Starts one relay and waits until it listens: its address in $addr.
relay() {
  local name=$1 role=$2
  mkdir -p "$work/$name"
  : >"$work/$name.out"
  BRIDGE_RELAY_TOKEN=$token BRIDGE_DEMO_SPEED=0 BRIDGE_DEMO_SCENARIO=default \
    "$relay_bin" --demo --bind 127.0.0.1:0 --data-dir "$work/$name" --cwd "$work/$name" \
    --nats "nats://127.0.0.1:$nats_port" --role "$role" --node-name "$name" \
    >"$work/$name.out" 2>"$work/$name.err" &
  pids+=($!)
  for _ in $(seq 300); do
    addr=$(sed -n 's/^listening on //p' "$work/$name.out")
    [ -n "$addr" ] && return
    sleep 0.1
  done
  echo "sdk-compat cluster: FAIL: relay $name ($role) did not listen" >&2
  tail -20 "$work/$name.err" >&2
  exit 1
}
relay host1 agents
relay gateway-a gateway
gw_a=$addr
relay gateway-b gateway
echo "sdk-compat cluster: nats 127.0.0.1:$nats_port, agents host1, gateways gateway-a ($gw_a) and gateway-b"

status=0
SDK_COMPAT_BASE_URL="http://$gw_a" SDK_COMPAT_TOKEN=$token ./run.sh "$@" || status=$?
if [ "$status" -ne 0 ]; then
  for f in host1 gateway-a; do
    echo "--- $f (stderr, tail) ---" >&2
    tail -30 "$work/$f.err" | sed "s/$token/<token>/g" >&2
  done
fi
exit "$status"
