#!/usr/bin/env bash
# Coverage-guided fuzzing (cargo-fuzz / libFuzzer on stable Rust through RUSTC_BOOTSTRAP=1) of the
# NDJSON framer and decoders, the SSE parser, the envelope decoder, the console's partial-JSON
# repair and markdown renderer, and the relay's HTTP handlers. Targets live in fuzz/ (its own
# workspace); seeds in fuzz/corpus/<target>/ (committed, small); what a run discovers goes to
# $BRIDGE_CACHE/fuzz-corpus/<target>/ and crashes to $BRIDGE_CACHE/fuzz-artifacts/<target>/.
#
#   scripts/fuzz.sh                 every target for 20 s (what scripts/test.sh runs)
#   scripts/fuzz.sh 600             every target for 10 minutes
#   scripts/fuzz.sh 60 sse ndjson   some targets
#   FUZZ_PARALLEL=2 scripts/fuzz.sh 600    two targets at a time
#
# Prints a table (target, executions, exec/s, crashes, corpus size) and exits non-zero on a crash,
# naming the input that reproduces it (run the target binary on that file to see it again).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh

seconds="${1:-20}"
shift || true
all=(ndjson sse envelope partial_json markdown relay_http)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")
parallel="${FUZZ_PARALLEL:-1}"

export RUSTC_BOOTSTRAP=1 CARGO_TERM_COLOR=never
export CARGO_TARGET_DIR="$BRIDGE_CACHE/fuzz-target"
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "cargo-fuzz is missing: installing it (scripts/setup.sh --test does this too)"
  cargo install cargo-fuzz --version 0.13.2 --locked
fi

# Release with debug assertions (overflow checks on); no sanitizer: the code under test is safe
# Rust, and ASan would halve the executions.
mkdir -p "$BRIDGE_CACHE/fuzz-logs"
if ! (cd fuzz && cargo fuzz build -a --sanitizer none) >"$BRIDGE_CACHE/fuzz-logs/build.log" 2>&1; then
  grep -Ev '^\s*(Compiling|Blocking)' "$BRIDGE_CACHE/fuzz-logs/build.log" | tail -40
  echo "building the fuzz targets failed" >&2
  exit 1
fi
triple=$(rustc -vV | sed -n 's/^host: //p')
bin_dir="$CARGO_TARGET_DIR/$triple/release"
for t in "${targets[@]}"; do
  [ -x "$bin_dir/$t" ] || { echo "fuzz target $t was not built" >&2; exit 1; }
done

# Each run its own logs: two runs at once (a long local run and a CI run) must not read each other's.
logs=$(mktemp -d "$BRIDGE_CACHE/fuzz-logs/run.XXXXXX")
run_one() {
  local t=$1 work="$BRIDGE_CACHE/fuzz-corpus/$1" art="$BRIDGE_CACHE/fuzz-artifacts/$1/"
  mkdir -p "$work" "$art"
  # The first corpus directory receives what the run finds; the committed seeds are read only.
  local rc=0
  "$bin_dir/$t" -max_total_time="$seconds" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$art" "$work" "fuzz/corpus/$t" >"$logs/$t.log" 2>&1 || rc=$?
  echo "$rc" >"$logs/$t.rc"
}

started=$(date +%s)
running=0
for t in "${targets[@]}"; do
  rm -f "$logs/$t.rc"
  run_one "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$parallel" ]; then wait -n || true; running=$((running - 1)); fi
done
wait || true

printf '\n%-14s %14s %10s %8s %8s\n' target executions exec/s crashes corpus
crashed=0
for t in "${targets[@]}"; do
  log="$logs/$t.log"
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  rc=$(cat "$logs/$t.rc" 2>/dev/null || echo '?')
  crashes=0
  if [ "$rc" != 0 ]; then crashes=1; crashed=1; fi
  corpus=$(find "$BRIDGE_CACHE/fuzz-corpus/$t" -type f | wc -l)
  printf '%-14s %14s %10s %8s %8s\n' "$t" "${execs:-?}" "${rate:-?}" "$crashes" "$corpus"
done
echo "($seconds s per target, $parallel at a time, $(( $(date +%s) - started )) s in all)"
if [ "$crashed" = 1 ]; then
  for t in "${targets[@]}"; do
    if [ "$(cat "$logs/$t.rc" 2>/dev/null)" != 0 ]; then
      echo; echo "== $t failed (exit $(cat "$logs/$t.rc" 2>/dev/null)); the end of $logs/$t.log:"
      grep -v '^#' "$logs/$t.log" | tail -30
      ls -1 "$BRIDGE_CACHE/fuzz-artifacts/$t/" 2>/dev/null | sed "s|^|  reproduce: $bin_dir/$t $BRIDGE_CACHE/fuzz-artifacts/$t/|"
    fi
  done
  exit 1
fi
