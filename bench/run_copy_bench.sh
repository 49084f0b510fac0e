#!/usr/bin/env bash
# Reproduces the COPY figures in BENCHMARKS.md on a private embedded PostgreSQL.
# Usage: bench/run_copy_bench.sh [rows] [repeats]
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target fabtrack copy_bench >/dev/null
dir=$(mktemp -d /tmp/fabtrack-bench-XXXXXX)
chmod 755 "$dir"
trap 'build/cli/fabtrack db stop --data-dir "$dir" >/dev/null; rm -rf "$dir"' EXIT
build/cli/fabtrack db start --data-dir "$dir" >/dev/null
conninfo="host=$dir/run port=5432 dbname=fabtrack user=fabtrack"
build/bench/copy_bench --db "$conninfo" --rows "${1:-200000}" --repeats "${2:-5}"
