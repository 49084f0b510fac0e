#!/usr/bin/env bash
# CPU per `counters watch` sample of a large host (the 8-HCA NDR fixture with
# a second port on every HCA, on tmpfs): SysfsPortSampler's kept-open fast
# path against a full sysfs walk per sample.
# Usage: bench/run_port_sample_bench.sh [samples per round, default 2000] [rounds, default 5]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
cmake --build build -j"$(nproc)" --target port_sample_bench >/dev/null
work=$(mktemp -d /dev/shm/fabtrack-sample-XXXXXX)
trap 'rm -rf "$work"' EXIT
tree=$work/sys
bench_large_sysfs "$tree"
build/bench/port_sample_bench "$tree" "${1:-2000}" "${2:-5}"
