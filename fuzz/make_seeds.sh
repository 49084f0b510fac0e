#!/usr/bin/env bash
# Seed corpora for the fuzz targets, made from the test fixtures (and, for
# formats fabtrack writes itself, from fabtrack's own output on fixtures).
# Usage: fuzz/make_seeds.sh OUT_DIR FABTRACK
set -euo pipefail
out=$1
fabtrack=$2
here=$(cd "$(dirname "$0")/.." && pwd)
fx=$here/tests/fixtures
rm -rf "$out"
mkdir -p "$out"/{nccl_tests_text_fuzz,nccl_tests_json_fuzz,nccl_log_fuzz,run_file_fuzz,port_sample_json_fuzz,analyzer_config_fuzz,inspector_fuzz,sysfs_values_fuzz}
cp "$fx"/nccl_tests/*.txt "$out/nccl_tests_text_fuzz/"
cp "$fx"/nccl_tests/*.json "$out/nccl_tests_json_fuzz/"
cp "$fx"/nccl_logs/* "$out/nccl_log_fuzz/"
# sysfs values: state, phys_state, rate, link_layer, lid, then five counters, NUL-separated.
printf '4: ACTIVE\n\0005: LinkUp\n\000400 Gb/sec (4X NDR)\n\000InfiniBand\n\0000x12\n\0000\n\00012345678901\n\000255\n\000N/A (no PMA)\n\00018446744073709551615\n' \
  >"$out/sysfs_values_fuzz/ndr_port"
printf '1: DOWN\0003: Disabled\000\000Ethernet\000\000\000\00018446744073709551616\000 7 \000x\000' \
  >"$out/sysfs_values_fuzz/odd_values"
# Inspector fixtures share file names across folders (the plugin names files by host and pid).
find "$fx/inspector" -type f \( -name "*.log" -o -name "*.prom" \) | sort | cat -n |
  while read -r n f; do cp "$f" "$out/inspector_fuzz/$n-$(basename "$f")"; done
find "$fx" -name "*.json" -exec grep -l "\"fabtrack-allreduce-result\"" {} + 2>/dev/null |
  while read -r f; do cp "$f" "$out/run_file_fuzz/"; done
for tree in "$fx"/sysfs/*/; do
  [[ -d $tree/class ]] || continue
  "$fabtrack" counters snapshot --sysfs "$tree" --format json >"$out/port_sample_json_fuzz/$(basename "$tree").json" 2>/dev/null
done
"$fabtrack" analyze --print-config >"$out/analyzer_config_fuzz/defaults.conf"
printf '[scaling_drop]\nmin_efficiency = 0.7\nenabled = false\n' >"$out/analyzer_config_fuzz/small.conf"
