#!/usr/bin/env bash
# The nightly job's logic, run for real with the cron variant (local MPI
# ranks, a private embedded database): a night stores its runs, writes the
# HTML report, the textfile and a dated log, and exits with the analyzer's
# status; a critical finding in the night makes it exit 2; a second night
# started while one runs is refused (exit 75); a bad config is an error
# naming file:line (exit 3).
# Not covered here: the sbatch variant under a real Slurm (see the issue note).
# Usage: tests/nightly/nightly_cron_test.sh SOURCE_DIR FABTRACK
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
cron=$src/scripts/nightly/fabtrack-nightly-cron.sh

"$fabtrack" db start --data-dir "$work/db" >/dev/null 2>&1
db="host=$work/db/run dbname=fabtrack user=fabtrack"
conf=$work/nightly.conf
cat >"$conf" <<CONF
# test night: 1 and 2 local ranks over TCP
CLUSTER=nightly-test
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
LAUNCHER=local
LOG_DIR=$work/logs
LOG_KEEP_DAYS=7
CONF
export FABTRACK_NIGHTLY_CONF=$conf

echo "--- a night"
touch -d '20 days ago' "$work/old.log" && mkdir -p "$work/logs" && mv "$work/old.log" "$work/logs/nightly-2000-01-01.log"
status=0
"$cron" >"$work/night1.out" 2>&1 || status=$?
cat "$work/night1.out" | tail -5
((status <= 2)) || fail "night exited $status"
grep -q "analysis exit $status" "$work/night1.out" || fail "exit status is not the analyzer's"
[[ $(psql "$db" -Atc "SELECT count(*) FROM runs WHERE cluster = 'nightly-test'") == 2 ]] || fail "2 runs expected"
ls "$work"/reports/nightly-test-*.html >/dev/null || fail "no HTML report"
grep -q '^fabtrack_analysis_status{cluster="nightly-test"}' "$work/fabtrack.prom" || fail "no textfile"
ls "$work"/logs/nightly-"$(date -u +%Y-%m-%d)".log >/dev/null || fail "no dated log"
[[ ! -e $work/logs/nightly-2000-01-01.log ]] || fail "old log not rotated away"

echo "--- a night with a socket fallback: critical, exit 2"
"$fabtrack" ingest --db "$db" "$src/tests/fixtures/cli/allreduce_2node_ib.txt" --cluster nightly-test \
  --nccl-log "$src/tests/fixtures/nccl_logs/socket_fallback_4node_nccl2.12.log" \
  --at "$(date -u -d '+2 hours' +%Y-%m-%dT%H:%M:%SZ)" >/dev/null 2>&1
status=0
"$cron" >"$work/night2.out" 2>&1 || status=$?
((status == 2)) || { tail -20 "$work/night2.out"; fail "expected exit 2 (critical), got $status"; }
grep -q "socket_fallback" "$work/night2.out" || fail "the critical finding is not in the log"

echo "--- a report that fails is not hidden (issue 16): exit 3, logged"
cat >"$work/fabtrack-html-fails" <<WRAP
#!/usr/bin/env bash
# the real fabtrack, except that the HTML report dies as map::at did (exit 4)
for a in "\$@"; do [[ \$a == html ]] && { echo "internal error: map::at" >&2; exit 4; }; done
exec "$fabtrack" "\$@"
WRAP
chmod +x "$work/fabtrack-html-fails"
status=0
sed "s|^FABTRACK=.*|FABTRACK=$work/fabtrack-html-fails|" "$conf" >"$work/report-fails.conf"
FABTRACK_NIGHTLY_CONF=$work/report-fails.conf "$cron" >"$work/night-report.out" 2>&1 || status=$?
((status == 3)) || { tail -20 "$work/night-report.out"; fail "failed report exited $status, want 3"; }
grep -q "the HTML report failed: .* exited 4" "$work/night-report.out" || fail "report failure not logged"

echo "--- two nights never overlap"
exec 8>"$work/logs/.nightly.lock"
flock 8
status=0
"$cron" >"$work/night3.out" 2>&1 || status=$?
((status == 75)) || fail "second night while locked exited $status, want 75"
grep -q "another night is still running" "$work/night3.out" || fail "no clear message when locked"
flock -u 8

echo "--- a bad config names file:line"
printf 'CLUSTER=x\nNODE_COUTNS=1\n' >"$work/bad.conf"
status=0
FABTRACK_NIGHTLY_CONF=$work/bad.conf "$cron" >"$work/bad.out" 2>&1 || status=$?
((status == 3)) || fail "bad config exited $status, want 3"
grep -q "bad.conf:2: unknown setting NODE_COUTNS" "$work/bad.out" || fail "message: $(cat "$work/bad.out")"
echo "nightly cron job: runs, reports, exit status, lock and config errors all behave"
