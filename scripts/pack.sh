#!/usr/bin/env bash
# Builds the JS client package `bridge-console-client` into pkg/ (see pkg/README.md):
# crates/client for wasm32 with the workspace's `wasm-release` profile (opt-level z, LTO), then
# wasm-bindgen --target web (an ES module: the JS glue, the .wasm and a .d.ts with every method and
# the CLI's message union), wasm-opt -Oz, and a package.json with the workspace's version.
# Prints the .wasm size, raw and gzipped, and fails above 120 KB gzipped.
#
#   scripts/pack.sh            build pkg/
#   scripts/pack.sh --tarball  also run `npm pack` in pkg/ (prints the .tgz path)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$BRIDGE_CACHE/target}"

NAME=bridge_console_client
GZIP_LIMIT=$((120 * 1024))
# The root package's version, which the workspace's crates share.
version=$(awk '/^\[package\]/ {p = 1; next} /^\[/ {p = 0} p && /^version *=/ {gsub(/"/, "", $3); print $3; exit}' Cargo.toml)
[ -n "$version" ] || { echo "pack: no [package] version in Cargo.toml" >&2; exit 1; }
want_bindgen=$(awk '/^name = "wasm-bindgen"$/ {getline; gsub(/[^0-9.]/, ""); print; exit}' Cargo.lock)
if ! wasm-bindgen --version 2>/dev/null | grep -q "$want_bindgen"; then
  echo "pack: wasm-bindgen $want_bindgen is needed (run scripts/setup.sh)" >&2; exit 1
fi
if ! wasm-opt --version 2>/dev/null | grep -q "version 132"; then
  echo "pack: binaryen's wasm-opt 132 is needed (run scripts/setup.sh)" >&2; exit 1
fi

cargo build --target wasm32-unknown-unknown -p bridge-console-client --profile wasm-release
wasm="$CARGO_TARGET_DIR/wasm32-unknown-unknown/wasm-release/$NAME.wasm"

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
wasm-bindgen --target web --out-dir "$out" --out-name "$NAME" "$wasm"
# The same features as the console's build (index.html); Debian's older wasm-opt breaks this output.
wasm-opt -Oz --enable-reference-types --enable-bulk-memory --enable-nontrapping-float-to-int \
  --enable-sign-ext --enable-mutable-globals --enable-multivalue \
  "$out/${NAME}_bg.wasm" -o "$out/${NAME}_bg.wasm"

# Exported classes have a `[Symbol.dispose]()`: name the lib that types it, so that the .d.ts checks
# under any `lib` setting (TypeScript 5.2+).
sed -i '1i /// <reference lib="esnext.disposable" />' "$out/$NAME.d.ts"

cat >"$out/package.json" <<JSON
{
  "name": "bridge-console-client",
  "version": "$version",
  "description": "Bridge Console's client without the UI: connect to a Bridge relay's Claude Code sessions from a page or Node (lossless reconnect and resume, dedup, outbox), send prompts, answer permission prompts.",
  "license": "MIT OR Apache-2.0",
  "type": "module",
  "main": "./$NAME.js",
  "types": "./$NAME.d.ts",
  "exports": {
    ".": {
      "types": "./$NAME.d.ts",
      "node": "./node.js",
      "default": "./$NAME.js"
    },
    "./${NAME}_bg.wasm": "./${NAME}_bg.wasm",
    "./package.json": "./package.json"
  },
  "files": ["$NAME.js", "$NAME.d.ts", "${NAME}_bg.wasm", "${NAME}_bg.wasm.d.ts", "node.js", "README.md"],
  "sideEffects": false,
  "engines": { "node": ">=20" },
  "keywords": ["claude-code", "stream-json", "sse", "websocket", "wasm"]
}
JSON

# Replace only what this script makes: pkg/ also holds committed files (README.md, node.js) and
# other tools' output (pkg/bench/).
mkdir -p pkg
rm -f pkg/$NAME.js pkg/$NAME.d.ts pkg/${NAME}_bg.wasm pkg/${NAME}_bg.wasm.d.ts pkg/package.json pkg/bridge-console-client-*.tgz
cp "$out"/$NAME.js "$out"/$NAME.d.ts "$out"/${NAME}_bg.wasm "$out"/${NAME}_bg.wasm.d.ts "$out"/package.json pkg/

raw=$(wc -c <"pkg/${NAME}_bg.wasm")
gz=$(gzip -9 -c "pkg/${NAME}_bg.wasm" | wc -c)
awk -v n="$NAME" -v raw="$raw" -v gz="$gz" -v lim="$GZIP_LIMIT" 'BEGIN {
  printf "pack: pkg/%s_bg.wasm: %d bytes, %d bytes gzipped (%.1f KB of the %d KB limit)\n", n, raw, gz, gz / 1024, lim / 1024 }'
if [ "$gz" -gt "$GZIP_LIMIT" ]; then
  echo "pack: the gzipped wasm is over the ${GZIP_LIMIT}-byte budget" >&2
  exit 1
fi
echo "pack: pkg/ holds bridge-console-client $version"

if [ "${1:-}" = "--tarball" ]; then
  (cd pkg && npm pack --silent)
fi
