#!/usr/bin/env bash
# The nightly job locates when the night is flagged (issue 20 item 4), for
# real: the cron variant with a custom launcher (tests/support/uts-mpirun.sh:
# Open MPI ranks on this host; a locate's ranks each in their own UTS
# namespace named after its host), fabtrack-pairprobe over MPI, a private
# embedded database.
#  - a night flagged by a busbw regression (a week of history, tonight's run
#    at half the bandwidth) runs `fabtrack locate` on LOCATE_HOSTS with the
#    sweep's launcher; its verdict is stored, linked to the flagged run, in
#    the HTML report, and a finding when it names a suspect;
#  - a night that nothing flags (LOCATE_FLAGGED_BY narrowed to a kind that
#    does not fire) stores no verdict;
#  - a budget too small for one round stops locate within it (no verdict,
#    the night keeps the analyzer's status);
#  - with the database away the verdict is spooled, and stored when it is
#    back: nothing measured is lost.
# Needs root (UTS namespaces) and Open MPI. Fails, never skips.
# Usage: tests/nightly/nightly_locate_test.sh SOURCE_DIR FABTRACK
set -euo pipefail
src=$1
fabtrack=$2
work=$(mktemp -d)
chmod 755 "$work"
export FABTRACK_SPOOL_DIR=$work/spool OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cleanup() {
  "$fabtrack" db stop --data-dir "$work/db" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || fail "needs root (unshare --uts)"
command -v mpirun >/dev/null || fail "mpirun not found"
cron=$src/scripts/nightly/fabtrack-nightly-cron.sh
launcher=$src/tests/support/uts-mpirun.sh

"$fabtrack" db start --data-dir "$work/db" >/dev/null 2>&1
db="host=$work/db/run dbname=fabtrack user=fabtrack"
q() { psql "$db" -X -At -v ON_ERROR_STOP=1 -c "$1"; }
conf=$work/nightly.conf
write_conf() { # extra KEY=VALUE lines
  cat >"$conf" <<CONF
CLUSTER=nightly-locate
NODE_COUNTS=1,2
RANKS_PER_NODE=1
BACKEND=mpi
MIN_BYTES=8
MAX_BYTES=64K
STEP_FACTOR=8
ITERS=5
WARMUP=1
DB=$db
OUTPUT_DIR=$work/out
REPORT_DIR=$work/reports
TEXTFILE=$work/fabtrack.prom
PORTS=off
FABTRACK=$fabtrack
LAUNCHER=$launcher
LOG_DIR=$work/logs
LOCATE_HOSTS=ln1,ln2,ln3,ln4
LOCATE_BUDGET=240
LOCATE_PROBE_FLAGS=--stream-ms 20 --reps 2 --latency-iters 50
CONF
  printf '%s\n' "$@" >>"$conf"
}
export FABTRACK_NIGHTLY_CONF=$conf
verdicts() { q "SELECT count(*) FROM locate_verdicts WHERE cluster = 'nightly-locate'"; }

# A week of a 2-node nccl-tests all-reduce, then tonight's (two hours from
# now, inside the night's window) at half the large-message bandwidth.
example=$src/examples/lab-cluster/2026-11-28_allreduce_2node.txt
for d in 7 6 5 4 3 2 1; do
  { cat "$example"; echo "# night -$d"; } >"$work/night-$d.txt"
  "$fabtrack" ingest --db "$db" "$work/night-$d.txt" --cluster nightly-locate \
    --at "$(date -u -d "-$d days" +%Y-%m-%dT02:00:00Z)" >/dev/null 2>&1 || fail "ingest history"
done
awk '$1 ~ /^[0-9]+$/ && $1 >= 67108864 && NF >= 13 {
       $6 *= 2; $7 /= 2; $8 /= 2; $10 *= 2; $11 /= 2; $12 /= 2 } { print }' "$example" >"$work/slow.txt"
"$fabtrack" ingest --db "$db" "$work/slow.txt" --cluster nightly-locate \
  --at "$(date -u -d '+2 hours' +%Y-%m-%dT%H:%M:%SZ)" >/dev/null 2>&1 || fail "ingest tonight"
slow_run=$(q "SELECT id FROM runs WHERE cluster = 'nightly-locate' ORDER BY started_at DESC LIMIT 1")

echo "--- a night that nothing flags: no locate"
write_conf LOCATE_FLAGGED_BY=ib_completion_error
status=0
"$cron" >"$work/quiet.out" 2>&1 || status=$?
((status <= 2)) || { tail -30 "$work/quiet.out"; fail "quiet night exited $status"; }
[[ $(verdicts) == 0 ]] || { tail -30 "$work/quiet.out"; fail "a verdict was stored on an unflagged night"; }
if grep -q "locating on the night's hosts" "$work/quiet.out"; then
  grep -q "is flagged by ib_completion_error; not run" "$work/quiet.out" ||
    { tail -30 "$work/quiet.out"; fail "locate ran although nothing was flagged"; }
fi

echo "--- a night flagged by a busbw regression: locate on the same hosts"
write_conf
status=0
start=$(date +%s)
"$cron" >"$work/flagged.out" 2>&1 || status=$?
grep -E "locat|analysis exit" "$work/flagged.out" | head -20
((status >= 1 && status <= 2)) || { tail -40 "$work/flagged.out"; fail "flagged night exited $status, want 1 or 2"; }
q "SELECT count(*) FROM findings WHERE cluster = 'nightly-locate' AND kind = 'busbw_regression'
   AND run_id = $slow_run AND state = 'open'" | grep -qx 1 ||
  { tail -40 "$work/flagged.out"; fail "the analysis did not flag tonight's run as a busbw regression"; }
grep -q "locating on the night's hosts (budget 240 s)" "$work/flagged.out" || fail "locate did not run"
grep -q "1 run(s) of nightly-locate flagged since" "$work/flagged.out" || fail "locate saw no flagged run"
[[ $(verdicts) == 1 ]] || { tail -40 "$work/flagged.out"; fail "want 1 stored verdict, got $(verdicts)"; }
[[ $(q "SELECT array_to_string(hosts, ',') || ' ' || nodes FROM locate_verdicts") == "ln1,ln2,ln3,ln4 4" ]] ||
  fail "verdict hosts: $(q "SELECT hosts FROM locate_verdicts")"
[[ $(q "SELECT string_agg(run_id::text, ',') FROM locate_verdict_runs") == "$slow_run" ]] ||
  fail "verdict not linked to the flagged run $slow_run: $(q "SELECT string_agg(run_id::text, ',') FROM locate_verdict_runs")"
rounds=$(q "SELECT rounds FROM locate_verdicts")
((rounds >= 1 && rounds <= 6)) || fail "rounds $rounds outside 1..2*ceil(log2 4)+2"
(($(date +%s) - start < 240 + 200)) || fail "the night took longer than its budgets allow"
suspects=$(q "SELECT count(*) FROM locate_suspects")
findings=$(q "SELECT count(*) FROM findings WHERE cluster = 'nightly-locate' AND kind = 'locate_suspect'")
if ((suspects > 0)); then
  [[ $findings == 1 ]] || fail "a verdict with suspects is not a finding (found $findings)"
  top=$(q "SELECT kind || ' ' || name FROM locate_suspects WHERE rank = 1")
  [[ $(q "SELECT subject FROM findings WHERE kind = 'locate_suspect'") == "$top" ]] ||
    fail "the finding does not name the top suspect $top"
else
  [[ $findings == 0 ]] || fail "a clean verdict raised a finding"
fi
report=$(ls "$work"/reports/nightly-locate-*.html)
grep -q "Locate: which node or link is slow" "$report" || fail "the report has no locate section"
grep -q "fabtrack_findings" "$work/fabtrack.prom" || fail "no textfile"
echo "verdict: $rounds round(s), $suspects suspect(s), night exit $status"

echo "--- a budget too small for one round: stopped within it"
write_conf LOCATE_BUDGET=5 "LOCATE_PROBE_FLAGS=--stream-ms 3000 --reps 3"
status=0
start=$(date +%s)
"$cron" >"$work/budget.out" 2>&1 || status=$?
took=$(($(date +%s) - start))
((status >= 1 && status <= 2)) || { tail -30 "$work/budget.out"; fail "budget night exited $status"; }
grep -q "locate exited 3" "$work/budget.out" || { tail -30 "$work/budget.out"; fail "locate was not stopped"; }
[[ $(verdicts) == 1 ]] || fail "a verdict without a round was stored"
((took < 150)) || fail "the night took $took s with a 5 s locate budget"

echo "--- the database away: the verdict is spooled, then stored"
"$fabtrack" db stop --data-dir "$work/db" >/dev/null 2>&1
rc=0
"$fabtrack" locate --db "$db" --cluster nightly-locate --run-id "$slow_run" \
  --hosts ln1,ln2 --mpirun "$launcher" -- --stream-ms 20 --reps 1 --latency-iters 20 \
  >"$work/away.out" 2>&1 || rc=$?
((rc <= 2)) || { cat "$work/away.out"; fail "locate with the database away exited $rc"; }
grep -q "verdict spooled for cluster nightly-locate" "$work/away.out" || { cat "$work/away.out"; fail "not spooled"; }
[[ -n $(ls "$work/spool"/*.batch 2>/dev/null) ]] || fail "nothing in the spool"
"$fabtrack" db start --data-dir "$work/db" >/dev/null 2>&1
"$fabtrack" spool replay --db "$db" >"$work/replay.out" 2>&1 || { cat "$work/replay.out"; fail "replay"; }
[[ $(verdicts) == 2 ]] || { cat "$work/replay.out"; fail "the spooled verdict was not stored"; }
[[ $(q "SELECT nodes FROM locate_verdicts ORDER BY id DESC LIMIT 1") == 2 ]] || fail "wrong verdict replayed"
echo "nightly locate: flagged nights locate within budget, verdicts stored, spooled when the database is away"
