#!/usr/bin/env bash
# Builds the console as the relay serves it, split into a main wasm module and lazily loaded chunks
# (issue 12; src/lazy.rs says which parts are lazy). `trunk serve` stays the development server (no
# split there); this replaces `trunk build --release` for what users get.
#
#   scripts/build-console.sh [OUT_DIR]     (default dist/)
#
# Steps (the sequence cargo-leptos uses for `--split`):
#  1. cargo builds the console for wasm32 with the `split` feature; only the final link gets
#     `--emit-relocs` (passed to rustc for the binary alone, so dependencies stay shared with Trunk's
#     build and .cargo/config.toml's rustflags still apply);
#  2. wasm-split-cli (wasm_split_cli_support, installed by scripts/setup.sh) cuts the module at the
#     `#[wasm_split]` entry points: a main module, one .wasm per chunk and __wasm_split.js (the loader);
#  3. wasm-bindgen --target web --keep-lld-exports on the main module, then wasm-opt -Oz on every .wasm;
#  4. OUT_DIR gets index.html (Trunk's page with an inline module script that starts the console),
#     the styles, icons, manifest and sw.js (its precache list from scripts/sw-precache.sh). The wasm
#     and JS live in console-<hash>/ so they import each other by relative name and a new build gets
#     new URLs.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh

out=${1:-dist}
target_dir=${CARGO_TARGET_DIR:-target}
split_cli="$BRIDGE_CACHE/wasm-split/bin/wasm-split-cli"
wasm_opt_flags=(-Oz --enable-reference-types --enable-bulk-memory --enable-nontrapping-float-to-int
  --enable-sign-ext --enable-mutable-globals --enable-multivalue)

say() { printf '\033[1m[build-console]\033[0m %s\n' "$*"; }
[ -x "$split_cli" ] || { echo "build-console: $split_cli is missing: run scripts/setup.sh" >&2; exit 1; }

say "cargo (wasm-release, feature split, --emit-relocs)"
cargo rustc --quiet --target wasm32-unknown-unknown --profile wasm-release --bin bridge-console \
  --features split -- -Clink-args=--emit-relocs
raw="$target_dir/wasm32-unknown-unknown/wasm-release/bridge-console.wasm"

# Nothing changed since the last build into OUT_DIR (same wasm, page, styles, icons and scripts):
# keep it as it is — its files keep their times, so a relay that carries it is not rebuilt.
stamp_file="$target_dir/console-build.stamp"
stamp=$( { echo "$out"; cat "$raw" index.html scripts/build-console.sh scripts/sw-precache.sh; \
  find www -type f | LC_ALL=C sort | xargs cat; } | sha256sum | cut -c1-64)
if [ -f "$out/index.html" ] && [ "$(cat "$stamp_file" 2>/dev/null)" = "$stamp" ]; then
  say "$out is up to date"
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/pkg" "$work/stage"

say "wasm-split"
"$split_cli" --target web --out-name bridge-console "$raw" "$work/pkg" >/dev/null
say "wasm-bindgen"
wasm-bindgen --target web --keep-lld-exports --no-demangle --out-dir "$work/pkg" \
  --out-name bridge-console "$work/pkg/bridge-console.wasm"
rm "$work/pkg/bridge-console.wasm"
rm -f "$work/pkg"/*.d.ts
say "wasm-opt"
# (wasm-split writes a name subsection binaryen does not know — one warning per part — and wasm-opt
# drops names anyway: no `-g`.)
for w in "$work/pkg"/*.wasm; do
  wasm-opt "${wasm_opt_flags[@]}" "$w" -o "$w" 2> >(grep -v 'unknown name subsection' >&2)
done

hash=$(cd "$work/pkg" && LC_ALL=C ls | xargs sha256sum | sha256sum | cut -c1-16)
pkg="console-$hash"
stage="$work/stage"
cp -r "$work/pkg" "$stage/$pkg"
css_hash=$(sha256sum www/styles.css | cut -c1-16)
cp www/styles.css "$stage/styles-$css_hash.css"
cp -r www/icons "$stage/icons"
cp www/manifest.webmanifest www/sw.js "$stage/"

# The dialogs part's files (its own and the chunks it shares, as the loader lists them): preloaded
# by window.__bridgeBoot when the page's boot data holds prompts the session it opens waits on
# (index.html's boot scripts call it once that data is in the page; issue 29, prompt first).
dialog_files=$(node - "$work/pkg/__wasm_split.js" <<'NODE'
const s = require('fs').readFileSync(process.argv[2], 'utf8');
const out = [];
for (const m of s.matchAll(/\/\* ([^*]*) \*\/\s*const __chunk_(\d+) = makeLoad/g)) {
  if (m[1].split(', ').includes('dialogs')) out.push(`"chunk_${m[2]}.wasm"`);
}
if (!s.includes('"./split_dialogs.wasm"')) throw new Error('no split_dialogs.wasm in the loader');
out.push('"split_dialogs.wasm"');
console.log(out.join(','));
NODE
)
boot_script="<script>window.__bridgeBoot=function(){var w=window,d=document,b=d.getElementById(\"boot-data\");if(w.__bridgeDialogs||!b||location.pathname.indexOf(\"/s/\")!==0||b.textContent.indexOf('\"prompts\":')<0)return;w.__bridgeDialogs=1;[$dialog_files].forEach(function(f){var l=d.createElement(\"link\");l.rel=\"preload\";l.as=\"fetch\";l.crossOrigin=\"anonymous\";l.href=\"/$pkg/\"+f;d.head.appendChild(l)})};</script>"

# index.html: Trunk's directives out, the stylesheet, preloads and the start script in.
start_script="<script type=\"module\">
import init from '/$pkg/bridge-console.js';
await init({ module_or_path: '/$pkg/bridge-console_bg.wasm' });
</script>"
awk -v css="/styles-$css_hash.css" -v pkg="/$pkg" -v start="$start_script" -v boot="$boot_script" '
  /<link data-trunk rel="rust"/ || /<link data-trunk rel="copy-/ { next }
  /<link data-trunk rel="css"/ { print "    <link rel=\"stylesheet\" href=\"" css "\" />"; next }
  /<\/head>/ {
    print "    <link rel=\"modulepreload\" href=\"" pkg "/bridge-console.js\" />"
    print "    <link rel=\"preload\" href=\"" pkg "/bridge-console_bg.wasm\" as=\"fetch\" type=\"application/wasm\" crossorigin=\"anonymous\" />"
    print "    " boot
    print "    " start
  }
  { print }
' index.html > "$stage/index.html"
grep -q 'data-trunk' "$stage/index.html" && { echo "build-console: index.html still holds a Trunk directive" >&2; exit 1; }

TRUNK_STAGING_DIR="$stage" sh scripts/sw-precache.sh

# 5. Brotli (quality 11) and gzip (-9) copies beside every text-like file of 1 KB or more
#    (NAME.br, NAME.gz): the relay serves them as they are — read from here with --static-dir, or
#    built into the binary (scripts/install.sh) — and never compresses at run time. Node's zlib has
#    both; the sums above are of the files themselves.
say "brotli + gzip copies"
node - "$stage" <<'NODE'
const fs = require('fs'), path = require('path'), zlib = require('zlib');
const walk = (d) => fs.readdirSync(d, { withFileTypes: true }).flatMap((e) =>
  e.isDirectory() ? walk(path.join(d, e.name)) : e.isFile() ? [path.join(d, e.name)] : []);
let raw = 0, br = 0;
for (const f of walk(process.argv[2])) {
  if (!/\.(wasm|js|mjs|css|html|svg|json|webmanifest|txt)$/.test(f)) continue;
  const data = fs.readFileSync(f);
  if (data.length < 1024) continue;
  const b = zlib.brotliCompressSync(data, { params: {
    [zlib.constants.BROTLI_PARAM_QUALITY]: 11,
    [zlib.constants.BROTLI_PARAM_LGWIN]: 22,
    [zlib.constants.BROTLI_PARAM_SIZE_HINT]: data.length } });
  fs.writeFileSync(f + '.br', b);
  fs.writeFileSync(f + '.gz', zlib.gzipSync(data, { level: 9 }));
  raw += data.length; br += b.length;
}
console.log(`[build-console] compressed ${raw} bytes to ${br} (brotli)`);
NODE

rm -rf "$out"
mkdir -p "$(dirname "$out")"
cp -r "$stage" "$out"

echo "$stamp" > "$stamp_file"
say "$out (raw and gzip -9 bytes):"
scripts/console-sizes.sh "$out" "split build ($out)"
