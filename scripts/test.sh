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
# A fresh build directory gets Ninja (one dependency graph for the whole
# build: no recursive make, no cmake process per progress line); an existing
# one keeps the generator it was made with (CMake refuses a change).
generator=()
if [[ ! -f $build_dir/CMakeCache.txt ]] && command -v ninja >/dev/null; then generator=(-G Ninja); fi
cmake -S . -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DFABTRACK_BUILD_TESTS=ON \
  -DFABTRACK_BUILD_BENCH=ON
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
# The tests' scripts call python3 hundreds of times (standard library only).
# Where `python3` on the PATH is a version manager's shim (pyenv: a chain of
# bash scripts before the interpreter starts, ~0.7 CPU-s and seconds of wall
# per call on a 2-core box, against ~0.06 for the interpreter itself), the
# suite runs with the system's /usr/bin/python3, the one install-deps.sh
# installs for.
path_python=$(command -v python3 2>/dev/null || echo none)
if [[ -x /usr/bin/python3 && $path_python != /usr/bin/python3 ]]; then
  mkdir -p python-for-tests
  ln -sf /usr/bin/python3 python-for-tests/python3
  export PATH=$PWD/python-for-tests:$PATH
  echo "test.sh: python3 for the tests: /usr/bin/python3 (the PATH's is $path_python)"
fi
# One test per CPU: over the whole suite the CPUs are busy (vmstat during a
# clean-clone run: ~7% idle, 43% system time), so more at once only adds
# contention. FABTRACK_TEST_JOBS overrides.
suite_rc=0
ctest --output-on-failure -j"${FABTRACK_TEST_JOBS:-$(nproc)}" "$@" || suite_rc=$?
[[ $suite_rc -eq 0 ]] && exit 0
# A failure is run once more, alone, so that one caused by the machine (a
# 2-core CI box running two tests) is told apart from one in the code. The
# suite still fails if it fails again; if it passes alone it is reported as
# FLAKY by name, with its first output, on the last lines (CI shows the
# tail), never silently.
failed_file=Testing/Temporary/LastTestsFailed.log
[[ -s $failed_file ]] || exit "$suite_rc"
cp Testing/Temporary/LastTest.log Testing/Temporary/FirstRun.log
mapfile -t first_failures < <(cut -d: -f2- "$failed_file")
# output_end LOG NAME: the last lines of test NAME's output in ctest's LOG.
output_end() {
  echo "===== test.sh: the end of $2's output ====="
  awk -v n="$2" 'index($0, " Testing: ") && substr($0, index($0, " Testing: ") + 10) == n {
      on = 1; buf = ""}
    on {buf = buf $0 "\n"}
    on && index($0, "\"" n "\" end time:") == 1 {on = 0}
    END {printf "%s", buf}' "$1" | tail -40
}
echo "test.sh: failed in the suite: ${first_failures[*]}; running them again, one at a time"
rerun_rc=0
ctest --output-on-failure --rerun-failed -j1 || rerun_rc=$?
if [[ $rerun_rc -eq 0 ]]; then
  for name in "${first_failures[@]}"; do output_end Testing/Temporary/FirstRun.log "$name"; done
  echo "test.sh: FLAKY (failed beside other tests, passed alone): ${first_failures[*]}"
  exit 0
fi
while IFS= read -r name; do output_end Testing/Temporary/LastTest.log "$name"; done < <(cut -d: -f2- "$failed_file")
echo "test.sh: failed twice (in the suite and alone): $(cut -d: -f2- "$failed_file" | tr '\n' ' ')"
exit "$rerun_rc"
