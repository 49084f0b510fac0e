#!/usr/bin/env bash
# The Grafana RAS panels (job-drilldown.json, row "Stuck and hanging jobs") on
# a big stuck job's verdict: one communicator of RANKS ranks, 60% of them one
# AllReduce behind and the counts frozen (tests/support/big_ras_report.py, as
# bench/run_ras_bench.sh), watched for real by `fabtrack ras watch --count 2`
# against the RAS stand-in into a private embedded PostgreSQL; its stuck and
# laggard findings name every rank behind. Then each RAS panel's SQL, expanded
# as Grafana expands it (tests/dashboards/panel_sql.py) with the job picked,
# runs ROUNDS times through one psql session (statement_timeout 120 s): the
# median wall seconds, min-max, rows. With BASE_DASHBOARD (another version of
# job-drilldown.json, e.g. from `git show REV:...`), both run in the same
# rounds, alternating which goes first. The load average is printed before
# and after.
# Usage: bench/run_ras_panels_bench.sh [FABTRACK] [RANKS] [ROUNDS] [BASE_DASHBOARD]
#   e.g. bench/run_ras_panels_bench.sh build/cli/fabtrack 131072 5
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(readlink -f "${1:-build/cli/fabtrack}")
ranks=${2:-131072}
rounds=${3:-5}
base=${4:+$(readlink -f "$4")}
py=${PYTHON:-/usr/bin/python3}
work=$(mktemp -d "${TMPDIR:-/tmp}/ras-panels-bench.XXXXXX")
dir=$work/pg
mkdir -p "$dir"
chmod 755 "$work" "$dir"
stand_in=
cleanup() {
  [ -z "$stand_in" ] || kill "$stand_in" 2>/dev/null || true
  "$bin" db stop --data-dir "$dir" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
"$bin" db start --data-dir "$dir" >/dev/null
db="host=$dir/run port=5432 dbname=fabtrack user=fabtrack"

"$py" tests/support/big_ras_report.py json "$ranks" 60 -1 >"$work/report.json"
"$py" - "$work/report.json" "$work/port" >/dev/null 2>"$work/stand-in.err" <<'PY' &
import os, sys, time
sys.path.insert(0, "tests/support")
from ras_stand_in import StandIn
s = StandIn(text=b"unused\n", json_report=open(sys.argv[1], "rb").read())
open(sys.argv[2] + ".tmp", "w").write(str(s.port))
os.replace(sys.argv[2] + ".tmp", sys.argv[2])
while True:
    time.sleep(3600)
PY
stand_in=$!
while [ ! -s "$work/port" ]; do sleep 0.05; done
rc=0
"$bin" ras watch --host 127.0.0.1 --port "$(cat "$work/port")" --every 0.1 --count 2 --no-resolve \
  --no-monitor --timeout 120 --cluster bench --job 1 --db "$db" >"$work/watch.txt" 2>&1 || rc=$?
[ "$rc" = 2 ] || { head -c 2000 "$work/watch.txt"; echo "ras watch exited $rc" >&2; exit 1; }
echo "ranks $ranks: report $(stat -c %s "$work/report.json") bytes; verdict" \
  "$(psql "$db" -X -At -c "SELECT pg_column_size(verdict) || ' bytes stored, ' ||
     octet_length(verdict::text) || ' as text, ' ||
     (SELECT string_agg(jsonb_array_length(f->'ranks') || ' ranks in ' || (f->>'kind'), ', ')
      FROM jsonb_array_elements(verdict->'findings') f)
     FROM ras_job_verdicts WHERE cluster = 'bench' AND job_id = '1'")"

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$py" - "$db" "$rounds" dashboards/grafana/dashboards/job-drilldown.json ${base:+"$base"} <<'PY'
import json, statistics, sys, time
from datetime import datetime, timedelta, timezone
sys.path.insert(0, "tests/dashboards")
import panel_sql as ps

conninfo, rounds, paths = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
db = ps.Database(conninfo)
db.env["PGOPTIONS"] = "-c statement_timeout=120000"
now = datetime.now(timezone.utc)
ctx = ps.TimeContext(now - timedelta(days=1), now + timedelta(hours=1), 60000, "1m")
sides = []
for side, path in zip(("new", "base"), paths):
    d = json.load(open(path))
    variables, _ = ps.resolve_variables(db, d, ctx, {"cluster": "bench", "ras_job": "1"}, "saved",
                                        side)
    queries = {}
    for p in ps.all_panels(d):
        sql = " ".join(t["rawSql"] for t in p.get("targets", []))
        if p.get("type") != "row" and "ras_" in sql:
            queries[p["title"]] = ps.expand(p["targets"][0]["rawSql"], variables, ctx)
    sides.append((side, queries))
times, rows = {}, {}
for i in range(rounds):
    order = sides if i % 2 == 0 or len(sides) == 1 else sides[::-1]
    for side, queries in order:
        for title, sql in queries.items():
            t = time.monotonic()
            try:
                out = db._run_script(sql.rstrip().rstrip(";") + ";")
                rows[side, title] = max(out.count("\n") - 1, 0)
            except ps.Failure as e:
                rows[side, title] = "error: " + str(e).splitlines()[0][:60]
            times.setdefault((side, title), []).append(time.monotonic() - t)
for side, queries in sides:
    for title in queries:
        ts = times[side, title]
        print("%-4s %-42s median %7.3f s (%.3f-%.3f) over %d, rows %s" %
              (side, title, statistics.median(ts), min(ts), max(ts), len(ts), rows[side, title]))
PY
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
