#!/usr/bin/env bash
# Records real outputs of the nccl-tests collectives that scripts/gpu-check.sh
# does not run (issue 22: reduce, gather, scatter, hypercube, alltoallv) on a
# GPU machine, through the same path a site uses: `fabtrack sweep --bench
# nccl-tests --no-launcher`, each program's transcript (NCCL INFO lines
# between the table's rows, as the recorded fixtures have them) kept and
# every run spooled (the machine has no PostgreSQL) for a replay back home.
# The bundle is made here with only those programs (the device carries 64 MiB):
#   NCCL_TESTS_PROGRAMS="reduce_perf gather_perf scatter_perf hypercube_perf alltoallv_perf" \
#     scripts/gpu-bundle.sh
# Usage: scripts/gpu-record-collectives.sh [COLLECTIVE,...]
#   (default: every <c>_perf program in the bundle but all_reduce_perf)
# Output in $GPU_RECORD_DIR (default ./gpu-record-out), copied to $OUT when
# set: NAME.txt per collective (the sweep's console), nccl-tests-sweep/ (the
# transcripts), spool/ (the runs). Exit 0 every collective gave one complete
# run, 1 one did not, 2 no bundle or no program.
set -uo pipefail
cd "$(dirname "$0")/.."
bundle=${FABTRACK_BUNDLE:-.gpu-bundle}
out=${GPU_RECORD_DIR:-./gpu-record-out}
[[ -f $bundle/env.sh ]] || { echo "gpu-record: no bundle at $bundle" >&2; exit 2; }
# shellcheck source=/dev/null
source "$bundle/env.sh" || { echo "gpu-record: $bundle/env.sh failed" >&2; exit 2; }
collectives=${1:-}
if [[ -z $collectives ]]; then
  for p in "$bundle"/bin/*_perf; do
    c=$(basename "$p" _perf)
    [[ $c == all_reduce ]] || collectives+=${collectives:+,}$c
  done
fi
[[ -n $collectives ]] || { echo "gpu-record: no nccl-tests program in $bundle/bin" >&2; exit 2; }
rm -rf "$out"
mkdir -p "$out"
export FABTRACK_SPOOL_DIR=$out/spool
status=0
IFS=, read -r -a list <<<"$collectives"
for c in "${list[@]}"; do
  # One collective a sweep: a program that fails does not hide the others.
  NCCL_DEBUG=INFO timeout 300 "$bundle/bin/fabtrack" sweep --no-launcher --nodes 1 \
    --bench nccl-tests --nccl-tests-dir "$bundle/bin" --collective "$c" --cluster gpu-record \
    --ports off --nccl-tests-json off --output-dir "$out/nccl-tests-sweep" \
    --db "host=/nonexistent-gpu-record port=1 dbname=none connect_timeout=1" \
    -- -b 8 -e 1G -f 4 -n 20 -w 5 >"$out/$c.txt" 2>&1
  code=$?
  runs=$(grep -l "\"collective\": *\"$c\"" "$FABTRACK_SPOOL_DIR"/*.batch 2>/dev/null | wc -l)
  echo "gpu-record: $c: sweep exit $code, $runs run(s) spooled"
  if ((code != 0 || runs != 1)); then
    status=1
    tail -5 "$out/$c.txt"
  fi
done
if [[ -n ${OUT:-} ]]; then
  tar -czf "$OUT/gpu-record.tar.gz" -C "$out" .
fi
echo "gpu-record: $([ $status -eq 0 ] && echo PASSED || echo FAILED); output in $out"
exit $status
