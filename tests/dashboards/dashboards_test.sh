#!/usr/bin/env bash
# The dashboards, their provisioning and the alert rules against real data:
#  1. static: the macro/variable expansion against Grafana's own test cases,
#     the dashboards' structure (schema version, unique ids and titles, every
#     data source fabtrack-pg), the provisioning files, the metric names the
#     Prometheus rules use (in the exporter's golden output or the analyzer's
#     textfile code), `promtool check rules` and `promtool test rules`;
#  2. a private PostgreSQL filled for real: the lab history of examples/ with
#     its dates, two local sweeps (the second bracketed by a fixture RoCE
#     host's ports), port snapshots of fixture sysfs trees, nccl-tests
#     fixtures of other collectives, a real training job's NCCL Inspector
#     output (both forms) stored by `fabtrack inspector ingest` beside nightly
#     benchmarks of its node count, four jobs watched by `fabtrack ras
#     watch` against the RAS stand-in (stuck, with its host's ports and
#     facts; a process declared dead; healthy; 4,096 ranks, 60 % behind),
#     then `fabtrack analyze` (lab, local, training and jobs);
#  3. as Grafana's login role (dashboards/postgres/grafana-role.sql, member of
#     fabtrack_reader, read-only): every variable query, panel and annotation
#     expanded as Grafana expands it and run through psql, its result shaped
#     as its panel needs and as tests/dashboards/expectations.json says, over
#     the whole history and over an empty day, planned without full scans of
#     growing tables; the Grafana alert rules' queries and thresholds.
# Fails (never skips) when a tool is missing.
# Usage: tests/dashboards/dashboards_test.sh SOURCE_DIR FABTRACK
set -euo pipefail
repo=$(cd "$1" && pwd)
fabtrack=$2
here=$repo/tests/dashboards
dash=$repo/dashboards
fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "== $*"; }

for tool in psql promtool python3 timeout; do
  command -v "$tool" >/dev/null ||
    fail "$tool not found (scripts/install-deps.sh installs postgresql-client-15, prometheus, python3)"
done
[[ -x $fabtrack ]] || fail "no fabtrack binary at $fabtrack"

work=$(mktemp -d)
chmod 755 "$work"  # the embedded server runs as an unprivileged user
cleanup() {
  if [[ -n ${static_pid:-} ]]; then kill "$static_pid" 2>/dev/null || true; fi
  "$fabtrack" db stop --data-dir "$work/db" >/dev/null 2>&1 || true
  [[ -n ${KEEP:-} ]] || rm -rf "$work"
}
trap cleanup EXIT
helper=(python3 "$here/panel_sql.py")
dashboards=("$dash"/grafana/dashboards/*.json)
[[ ${#dashboards[@]} -eq 4 ]] || fail "expected 4 dashboards, found ${#dashboards[@]}"

# The static checks need no database: they run beside the filling of it
# (sweeps, mostly waiting on MPI start-up) and are waited for at the end.
static_checks() {
  step "static checks"
  "${helper[@]}" self-test
  "${helper[@]}" structure "${dashboards[@]}"
  "${helper[@]}" provisioning "$dash/grafana/provisioning/datasources/fabtrack.yaml" \
    "$dash/grafana/provisioning/dashboards/fabtrack.yaml"
  # Every metric the Prometheus rules name exists: in the exporter's golden
  # output, or spelled out in the exporter or the analyzer's textfile writer.
  known=$(cat "$repo"/tests/fixtures/golden/*.prom "$repo"/collector/counters/*.cc \
    "$repo/analyzer/report/prometheus_textfile.cc" |
    grep -oE '\b(node_infiniband|fabtrack)_[a-z0-9_]+' | sort -u)
  used=$(grep -v '^ *#' "$dash/prometheus/fabtrack-alerts.yml" |
    grep -oE '\b(node_infiniband|fabtrack)_[a-z0-9_]+' | sort -u)
  missing=$(comm -23 <(echo "$used") <(echo "$known"))
  [[ -z $missing ]] || fail "alert rules use metrics nothing exports: $missing"
  echo "alert rules use $(echo "$used" | wc -l) metrics, all exported"
  promtool check rules "$dash/prometheus/fabtrack-alerts.yml"
  promtool test rules "$dash/prometheus/fabtrack-alerts.test.yml"
}
(set -euo pipefail; static_checks) >"$work/static.log" 2>&1 &
static_pid=$!

step "private database"
"$fabtrack" db start --data-dir "$work/db" >/dev/null
owner="host=$work/db/run dbname=fabtrack user=fabtrack"
q() { psql "$owner" -X -At -v ON_ERROR_STOP=1 -c "$1"; }
ingest() { "$fabtrack" ingest --data-dir "$work/db" "$@" >>"$work/ingest.log" 2>&1 ||
  { cat "$work/ingest.log"; fail "ingest $*"; }; }

# Each example is one night of the lab cluster; its date is in the file name.
for f in "$repo"/examples/lab-cluster/*.txt; do
  ingest "$f" --cluster lab --at "$(basename "$f" | cut -c1-10)T02:00:00Z"
done
# Other collectives, a failed run and three tables in one file; never analyzed.
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
for f in t02_allgather_oldest_columns_failed.txt t03_broadcast_root_column_check_off.txt \
  t06_allreduce_newest_16rank_pci_ids.txt j01_allreduce_complete.json t12_three_tables_one_file.txt; do
  ingest "$repo/tests/fixtures/nccl_tests/$f" --cluster mixed --at "$now"
done

# Real all-reduce sweeps on this host (MPI over shared memory/TCP): the
# second one is the first one's baseline in the drill-down and is bracketed
# by the port counters of a fixture RoCE host.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
harness=(-b 8 -e 64K -f 4 -n 10 -w 2)
timeout 300 "$fabtrack" sweep --data-dir "$work/db" --cluster local --nodes 1,2 --ports off \
  --output-dir "$work/sweep1" -- "${harness[@]}" >"$work/sweep1.log" 2>&1 ||
  { cat "$work/sweep1.log"; fail "first sweep failed"; }
timeout 300 "$fabtrack" sweep --data-dir "$work/db" --cluster local --nodes 1,2 \
  --sysfs "$repo/tests/fixtures/sysfs/roce_host" --ports local \
  --output-dir "$work/sweep2" -- "${harness[@]}" >"$work/sweep2.log" 2>&1 ||
  { cat "$work/sweep2.log"; fail "second sweep failed"; }
grep -q "port counters of 1 node" "$work/sweep2.log" ||
  { cat "$work/sweep2.log"; fail "the second sweep did not bracket its runs with port counters"; }

# A step-mode sweep (the training view): a simulated data-parallel step on 1
# and 2 ranks.
timeout 300 "$fabtrack" sweep --data-dir "$work/db" --cluster training --nodes 1,2 --ports off \
  --output-dir "$work/sweep3" -- --step --model-params 2M --grad-dtype fp32 --bucket 1M \
  --backward-ms 50 --steps 4 --warmup-steps 1 --link-probe 0 >"$work/sweep3.log" 2>&1 ||
  { cat "$work/sweep3.log"; fail "step sweep failed"; }

# Real training jobs (NCCL Inspector) beside the nightly benchmarks of their
# node count: the lab's 1/2/4-node night stored again on 2025-10-15, a 2-node
# run 45 days before the job (outside job_fabric's 30-day lookback) and one the
# day after it (not a baseline: it ran later), then job 48213 (2 nodes x 8
# GPUs, 2025-10-16) as its per-rank JSON dump and, as job 48213-prom, in the
# Prometheus textfile form (no timestamps: it counts as ended when ingested).
for n in 1 2 4; do
  ingest "$repo/examples/lab-cluster/2026-11-28_allreduce_${n}node.txt" --cluster jobs \
    --at 2025-10-15T02:00:00Z
done
ingest "$repo/tests/fixtures/nccl_tests/t06_allreduce_newest_16rank_pci_ids.txt" --cluster jobs \
  --at 2025-09-01T02:00:00Z
ingest "$repo/tests/fixtures/nccl_tests/j01_allreduce_complete.json" --cluster jobs \
  --at 2025-10-17T02:00:00Z
inspector() { "$fabtrack" inspector ingest --data-dir "$work/db" "$@" >>"$work/inspector.log" 2>&1 ||
  { cat "$work/inspector.log"; fail "inspector ingest $*"; }; }
inspector "$repo/tests/fixtures/inspector/nccl-inspector-48213" --cluster jobs
inspector "$repo/tests/fixtures/inspector/prom" --cluster jobs --job 48213-prom
[[ $(q "SELECT string_agg(job_id || ':' || nnodes || 'x' || nranks, ' ' ORDER BY job_id)
        FROM inspector_jobs WHERE cluster = 'jobs'") == "48213:2x16 48213-prom:2x16" ]] ||
  { cat "$work/inspector.log"; fail "the Inspector jobs were not stored as expected"; }

# Two snapshots per host, so that counter increases exist.
snapshot() {  # TREE (a fixture name, or a path) CLUSTER HOST
  local tree=$1
  [[ $tree == /* ]] || tree=$repo/tests/fixtures/sysfs/$tree
  "$fabtrack" counters snapshot --store --data-dir "$work/db" --sysfs "$tree" \
    --cluster "$2" --host "$3" >/dev/null 2>>"$work/snapshot.log" ||
    { cat "$work/snapshot.log"; fail "snapshot of $1"; }
}
local_host=$(q "SELECT hosts[1] FROM runs WHERE cluster = 'local' LIMIT 1")
for round in 1 2; do
  snapshot ndr_8hca lab lab-node1
  snapshot mixed_faults lab lab-node2
  snapshot roce_host local "$local_host"
  [[ $round == 2 ]] || sleep 1
done
echo "stored: $(q "SELECT string_agg(cluster || ' ' || n || ' runs', ', ' ORDER BY cluster)
                   FROM (SELECT cluster, count(*) n FROM runs GROUP BY cluster) c"),
        $(q "SELECT count(*) FROM port_counter_samples") port samples,
        $(q "SELECT count(*) FROM run_port_deltas") run port deltas,
        $(q "SELECT count(*) FROM inspector_jobs") Inspector jobs"

# Four lab hosts' GPU/NIC wiring (NCCL topology dumps): three rail-optimized
# alike, lab-node3 with its NICs across the CPU interconnect (SYS). The
# analysis below turns it into a topology_odd_node finding.
topo="$repo/tests/fixtures/topology/node"
for h in lab-node1:nccl_xml_rail8.xml lab-node2:nccl_xml_rail8.xml lab-node3:nccl_xml_nic_sys.xml \
  lab-node4:nccl_xml_rail8.xml; do
  "$fabtrack" topology ingest "$topo/${h#*:}" --host "${h%%:*}" --cluster lab --data-dir "$work/db" \
    >>"$work/topology.log" 2>&1 || { cat "$work/topology.log"; fail "topology ingest $h"; }
done

# A real `fabtrack locate` stored for cluster local, linked to the second
# sweep: four "nodes" (each rank in its own UTS namespace on this host,
# tests/support/uts-mpirun.sh) probed in pairs by fabtrack-pairprobe over MPI.
# What the locate panel must say is written from locate's own JSON, not from
# the database, into a table the panel's expectations read.
sweep2=$(q "SELECT sweep_id FROM runs WHERE cluster = 'local' ORDER BY started_at DESC, id DESC LIMIT 1")
rc=0
timeout 300 "$fabtrack" locate --data-dir "$work/db" --cluster local --sweep-id "$sweep2" \
  --hosts dash-n1,dash-n2,dash-n3,dash-n4 --mpirun "$repo/tests/support/uts-mpirun.sh" \
  --format json -- --stream-ms 20 --reps 2 --latency-iters 50 >"$work/locate.json" 2>"$work/locate.err" || rc=$?
((rc <= 2)) || { cat "$work/locate.err"; fail "locate exited $rc"; }
grep -q "stored for cluster local" "$work/locate.err" || { cat "$work/locate.err"; fail "locate did not store its verdict"; }
python3 - "$work/locate.json" "$rc" >"$work/locate.sql" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
words = [("node " + s["name"] if s["kind"] == "node" else "the %s %s" % (s["kind"], s["name"]))
         + " is slow (score %.1f)" % s["score"] for s in v["suspects"]]
suspects = "; or else ".join(words) or "no fault found"
verdict = {0: "clear", 1: "warning", 2: "critical"}[int(sys.argv[2])]
lit = lambda t: "'" + t.replace("'", "''") + "'"
print("CREATE TABLE dashboards_test_locate AS SELECT %s::text AS suspects, %s::text AS verdict"
      % (lit(suspects), lit(verdict)))
PY
q "$(cat "$work/locate.sql")" >/dev/null
echo "locate: exit $rc, $(q "SELECT suspects FROM dashboards_test_locate")"

# A real job found stuck by `fabtrack ras watch` (cluster jobs): NCCL RAS
# played by the stand-in, its counts frozen with rank 2 (on 10.88.0.12) two
# behind. The stuck-job alert rule fires for it and the analysis makes it a
# stuck_job problem. What the RAS panels show of it comes from what fabtrack
# knows of the job's two hosts (the hosts file maps RAS's addresses to them):
# both wired as the rail-optimized topology dump (GPU 0's NIC), their ports
# from the fixture tree, gpu-h100-b02's mlx5_3 on other firmware, and its
# link_downed up by 2 during the watch (stored once the watch's first
# snapshot is, so it falls inside the window: 9 s of snapshots leave a
# loaded machine time to store it): a port change and a node fact.
ras_hosts=(gpu-h100-b01 gpu-h100-b02)
printf '10.88.0.11 %s\n10.88.0.12 %s\n' "${ras_hosts[@]}" >"$work/ras-hosts"
for h in "${ras_hosts[@]}"; do
  "$fabtrack" topology ingest "$topo/nccl_xml_rail8.xml" --host "$h" --cluster jobs \
    --data-dir "$work/db" >>"$work/topology.log" 2>&1 || { cat "$work/topology.log"; fail "topology ingest $h"; }
  cp -a "$repo/tests/fixtures/sysfs/ndr_8hca" "$work/sysfs-$h"
done
ras_mlx5_3=$(find "$work/sysfs-gpu-h100-b02/devices" -type d -path '*/infiniband/mlx5_3')
[[ -n $ras_mlx5_3 && -f $ras_mlx5_3/ports/1/counters/link_downed ]] ||
  fail "the fixture tree has no mlx5_3 port 1 link_downed"
echo 28.40.1000 >"$ras_mlx5_3/fw_ver"
for h in "${ras_hosts[@]}"; do snapshot "$work/sysfs-$h" jobs "$h"; done
python3 "$repo/tests/support/ras_stand_in.py" frozen "$work/ras.port" >"$work/ras.log" 2>&1 &
ras_pid=$!
for _ in $(seq 100); do [[ -s $work/ras.port ]] && break; sleep 0.1; done
[[ -s $work/ras.port ]] || { kill "$ras_pid"; cat "$work/ras.log"; fail "the RAS stand-in did not start"; }
timeout 60 "$fabtrack" ras watch --data-dir "$work/db" --cluster jobs --job 48777 --every 1 --count 10 \
  --host 127.0.0.1 --port "$(cat "$work/ras.port")" --hosts-file "$work/ras-hosts" --no-resolve \
  >"$work/ras-watch.txt" 2>&1 &
watch_pid=$!
for _ in $(seq 100); do
  [[ $(q "SELECT count(*) FROM ras_snapshots WHERE cluster = 'jobs' AND job_id = '48777'") != 0 ]] && break
  sleep 0.1
done
echo $(($(cat "$ras_mlx5_3/ports/1/counters/link_downed") + 2)) >"$ras_mlx5_3/ports/1/counters/link_downed"
snapshot "$work/sysfs-gpu-h100-b02" jobs gpu-h100-b02
rc=0
wait "$watch_pid" || rc=$?
kill "$ras_pid" 2>/dev/null || true
[[ $rc == 2 ]] && grep -q "alert: new: job 48777 stuck" "$work/ras-watch.txt" ||
  { cat "$work/ras-watch.txt"; fail "ras watch of the frozen job exited $rc"; }
grep -q "port gpu-h100-b02: mlx5_3 port 1 link_downed +2 at " "$work/ras-watch.txt" &&
  grep -q "node gpu-h100-b02: fw_ver mlx5_3 28.40.1000" "$work/ras-watch.txt" ||
  { cat "$work/ras-watch.txt"; fail "ras watch did not join the frozen job's host with its ports and facts"; }
echo "ras watch: job 48777 stuck, $(q "SELECT count(*) FROM ras_snapshots") snapshots stored"
# A job with a process RAS declared dead (NCCL 2.29+'s event stream): the
# watch ends on the PEER_DEAD and the dead-process alert rule fires for it.
python3 "$repo/tests/support/ras_stand_in.py" dead "$work/ras-dead.port" >"$work/ras-dead.log" 2>&1 &
ras_pid=$!
for _ in $(seq 100); do [[ -s $work/ras-dead.port ]] && break; sleep 0.1; done
[[ -s $work/ras-dead.port ]] || { kill "$ras_pid"; cat "$work/ras-dead.log"; fail "the RAS stand-in did not start"; }
rc=0
timeout 60 "$fabtrack" ras watch --data-dir "$work/db" --cluster jobs --job 48779 --every 0.2 --count 5 \
  --host 127.0.0.1 --port "$(cat "$work/ras-dead.port")" --no-resolve >"$work/ras-dead.txt" 2>&1 || rc=$?
kill "$ras_pid" 2>/dev/null || true
[[ $rc == 2 ]] && grep -q "alert: new: job 48779 has a process declared dead" "$work/ras-dead.txt" ||
  { cat "$work/ras-dead.txt"; fail "ras watch of the job with a dead process exited $rc"; }
echo "ras watch: job 48779 has a dead process, $(q "SELECT count(*) FROM ras_events") event(s) stored"
# A healthy job: counts advancing at every query.
python3 "$repo/tests/support/ras_stand_in.py" healthy "$work/ras-healthy.port" >"$work/ras-healthy.log" 2>&1 &
ras_pid=$!
for _ in $(seq 100); do [[ -s $work/ras-healthy.port ]] && break; sleep 0.1; done
[[ -s $work/ras-healthy.port ]] || { kill "$ras_pid"; cat "$work/ras-healthy.log"; fail "the RAS stand-in did not start"; }
rc=0
timeout 60 "$fabtrack" ras watch --data-dir "$work/db" --cluster jobs --job 48781 --every 0.2 --count 3 \
  --host 127.0.0.1 --port "$(cat "$work/ras-healthy.port")" --no-resolve >"$work/ras-healthy.txt" 2>&1 || rc=$?
kill "$ras_pid" 2>/dev/null || true
[[ $rc == 0 ]] || { cat "$work/ras-healthy.txt"; fail "ras watch of the healthy job exited $rc"; }
# A big stuck job: 4,096 ranks, 60 % of them behind, so that its findings
# name thousands of ranks (what the rank tables must cap).
python3 "$repo/tests/support/ras_stand_in.py" laggards "$work/ras-big.port" >"$work/ras-big.log" 2>&1 &
ras_pid=$!
for _ in $(seq 100); do [[ -s $work/ras-big.port ]] && break; sleep 0.1; done
[[ -s $work/ras-big.port ]] || { kill "$ras_pid"; cat "$work/ras-big.log"; fail "the RAS stand-in did not start"; }
rc=0
timeout 120 "$fabtrack" ras watch --data-dir "$work/db" --cluster jobs --job 48783 --every 0.5 --count 2 \
  --host 127.0.0.1 --port "$(cat "$work/ras-big.port")" --no-resolve --timeout 30 >"$work/ras-big.txt" 2>&1 || rc=$?
kill "$ras_pid" 2>/dev/null || true
[[ $rc == 2 ]] && grep -q "2457 of 4096 ranks behind hold it" "$work/ras-big.txt" ||
  { head -c 3000 "$work/ras-big.txt"; fail "ras watch of the big stuck job exited $rc"; }

step "analysis"
"$fabtrack" analyze --help >/dev/null 2>&1 || fail "this fabtrack has no analyze command"
for cluster in lab local training jobs; do
  rc=0
  "$fabtrack" analyze --data-dir "$work/db" --cluster "$cluster" --textfile "$work/$cluster.prom" \
    >"$work/analyze-$cluster.txt" 2>&1 || rc=$?
  # 0/1/2: nothing, warnings, critical findings; 3: could not analyze
  [[ $rc -le 2 ]] || { cat "$work/analyze-$cluster.txt"; fail "analyze $cluster exited $rc"; }
  echo "analyze $cluster: exit $rc, $(q "SELECT count(*) FROM findings WHERE cluster = '$cluster'") finding(s)"
  # The textfile carries the metrics the Prometheus rules read.
  for metric in fabtrack_analysis_timestamp_seconds fabtrack_findings; do
    grep -q "^$metric{" "$work/$cluster.prom" || fail "$cluster.prom has no $metric"
  done
done
# The job panels compare with what job_fabric concluded: job 48213's all_reduce
# at 8 MiB ran at ~60 % of the 2-node nightly baseline.
[[ $(q "SELECT count(*) FROM findings WHERE cluster = 'jobs' AND kind = 'job_fabric'
        AND subject = 'job 48213'") == 1 ]] ||
  { cat "$work/analyze-jobs.txt"; fail "job_fabric did not flag job 48213"; }
# The stuck job watched above is a problem of the jobs cluster.
[[ $(q "SELECT count(*) FROM findings WHERE cluster = 'jobs' AND kind = 'stuck_job'
        AND subject = 'job 48777'") == 1 ]] ||
  { cat "$work/analyze-jobs.txt"; fail "ras_job did not make job 48777 a stuck_job finding"; }

# The change-point annotation needs a regression finding; this short history
# may not give the analyzer one. Clearly labelled test data, lab only.
if [[ $(q "SELECT count(*) FROM findings WHERE cluster = 'lab' AND evidence ? 'change_point'") == 0 ]]; then
  q "INSERT INTO findings (cluster, kind, severity, subject, run_id, value, baseline, unit, message,
                           evidence, first_seen, last_seen, run_started_at, nodes)
     SELECT 'lab', 'test_change_point', 'warning', 'dashboards_test', id, avg_busbw_gbps, 49.87, 'GB/s',
            'test data: a change point for the annotation',
            jsonb_build_object('change_point', jsonb_build_object('run_id', id, 'started_at', started_at)),
            started_at, started_at, started_at, nodes
     FROM runs WHERE cluster = 'lab' AND network = 'Socket'" >/dev/null
fi

step "Grafana's role"
q "SELECT 1 FROM pg_roles WHERE rolname = 'fabtrack_reader'" | grep -q 1 ||
  fail "no fabtrack_reader role: this fabtrack lacks migration 004"
FABTRACK_GRAFANA_DB_PASSWORD="t$RANDOM$RANDOM" \
  psql "$owner" -X -q -f "$dash/postgres/grafana-role.sql" >/dev/null
# ... twice: idempotent
FABTRACK_GRAFANA_DB_PASSWORD="t$RANDOM$RANDOM" \
  psql "$owner" -X -q -f "$dash/postgres/grafana-role.sql" >/dev/null
reader="host=$work/db/run dbname=fabtrack user=fabtrack_grafana"
for write in "DELETE FROM findings" "INSERT INTO clusters (name) VALUES ('x')" \
  "UPDATE findings SET state = 'resolved'" "CREATE TABLE x (a int)"; do
  if psql "$reader" -X -q -c "$write" >/dev/null 2>&1; then fail "Grafana's role may: $write"; fi
done
if env -u FABTRACK_GRAFANA_DB_PASSWORD psql "$owner" -X -q -f "$dash/postgres/grafana-role.sql" \
  >/dev/null 2>&1; then
  fail "grafana-role.sql ran without FABTRACK_GRAFANA_DB_PASSWORD"
fi
# Tables of later migrations reach the reader through 004's default privileges.
for table in step_results inspector_jobs inspector_collectives; do
  psql "$reader" -X -q -At -c "SELECT count(*) FROM $table" >/dev/null ||
    fail "Grafana's role cannot read $table"
done
echo "fabtrack_grafana reads, and cannot write"

step "panels, variables and annotations as Grafana runs them"
"${helper[@]}" panels --db "$reader" --expectations "$here/expectations.json" \
  --datasource "$dash/grafana/provisioning/datasources/fabtrack.yaml" "${dashboards[@]}" \
  >"$work/panels.log" || { cat "$work/panels.log"; fail "panel queries"; }
tail -n 1 "$work/panels.log"

step "Grafana alert rules"
"${helper[@]}" alerting --db "$reader" --expectations "$here/expectations.json" \
  "$dash/grafana/alerting/fabtrack-rules.yaml"
if ! wait "$static_pid"; then cat "$work/static.log"; fail "static checks"; fi
static_pid=
cat "$work/static.log"
echo "dashboards: ok"
