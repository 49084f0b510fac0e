#!/usr/bin/env bash
# The analyzer on real degraded runs: sweeps over 1..4 "nodes" of the netns
# fabric (MPI over TCP across veth links) into a private database, each judged
# on its own with the default settings. A clean sweep yields nothing at
# warning or above (exit 0); a node whose link is throttled yields a critical
# scaling_drop naming that node (exit 2); a node whose CPUs are hogged yields
# a latency finding (latency_jitter, or latency growing faster than the node
# count). Fails (never skips) without root / ip netns.
# Usage: tests/netns/analyzer_fabric_test.sh SOURCE_DIR FABTRACK
set -euo pipefail
repo=$1
fabtrack=$2
fabric="$repo/scripts/netns-fabric.sh"
prefix="an$$"
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

"$fabric" create 4 --prefix "$prefix" >/dev/null
"$fabtrack" db start --data-dir "$work/db" >/dev/null 2>&1
db="host=$work/db/run dbname=fabtrack user=fabtrack"

# sweep_and_analyze NAME [harness flags]: one sweep, judged alone; the JSON
# report lands in $work/NAME.json and the exit status in $work/NAME.status.
sweep_and_analyze() {
  local name=$1
  shift
  local since
  since=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  sleep 1
  "$fabtrack" sweep --db "$db" --cluster fabric --nodes 1-4 --ports off \
    --mpirun "$fabric mpirun --prefix $prefix --" -- -b 8 -e 4M -f 8 -n 20 -w 3 "$@" \
    >"$work/$name.sweep.log" 2>&1 || { cat "$work/$name.sweep.log"; fail "$name sweep failed"; }
  local rc=0
  "$fabtrack" analyze --db "$db" --cluster fabric --since "$since" --format json \
    >"$work/$name.json" 2>"$work/$name.err" || rc=$?
  echo "$rc" >"$work/$name.status"
  echo "$name: analyze exit $rc"
  python3 -c "
import json, sys
for f in json.load(open(sys.argv[1]))['findings']:
    print('  ', f['severity'], f['kind'], '-', f['message'][:160])" "$work/$name.json"
}
has() {  # has NAME KIND SEVERITY [HOST]: a finding of that kind/severity (naming HOST) exists
  python3 -c "
import json, sys
fs = json.load(open(sys.argv[1]))['findings']
ok = any(f['kind'] == sys.argv[2] and f['severity'] == sys.argv[3] and
         (len(sys.argv) < 5 or sys.argv[4] in (f['host'] or '') + f['message']) for f in fs)
sys.exit(0 if ok else 1)" "$work/$1.json" "${@:2}"
}

sweep_and_analyze clean
[[ $(cat "$work/clean.status") == 0 ]] || fail "a clean sweep gave findings at warning or above"

"$fabric" throttle 4 100mbit --prefix "$prefix" >/dev/null
sweep_and_analyze throttled --link-probe 4M
"$fabric" unthrottle 4 --prefix "$prefix" >/dev/null
[[ $(cat "$work/throttled.status") == 2 ]] || fail "throttled link: expected exit 2 (critical)"
has throttled scaling_drop critical "$prefix-node4" || fail "no critical scaling_drop naming $prefix-node4"

"$fabric" load 2 --cpus 2 --seconds 90 --prefix "$prefix" >/dev/null
sweep_and_analyze hog
# Every namespace shares this machine's CPUs, so a hog shows either as jitter
# within runs or as small-message latency growing far faster than the node
# count; either way a latency finding, never silence.
has hog latency_jitter warning || has hog scaling_drop warning ||
  fail "CPU hog: no latency_jitter or latency scaling finding"
python3 -c "
import json, sys
fs = json.load(open(sys.argv[1]))['findings']
sys.exit(0 if any(f['kind'] == 'latency_jitter' or 'latency' in f['message'] for f in fs) else 1)" \
  "$work/hog.json" || fail "CPU hog: the findings are not about latency"
echo "analyzer on the one-machine fabric: clean silent, throttle and CPU hog flagged"
