#!/usr/bin/env bash
# The main job end to end on the embedded default: install dependencies, build,
# start the private PostgreSQL, ingest the example nccl-tests outputs kept in
# examples/, run a real all-reduce sweep (MPI over TCP) across 1..4 nodes, and
# show what was stored, then analyze both clusters (findings into the database,
# a text summary here, a self-contained HTML report beside it). As root with `ip netns`, the 4 nodes are network
# namespaces on a bridge (scripts/netns-fabric.sh), so traffic crosses real
# links; otherwise the sweep runs 1..4 ranks on this host.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)"
fabtrack=build/cli/fabtrack
$fabtrack db start

# Each example is one night's output; its date is in the file name.
for f in examples/lab-cluster/*.txt; do
  night=$(basename "$f" | cut -c1-10)
  $fabtrack ingest "$f" --cluster lab --at "${night}T02:00:00Z" --tag source=demo
done

harness_flags=(-b 8 -e 4M -f 8 -n 20 -w 5)
if [[ $(id -u) -eq 0 ]] && ip netns list >/dev/null 2>&1; then
  prefix=demo$$
  trap 'scripts/netns-fabric.sh destroy --prefix '"$prefix"' >/dev/null 2>&1 || true' EXIT
  scripts/netns-fabric.sh create 4 --prefix "$prefix"
  $fabtrack sweep --cluster demo-fabric --nodes 1-4 \
    --mpirun "scripts/netns-fabric.sh mpirun --prefix $prefix --" -- "${harness_flags[@]}"
  cluster=demo-fabric
else
  $fabtrack sweep --cluster demo-local --nodes 1-4 -- "${harness_flags[@]}"
  cluster=demo-local
fi
echo
$fabtrack runs list --cluster lab
echo
$fabtrack runs list --cluster "$cluster"

# analyze exits 0 (ok), 1 (warning), 2 (critical) or 3 (could not analyze);
# the demo shows the outcome rather than stopping on it.
mkdir -p reports
for c in lab "$cluster"; do
  echo
  status=0
  $fabtrack analyze --cluster "$c" --since 2000-01-01T00:00:00Z || status=$?
  $fabtrack analyze --cluster "$c" --since 2000-01-01T00:00:00Z --format html \
    --out "reports/$c.html" --no-store >/dev/null 2>&1 || true
  echo "analyze $c: exit $status; report: reports/$c.html"
  ((status < 3)) || exit 1
done
