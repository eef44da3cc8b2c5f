#!/usr/bin/env bash
# The Playwright flows of the real-CLI projects against the newest published Claude Code CLI, when
# it differs from the pinned one (2.1.332, what scripts/test.sh runs). Not part of the test run: it
# depends on what npm publishes today. Run it at every stop and report it in the closing note.
#   scripts/test-latest-cli.sh     (after scripts/test.sh, which builds what it needs)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$BRIDGE_CACHE/target}"
export BRIDGE_RELAY_BIN="${BRIDGE_RELAY_BIN:-$CARGO_TARGET_DIR/debug/bridge-relay}"
export BRIDGE_FAKE_MODEL_BIN="${BRIDGE_FAKE_MODEL_BIN:-$CARGO_TARGET_DIR/debug/bridge-fake-model}"
latest_bin=$(scripts/install-claude.sh latest 2>/dev/null || true)
pinned_bin=$(scripts/install-claude.sh)
if [ -z "$latest_bin" ]; then
  echo "the latest CLI could not be installed (registry unreachable?)" >&2
  exit 1
fi
if [ "$latest_bin" = "$pinned_bin" ]; then
  echo "the latest published CLI is the pinned one: nothing more to run"
  exit 0
fi
echo "e2e against the latest CLI ($latest_bin)"
CLAUDE_BIN="$latest_bin" E2E_BACKENDS=real exec tests/e2e/run.sh --project real-desktop --project real-phone "$@"
