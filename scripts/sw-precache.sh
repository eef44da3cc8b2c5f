#!/bin/sh
# Trunk post_build hook (see Trunk.toml): writes the service worker's precache list and build id.
#
# Lists every file Trunk staged for dist/ (hashed .wasm / .js / .css, index.html, icons, manifest;
# not sw.js itself), and writes into the staged sw.js
#   self.__PRECACHE = ["/index.html", "/bridge-console-<hash>.js", ...];
#   const BUILD_ID = '<first 16 hex digits of the SHA-256 of every listed file's SHA-256>';
# so a new build means new sw.js bytes: browsers install it in the background and the console offers
# "New version — reload". The list is never written by hand.
set -eu

dir="${TRUNK_STAGING_DIR:?run by trunk as a post_build hook (TRUNK_STAGING_DIR is not set)}"
sw="$dir/sw.js"
[ -f "$sw" ] || { echo "sw-precache: $sw is missing (index.html must copy www/sw.js)" >&2; exit 1; }
grep -q '^self.__PRECACHE = \[\];$' "$sw" || { echo "sw-precache: no 'self.__PRECACHE = [];' line in $sw" >&2; exit 1; }
grep -q "__BUILD_ID__" "$sw" || { echo "sw-precache: no __BUILD_ID__ placeholder in $sw" >&2; exit 1; }

files=$(cd "$dir" && find . -type f ! -name sw.js ! -name '*.map' | sed 's|^\./||' | LC_ALL=C sort)
[ -n "$files" ] || { echo "sw-precache: $dir holds no files" >&2; exit 1; }

list=""
for f in $files; do
  case "$f" in
    *[!A-Za-z0-9._/-]*) echo "sw-precache: unexpected file name '$f'" >&2; exit 1 ;;
  esac
  list="$list${list:+, }\"/$f\""
done
build_id=$(cd "$dir" && printf '%s\n' $files | xargs sha256sum | sha256sum | cut -c1-16)

tmp="$sw.tmp"
sed -e "s|^self.__PRECACHE = \[\];\$|self.__PRECACHE = [$list];|" -e "s|__BUILD_ID__|$build_id|" "$sw" > "$tmp"
mv "$tmp" "$sw"
count=$(printf '%s\n' $files | wc -l | tr -d ' ')
echo "sw-precache: $count files, build $build_id"
