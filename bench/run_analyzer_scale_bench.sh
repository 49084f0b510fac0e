#!/usr/bin/env bash
# Reproduces the analyzer scale figures in BENCHMARKS.md: years of nightly
# sweeps of a large cluster (node counts 1, 2, 4 ... max_nodes, 30 sizes,
# per-rank timings of the newest night) plus one night of port deltas for every
# node x 8 HCAs, in a private embedded PostgreSQL; then `fabtrack analyze` end
# to end (load, detect, report; --no-store, so that rounds judge the same
# thing) for the newest night and for the whole history (--since), `repeats`
# rounds each. Per case: the median wall time, the client's CPU (user + sys)
# and the server's (the postmaster's reaped backends), the load average, and
# the findings of the whole-history analysis (a healthy history: ideally 0).
#
# Usage: bench/run_analyzer_scale_bench.sh [repeats] [max_nodes] [nights]
#   issue 18's scale: bench/run_analyzer_scale_bench.sh 5 4096 1095
# Environment:
#   FABTRACK_BENCH_DATA_DIR=DIR  reuse an embedded server's directory holding
#     a generated history (cluster "scale") instead of generating one (the
#     4096 x 1095 history takes minutes); it is started if needed, migrated,
#     and left running.
#   Before the rounds each side stores one analysis (the nightly job's, which
#   keeps the summarised history of schema 014); the newest night with
#   summaries must find what --full-history finds.
#   FABTRACK_BENCH_OTHER=BIN      also time BIN (another fabtrack build) on
#     FABTRACK_BENCH_OTHER_DATA_DIR (a copy of the same history at that
#     build's schema), alternating the order every round.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
repeats=${1:-5}
max_nodes=${2:-1024}
nights=${3:-365}
bench_build fabtrack generate_history
fabtrack=$PWD/build/cli/fabtrack

if [[ -n ${FABTRACK_BENCH_DATA_DIR:-} ]]; then
  dir=$FABTRACK_BENCH_DATA_DIR
  "$fabtrack" db start --data-dir "$dir" >/dev/null 2>&1 || true
  db="host=$dir/run port=5432 dbname=fabtrack user=fabtrack"
  "$fabtrack" db migrate --db "$db" >/dev/null
else
  bench_database
  echo "generating: $nights nights, node counts 1..$max_nodes"
  /usr/bin/time -f "generated in %e s" build/bench/generate_history --db "$db" \
    --nights "$nights" --max-nodes "$max_nodes"
fi
psql "$db" -Atc "VACUUM ANALYZE" >/dev/null
out=$(mktemp -d /tmp/fabtrack-scale-bench-XXXXXX)
since=$(psql "$db" -Atc "SELECT to_char(min(started_at) AT TIME ZONE 'UTC', \
  'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') FROM runs WHERE cluster = 'scale'")

tck=$(getconf CLK_TCK)
# server_cpu DATA_DIR: CPU seconds of the server's exited backends so far.
server_cpu() { awk -v t="$tck" '{print ($16 + $17) / t}' "/proc/$(head -1 "$1/data/postmaster.pid")/stat"; }

# run_case BIN DATA_DIR LABEL [analyze args]: one timed analysis; appends
# "wall client server" to $out/LABEL. analyze exits 0/1/2 by severity; only 3
# (could not analyze) is a failure here.
run_case() {
  local bin=$1 data=$2 label=$3 s0 s1 rc=0
  shift 3
  local conn="host=$data/run port=5432 dbname=fabtrack user=fabtrack"
  s0=$(server_cpu "$data")
  /usr/bin/time -f "%e %U %S" -o "$out/time" "$bin" analyze --db "$conn" --cluster scale \
    --format json --no-store "$@" >"$out/$label.json" 2>"$out/err" || rc=$?
  sleep 0.3  # the backend exits after the client
  s1=$(server_cpu "$data")
  if ((rc == 3)); then cat "$out/err" >&2; exit 1; fi
  tail -1 "$out/time" | awk -v a="$s0" -v b="$s1" '{printf "%s %.2f %.2f\n", $1, $2 + $3, b - a}' \
    >>"$out/$label"
}
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
report() {
  local label=$1 f=$out/$1
  [[ -f $f ]] || return 0
  printf '%-22s wall %s s (%s)  client CPU %s s  server CPU %s s\n' "$label" \
    "$(cut -d' ' -f1 "$f" | median)" "$(cut -d' ' -f1 "$f" | paste -sd' ')" \
    "$(cut -d' ' -f2 "$f" | median)" "$(cut -d' ' -f3 "$f" | median)"
}

# The nightly job stores its analysis, and with it the per-run summaries of
# the history (schema 014) that the next night reads instead of every result
# row: one stored analysis of each side first (a build without summaries only
# stores findings), then the timed rounds with --no-store judge the same thing.
# This build's newest night is checked against its own --full-history run:
# the same findings, or the benchmark fails.
prepare() {
  local bin=$1 data=$2
  "$bin" analyze --db "host=$data/run port=5432 dbname=fabtrack user=fabtrack" --cluster scale \
    --format json >/dev/null 2>&1 || (($? < 3))
}
prepare "$fabtrack" "$dir"
[[ -n ${FABTRACK_BENCH_OTHER:-} ]] && prepare "$FABTRACK_BENCH_OTHER" "$FABTRACK_BENCH_OTHER_DATA_DIR"
for mode in summarised full; do
  extra=()
  [[ $mode == full ]] && extra=(--full-history)
  "$fabtrack" analyze --db "$db" --cluster scale --format json --no-store "${extra[@]}" \
    >"$out/check-$mode.json" 2>/dev/null || (($? < 3))
done
python3 -c "import json, sys
a, b = (json.load(open(p))['findings'] for p in sys.argv[1:3])
sys.exit(0 if a == b else 'newest night: summarised and full findings differ')" \
  "$out/check-summarised.json" "$out/check-full.json"
echo "newest night: summarised and full-history findings identical"

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((i = 0; i < repeats; i++)); do
  sides=(this)
  if [[ -n ${FABTRACK_BENCH_OTHER:-} ]]; then
    if ((i % 2)); then sides=(other this); else sides=(this other); fi
  fi
  for side in "${sides[@]}"; do
    if [[ $side == this ]]; then
      bin=$fabtrack data=$dir
    else
      bin=$FABTRACK_BENCH_OTHER data=$FABTRACK_BENCH_OTHER_DATA_DIR
    fi
    run_case "$bin" "$data" "$side-newest-night"
    run_case "$bin" "$data" "$side-full" --since "$since"
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
for label in this-newest-night this-full other-newest-night other-full; do report "$label"; done
for side in this other; do
  [[ -f $out/$side-full.json ]] || continue
  python3 -c "import collections, json, sys
f = json.load(open(sys.argv[1]))['findings']
print(sys.argv[2], 'findings on the whole history:', len(f),
      dict(collections.Counter(x['kind'] + '/' + x['severity'] for x in f)))" \
    "$out/$side-full.json" "$side"
done
rm -rf "$out"
