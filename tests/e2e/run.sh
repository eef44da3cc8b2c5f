#!/usr/bin/env bash
# Run the Playwright end-to-end suite. Prerequisites (built by the project's test command):
#   target/debug/bridge-relay, target/debug/bridge-fake-model (cargo build -p bridge-relay -p bridge-fake-model)
#   dist/ (the console, scripts/build-console.sh), /usr/bin/chromium (apt-get install -y chromium)
# The real Claude Code CLI is installed on first use by scripts/install-claude.sh (cached outside the repo).
#
#   tests/e2e/run.sh                          # every flow, demo + real backends, desktop + phone
#   E2E_BACKENDS=demo tests/e2e/run.sh        # demo agent only (no download)
#   tests/e2e/run.sh --project real-desktop -g "flow 02"
#   CLAUDE_BIN=$(scripts/install-claude.sh latest) E2E_BACKENDS=real tests/e2e/run.sh   # another CLI version
#
# Artefacts: tests/e2e/artifacts/{screenshots,logs,junit.xml}; traces of failures in tests/e2e/test-results/.
set -euo pipefail
cd "$(dirname "$0")"
if [ ! -f node_modules/@playwright/test/package.json ]; then
  PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error
fi
exec npx playwright test "$@"
