#!/usr/bin/env bash
# Writes webdriver.json, the headless Chromium options wasm-bindgen-test-runner reads from the directory
# cargo runs it in (each crate's own), into the crates with browser tests — or into the directories given.
# Used by scripts/test.sh (wasm tests) and scripts/bench.sh (the console's browser benchmark); the files
# are generated, not committed (.gitignore).
#
#   scripts/webdriver-json.sh            the console, protocol, dedup and transport crates
#   scripts/webdriver-json.sh DIR...     those directories (relative to the repository root)
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || set -- . crates/protocol crates/dedup crates/transport
for dir in "$@"; do
  cat >"$dir/webdriver.json" <<'JSON'
{
  "goog:chromeOptions": {
    "binary": "/usr/bin/chromium",
    "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync"]
  }
}
JSON
done
