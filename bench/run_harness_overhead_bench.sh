#!/usr/bin/env bash
# Harness overhead: busbw of `fabtrack-allreduce --backend mpi` against a bare
# MPI_Allreduce loop (bench/bare_allreduce.cc) on the same ranks and sizes,
# alternating A/B for R rounds in one run. Prints per-size median busbw of
# each and the ratio. Usage: bench/run_harness_overhead_bench.sh [ranks] [rounds]
set -euo pipefail
cd "$(dirname "$0")/.."
ranks=${1:-2} rounds=${2:-7}
source bench/lib.sh
bench_build fabtrack-allreduce bare_allreduce
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi=(mpirun -np "$ranks" --oversubscribe --bind-to none --mca btl self,tcp)
min=1048576 max=67108864 factor=4 iters=20 warmup=5
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
bare() { "${mpi[@]}" build/bench/bare_allreduce $min $max $factor $iters $warmup >"$out/bare.$1"; }
harness() {
  "${mpi[@]}" build/app/fabtrack-allreduce -b $min -e $max -f $factor \
    -n $iters -w $warmup -c 0 --link-probe 0 | awk '/^ *[0-9]/ {print $1, $8, $6}' >"$out/harness.$1"
}
# Alternate which goes first, so neither always inherits the other's warm state.
for r in $(seq "$rounds"); do
  if ((r % 2)); then bare "$r"; harness "$r"; else harness "$r"; bare "$r"; fi
done
python3 - "$out" "$rounds" <<'PY'
import statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def load(kind):
    per_size = {}
    for r in range(1, rounds + 1):
        for line in open(f"{out}/{kind}.{r}"):
            size, busbw, _ = line.split()
            per_size.setdefault(int(size), []).append(float(busbw))
    return per_size
bare, harness = load("bare"), load("harness")
print(f"{'size':>10} {'bare busbw':>11} {'harness busbw':>14} {'ratio':>7}   (medians of {rounds} alternating rounds, GB/s)")
ratios = []
for size in sorted(bare):
    b, h = statistics.median(bare[size]), statistics.median(harness[size])
    ratios.append(h / b)
    print(f"{size:>10} {b:>11.3f} {h:>14.3f} {h / b:>7.3f}")
print(f"median ratio harness/bare: {statistics.median(ratios):.3f}")
PY
