#!/usr/bin/env bash
# Time and peak memory of spooling one large run while the database is down:
# a 300,000-row nccl-tests table (31 MB) ingested against an unreachable
# server, so that the whole run goes to the spool as one batch; then of
# replaying that batch into a private embedded PostgreSQL. Give several
# fabtrack binaries (e.g. one built from an earlier commit) to compare them
# side by side on the same input; the batches they write must be identical.
# Usage: bench/run_spool_memory_bench.sh [FABTRACK...]   (default build/cli/fabtrack)
set -euo pipefail
cd "$(dirname "$0")/.."
binaries=("$@")
((${#binaries[@]})) || binaries=(build/cli/fabtrack)
work=$(mktemp -d)
chmod 755 "$work"  # as root the embedded server runs as its own user
n=0
cleanup() {
  for ((i = 1; i <= n; i++)); do
    FABTRACK_DATA_DIR=$work/db$i "${binaries[i - 1]}" db stop >/dev/null 2>&1 || true
  done
  rm -rf "$work"
}
trap cleanup EXIT
python3 - "$work/big.txt" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write("# nThread 1 nGpus 8 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20 validation: 1\n#\n")
    f.write("#                                                       out-of-place                       in-place\n")
    f.write("#       size         count      type   redop     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong\n")
    for i in range(300000):
        size = 8 << (i % 20)
        f.write("%12d %12d %8s %6s %8.2f %7.2f %7.2f %6d %8.2f %7.2f %7.2f %6d\n" % (size, size // 4, "float", "sum", 30.0 + i % 97, 1.0, 1.75, 0, 30.5, 1.0, 1.75, 0))
    f.write("# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 1.75\n#\n")
PY
echo "input: $(wc -l <"$work/big.txt") lines, $(du -m "$work/big.txt" | cut -f1) MB"
for bin in "${binaries[@]}"; do
  n=$((n + 1))
  spool=$work/spool$n
  FABTRACK_SPOOL_DIR=$spool /usr/bin/time -f "%e %M" -o "$work/time$n" \
    "$bin" ingest --db "host=$work/nowhere dbname=fabtrack user=fabtrack connect_timeout=1" \
    "$work/big.txt" --cluster lab --at 2026-11-20T02:00:00Z >"$work/log$n" 2>&1 ||
    { cat "$work/log$n"; exit 1; }
  batch=$(ls "$spool"/*.batch)
  read -r seconds kb <"$work/time$n"
  echo "$bin: spool ${seconds} s, peak RSS $((kb / 1024)) MB, batch $(($(stat -c %s "$batch") / 1048576)) MB"
  tail -n1 "$batch" >"$work/payload$n"
  if ((n > 1)); then
    cmp -s "$work/payload1" "$work/payload$n" || { echo "batch payloads differ"; exit 1; }
  fi
  FABTRACK_DATA_DIR=$work/db$n "$bin" db start >/dev/null 2>&1
  FABTRACK_SPOOL_DIR=$spool FABTRACK_DATA_DIR=$work/db$n /usr/bin/time -f "%e %M" \
    -o "$work/replay$n" "$bin" spool replay >"$work/replay_log$n" 2>&1 ||
    { cat "$work/replay_log$n"; exit 1; }
  grep -q "replayed 1 spooled" "$work/replay_log$n" || { cat "$work/replay_log$n"; exit 1; }
  read -r seconds kb <"$work/replay$n"
  echo "$bin: replay ${seconds} s, peak RSS $((kb / 1024)) MB"
done
