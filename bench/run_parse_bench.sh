#!/usr/bin/env bash
# Throughput and peak memory of `fabtrack parse` (issues 18 and 30) on three
# inputs of SIZE_MB each:
#   tables  a real 2-node nccl-tests table with its NCCL lines (reference a16),
#           repeated: the acceptance check's input;
#   info    a real IB/RoCE NCCL INFO log (reference b07), repeated: the
#           acceptance check's other input;
#   month   a month of nightly outputs concatenated (bench/make_nightly_month.py:
#           164 short runs, each with its own NCCL INFO init, comm and channel
#           lines and a table), repeated: the shape nightly logs have.
# With BASE (another fabtrack build, e.g. the commit before a change), both
# builds parse every input in the same rounds, alternating which goes first
# (odd rounds BASE first, even rounds FABTRACK first), and the per-round ratio
# BASE time / FABTRACK time is summarized (median and min-max), so a loaded
# machine slows both alike. Without BASE, `wc -l` is the floor. ROUNDS rounds
# (default 5); wall-clock MB/s and MB per CPU second (user+sys), peak RSS; the
# load average is printed before and after.
# Usage: bench/run_parse_bench.sh [FABTRACK] [SIZE_MB] [ROUNDS] [BASE]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/cli/fabtrack}
size_mb=${2:-256}
rounds=${3:-5}
base=${4:-}
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
python3 bench/make_nightly_month.py "$work/month.log" "$size_mb"
inputs="tables info month"
echo "fabtrack: $bin ($(git rev-parse --short HEAD 2>/dev/null || echo '?'))${base:+, base: $base}," \
  "$(nproc) CPUs, load before: $(cut -d' ' -f1-3 /proc/loadavg)"
run() {  # label command...: appends "elapsed user sys kb" to $work/$label
  local label=$1
  shift
  /usr/bin/time -f "%e %U %S %M" -o "$work/t" "$@" >"$work/out" 2>&1 || { echo "$label failed"; exit 1; }
  cat "$work/t" >>"$work/$label"
}
contenders="new"
[[ -n $base ]] && contenders="base new"
for input in $inputs; do
  f=$work/$input.log
  cat "$f" >/dev/null  # page cache warm for every contender
  for ((r = 0; r < rounds; r++)); do
    order=$contenders
    [[ -n $base ]] && ((r % 2 == 1)) && order="new base"
    [[ -z $base ]] && run "$input.wc" wc -l "$f"
    for who in $order; do
      b=$bin
      [[ $who == base ]] && b=$base
      for fmt in text json; do run "$input.$who.$fmt" "$b" parse --format "$fmt" "$f"; done
    done
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$work" "$rounds" "$inputs" "$contenders" <<'PY'
import os, statistics, sys
work, rounds, inputs, contenders = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4].split()
def rows(label):
    return [[float(x) for x in l.split()] for l in open(f"{work}/{label}")]
def spread(xs, fmt):
    return f"{statistics.median(xs):{fmt}} ({min(xs):{fmt}}-{max(xs):{fmt}})"
# Wall-clock MB/s is what a user waits for; MB per CPU second (user+sys) is
# also shown because on a shared machine the wall clock measures the others.
print(f"{'input':7} {'build':5} {'format':6} {'MB/s median (min-max)':>22} "
      f"{'MB/CPU-s median (min-max)':>27} {'peak RSS':>9}")
for name in inputs:
    mb = os.path.getsize(f"{work}/{name}.log") / 1e6
    if "base" not in contenders:
        w = rows(f"{name}.wc")
        print(f"{name:7} {'wc -l':12} {spread([mb / max(e, 0.01) for e, *_ in w], '.0f'):>22}")
    for who in contenders:
        for fmt in ("text", "json"):
            rs = rows(f"{name}.{who}.{fmt}")
            wall = [mb / max(e, 0.01) for e, _, _, _ in rs]
            cpu = [mb / max(u + s, 0.01) for _, u, s, _ in rs]
            rss = max(int(k) for *_, k in rs) // 1024
            print(f"{name:7} {who:5} {fmt:6} {spread(wall, '.0f'):>22} {spread(cpu, '.0f'):>27} "
                  f"{rss:6d} MB")
    if "base" in contenders:
        for fmt in ("text", "json"):
            b, n = rows(f"{name}.base.{fmt}"), rows(f"{name}.new.{fmt}")
            wall = [x[0] / max(y[0], 0.01) for x, y in zip(b, n)]
            cpu = [(x[1] + x[2]) / max(y[1] + y[2], 0.01) for x, y in zip(b, n)]
            print(f"{name:7} base/new {fmt:6} time ratio, per round: wall {spread(wall, '.2f')}, "
                  f"CPU {spread(cpu, '.2f')}")
    print(f"{name:7} input {mb:.0f} MB, {rounds} rounds")
PY
