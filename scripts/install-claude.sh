#!/usr/bin/env bash
# Install the real Claude Code CLI (native linux-x64 build) into a cache outside the repository and print the
# path of its binary on stdout (the only line written to stdout).
#
#   scripts/install-claude.sh            # pinned version (2.1.332)
#   scripts/install-claude.sh latest     # whatever the npm registry calls latest (non-blocking CI job)
#   scripts/install-claude.sh 2.1.340    # any published version
#
# Cache: ${BRIDGE_CACHE:-$HOME/.cache/bridge-console}/claude/<version>/ (idempotent: an existing binary is reused).
# The npm package @anthropic-ai/claude-code-linux-x64 ships the ELF binary itself (about 400 MB unpacked);
# `npm pack` fetches the tarball through the ordinary npm client, no install scripts are run.
set -euo pipefail

PKG="@anthropic-ai/claude-code-linux-x64"
PINNED="2.1.332"
want="${1:-${CLAUDE_VERSION:-$PINNED}}"
cache_root="${BRIDGE_CACHE:-$HOME/.cache/bridge-console}/claude"

log() { printf '%s\n' "install-claude: $*" >&2; }

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) ;;
  *) log "only linux-x64 is supported here (got $(uname -s)-$(uname -m))"; exit 2 ;;
esac

if [ "$want" = "latest" ]; then
  # Resolve "latest" to a concrete version so the cache is keyed by a real version number.
  want="$(npm view "$PKG" version 2>/dev/null | tail -n 1 | tr -d '[:space:]')"
  if [ -z "$want" ]; then log "could not resolve the latest version of $PKG"; exit 1; fi
  log "latest $PKG is $want"
fi
case "$want" in
  *[!0-9A-Za-z.+-]*|"") log "refusing odd version string: '$want'"; exit 2 ;;
esac

dir="$cache_root/$want"
find_bin() {
  # The package layout is package/claude (2.1.x); fall back to any executable named claude*.
  local d="$1"
  if [ -x "$d/package/claude" ]; then printf '%s\n' "$d/package/claude"; return 0; fi
  local f
  f="$(find "$d/package" -maxdepth 3 -type f -name 'claude*' -perm -u+x 2>/dev/null | head -n 1 || true)"
  if [ -n "$f" ]; then printf '%s\n' "$f"; return 0; fi
  return 1
}

if [ -f "$dir/.complete" ] && bin="$(find_bin "$dir")"; then
  printf '%s\n' "$bin"
  exit 0
fi

command -v npm >/dev/null || { log "npm is required (apt-get install -y nodejs npm)"; exit 1; }
mkdir -p "$cache_root"
tmp="$(mktemp -d "$cache_root/.tmp-$want-XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

log "downloading $PKG@$want (about 190 MB, once) into $dir"
( cd "$tmp" && npm pack --silent "$PKG@$want" >/dev/null )
tgz="$(ls "$tmp"/*.tgz 2>/dev/null | head -n 1 || true)"
[ -n "$tgz" ] || { log "npm pack produced no tarball"; exit 1; }
mkdir -p "$tmp/out"
tar -xzf "$tgz" -C "$tmp/out"
rm -f "$tgz"
bin_rel="$(find_bin "$tmp/out")" || { log "no claude binary inside $PKG@$want"; exit 1; }
chmod +x "$bin_rel"
touch "$tmp/out/.complete"
rm -rf "$dir"
mv "$tmp/out" "$dir"
bin="$(find_bin "$dir")"
log "installed $("$bin" --version 2>/dev/null || echo "$PKG@$want")"
printf '%s\n' "$bin"
