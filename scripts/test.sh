#!/usr/bin/env bash
# Installs dependencies, builds, and runs the whole test suite. The DB tests
# start their own private PostgreSQL (ctest fixture), so nothing else is needed.
# Usage: scripts/test.sh [extra ctest args]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
build_dir=${FABTRACK_BUILD_DIR:-build}
# Tests and benchmarks on explicitly: scripts/demo.sh configures the same
# build directory without them.
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DFABTRACK_BUILD_TESTS=ON -DFABTRACK_BUILD_BENCH=ON
cmake --build "$build_dir" -j"$(nproc)"
cd "$build_dir"
ctest --output-on-failure -j"$(nproc)" "$@"
