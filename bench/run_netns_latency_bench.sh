#!/usr/bin/env bash
# Small-message all-reduce latency across the netns fabric (2 nodes, 1 rank
# each, TCP over veth + bridge) against the same 2 ranks on loopback, in one
# run, alternating, R rounds. Prints medians of fabtrack-allreduce's per-
# iteration p50 for 8 B. Needs root. Usage: bench/run_netns_latency_bench.sh [rounds]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
source bench/lib.sh
bench_build fabtrack-allreduce
harness=$PWD/build/app/fabtrack-allreduce
prefix=lat$$
prefix=${prefix:0:10}
out=$(mktemp -d)
trap 'scripts/netns-fabric.sh destroy --prefix '"$prefix"' >/dev/null 2>&1 || true; rm -rf "$out"' EXIT
scripts/netns-fabric.sh create 2 --prefix "$prefix" >/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
flags=(-b 8 -e 8 -n 2000 -w 100 -c 0 --link-probe 0)
p50() { awk '/^ *8 / {print $14}'; }
for r in $(seq "$rounds"); do
  cross() { scripts/netns-fabric.sh mpirun --prefix "$prefix" -- -np 2 "$harness" "${flags[@]}" | p50 >>"$out/cross"; }
  loop() { mpirun -np 2 --bind-to none --mca btl self,tcp "$harness" "${flags[@]}" | p50 >>"$out/loop"; }
  if ((r % 2)); then cross; loop; else loop; cross; fi
done
python3 - "$out" <<'PY'
import statistics, sys
out = sys.argv[1]
cross = [float(x) for x in open(f"{out}/cross")]
loop = [float(x) for x in open(f"{out}/loop")]
print(f"8 B all-reduce p50, median of {len(cross)} rounds: loopback {statistics.median(loop):.1f} us, "
      f"across 2 netns nodes {statistics.median(cross):.1f} us")
PY
