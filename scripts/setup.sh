#!/usr/bin/env bash
# Installs what Bridge Console needs to build and test, idempotently: a second run skips what is there.
#   scripts/setup.sh            toolchain for building the console (wasm32 target, wasm-bindgen-cli, wasm-split-cli, binaryen's wasm-opt)
#   scripts/setup.sh --test     also Chromium + chromedriver, the e2e npm packages, the real Claude Code CLI and nats-server (scale-out tests)
#   scripts/setup.sh --dev      also trunk (for `trunk serve`, scripts/dev.sh; ~10 min to compile once)
#   scripts/setup.sh --fuzz     also cargo-fuzz (scripts/fuzz.sh)
set -euo pipefail
cd "$(dirname "$0")/.."

TRUNK_VERSION=0.21.14
WASM_BINDGEN_VERSION=$(awk '/^name = "wasm-bindgen"$/ {getline; gsub(/[^0-9.]/, ""); print; exit}' Cargo.lock)
want_test=0 want_dev=0 want_fuzz=0
for a in "$@"; do
  case "$a" in
    --test) want_test=1 ;;
    --dev) want_dev=1 ;;
    --fuzz) want_fuzz=1 ;;
    *) echo "usage: scripts/setup.sh [--test] [--dev] [--fuzz]" >&2; exit 2 ;;
  esac
done

say() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else echo "need root for: $*" >&2; return 1; fi; }

. scripts/env.sh
BINARYEN_VERSION=132

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "adding rust target wasm32-unknown-unknown"
  rustup target add wasm32-unknown-unknown
fi

# trunk is for `trunk serve` only (scripts/dev.sh installs it on first use): the demo, the install and
# the tests build the console with scripts/build-console.sh.
if [ $want_dev = 1 ] && ! trunk --version 2>/dev/null | grep -q "$TRUNK_VERSION"; then
  say "installing trunk $TRUNK_VERSION (compiles from source, ~10 min once)"
  cargo install trunk --version "$TRUNK_VERSION" --locked
fi

# The build tools are compiled once per machine, unoptimized: wasm-bindgen-cli then compiles in about
# 1 min instead of 5 (at opt-level 1 with its default TLS stack) and takes 1.6 s instead of 0.35 s on
# the console's 7 MB module (measured on this project's 2-core machines).
tool_profile=(env CARGO_PROFILE_RELEASE_OPT_LEVEL=0 CARGO_PROFILE_RELEASE_LTO=false
  CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 CARGO_PROFILE_RELEASE_DEBUG=false
  CARGO_PROFILE_RELEASE_INCREMENTAL=false)

if ! wasm-bindgen --version 2>/dev/null | grep -q "$WASM_BINDGEN_VERSION"; then
  say "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION (must equal Cargo.lock)"
  # not --locked: the registry mirror lags for one of its dependencies. No default features: they
  # are a TLS stack (ring, rustls) for downloading chromedriver, which the tests never ask it to do
  # (CHROMEDRIVER names Debian's; the runner talks to it over plain HTTP on 127.0.0.1).
  "${tool_profile[@]}" cargo install wasm-bindgen-cli --version "=$WASM_BINDGEN_VERSION" --no-default-features
fi

if ! wasm-opt --version 2>/dev/null | grep -q "version $BINARYEN_VERSION"; then
  say "installing binaryen $BINARYEN_VERSION (wasm-opt) from npm into $BRIDGE_CACHE/tools"
  mkdir -p "$BRIDGE_CACHE/tools"
  npm install --prefix "$BRIDGE_CACHE/tools" --no-audit --no-fund --loglevel=error "binaryen@$BINARYEN_VERSION"
fi

# wasm-split-cli (wasm_split_cli_support): cuts the console's wasm into a main module and lazily
# loaded chunks in scripts/build-console.sh. Its own binary, not a workspace member (its dependencies
# are not ours).
WASM_SPLIT_VERSION=0.2.4
if [ ! -x "$BRIDGE_CACHE/wasm-split/bin/wasm-split-cli" ] || [ "$(cat "$BRIDGE_CACHE/wasm-split/version" 2>/dev/null)" != "$WASM_SPLIT_VERSION" ]; then
  say "installing wasm-split-cli $WASM_SPLIT_VERSION into $BRIDGE_CACHE/wasm-split (~30 s once)"
  "${tool_profile[@]}" cargo install wasm_split_cli_support --version "=$WASM_SPLIT_VERSION" --locked --features build-binary \
    --root "$BRIDGE_CACHE/wasm-split"
  echo "$WASM_SPLIT_VERSION" > "$BRIDGE_CACHE/wasm-split/version"
fi

apt_pkgs=()
if [ $want_test = 1 ]; then
  command -v chromium >/dev/null || apt_pkgs+=(chromium)
  command -v chromedriver >/dev/null || apt_pkgs+=(chromium-driver)
  # The scale-out tests (crates/relay/tests/cluster.rs) start a NATS server with JetStream.
  command -v nats-server >/dev/null || [ -x /usr/sbin/nats-server ] || apt_pkgs+=(nats-server)
  # The real CLI run interactively (terminal sessions through hooks, crates/relay/tests/terminal_cli.rs).
  command -v tmux >/dev/null || apt_pkgs+=(tmux)
fi
if [ ${#apt_pkgs[@]} -gt 0 ]; then
  say "installing Debian packages: ${apt_pkgs[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${apt_pkgs[@]}"
fi

if [ $want_test = 1 ]; then
  if [ -f tests/e2e/package-lock.json ]; then
    stamp=tests/e2e/node_modules/.lock-stamp
    if [ ! -f "$stamp" ] || ! cmp -s tests/e2e/package-lock.json "$stamp"; then
      say "installing e2e npm packages"
      (cd tests/e2e && npm ci --no-audit --no-fund --loglevel=error)
      cp tests/e2e/package-lock.json "$stamp"
    fi
  fi
  if [ -x scripts/install-claude.sh ]; then
    scripts/install-claude.sh >/dev/null
  fi
fi
# cargo-fuzz for scripts/fuzz.sh (libFuzzer on stable Rust through RUSTC_BOOTSTRAP=1). The test run
# does not fuzz: it replays the committed corpus through the same targets (crates/relay's fuzz_corpus).
if [ $want_fuzz = 1 ] && ! cargo fuzz --version 2>/dev/null | grep -q "0.13.2"; then
  say "installing cargo-fuzz 0.13.2 (compiles from source, ~2 min once)"
  cargo install cargo-fuzz --version 0.13.2 --locked
fi
say "toolchain ready"
