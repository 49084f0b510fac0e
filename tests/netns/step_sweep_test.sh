#!/usr/bin/env bash
# The training view for real: step-mode sweeps (a simulated data-parallel
# step, gradients all-reduced in buckets during the backward pass) over 1 and
# 2 "nodes" of the netns fabric into a private database, then analyzed. A
# healthy link hides the communication behind the backward pass (no
# step_time finding, the report's training lines show a small idle share);
# a throttled link leaves it exposed: a critical step_time finding with the
# GPU-hours it costs. Fails (never skips) without root / ip netns.
# Usage: tests/netns/step_sweep_test.sh SOURCE_DIR FABTRACK
set -euo pipefail
repo=$1
fabtrack=$2
fabric="$repo/scripts/netns-fabric.sh"
prefix="st$$"
prefix=${prefix:0:10}
work=$(mktemp -d)
chmod 755 "$work"
cleanup() {
  "$fabtrack" db stop --data-dir "$work/db" >/dev/null 2>&1 || true
  "$fabric" destroy --prefix "$prefix" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || fail "needs root for network namespaces"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export FABTRACK_SPOOL_DIR=$work/spool

"$fabric" create 2 --prefix "$prefix" >/dev/null
"$fabtrack" db start --data-dir "$work/db" >/dev/null 2>&1
db="host=$work/db/run dbname=fabtrack user=fabtrack"

# 2M fp32 parameters = 8 MB of gradients in 8 buckets, 150 ms of backward:
# over a veth link the reductions take a few ms and hide; at 100 Mbit/s they
# take ~0.7 s and cannot.
step_sweep_and_analyze() {
  local name=$1 since
  since=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  sleep 1
  "$fabtrack" sweep --db "$db" --cluster training --nodes 1-2 --ports off \
    --mpirun "$fabric mpirun --prefix $prefix --" -- --step --model-params 2M --grad-dtype fp32 \
    --bucket 1M --forward-ms 20 --backward-ms 150 --steps 6 --warmup-steps 1 --link-probe 0 \
    >"$work/$name.sweep.log" 2>&1 || { cat "$work/$name.sweep.log"; fail "$name sweep failed"; }
  local rc=0
  "$fabtrack" analyze --db "$db" --cluster training --since "$since" --format json \
    >"$work/$name.json" 2>"$work/$name.err" || rc=$?
  echo "$rc" >"$work/$name.status"
  echo "$name: analyze exit $rc"
  python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
for t in d['training']:
    print('   training', t['nodes'], 'nodes: step %.1f ms, exposed %.1f ms, idle %.1f%%' %
          (t['step_ms_p50'], t['exposed_ms_p50'], 100 * t['idle_share_p50']))
for f in d['findings']:
    print('  ', f['severity'], f['kind'], '-', f['message'][:200])" "$work/$name.json"
}
# training NAME NODES EXPR: a python expression over the training line t of that node count.
training() {
  python3 -c "
import json, sys
t = [t for t in json.load(open(sys.argv[1]))['training'] if t['nodes'] == int(sys.argv[2])][0]
sys.exit(0 if eval(sys.argv[3]) else 1)" "$work/$1.json" "$2" "$3"
}

step_sweep_and_analyze healthy
[[ $(cat "$work/healthy.status") == 0 ]] || fail "healthy: expected exit 0"
training healthy 1 "t['step_ms_p50'] >= 170 and t['gpus'] == 1" || fail "healthy: 1-node step"
training healthy 2 "t['idle_share_p50'] < 0.2" || fail "healthy: communication not hidden"
[[ $(psql "$db" -Atc "SELECT count(*) FROM step_samples") == 12 ]] || fail "expected 12 step rows"

"$fabric" throttle 2 100mbit --prefix "$prefix" >/dev/null
step_sweep_and_analyze throttled
"$fabric" unthrottle 2 --prefix "$prefix" >/dev/null
[[ $(cat "$work/throttled.status") == 2 ]] || fail "throttled: expected exit 2 (critical)"
training throttled 2 "t['idle_share_p50'] > 0.5" || fail "throttled: idle share not above 50%"
python3 -c "
import json, sys
fs = json.load(open(sys.argv[1]))['findings']
ok = any(f['kind'] == 'step_time' and f['severity'] == 'critical' and f['nodes'] == 2 and
         'GPU-hours per 1000 steps' in f['message'] for f in fs)
sys.exit(0 if ok else 1)" "$work/throttled.json" || fail "throttled: no critical step_time at 2 nodes"
echo "training view on the one-machine fabric: hidden when healthy, exposed and flagged when throttled"
