#!/usr/bin/env bash
# Installs dependencies, builds, and runs the whole test suite. The DB tests
# start their own private PostgreSQL (ctest fixture), so nothing else is needed.
# Prints each stage's wall time (install, configure, build, test) at the end,
# also when a stage fails: CI's limit is 30 minutes, BENCHMARKS.md "CI time".
# Usage: scripts/test.sh [extra ctest args]
set -euo pipefail
cd "$(dirname "$0")/.."
stage_times=()
stage_start=$SECONDS
stage=""
begin() {  # begin NAME: ends the stage before, starts NAME
  if [[ -n $stage ]]; then stage_times+=("$stage $((SECONDS - stage_start)) s"); fi
  stage=$1
  stage_start=$SECONDS
}
report() {
  local rc=$? line="test.sh stage times:"
  begin ""
  for t in "${stage_times[@]}"; do line+=" $t,"; done
  echo "$line total $SECONDS s (exit $rc)"
}
trap report EXIT
begin install
# What compiling needs first; the test tools (Chromium, Slurm, Ansible,
# Prometheus, ...: most of a fresh machine's download and unpacking) are
# installed while the build compiles, and waited for before the tests.
scripts/install-deps.sh --compile
build_dir=${FABTRACK_BUILD_DIR:-build}
mkdir -p "$build_dir"
scripts/install-deps.sh --tests >"$build_dir/install-test-deps.log" 2>&1 &
test_deps_pid=$!
begin configure
# Tests and benchmarks on explicitly: scripts/demo.sh configures the same
# build directory without them.
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DFABTRACK_BUILD_TESTS=ON -DFABTRACK_BUILD_BENCH=ON
begin build
cmake --build "$build_dir" -j"$(nproc)"
begin "install-wait"
if ! wait "$test_deps_pid"; then
  cat "$build_dir/install-test-deps.log" >&2
  echo "test.sh: scripts/install-deps.sh --tests failed (log above)" >&2
  exit 1
fi
cat "$build_dir/install-test-deps.log"
begin test
cd "$build_dir"
# One test per CPU: over the whole suite the CPUs are busy (vmstat during a
# clean-clone run: ~7% idle, 43% system time), so more at once only adds
# contention. FABTRACK_TEST_JOBS overrides.
ctest --output-on-failure -j"${FABTRACK_TEST_JOBS:-$(nproc)}" "$@"
