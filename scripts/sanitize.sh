#!/usr/bin/env bash
# The whole test suite under AddressSanitizer + UndefinedBehaviorSanitizer
# (build dir build-asan, or $FABTRACK_ASAN_DIR). Leak checks stay on for
# fabtrack's code; what Open MPI keeps until exit in every rank is suppressed
# (tests/sanitizer/lsan.supp).
# Usage: scripts/sanitize.sh [extra ctest args]
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${FABTRACK_ASAN_DIR:-build-asan}
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFABTRACK_SANITIZE=ON >/dev/null
cmake --build "$dir" -j"$(nproc)"
# Full unwinding, so that suppressions see the library frames of a leak.
export ASAN_OPTIONS=detect_leaks=1:fast_unwind_on_malloc=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=suppressions=$PWD/tests/sanitizer/lsan.supp:print_suppressions=0
export OMPI_MCA_mca_base_component_disable_dlclose=1
cd "$dir"
ctest --output-on-failure -j"$(nproc)" "$@"
