#!/usr/bin/env bash
# 64 collectors at once (one `counters watch` per simulated node, batching),
# plus ingests and the analyzer reading, against one PostgreSQL: every sample
# stored exactly once, no deadlock, every process exits 0, connections stay
# bounded. Prints the load held (rows/s, peak connections) for BENCHMARKS.md.
# Usage: tests/reliability/many_collectors_test.sh SOURCE_DIR FABTRACK [COLLECTORS] [SECONDS]
set -euo pipefail
src=$1
fabtrack=$2
collectors=${3:-64}
seconds=${4:-20}
interval=0.5
work=$(mktemp -d)
chmod 755 "$work"
export FABTRACK_SPOOL_DIR=$work/spool
data=$work/db
mkdir -p "$FABTRACK_SPOOL_DIR"
cleanup() {
  jobs -p | xargs -r kill 2>/dev/null || true
  "$fabtrack" db stop --data-dir "$data" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$fabtrack" db start --data-dir "$data" >/dev/null 2>&1
db="host=$data/run dbname=fabtrack user=fabtrack"
tree=$src/tests/fixtures/sysfs/ndr_8hca
ports=$("$fabtrack" counters snapshot --sysfs "$tree" | python3 -c "import json,sys; print(len(json.load(sys.stdin)['ports']))")
samples=$(python3 -c "print(int($seconds / $interval))")

# Peak connections, sampled while everything runs.
(while true; do psql "$db" -Atc "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'" 2>/dev/null; sleep 0.2; done) >"$work/connections" &
monitor=$!

start=$(date +%s%N)
pids=()
for i in $(seq -w 1 "$collectors"); do
  "$fabtrack" counters watch --db "$db" --cluster many --sysfs "$tree" --host "node$i" \
    --interval "$interval" --count "$samples" --batch 8 >"$work/watch.$i.log" 2>&1 &
  pids+=($!)
done
# Meanwhile: nightly results arriving and the analyzer reading.
readers=()
(for f in "$src"/tests/fixtures/nccl_tests/t0[1-9]*.txt; do
   "$fabtrack" ingest --db "$db" "$f" --cluster many --at 2026-11-30T02:00:00Z || exit 1
 done) >"$work/ingest.log" 2>&1 &
readers+=($!)
(for _ in $(seq 1 10); do
   rc=0; "$fabtrack" analyze --db "$db" --cluster many --no-store --format json >/dev/null || rc=$?
   ((rc <= 3)) || exit 1
   "$fabtrack" runs list --db "$db" --limit 5 >/dev/null || exit 1
   sleep 1
 done) >"$work/analyze.log" 2>&1 &
readers+=($!)

failed=0
for p in "${pids[@]}" "${readers[@]}"; do wait "$p" || failed=$((failed + 1)); done
end=$(date +%s%N)
kill $monitor 2>/dev/null || true
((failed == 0)) || { tail -3 "$work"/watch.*.log "$work/ingest.log" "$work/analyze.log" | tail -40; fail "$failed process(es) failed"; }

want=$((collectors * samples * ports))
got=$(psql "$db" -Atc "SELECT count(*) FROM port_counter_samples s JOIN ports p ON p.id = s.port_id WHERE p.cluster = 'many'")
distinct=$(psql "$db" -Atc "SELECT count(DISTINCT (port_id, sampled_at)) FROM port_counter_samples")
hosts=$(psql "$db" -Atc "SELECT count(DISTINCT host) FROM ports WHERE cluster = 'many'")
spooled=$(find "$FABTRACK_SPOOL_DIR" -name "*.batch" 2>/dev/null | wc -l)
peak=$(sort -n "$work/connections" | tail -1)
elapsed=$(awk -v ns=$((end - start)) 'BEGIN {printf "%.1f", ns / 1e9}')
rate=$(awk -v n="$got" -v ns=$((end - start)) 'BEGIN {printf "%.0f", n / (ns / 1e9)}')
echo "collectors=$collectors samples/collector=$samples ports/host=$ports: $got of $want port samples stored in ${elapsed}s ($rate rows/s), $hosts hosts, peak $peak client connections, $spooled spooled"
[[ $got == "$want" && $distinct == "$got" ]] || fail "expected $want samples exactly once, got $got ($distinct distinct)"
[[ $hosts == "$collectors" ]] || fail "expected $collectors hosts, got $hosts"
((spooled == 0)) || fail "$spooled batches spooled while the database was up"
((peak <= collectors + 8)) || fail "connections not bounded: peak $peak"
