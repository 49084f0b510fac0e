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
tests/support/large_nccl_tests_table.py "$work/big.txt"
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
