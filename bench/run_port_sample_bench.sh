#!/usr/bin/env bash
# CPU per `counters watch` sample: SysfsPortSampler's kept-open fast path
# against a full sysfs walk per sample, the order alternating round by round,
# on trees on tmpfs: cx7-16 and cx7-64 (ConnectX-7 HCAs with real values,
# saturated legacy counters included: tests/fixtures/sysfs/make_cx7_tree.sh)
# and cx7-16-clean / cx7-64-clean (the same files, nothing saturated); clean-16
# (the 8-HCA NDR fixture with a second port per HCA) on request. The sampler's
# cost on cx7-N against cx7-N-clean is the "within 20% of the clean tree" check.
# Usage: bench/run_port_sample_bench.sh [samples per round, default 2000] [rounds, default 5]
#          [trees, default "cx7-16 cx7-16-clean cx7-64 cx7-64-clean"]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
cmake --build build -j2 --target port_sample_bench >/dev/null
work=$(mktemp -d /dev/shm/fabtrack-sample-XXXXXX)
trap 'rm -rf "$work"' EXIT
for name in ${3:-cx7-16 cx7-16-clean cx7-64 cx7-64-clean}; do
  tree=$work/$name
  bench_sysfs_tree "$name" "$tree"
  echo "== $name"
  build/bench/port_sample_bench "$tree" "${1:-2000}" "${2:-5}"
done
