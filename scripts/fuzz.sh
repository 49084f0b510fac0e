#!/usr/bin/env bash
# Fuzzes every parser (and the exporter's HTTP request handling) with libFuzzer (clang, ASan+UBSan) from seed corpora
# made of the test fixtures. Inputs that crash land in
# fuzz/regressions/<target>/ (commit them: ctest replays that folder).
# Usage: scripts/fuzz.sh [seconds per target, default 600] [target...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
shift || true
build=build-fuzz
CC=clang CXX=clang++ cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFABTRACK_FUZZ=ON \
  -DFABTRACK_BUILD_TESTS=OFF -DFABTRACK_BUILD_BENCH=OFF >/dev/null
targets=("$@")
if ((${#targets[@]} == 0)); then
  targets=(nccl_tests_text_fuzz nccl_tests_json_fuzz nccl_log_fuzz run_file_fuzz
    port_sample_json_fuzz analyzer_config_fuzz inspector_fuzz sysfs_values_fuzz http_request_fuzz
    web_config_fuzz
    locate_topology_fuzz port_dump_fuzz node_topology_fuzz ras_report_fuzz proc_cpu_fuzz
    ras_monitor_fuzz)
fi
cmake --build "$build" -j"$(nproc)" --target "${targets[@]}" >/dev/null

# Seeds that fabtrack writes itself come from the normal build's CLI.
fabtrack=${FABTRACK:-build/cli/fabtrack}
[[ -x $fabtrack ]] || cmake --build build -j"$(nproc)" --target fabtrack >/dev/null
seeds=$build/seeds
fuzz/make_seeds.sh "$seeds" "$fabtrack"
for t in "${targets[@]}"; do
  corpus=$build/corpus/$t
  mkdir -p "$corpus" "fuzz/regressions/$t"
  echo "== $t: ${seconds}s"
  "$build/fuzz/$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=1048576 \
    -artifact_prefix="fuzz/regressions/$t/" -print_final_stats=1 "$corpus" "$seeds/$t" \
    2>&1 | grep -E "^#[0-9]+ +DONE|stat::number_of_executed_units|stat::peak_rss_mb|ERROR|SUMMARY" || true
done
