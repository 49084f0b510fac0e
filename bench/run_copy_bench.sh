#!/usr/bin/env bash
# Reproduces the COPY figures in BENCHMARKS.md on a private embedded PostgreSQL.
# Usage: bench/run_copy_bench.sh [rows] [repeats]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
bench_build fabtrack copy_bench
bench_database
build/bench/copy_bench --db "$db" --rows "${1:-200000}" --repeats "${2:-5}"
