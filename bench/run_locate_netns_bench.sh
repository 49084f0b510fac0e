#!/usr/bin/env bash
# `fabtrack locate` accuracy on a real two-tier netns fabric (issues 20, 30):
# 8 nodes on 2 leaves (scripts/netns-fabric.sh create 8 --leaves 2), one
# fabric per seed. Each seed has PLACEMENTS placements, each run REPS times
# in a row with its fault left in place (one placement's runs differ only
# by the machine's noise). A placement is one of: a node's link throttled to
# 200 Mbit/s both ways, a leaf's uplink throttled to 200 Mbit/s from the
# leaf toward the spine, a node's CPUs capped at 10% per 10 ms (cgroup; not
# node 1, where mpirun runs), or no fault. Every run covers, whatever the
# seeds: the first seed's first placement throttles node1's link (the
# launcher's own node), the second seed's first leaf1's uplink (the first
# leaf), the third seed's first leaf2's uplink (the last leaf), and every
# seed's second placement is clean; the rest are drawn from the seed.
#
# Each locate runs in its own session (setsid): on one machine the 8
# "nodes" share its CPUs, and with the kernel's autogroup scheduling
# node1's rank (a child of mpirun) would otherwise share one CPU share with
# whatever else the caller's session runs (a build beside it made node1's
# pairs 10-20x slower than the others' on a clean fabric).
#
# Prints one line per locate (seed, placement, repetition, kind, wanted
# first suspect, first suspect, right, rounds, seconds, exit, settled,
# confidence, suspects) and a summary: top-1 right among faulted runs (by
# kind), faulted runs that ended "settled, no suspects" (exit 0), clean runs
# with a suspect and suspects per clean run, seconds per locate (median,
# max; limit 90), and the load average before and after. Needs root, ip
# netns, Open MPI.
# Usage: bench/run_locate_netns_bench.sh [FABTRACK] [SEEDS] [PLACEMENTS] [REPS]
#   SEEDS comma-separated (default 11,23,37), PLACEMENTS per seed (default 2),
#   REPS per placement (default 3).
# Environment: LOCATE_BENCH_KEEP=DIR keeps every locate's JSON and stderr
# there (s<seed>-p<placement>-r<rep>.json/.err), so a miss can be replayed;
# LOCATE_BENCH_LAUNCHER=1 makes every faulted placement node1's link (the
# launcher's own node), to repeat the placement that missed.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
fabtrack=${1:-$repo/build/cli/fabtrack}
IFS=, read -r -a seeds <<<"${2:-11,23,37}"
placements=${3:-2}
reps=${4:-3}
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
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf 'seed\tplacement\trep\tkind\twant\ttop\tright\trounds\tseconds\texit\tsettled\tconfidence\tsuspects\n'
for ((s = 0; s < ${#seeds[@]}; s++)); do
  seed=${seeds[s]}
  "$fabric" create 8 --leaves 2 --prefix "$prefix" >/dev/null 2>&1
  "$fabric" topology --prefix "$prefix" >"$work/fabric.topology"
  hosts=$(seq -s, -f "$prefix-node%g" 1 8)
  RANDOM=$seed
  for ((p = 1; p <= placements; p++)); do
    kind=$((RANDOM % 4))
    node=$((RANDOM % 8 + 1))
    leaf=$((RANDOM % 2 + 1))
    cpu_node=$((RANDOM % 7 + 2))
    if ((p == 1 && s == 0)); then kind=1 node=1; fi
    if ((p == 1 && s == 1)); then kind=2 leaf=1; fi
    if ((p == 1 && s == 2)); then kind=2 leaf=2; fi
    if ((p == 2)); then kind=0; fi
    if [[ ${LOCATE_BENCH_LAUNCHER:-} == 1 ]] && ((p != 2)); then kind=1 node=1; fi
    case $kind in
      0) want="none"; undo=() ;;
      1) "$fabric" throttle "$node" 200mbit --prefix "$prefix" >/dev/null 2>&1
         want="node $prefix-node$node"; undo=(unthrottle "$node") ;;
      2) "$fabric" throttle-uplink "leaf$leaf" 200mbit --prefix "$prefix" >/dev/null 2>&1
         want="uplink leaf$leaf-spine"; undo=(unthrottle-uplink "leaf$leaf") ;;
      3) "$fabric" cpulimit "$cpu_node" 10 --period-us 10000 --prefix "$prefix" >/dev/null 2>&1
         want="node $prefix-node$cpu_node"; undo=(uncpulimit "$cpu_node") ;;
    esac
    for ((r = 1; r <= reps; r++)); do
      out="$work/s$seed-p$p-r$r"
      rc=0
      setsid -w "$fabtrack" locate --hosts "$hosts" --topology "$work/fabric.topology" \
        --format json --mpirun "$fabric mpirun --prefix $prefix --" -- --one-at-a-time \
        >"$out.json" 2>"$out.err" || rc=$?
      python3 - "$out.json" "$want" "$rc" "$seed" "$p" "$r" "$kind" <<'PY' | tee -a "$work/lines"
import json, sys
path, want, rc, seed, p, r, kind = sys.argv[1:]
kinds = ["none", "node link", "uplink", "node CPU"]
head = f"{seed}\t{p}\t{r}\t{kinds[int(kind)]}\t{want}"
try:
    v = json.load(open(path))
except Exception:
    print(f"{head}\t-\t0\t0\t0\t{rc}\tFalse\t0\t0")
    sys.exit()
s = v["suspects"]
top = f"{s[0]['kind']} {s[0]['name']}" if s else "none"
print(f"{head}\t{top}\t{int(top == want)}\t{v['rounds']}\t{v['seconds']:.1f}\t{rc}"
      f"\t{v['settled']}\t{v.get('confidence', '-')}\t{len(s)}")
PY
      if [[ -n ${LOCATE_BENCH_KEEP:-} ]]; then
        mkdir -p "$LOCATE_BENCH_KEEP" && cp "$out.json" "$out.err" "$LOCATE_BENCH_KEEP/"
      fi
    done
    if ((${#undo[@]})); then "$fabric" "${undo[@]}" --prefix "$prefix" >/dev/null 2>&1; fi
  done
  "$fabric" destroy --prefix "$prefix" >/dev/null 2>&1
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 "$repo/bench/locate_netns_summary.py" "$work/lines"
