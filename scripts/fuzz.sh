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
#   FUZZ_RUNS=10000000 nice -n 19 scripts/fuzz.sh 86400   each target until 10 million executions
#                                   (the campaign behind the closing note's figures; nice keeps it
#                                   to the CPU nobody else wants)
#
# Prints a table and exits non-zero on a crash, naming the input that reproduces it (run the target
# binary on that file to see it again). Columns: executions; exec/s over the whole run; the time
# spent loading the corpus (libFuzzer runs every corpus input first, and -max_total_time does not
# bound that) and exec/s after it (the fuzzing rate, what a long run gets); crashes; corpus units
# and files; the time 10 million executions take at the fuzzing rate.
#
# A long run keeps what it finds in $BRIDGE_CACHE/fuzz-corpus/<target>/. libFuzzer never deletes
# the files it loaded, so that folder grows with files that add nothing; when it holds more than
# 1.5 times the corpus, it is minimized (-merge=1) after the run so that the next run loads only
# what matters.
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
  echo "cargo-fuzz is missing: installing it (scripts/setup.sh --fuzz does this too)"
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
  "$bin_dir/$t" -max_total_time="$seconds" ${FUZZ_RUNS:+-runs="$FUZZ_RUNS"} -print_final_stats=1 \
    -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$art" "$work" "fuzz/corpus/$t" >"$logs/$t.log" 2>&1 || rc=$?
  echo "$rc" >"$logs/$t.rc"
}

# Shrinks a target's corpus folder to the inputs that add coverage (one pass over every file).
minimize() {
  local t=$1 work="$BRIDGE_CACHE/fuzz-corpus/$1" units=$2
  local files
  files=$(find "$work" -type f | wc -l)
  [ -n "$units" ] && [ "$files" -gt $((units * 3 / 2 + 50)) ] || return 0
  rm -rf "$work.min" && mkdir -p "$work.min"
  if "$bin_dir/$t" -merge=1 -timeout=10 -rss_limit_mb=2048 "$work.min" "$work" >"$logs/$t.merge.log" 2>&1; then
    rm -rf "$work" && mv "$work.min" "$work"
    echo "$t: corpus minimized, $files files -> $(find "$work" -type f | wc -l)"
  else
    rm -rf "$work.min"
    echo "$t: minimizing the corpus failed (see $logs/$t.merge.log); kept as it was"
  fi
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

table=$(
printf '%-14s %12s %8s %8s %10s %8s %8s %8s %10s\n' target executions exec/s load_s fuzz_ex/s crashes corpus files 10M_execs
for t in "${targets[@]}"; do
  log="$logs/$t.log"
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  # "#N INITED … exec/s: R" and "#M DONE … exec/s: S" (whole seconds): loading took N/R s, the
  # rest M-N executions in M/S - N/R s.
  read -r load fuzz_rate < <(awk '
    /INITED/ { for (i = 1; i < NF; i++) if ($i == "exec/s:") r = $(i + 1); n = substr($1, 2) }
    /DONE/ { for (i = 1; i < NF; i++) if ($i == "exec/s:") s = $(i + 1); m = substr($1, 2) }
    END {
      lt = (r > 0) ? n / r : 0; tt = (s > 0) ? m / s : 0
      fr = (tt - lt >= 1) ? (m - n) / (tt - lt) : 0
      printf "%d %d\n", lt, fr
    }' "$log")
  rc=$(cat "$logs/$t.rc" 2>/dev/null || echo '?')
  crashes=0
  if [ "$rc" != 0 ]; then crashes=1; fi
  units=$(grep -o 'corp: [0-9]*' "$log" | tail -1 | sed 's/corp: //')
  files=$(find "$BRIDGE_CACHE/fuzz-corpus/$t" -type f | wc -l)
  if [ "${fuzz_rate:-0}" -gt 0 ]; then
    need=$(awk -v r="$fuzz_rate" 'BEGIN { s = 1e7 / r; if (s < 3600) printf "%.0f min", s / 60; else printf "%.1f h", s / 3600 }')
  else
    need='?'
  fi
  printf '%-14s %12s %8s %8s %10s %8s %8s %8s %10s\n' "$t" "${execs:-?}" "${rate:-?}" "${load:-?}" \
    "${fuzz_rate:-?}" "$crashes" "${units:-?}" "$files" "$need"
done
)
crashed=0
for t in "${targets[@]}"; do
  [ "$(cat "$logs/$t.rc" 2>/dev/null || echo '?')" = 0 ] || crashed=1
done
if [ "$crashed" = 0 ]; then
  for t in "${targets[@]}"; do
    minimize "$t" "$(grep -o 'corp: [0-9]*' "$logs/$t.log" | tail -1 | sed 's/corp: //')"
  done
fi
printf '\n%s\n' "$table"
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
