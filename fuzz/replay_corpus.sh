#!/usr/bin/env bash
# ctest: every fuzz target (built with the standalone driver) over its seed
# corpus and every input that ever crashed it (fuzz/regressions/<target>/).
# Usage: fuzz/replay_corpus.sh BUILD_DIR
set -euo pipefail
build=$1
here=$(cd "$(dirname "$0")" && pwd)
seeds=$(mktemp -d)
trap 'rm -rf "$seeds"' EXIT
"$here/make_seeds.sh" "$seeds" "$build/cli/fabtrack"
for t in nccl_tests_text_fuzz nccl_tests_json_fuzz nccl_log_fuzz run_file_fuzz \
  port_sample_json_fuzz analyzer_config_fuzz inspector_fuzz sysfs_values_fuzz http_request_fuzz web_config_fuzz \
    locate_topology_fuzz port_dump_fuzz node_topology_fuzz pma_mad_fuzz fabric_scan_json_fuzz \
    ras_report_fuzz proc_cpu_fuzz ras_monitor_fuzz; do
  mkdir -p "$here/regressions/$t"
  printf '%-24s ' "$t"
  "$build/fuzz/$t" "$seeds/$t" "$here/regressions/$t"
done
