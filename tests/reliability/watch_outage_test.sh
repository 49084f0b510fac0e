#!/usr/bin/env bash
# `counters watch` through a database outage: the server is killed while a
# watch is sampling and started again before it ends. Samples taken while it
# was away are spooled, the watch reconnects at a later batch (replaying the
# spool first), and at the end every sample is stored exactly once, with its
# run id. A watch started while the database is down spools from the start.
# Usage: tests/reliability/watch_outage_test.sh SOURCE_DIR FABTRACK
set -euo pipefail
src=$1
fabtrack=$2
work=$(mktemp -d)
chmod 755 "$work"
export FABTRACK_SPOOL_DIR=$work/spool FABTRACK_CONNECT_ATTEMPTS=1
data=$work/db
cleanup() {
  "$fabtrack" db stop --data-dir "$data" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
tree=$src/tests/fixtures/sysfs/ndr_8hca

"$fabtrack" db start --data-dir "$data" >/dev/null 2>&1
db="host=$data/run dbname=fabtrack user=fabtrack"
ports=$("$fabtrack" counters snapshot --sysfs "$tree" --format json |
  python3 -c "import json,sys; print(len(json.load(sys.stdin)['ports']))")
kill_server() {
  local p
  p=$(head -1 "$data/data/postmaster.pid")
  pkill -9 -P "$p" || true
  kill -9 "$p"
  for _ in $(seq 1 100); do [[ -e /proc/$p ]] || return 0; sleep 0.1; done
  fail "postmaster $p did not go away"
}

# 30 samples, 0.2 s apart, 3 per batch: ~6 s; the server is away for ~2 s.
"$fabtrack" counters watch --db "$db" --cluster w --sysfs "$tree" --host nodeA --interval 0.2 \
  --count 30 --batch 3 --run-id 4242 >"$work/watch.log" 2>&1 &
watch=$!
sleep 1.5
kill_server
sleep 2
"$fabtrack" db start --data-dir "$data" >/dev/null 2>&1
wait "$watch" || { cat "$work/watch.log"; fail "watch exited non-zero through the outage"; }
cat "$work/watch.log"
grep -q "spooled" "$work/watch.log" || fail "nothing was spooled: the outage was not seen"
# Whatever the watch could not hand over itself is in the spool.
"$fabtrack" spool replay --db "$db" >/dev/null
count() {
  psql "$db" -Atc "SELECT count($1) FROM port_counter_samples s JOIN ports p ON p.id = s.port_id
    WHERE s.phase = 'watch' AND p.host = 'nodeA' $2"
}
total=$(count "*" "")
distinct=$(count "DISTINCT (s.port_id, s.sampled_at)" "")
tagged=$(count "*" "AND s.run_id = 4242")
echo "stored $total samples ($distinct distinct, $tagged with the run id) of $((30 * ports)) taken"
[[ $total == $((30 * ports)) ]] || fail "expected $((30 * ports)) samples, got $total"
[[ $distinct == "$total" ]] || fail "duplicated samples"
[[ $tagged == "$total" ]] || fail "spooled samples lost their run id"

# Down from the start: everything spooled, exit 0, stored on replay.
"$fabtrack" db stop --data-dir "$data" >/dev/null 2>&1
"$fabtrack" counters watch --db "$db" --cluster w --sysfs "$tree" --host nodeB --interval 0.05 \
  --count 4 --batch 2 >"$work/down.log" 2>&1 || { cat "$work/down.log"; fail "watch with the database down exited non-zero"; }
"$fabtrack" db start --data-dir "$data" >/dev/null 2>&1
"$fabtrack" spool replay --db "$db" >/dev/null
b=$(psql "$db" -Atc "SELECT count(*) FROM port_counter_samples s JOIN ports p ON p.id = s.port_id
  WHERE p.host = 'nodeB'")
[[ $b == $((4 * ports)) ]] || fail "down from the start: expected $((4 * ports)) samples, got $b"
echo "counters watch: nothing lost through a database outage"
