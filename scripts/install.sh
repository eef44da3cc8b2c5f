#!/usr/bin/env bash
# Installs bridge-relay as one self-contained file: the release console (the split build users get,
# scripts/build-console.sh) is built into the binary, so it serves the console from any directory
# with nothing beside it.
#
#   scripts/install.sh                 -> ~/.local/bin/bridge-relay
#   scripts/install.sh --root DIR      -> DIR/bin/bridge-relay
#
# Upgrade: pull, run it again (the running relay keeps the old file open; restart it, or
# `systemctl --user restart bridge-relay` when it runs as a service: `bridge-relay service install`).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$HOME/.local"
while [ $# -gt 0 ]; do
  case "$1" in
    --root) root=${2:?--root needs a directory}; shift 2 ;;
    --root=*) root=${1#--root=}; shift ;;
    *) echo "usage: scripts/install.sh [--root DIR]" >&2; exit 2 ;;
  esac
done
. scripts/env.sh
say() { printf '\033[1m[install]\033[0m %s\n' "$*"; }

scripts/setup.sh
# The console is built outside the checkout's dist/ so that an install never picks up a stale one.
console="${CARGO_TARGET_DIR:-$PWD/target}/install-console"
scripts/build-console.sh "$console"
say "cargo build --release -p bridge-relay (console built in from $console)"
BRIDGE_CONSOLE_DIR="$console" cargo build --release --locked -q -p bridge-relay
bin="${CARGO_TARGET_DIR:-$PWD/target}/release/bridge-relay"
mkdir -p "$root/bin"
install -m 0755 "$bin" "$root/bin/bridge-relay.new"
mv -f "$root/bin/bridge-relay.new" "$root/bin/bridge-relay"
say "installed $root/bin/bridge-relay: $("$root/bin/bridge-relay" --version)"
case ":$PATH:" in *":$root/bin:"*) ;; *) say "note: $root/bin is not on PATH" ;; esac
say "run it: bridge-relay --token-file ~/.bridge-token --cwd ~/src/my-project   (README: Install)"
