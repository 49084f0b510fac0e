#!/usr/bin/env bash
# Ctrl-C during an ingest (issue 17): SIGINT while the large run's transaction
# is writing ends the command with exit 130 and a message saying what was
# and was not stored; the database then holds none of the run (never part of
# it); the same ingest again stores exactly one copy. SIGTERM likewise, 143.
# Usage: tests/reliability/interrupt_test.sh SOURCE_DIR FABTRACK
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

"$fabtrack" db start --data-dir "$data" >/dev/null 2>&1
db="host=$data/run dbname=fabtrack user=fabtrack"
big=$work/big.txt
"$src"/tests/support/large_nccl_tests_table.py "$big"
rows=$(grep -c '^ *[0-9]' "$big")
writing="SELECT count(*) FROM pg_stat_activity WHERE application_name = 'fabtrack'
         AND backend_xid IS NOT NULL"
results() { psql "$db" -Atc "SELECT count(*) FROM run_results"; }

for signal in INT TERM; do
  [[ $signal == INT ]] && expected=130 || expected=143
  # A script's background job ignores SIGINT; a user's Ctrl-C finds the default.
  env --default-signal=INT "$fabtrack" ingest --db "$db" --cluster int-$signal \
    --at 2026-11-20T02:00:00Z "$big" >"$work/$signal.out" 2>"$work/$signal.err" &
  pid=$!
  seen=0
  for _ in $(seq 1 1200); do  # the parse first, then the write: at most 60 s
    kill -0 "$pid" 2>/dev/null || break
    if [[ $(psql "$db" -Atc "$writing") -gt 0 ]]; then seen=1; break; fi
    sleep 0.05
  done
  ((seen)) || fail "SIG$signal: the ingest never began writing (or ended first)"
  kill -"$signal" "$pid"
  rc=0
  wait "$pid" || rc=$?
  [[ $rc == "$expected" ]] || fail "SIG$signal: exit $rc, $expected expected: $(cat "$work/$signal.err")"
  grep -q "interrupted" "$work/$signal.err" || fail "SIG$signal: no message: $(cat "$work/$signal.err")"
  grep -q "not stored" "$work/$signal.err" || fail "SIG$signal: does not say what was not stored"
  runs=$(psql "$db" -Atc "SELECT count(*) FROM runs WHERE cluster = 'int-$signal'")
  [[ $runs == 0 && $(results) == 0 ]] || fail "SIG$signal: $runs run(s), $(results) result rows left"
  echo "SIG$signal: exit $rc, nothing of the run stored: $(head -c 200 "$work/$signal.err")"
done

"$fabtrack" ingest --db "$db" --cluster int-INT --at 2026-11-20T02:00:00Z "$big" >/dev/null 2>&1 ||
  fail "the ingest after the interrupt failed"
"$fabtrack" ingest --db "$db" --cluster int-INT --at 2026-11-20T02:00:00Z "$big" >/dev/null 2>&1 ||
  fail "a second ingest of the same file failed"
[[ $(psql "$db" -Atc "SELECT count(*) FROM runs") == 1 ]] || fail "not exactly one run stored"
[[ $(results) == "$rows" ]] || fail "$(results) result rows, $rows expected"
echo "PASS: interrupted ingests stored nothing; the rerun stored one copy ($rows rows)"
