#!/usr/bin/env bash
# Issue 32 item 3 on real runs: MPI over TCP across two "nodes" of the netns
# fabric, the sweep's CPU bracket on (the default). A clean sweep stores each
# node's CPU window and is not reported as CPU-bound; with CPU burners in
# node 2 (netns-fabric.sh load: other work on that node) the sweep is
# reported as CPU-bound naming node 2 and only node 2, at warning, and
# nothing of that run stands as a critical (fabric) fault. Two nodes on the
# machine's CPUs: one rank per CPU at most, so the benchmark itself never
# oversubscribes. Fails (never skips) without root / ip netns.
# Usage: tests/netns/cpu_bound_test.sh SOURCE_DIR FABTRACK
set -euo pipefail
repo=$1
fabtrack=$2
fabric="$repo/scripts/netns-fabric.sh"
prefix="cb$$"
prefix=${prefix:0:10}
work=$(mktemp -d)
chmod 755 "$work"  # the embedded server runs as an unprivileged user
cleanup() {
  "$fabtrack" db stop --data-dir "$work/db" >/dev/null 2>&1 || true
  "$fabric" destroy --prefix "$prefix" >/dev/null 2>&1 || true
  [[ -n ${KEEP:-} ]] || rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || fail "needs root for network namespaces"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export FABTRACK_SPOOL_DIR=$work/spool

"$fabric" create 2 --prefix "$prefix" >/dev/null
"$fabtrack" db start --data-dir "$work/db" >/dev/null 2>&1
db="host=$work/db/run dbname=fabtrack user=fabtrack"
q() { psql "$db" -Atc "$1"; }

# sweep_and_analyze NAME: one sweep over 1 and 2 nodes, judged alone; the JSON
# report in $work/NAME.json, analyze's exit status in $work/NAME.status.
sweep_and_analyze() {
  local name=$1 since
  since=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  sleep 1
  timeout 300 "$fabtrack" sweep --db "$db" --cluster cpu --nodes 1-2 --ports off \
    --mpirun "$fabric mpirun --prefix $prefix --" -- -b 8 -e 1M -f 8 -n 50 -w 5 \
    >"$work/$name.sweep.log" 2>&1 || { cat "$work/$name.sweep.log"; fail "$name sweep failed"; }
  local rc=0
  timeout 120 "$fabtrack" analyze --db "$db" --cluster cpu --since "$since" --format json \
    >"$work/$name.json" 2>"$work/$name.err" || rc=$?
  echo "$rc" >"$work/$name.status"
  echo "$name: analyze exit $rc"
  python3 -c "
import json, sys
for f in json.load(open(sys.argv[1]))['findings']:
    print('  ', f['severity'], f['kind'], '-', f['message'][:300])" "$work/$name.json"
}

sweep_and_analyze clean
# Every node of every run has its window: 1 (1-node run) + 2 (2-node run).
windows=$(q "SELECT count(*) FROM run_cpu_windows w JOIN runs r ON r.id = w.run_id
             WHERE r.cluster = 'cpu'")
[[ $windows == 3 ]] || { q "SELECT * FROM run_cpu_windows"; fail "expected 3 CPU windows, got $windows"; }
q "SELECT host, round(other_cpus::numeric, 2), cpus, round(busy_fraction::numeric, 2) FROM run_cpu_windows ORDER BY run_id, host"
python3 - "$work/clean.json" <<'EOF' || fail "the clean sweep was reported as CPU-bound"
import json, sys
sys.exit(any(f['kind'] == 'cpu_bound' for f in json.load(open(sys.argv[1]))['findings']))
EOF

# Two CPU burners in node 2 for the rest of the test (destroy ends them).
"$fabric" load 2 --cpus 2 --seconds 600 --prefix "$prefix" >/dev/null
sleep 2
sweep_and_analyze loaded
q "SELECT host, round(other_cpus::numeric, 2), cpus, top_others FROM run_cpu_windows ORDER BY run_id DESC, host LIMIT 2"
python3 - "$work/loaded.json" "$prefix-node1" "$prefix-node2" <<'EOF' || fail "the loaded sweep was not reported as CPU-bound naming node 2 alone"
import json, sys
findings = json.load(open(sys.argv[1]))['findings']
quiet, busy = sys.argv[2], sys.argv[3]
cpu = [f for f in findings if f['kind'] == 'cpu_bound']
assert len(cpu) == 1, f"{len(cpu)} cpu_bound findings"
f = cpu[0]
assert f['severity'] == 'warning', f['severity']
assert f['host'] == busy, f['host']
assert f['message'].startswith(f"CPU-bound: node {busy} was busy"), f['message']
assert quiet not in f['message'], f['message']
# Nothing of that run is a critical fabric fault; what it explains says so.
for g in findings:
    if g.get('run_id') == f['run_id'] and g['kind'] != 'cpu_bound':
        assert g['severity'] != 'critical', g
        if g['severity'] == 'warning':
            assert g['evidence'].get('explained_by') == 'cpu_bound', g
EOF
[[ $(cat "$work/loaded.status") == 1 ]] || fail "loaded sweep: expected analyze exit 1 (warning), got $(cat "$work/loaded.status")"
echo "CPU in the data path: clean sweep silent, the busy node named as CPU-bound"
