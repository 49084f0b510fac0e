#!/usr/bin/env bash
# Reproduces the analyzer scale figures in BENCHMARKS.md: a year of nightly
# sweeps of a 1024-node cluster (node counts 1..1024, 30 sizes, per-rank
# timings of the newest night) plus one night of port deltas for 1024 nodes x 8
# HCAs, in a private embedded PostgreSQL; then `fabtrack analyze` end to end
# (load, detect, store findings) for the newest night and for the whole year.
# Usage: bench/run_analyzer_scale_bench.sh [repeats] [max_nodes] [nights]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
repeats=${1:-5}
max_nodes=${2:-1024}
nights=${3:-365}
bench_build fabtrack generate_history
bench_database
echo "generating: $nights nights, node counts 1..$max_nodes"
/usr/bin/time -f "generated in %e s" build/bench/generate_history --db "$db" --nights "$nights" \
  --max-nodes "$max_nodes"
psql "$db" -Atc "VACUUM ANALYZE" >/dev/null
year_ago=$(date -u -d "-$((nights + 1)) days" +%Y-%m-%dT%H:%M:%SZ)

# analyze exits 0/1/2 by severity; only 3 (could not analyze) is a failure here.
time_analyze() {
  local start end rc
  start=$(date +%s%N)
  rc=0
  build/cli/fabtrack analyze --db "$db" --cluster scale --format json "$@" >"$dir/out.json" \
    2>"$dir/err" || rc=$?
  end=$(date +%s%N)
  if ((rc == 3)); then cat "$dir/err" >&2; exit 1; fi
  awk -v ns=$((end - start)) 'BEGIN {printf "%.3f\n", ns / 1e9}'
}
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

new=()
full=()
for ((i = 0; i < repeats; i++)); do
  new+=("$(time_analyze)")
  full+=("$(time_analyze --since "$year_ago")")
done
findings=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['findings']))" "$dir/out.json")
echo "newest night:     median $(printf '%s\n' "${new[@]}" | median) s over $repeats runs (${new[*]})"
echo "full re-analysis: median $(printf '%s\n' "${full[@]}" | median) s over $repeats runs (${full[*]}); $findings findings"
