#!/usr/bin/env bash
# `fabtrack locate` on a real two-tier fabric: 8 netns nodes on 2 leaves
# under one spine (scripts/netns-fabric.sh create 8 --leaves 2), pair probes
# by fabtrack-pairprobe over TCP across veth -> leaf bridge -> uplink ->
# spine bridge. One placement of each kind:
#   no fault                 -> no suspect, exit 0
#   a node's link throttled  -> that node first (both directions shaped)
#   an uplink throttled      -> that uplink first (leaf -> spine direction
#                               only: one-way probes tell which leaf)
#   a node's CPU starved     -> that node first (cgroup quota on the node's
#                               MPI processes, scripts/netns-fabric.sh cpulimit:
#                               burners would starve every node on this
#                               shared 2-core machine alike, not one node)
# The >= 20-placement accuracy run is bench/run_locate_netns_bench.sh.
# NOT registered in ctest yet: on the shared 2-core build machine a clean
# fabric gives false suspects (cross-leaf pairs, one extra veth and bridge
# hop, stream at ~0.4-0.7x of intra-leaf pairs; 8-byte latency of one pair
# doubles under other work), which the grading's real-fabric thresholds
# (slow below 0.8x bandwidth / above 1.35x latency) call slow.
# Fails (never skips) without root / ip netns.
# Usage: tests/netns/locate_test.sh SOURCE_DIR FABTRACK
set -euo pipefail
repo=$1
fabtrack=$2
fabric="$repo/scripts/netns-fabric.sh"
prefix="lo$$"
prefix=${prefix:0:10}
work=$(mktemp -d)
chmod 755 "$work"
cleanup() {
  "$fabric" destroy --prefix "$prefix" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || fail "needs root for network namespaces"

"$fabric" create 8 --leaves 2 --prefix "$prefix" >/dev/null 2>&1
"$fabric" topology --prefix "$prefix" >"$work/fabric.topology"
hosts=$(seq -s, -f "$prefix-node%g" 1 8)

# locate NAME: one locate; JSON in $work/NAME.json, exit status echoed.
locate() {
  local name=$1 rc=0
  # In its own session: node1's rank, a child of mpirun, would otherwise
  # share one autogroup CPU share with the rest of the caller's session
  # (bench/run_locate_netns_bench.sh).
  setsid -w "$fabtrack" locate --hosts "$hosts" --topology "$work/fabric.topology" --format json \
    --mpirun "$fabric mpirun --prefix $prefix --" -- --one-at-a-time >"$work/$name.json" 2>"$work/$name.err" || rc=$?
  ((rc != 3)) || { cat "$work/$name.err"; fail "$name: locate could not run"; }
  python3 - "$work/$name.json" "$name" "$rc" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
print(f"{sys.argv[2]}: exit {sys.argv[3]}, {v['rounds']} round(s), {v['seconds']:.1f} s, "
      f"settled {v['settled']}, confidence {v['confidence']}, spread busbw "
      f"{100*v['busbw_spread']:.1f}% latency {100*v['latency_spread']:.1f}%")
for n in v["notes"]:
    print(f"   cleared: {n}")
for s in v["suspects"]:
    print(f"   {s['kind']} {s['name']} score {s['score']:.1f}")
    for e in s["evidence"][:3]:
        print(f"     {e}")
PY
  echo "$rc" >"$work/$name.status"
}
# expect NAME KIND SUBJECT: the first suspect is SUBJECT of KIND, within 90 s.
expect() {
  python3 - "$work/$1.json" "$2" "$3" <<'PY' || fail "$1: want $2 $3 first"
import json, sys
v = json.load(open(sys.argv[1]))
s = v["suspects"]
ok = bool(s) and s[0]["kind"] == sys.argv[2] and s[0]["name"] == sys.argv[3] and v["seconds"] <= 90
sys.exit(0 if ok else 1)
PY
}

locate clean
[[ $(cat "$work/clean.status") == 0 ]] || fail "clean: exit $(cat "$work/clean.status"), want 0"
python3 -c "import json,sys; sys.exit(1 if json.load(open(sys.argv[1]))['suspects'] else 0)" \
  "$work/clean.json" || fail "clean: a suspect without a fault"

"$fabric" throttle 6 40mbit --prefix "$prefix" >/dev/null 2>&1
locate node_link
"$fabric" unthrottle 6 --prefix "$prefix" >/dev/null 2>&1
expect node_link node "$prefix-node6"

"$fabric" throttle-uplink leaf1 40mbit --prefix "$prefix" >/dev/null 2>&1
locate uplink
"$fabric" unthrottle-uplink leaf1 --prefix "$prefix" >/dev/null 2>&1
expect uplink uplink leaf1-spine

"$fabric" cpulimit 3 20 --prefix "$prefix" >/dev/null 2>&1
locate cpu
"$fabric" uncpulimit 3 --prefix "$prefix" >/dev/null 2>&1
expect cpu node "$prefix-node3"

echo "locate on an 8-node 2-leaf netns fabric: clean, node link, uplink and CPU placements named"
