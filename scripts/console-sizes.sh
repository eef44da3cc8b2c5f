#!/usr/bin/env bash
# Prints the size of a console build (issue 12): every file the browser may fetch — index.html, the
# stylesheet, the JS and every .wasm — raw and gzip -9, then two sums:
#   before the list  what a first load fetches before the session list can show: everything but the
#                    lazily loaded parts (split_*.wasm) and the chunks they share (chunk_*.wasm);
#   whole app        every file above.
# Icons, the manifest and sw.js are left out (small, not on the first paint's path).
#
#   scripts/console-sizes.sh DIR [LABEL]     (DIR: a `trunk build` or `scripts/build-console.sh` output)
set -euo pipefail
dir=${1:?usage: console-sizes.sh DIR [LABEL]}
label=${2:-$dir}

files=$(cd "$dir" && find . -type f \( -name '*.wasm' -o -name '*.js' -o -name '*.css' -o -name index.html \) \
  ! -name sw.js | sed 's|^\./||' | LC_ALL=C sort)
echo "-- $label"
printf '  %-58s %10s %10s\n' file raw gzip-9
raw_all=0 gz_all=0 raw_first=0 gz_first=0
for f in $files; do
  raw=$(wc -c <"$dir/$f")
  gz=$(gzip -9c "$dir/$f" | wc -c)
  lazy=
  case "$(basename "$f")" in split_*.wasm | chunk_*.wasm) lazy=' (lazy)' ;; esac
  printf '  %-58s %10d %10d%s\n' "$f" "$raw" "$gz" "$lazy"
  raw_all=$((raw_all + raw)) gz_all=$((gz_all + gz))
  if [ -z "$lazy" ]; then raw_first=$((raw_first + raw)) gz_first=$((gz_first + gz)); fi
done
printf '  %-58s %10d %10d   (goal <= 240000 gzip, stretch 200000)\n' "sum before the list" "$raw_first" "$gz_first"
printf '  %-58s %10d %10d   (goal <= 640000 gzip)\n' "whole app" "$raw_all" "$gz_all"
