#!/usr/bin/env bash
# `fabtrack locate` accuracy on a real two-tier netns fabric (issue 20):
# 8 nodes on 2 leaves; PLACEMENTS (default 20) placements, each one fault
# drawn at random (seeded) among {node link throttled, uplink throttled
# (leaf -> spine), node CPU starved (cgroup quota), no fault} on a random
# node / leaf (CPU: not node 1, where mpirun runs). Prints one line per
# placement and a summary: top-1 right among faulted placements, clean
# placements without a suspect, rounds (budget 2*ceil(log2 8)+2 = 8) and
# seconds per locate. Needs root, ip netns, Open MPI.
# Usage: bench/run_locate_netns_bench.sh [FABTRACK] [PLACEMENTS] [SEED]
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
fabtrack=${1:-$repo/build/cli/fabtrack}
placements=${2:-20}
seed=${3:-20}
fabric="$repo/scripts/netns-fabric.sh"
prefix="lb$$"
prefix=${prefix:0:10}
work=$(mktemp -d)
chmod 755 "$work"
cleanup() {
  "$fabric" destroy --prefix "$prefix" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
[[ $(id -u) -eq 0 ]] || { echo "needs root" >&2; exit 1; }
"$fabric" create 8 --leaves 2 --prefix "$prefix" >/dev/null 2>&1
"$fabric" topology --prefix "$prefix" >"$work/fabric.topology"
hosts=$(seq -s, -f "$prefix-node%g" 1 8)
RANDOM=$seed
for ((p = 1; p <= placements; p++)); do
  kind=$((RANDOM % 4))
  node=$((RANDOM % 8 + 1))
  leaf=$((RANDOM % 2 + 1))
  case $kind in
    0) want="none"; undo=() ;;
    1) "$fabric" throttle "$node" 40mbit --prefix "$prefix" >/dev/null 2>&1
       want="node $prefix-node$node"; undo=(unthrottle "$node") ;;
    2) "$fabric" throttle-uplink "leaf$leaf" 40mbit --prefix "$prefix" >/dev/null 2>&1
       want="uplink leaf$leaf-spine"; undo=(unthrottle-uplink "leaf$leaf") ;;
    3) node=$((RANDOM % 7 + 2))
       "$fabric" cpulimit "$node" 20 --prefix "$prefix" >/dev/null 2>&1
       want="node $prefix-node$node"; undo=(uncpulimit "$node") ;;
  esac
  rc=0
  "$fabtrack" locate --hosts "$hosts" --topology "$work/fabric.topology" --format json \
    --mpirun "$fabric mpirun --prefix $prefix --" -- --one-at-a-time >"$work/p$p.json" 2>"$work/p$p.err" || rc=$?
  if ((${#undo[@]})); then "$fabric" "${undo[@]}" --prefix "$prefix" >/dev/null 2>&1; fi
  python3 - "$work/p$p.json" "$want" "$rc" "$p" "$kind" >>"$work/lines" <<'PY'
import json, sys
path, want, rc, p, kind = sys.argv[1:]
kinds = ["none", "node link", "uplink", "node CPU"]
try:
    v = json.load(open(path))
except Exception:
    print(f"{p}\t{kinds[int(kind)]}\t{want}\t-\t0\t0\t0\t{rc}")
    sys.exit()
top = f"{v['suspects'][0]['kind']} {v['suspects'][0]['name']}" if v["suspects"] else "none"
print(f"{p}\t{kinds[int(kind)]}\t{want}\t{top}\t{int(top == want)}\t{v['rounds']}\t{v['seconds']:.1f}\t{rc}")
PY
  tail -1 "$work/lines"
done
python3 - "$work/lines" <<'PY'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
faulted = [r for r in rows if r[1] != "none"]
clean = [r for r in rows if r[1] == "none"]
print(f"\nplacements {len(rows)}: faulted {len(faulted)}, top-1 right "
      f"{sum(int(r[4]) for r in faulted)}/{len(faulted)}; clean {len(clean)}, no suspect "
      f"{sum(int(r[4]) for r in clean)}/{len(clean)}")
for kind in ["node link", "uplink", "node CPU", "none"]:
    rs = [r for r in rows if r[1] == kind]
    if rs:
        print(f"  {kind}: {sum(int(r[4]) for r in rs)}/{len(rs)} right, rounds max "
              f"{max(int(r[5]) for r in rs)}, seconds max {max(float(r[6]) for r in rs):.1f}")
print(f"rounds max {max(int(r[5]) for r in rows)} (budget 8), seconds max "
      f"{max(float(r[6]) for r in rows):.1f} (limit 90)")
PY
