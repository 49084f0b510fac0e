#!/usr/bin/env bash
# Store and forward under real outages. The embedded PostgreSQL is killed
# (SIGKILL of the postmaster) between files of an ingest, in the middle of a
# large ingest transaction, and in the middle of a sweep; the commands spool
# what they could not write and exit 0; the server comes back; the spool is
# replayed. Every count is compared with the same inputs written to a second
# database that never had an outage: zero rows lost, zero duplicated. A second
# replay and a re-ingest change nothing.
# Usage: tests/reliability/spool_outage_test.sh SOURCE_DIR FABTRACK
set -euo pipefail
src=$1
fabtrack=$2
work=$(mktemp -d)
chmod 755 "$work"
export FABTRACK_SPOOL_DIR=$work/spool
data=$work/db
cleanup() {
  "$fabtrack" db stop --data-dir "$data" >/dev/null 2>&1 || true
  [[ -n ${KEEP:-} ]] || rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

"$fabtrack" db start --data-dir "$data" >/dev/null 2>&1
db="host=$data/run dbname=fabtrack user=fabtrack"
ref="host=$data/run dbname=reference user=fabtrack"
psql "$db" -qc "CREATE DATABASE reference"
"$fabtrack" db migrate --db "$ref" >/dev/null
# A crash: the postmaster and every backend die at once. Waits until they are
# gone (reaped), so that the restart sees a dead server, not a zombie.
kill_server() {
  local p
  p=$(head -1 "$data/data/postmaster.pid")
  pkill -9 -P "$p" || true
  kill -9 "$p"
  for _ in $(seq 1 100); do [[ -e /proc/$p ]] || return 0; sleep 0.1; done
  fail "postmaster $p did not go away"
}
restart_server() { "$fabtrack" db start --data-dir "$data" >/dev/null 2>&1; }
counts() {
  psql "$1" -Atc "SELECT (SELECT count(*) FROM runs) || ' runs, ' ||
    (SELECT count(*) FROM run_results) || ' results, ' ||
    (SELECT count(*) FROM transport_observations) || ' channels, ' ||
    (SELECT count(*) FROM run_net_devices) || ' nics, ' ||
    (SELECT count(*) FROM port_counter_samples) || ' samples, ' ||
    (SELECT count(*) FROM run_port_deltas) || ' deltas, ' ||
    (SELECT count(DISTINCT content_hash) FROM runs) || ' distinct'"
}

# Inputs: the nccl-tests fixtures, NCCL logs attached to one of them, and a
# large generated table whose COPY takes long enough to be killed mid-way.
inputs=$work/inputs
mkdir -p "$inputs"
cp "$src"/tests/fixtures/nccl_tests/t0[1-9]*.txt "$src"/tests/fixtures/nccl_tests/t1[0-4]*.txt "$inputs/"
big=$work/big.txt
"$src"/tests/support/large_nccl_tests_table.py "$big"
log=$src/tests/fixtures/nccl_logs/socket_fallback_4node_nccl2.12.log
at=2026-11-20T02:00:00Z

# The reference: everything, no outage.
for f in "$inputs"/*.txt; do "$fabtrack" ingest --db "$ref" "$f" --cluster lab --at $at >/dev/null; done
"$fabtrack" ingest --db "$ref" "$inputs/t01_allreduce_2018_header_error_column.txt" --cluster logs \
  --at $at --nccl-log "$log" >/dev/null
"$fabtrack" ingest --db "$ref" "$big" --cluster lab --at $at >/dev/null
tree=$src/tests/fixtures/sysfs/roce_host
"$fabtrack" counters snapshot --db "$ref" --cluster lab --sysfs "$tree" >/dev/null 2>&1

echo "--- outage between files: the server dies after the 5th file"
n=0
for f in "$inputs"/*.txt; do
  n=$((n + 1))
  ((n == 6)) && kill_server
  "$fabtrack" ingest --db "$db" "$f" --cluster lab --at $at >"$work/ingest.$n.log" 2>&1 ||
    { cat "$work/ingest.$n.log"; fail "ingest of $f exited non-zero during the outage"; }
done
grep -q "batch(es) spooled in" "$work/ingest.6.log" || fail "the 6th file was not spooled: $(cat "$work/ingest.6.log")"
"$fabtrack" ingest --db "$db" "$inputs/t01_allreduce_2018_header_error_column.txt" --cluster logs \
  --at $at --nccl-log "$log" >/dev/null 2>&1 || fail "ingest with --nccl-log during the outage"
"$fabtrack" counters snapshot --db "$db" --cluster lab --sysfs "$tree" >/dev/null 2>&1 ||
  fail "counters snapshot during the outage"
pending=$("$fabtrack" spool status | head -1)
echo "$pending"

echo "--- outage in the middle of a large ingest transaction"
restart_server
"$fabtrack" spool replay --db "$db" >/dev/null 2>&1 || fail "replay after the first outage"
# Under ASan (scripts/sanitize.sh) every allocation normally records a full
# stack for the leak report; the large run's parse and spool are millions of
# allocations, which took that build over 6 minutes here. This one command
# takes the fast unwinder (leak checking stays on).
big_asan=${ASAN_OPTIONS:+$ASAN_OPTIONS:fast_unwind_on_malloc=1}
ASAN_OPTIONS=$big_asan "$fabtrack" ingest --db "$db" "$big" --cluster lab --at $at >"$work/big.log" 2>&1 &
pid=$!
# Kill the server only once the COPY runs, however long a sanitizer build
# takes to parse the file (up to 10 minutes); an ingest that never got there
# would test a different outage.
copy_seen=0
for _ in $(seq 1 12000); do
  if [[ $(psql "$db" -Atc "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'COPY%'" 2>/dev/null) -gt 0 ]]; then
    copy_seen=1
    break
  fi
  kill -0 $pid 2>/dev/null || { cat "$work/big.log"; fail "the large ingest ended before its COPY was seen"; }
  sleep 0.05
done
((copy_seen)) || fail "the large ingest's COPY did not start within 10 minutes"
kill_server
wait $pid || { cat "$work/big.log"; fail "large ingest exited non-zero after losing the database"; }
grep -q "batch(es) spooled in" "$work/big.log" || { cat "$work/big.log"; fail "large ingest was not spooled"; }

echo "--- outage in the middle of a sweep (after its first run)"
restart_server
"$fabtrack" sweep --db "$db" --cluster sweep --nodes 1-3 --ports off -- -b 8 -e 64K -f 4 -n 5 -w 1 \
  >"$work/sweep.log" 2>&1 &
pid=$!
# Kill the server only after the first run is stored; a sanitizer build may
# take minutes to get there, so wait up to 10 minutes and fail if it never does.
stored_first=0
for _ in $(seq 1 6000); do
  if grep -q "stored run" "$work/sweep.log"; then
    stored_first=1
    break
  fi
  kill -0 $pid 2>/dev/null || { cat "$work/sweep.log"; fail "the sweep ended before its first run was stored"; }
  sleep 0.1
done
((stored_first)) || { cat "$work/sweep.log"; fail "the sweep stored no run within 10 minutes"; }
kill_server
wait $pid || { cat "$work/sweep.log"; fail "sweep exited non-zero after losing the database"; }
grep -q "2 spooled" "$work/sweep.log" || { cat "$work/sweep.log"; fail "sweep did not spool its last 2 runs"; }
sweep_runs=$(ls "$FABTRACK_SPOOL_DIR"/*.batch | wc -l)
echo "spooled batches before the last restart: $sweep_runs"

echo "--- the server is back: the next command replays first"
restart_server
"$fabtrack" runs list --db "$db" --limit 1 >/dev/null 2>"$work/replay.log"
grep -q "replayed" "$work/replay.log" || fail "runs list did not replay the spool: $(cat "$work/replay.log")"
[[ -z $(ls "$FABTRACK_SPOOL_DIR"/*.batch 2>/dev/null) ]] || fail "batches left after replay"

# Same content as the reference, apart from the sweep (compare it alone).
want=$(counts "$ref")
got=$(psql "$db" -Atc "SELECT (SELECT count(*) FROM runs WHERE cluster <> 'sweep') || ' runs, ' ||
    (SELECT count(*) FROM run_results x JOIN runs r ON r.id = x.run_id WHERE r.cluster <> 'sweep') || ' results, ' ||
    (SELECT count(*) FROM transport_observations) || ' channels, ' ||
    (SELECT count(*) FROM run_net_devices) || ' nics, ' ||
    (SELECT count(*) FROM port_counter_samples) || ' samples, ' ||
    (SELECT count(*) FROM run_port_deltas) || ' deltas, ' ||
    (SELECT count(DISTINCT content_hash) FROM runs WHERE cluster <> 'sweep') || ' distinct'")
echo "reference: $want"
echo "recovered: $got"
[[ $got == "$want" ]] || fail "rows lost or duplicated"
sweep_count=$(psql "$db" -Atc "SELECT count(*) || '/' || count(DISTINCT ranks) FROM runs WHERE cluster = 'sweep'")
[[ $sweep_count == 3/3 ]] || fail "sweep runs after replay: $sweep_count (want 3 runs of 1, 2, 3 ranks)"

echo "--- idempotence: replay again, re-ingest everything"
before=$(counts "$db")
"$fabtrack" spool replay --db "$db" >/dev/null
"$fabtrack" ingest --db "$db" "$inputs" "$big" --cluster lab --at $at >"$work/again.log" 2>&1
grep -q "stored run" "$work/again.log" && fail "re-ingest stored something again"
[[ $(counts "$db") == "$before" ]] || fail "counts changed on re-ingest: $(counts "$db") vs $before"

echo "--- a damaged batch is set aside, the rest replays"
kill_server
"$fabtrack" ingest --db "$db" "$src/tests/fixtures/nccl_tests/t15_markdown_hash_stripped_indented.txt" \
  --cluster late --at $at >/dev/null 2>&1
"$fabtrack" ingest --db "$db" "$src/tests/fixtures/nccl_tests/t16_unparseable_rows_reported.txt" \
  --cluster late --at $at >/dev/null 2>&1 || true
first=$(ls "$FABTRACK_SPOOL_DIR"/*.batch | head -1)
sed -i '2s/"cluster":"late"/"cluster":"evil"/' "$first"
restart_server
"$fabtrack" spool replay --db "$db" >"$work/damaged.log" 2>&1 || true
grep -q "checksum mismatch" "$work/damaged.log" || fail "damaged batch not detected: $(cat "$work/damaged.log")"
[[ -n $(ls "$FABTRACK_SPOOL_DIR"/corrupt/*.batch) ]] || fail "damaged batch not set aside"
[[ $(psql "$db" -Atc "SELECT count(*) FROM runs WHERE cluster = 'evil'") == 0 ]] || fail "damaged batch stored"
[[ $(psql "$db" -Atc "SELECT count(*) FROM runs WHERE cluster = 'late'") -ge 1 ]] || fail "intact batch not stored"
echo "spool: nothing lost, nothing duplicated"
