# Sourced by the scripts: where the tools that scripts/setup.sh installs live.
export BRIDGE_CACHE="${BRIDGE_CACHE:-$HOME/.cache/bridge-console}"
# binaryen's wasm-opt from npm (version 132): Debian bookworm's binaryen 108 corrupts the externref
# table that wasm-bindgen 0.2.130 emits, so Trunk.toml pins version_132 and this one comes first on PATH.
export PATH="$BRIDGE_CACHE/tools/node_modules/.bin:$HOME/.cargo/bin:$PATH"
