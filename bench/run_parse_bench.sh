#!/usr/bin/env bash
# Throughput and peak memory of `fabtrack parse` (issue 18) on the two inputs of
# the acceptance check: a real 2-node nccl-tests table with its NCCL lines and
# a real IB/RoCE NCCL INFO log (from the reference captures), each repeated to
# SIZE_MB as a month of nightly logs would be. An earlier parse cannot run
# alternately (it needed GBs), so the floor is what reading the same file costs:
# `wc -l` and `grep -c NCCL` on it, in the same rounds. ROUNDS rounds (default
# 5), each: wc, grep, parse text, parse json; prints median and spread (min-max).
# Usage: bench/run_parse_bench.sh [FABTRACK] [SIZE_MB] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/cli/fabtrack}
size_mb=${2:-256}
rounds=${3:-5}
ref=${FABTRACK_REFERENCE_DIR:-../shared/reference}
work=$(mktemp -d "${TMPDIR:-/tmp}/parse-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
tail -n +5 "$ref/a16-allreduce-2node-16rank-ib-newfmt-v2.18.3-nccl2.30.txt" >"$work/one-tables"
tail -n +5 "$ref/b07-ib-roce-nccl2.19-h100-dgx.txt" | grep "NCCL INFO" >"$work/one-info"
python3 - "$work" "$size_mb" <<'PY'
import sys
work, mb = sys.argv[1], int(sys.argv[2])
for name in ("tables", "info"):
    one = open(f"{work}/one-{name}", "rb").read()
    block = one * (1_000_000 // len(one) + 1)
    with open(f"{work}/{name}.log", "wb") as f:
        for _ in range(mb * 1_000_000 // len(block) + 1):
            f.write(block)
PY
echo "fabtrack: $bin ($(git rev-parse --short HEAD 2>/dev/null || echo '?')), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
run() {  # label command...: appends "elapsed user sys kb" to $work/$label
  local label=$1
  shift
  # Into a file, not /dev/null: GNU grep stops at the first match when its
  # output is /dev/null.
  /usr/bin/time -f "%e %U %S %M" -o "$work/t" "$@" >"$work/out" 2>&1 || { echo "$label failed"; exit 1; }
  cat "$work/t" >>"$work/$label"
}
for input in tables info; do
  f=$work/$input.log
  cat "$f" >/dev/null  # page cache warm for every contender
  for ((r = 0; r < rounds; r++)); do
    run "$input.wc" wc -l "$f"
    run "$input.grep" grep -c NCCL "$f"
    run "$input.text" "$bin" parse --format text "$f"
    run "$input.json" "$bin" parse --format json "$f"
  done
done
python3 - "$work" "$rounds" <<'PY'
import os, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
# Wall-clock MB/s is what a user waits for; MB per CPU second (user+sys) is
# also shown because on a shared machine the wall clock measures the others.
print(f"{'input':8} {'reader':22} {'MB/s median':>11} {'spread (min-max)':>17} "
      f"{'MB/CPU-s median':>15} {'spread':>13} {'peak RSS':>9}")
for name in ("tables", "info"):
    mb = os.path.getsize(f"{work}/{name}.log") / 1e6
    for label, what in (("wc", "wc -l"), ("grep", "grep -c NCCL"),
                        ("text", "parse --format text"), ("json", "parse --format json")):
        rows = [l.split() for l in open(f"{work}/{name}.{label}")]
        rates = [mb / max(float(e), 0.01) for e, _, _, _ in rows]
        cpu = [mb / max(float(u) + float(s), 0.01) for _, u, s, _ in rows]
        rss = max(int(k) for _, _, _, k in rows) // 1024
        print(f"{name:8} {what:22} {statistics.median(rates):11.0f} "
              f"{min(rates):8.0f}-{max(rates):<8.0f} {statistics.median(cpu):15.0f} "
              f"{min(cpu):6.0f}-{max(cpu):<6.0f} {rss:6d} MB")
    print(f"{name:8} input {mb:.0f} MB, {rounds} rounds")
PY
