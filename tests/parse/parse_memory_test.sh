#!/usr/bin/env bash
# Issue 18: `fabtrack parse` streams. A 50 MB input built by repeating real-looking
# fixtures (a table with interleaved NCCL lines; an NCCL INFO log) is parsed with
# peak RSS (getrusage of the child, from python) under 64 MB, for both formats,
# and every repeated table comes out. Not a timing test.
# Usage: tests/parse/parse_memory_test.sh SOURCE_DIR FABTRACK
set -euo pipefail
src=$1
fabtrack=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/parse-memory.XXXXXX")
trap 'rm -rf "$work"' EXIT
status=0
python3 - "$src/tests/fixtures" "$work" <<'PY'
import sys
fixtures, work = sys.argv[1:]
for src, dst in (("nccl_tests/t05_allreduce_openmpi_tagged_info_interleaved.txt", "tables.log"),
                 ("nccl_logs/ib_gdrdma_2node_p2p_read_nccl2.10.log", "info.log")):
    one = open(f"{fixtures}/{src}", "rb").read()
    if not one.endswith(b"\n"):
        one += b"\n"
    n = 50_000_000 // len(one) + 1
    with open(f"{work}/{dst}", "wb") as f:
        block = one * 64
        for _ in range(n // 64 + 1):
            f.write(block)
    open(f"{work}/{dst}.copies", "w").write(str((n // 64 + 1) * 64))
PY
for input in tables info; do
  for fmt in text json; do
    peak=$(python3 - "$fabtrack" "$fmt" "$work/$input.log" "$work/out" <<'PY'
import resource, subprocess, sys
fabtrack, fmt, path, out = sys.argv[1:]
with open(out, "wb") as o:
    rc = subprocess.call([fabtrack, "parse", "--format", fmt, path], stdout=o,
                         stderr=subprocess.DEVNULL)
if rc != 0:
    print(f"exit {rc}")
    sys.exit(0)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)
PY
)
    if [[ ! $peak =~ ^[0-9]+$ ]]; then
      echo "FAIL $input --format $fmt: $peak"; status=1; continue
    fi
    if ((peak > 64)); then
      echo "FAIL $input --format $fmt: peak RSS $peak MB > 64 MB"; status=1
    else
      echo "ok   $input --format $fmt: peak RSS $peak MB"
    fi
    if [[ $input == tables ]]; then
      copies=$(cat "$work/tables.log.copies")
      if [[ $fmt == json ]]; then
        got=$(grep -c '"lines": \[' "$work/out" || true)
      else
        got=$(head -1 "$work/out" | sed -n 's/.*: \([0-9]*\) table(s).*/\1/p')
      fi
      [[ $got == "$copies" ]] || { echo "FAIL $fmt: $got tables, expected $copies"; status=1; }
    fi
  done
done
exit $status
