#!/usr/bin/env bash
# GPU check of fabtrack-allreduce's NCCL backend, run on a bare GPU machine
# from the bundle that scripts/gpu-bundle.sh made here (no build, no install,
# no network; NCCL is the one the machine has, found by the bundle's env.sh):
#   1. correctness: the nccl-tests style sweep 8 B..1 GiB, then the other data
#      types and reductions, back-to-back (default), blocking (-z 1) and
#      CUDA-graph (-G) timing: every size #wrong 0, every result file whole;
#   2. provenance: the loaded NCCL version recorded (not the image's
#      NCCL_VERSION variable), the network read from NCCL's log in sweep and
#      step mode;
#   3. side by side with nccl-tests' all_reduce_perf (built from its public
#      source into the bundle): ROUNDS rounds, the order of the tools
#      alternating, every size 8 B..1 GiB, the median per-size ratio of
#      out-of-place algbw fabtrack/nccl-tests, both as they run by default:
#      >= 0.98 over all sizes and >= 0.95 at every size (fabtrack -I 0, the
#      mean loop without the sample loop, measured beside for information);
#   4. nccl-tests as the sweep's benchmark: `fabtrack sweep --bench
#      nccl-tests` over six collectives (-J reports and printed tables), each
#      a complete run, spooled for a replay into PostgreSQL back home.
# Everything lands in ./gpu-check-out (or $GPU_CHECK_DIR), packed into
# gpu-check.tar.gz; where $OUT is set (the device tool's folder that comes
# back) the archive and the summaries are copied there. The last lines
# printed are the comparison table.
# Usage: scripts/gpu-check.sh            (bundle: .gpu-bundle or $FABTRACK_BUNDLE)
# Exit: 0 all passed, 1 a check failed, 2 the bundle or the GPU is missing.
set -uo pipefail
cd "$(dirname "$0")/.."
bundle=${FABTRACK_BUNDLE:-.gpu-bundle}
out=${GPU_CHECK_DIR:-./gpu-check-out}
rounds=${ROUNDS:-5}
iters=${ITERS:-1000}
warmup=${WARMUP:-100}
mkdir -p "$out/runs"

[[ -f $bundle/env.sh ]] || { echo "gpu-check: no bundle at $bundle (run scripts/gpu-bundle.sh here first)" >&2; exit 2; }
# shellcheck source=/dev/null
source "$bundle/env.sh" || { echo "gpu-check: $bundle/env.sh failed" >&2; exit 2; }
harness=$bundle/bin/fabtrack-allreduce
peer=$bundle/bin/all_reduce_perf
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem,temperature.gpu \
  --format=csv >"$out/gpu.txt" 2>&1 || { echo "gpu-check: no GPU (nvidia-smi failed)" >&2; exit 2; }
cat "$out/gpu.txt"
{
  echo "bundle: $(head -3 "$bundle/MANIFEST" 2>/dev/null | tr '\n' ' ')"
  echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  echo "image NCCL_VERSION=${NCCL_VERSION:-unset}"
  echo "PyTorch's NCCL: $(python3 -c 'import torch; print(".".join(map(str, torch.cuda.nccl.version())))' 2>&1 | tail -1)"
  ldd "$harness" "$peer" | grep -E 'nccl|mpi|cudart|cublas|pqxx|not found'
} | tee "$out/environment.txt"
# Preflight: a library the loader cannot find ends the check here, named.
if ldd "$harness" "$bundle/bin/fabtrack" "$peer" | grep 'not found'; then
  echo "gpu-check: the bundle's programs miss the libraries above on this machine" >&2
  exit 2
fi
"$harness" --help >/dev/null 2>"$out/help.err" || { cat "$out/help.err"; echo "gpu-check: the harness does not start" >&2; exit 2; }

status=0
fail() { echo "gpu-check: FAIL: $*"; status=1; }

# The harness runs as an MPI singleton (no mpirun: the bundle has no
# launcher daemon to start, and one GPU takes one rank).
run() {  # run NAME ARGS...: the result file to $out/runs/NAME.json
  local name=$1
  shift
  timeout 600 "$harness" --backend nccl "$@" --output "$out/runs/$name.json" \
    >"$out/runs/$name.txt" 2>&1 || fail "$name exited $? (see runs/$name.txt)"
}

# Fails unless the run file is complete and every size has #wrong 0, in both
# placements; prints one line.
verify() {
  python3 - "$out/runs/$1.json" "$1" <<'PY' || fail "$1 verification"
import json, sys
path, name = sys.argv[1], sys.argv[2]
try:
    doc = json.load(open(path))
except Exception as e:
    print(f"gpu-check: {name}: unreadable result file: {e}"); sys.exit(1)
run, rows = doc["run"], doc["results"]
bad = [(r["size_bytes"], h) for r in rows for h in ("oop", "ip") if (r.get(h) or {}).get("wrong") != 0]
ok = rows and not bad and run.get("status") == "complete" and run.get("oob_count") == 0
print(f"gpu-check: {name}: {len(rows)} sizes, status {run.get('status')}, wrong in {bad or 'none'}, "
      f"nccl {run.get('nccl_version')}, network {run.get('network')}, timing {run.get('parameters', {}).get('timing')}")
sys.exit(0 if ok else 1)
PY
}

# 1. Correctness.
run sweep -b 8 -e 1G -f 2 -n 20 -w 5
verify sweep
for combo in "half sum" "bfloat16 sum" "half avg" "float avg" "int8 max" "double prod" \
  "uint64 min" "int32 sum"; do
  read -r dtype op <<<"$combo"
  run "${dtype}_$op" -q -d "$dtype" -o "$op" -b 8 -e 64M -f 8 -n 5 -w 2
  verify "${dtype}_$op"
done
run blocking -q -z 1 -b 8 -e 256M -f 8 -n 20 -w 5
verify blocking
run cudagraph -q -G 10 -b 8 -e 256M -f 8 -n 20 -w 5
verify cudagraph

# 2. Provenance, and step mode on the GPU (GEMMs on a compute stream, bucket
# all-reduces overlapping them): one rank reduces nothing across nodes, so the
# step must last the compute asked and little must be exposed.
run step --step --model-params 1B --grad-dtype bf16 --backward-ms 200 --forward-ms 50 \
  --steps 10 --warmup-steps 2
python3 - "$out/runs" "${NCCL_VERSION:-}" <<'PY' || fail "provenance or step mode"
import json, sys
runs, image_version = sys.argv[1], sys.argv[2]
ok = True
sweep = json.load(open(f"{runs}/sweep.json"))["run"]
step_doc = json.load(open(f"{runs}/step.json"))
step_run, s = step_doc["run"], step_doc["step"]
loaded = sweep.get("nccl_version")
print(f"gpu-check: NCCL loaded {loaded}, image variable NCCL_VERSION={image_version or 'unset'}, "
      f"recorded env {sorted(sweep.get('nccl_env', {}))}")
if not loaded: print("gpu-check: no loaded NCCL version recorded"); ok = False
if "NCCL_VERSION" in sweep.get("nccl_env", {}): print("gpu-check: NCCL_VERSION recorded as a setting"); ok = False
for name, run in (("sweep", sweep), ("step", step_run)):
    if not run.get("network"): print(f"gpu-check: {name}: no network recorded"); ok = False
print(f"gpu-check: step {s['step_ms_p50']:.1f} ms, compute {s['compute_ms_p50']:.1f} ms, "
      f"exposed {s['exposed_ms_p50']:.1f} ms, {s['buckets']} buckets, network {step_run.get('network')}")
ok = ok and s["buckets"] == 77 and 200 <= s["compute_ms_p50"] <= 300 and s["idle_share_p50"] < 0.2
sys.exit(0 if ok else 1)
PY

# 3. Side by side with nccl-tests: same sizes, iterations and warmup, one
# GPU; the order alternates round by round so no tool always runs first.
# Beside the two defaults (the verdict), fabtrack -I 0 (the mean loop alone,
# no sample loop after it) for information. The ratio of algbw is that of
# the times (algbw = bytes / time; the printed algbw has two decimals, which
# is 0.00 below 10 KB).
# Both tools run on the same pinned CPU: unpinned, small-message times moved
# between runs of one tool by 40% (4.0 vs 5.7 us at 8 B on the H200's VM,
# each run steady in itself: the launching thread's core decides), which
# drowned the comparison. PIN_CPU=none runs unpinned.
pin=()
if [[ ${PIN_CPU:-1} != none ]] && command -v taskset >/dev/null; then pin=(taskset -c "${PIN_CPU:-1}"); fi
echo "gpu-check: side by side pinned with: ${pin[*]:-nothing}"
side() {  # side NAME ROUND: one run of one tool, its table to runs/NAME.ROUND.txt
  local flags=(-b 8 -e 1G -f 2 -n "$iters" -w "$warmup")
  case $1 in
    peer) timeout 600 "${pin[@]}" "$peer" "${flags[@]}" -g 1 ;;
    fabtrack) timeout 600 "${pin[@]}" "$harness" --backend nccl "${flags[@]}" ;;
    fabtrack_I0) timeout 600 "${pin[@]}" "$harness" --backend nccl "${flags[@]}" -I 0 ;;
  esac >"$out/runs/$1.$2.txt" 2>&1 || fail "$1 round $2 exited $?"
}
if [[ -x $peer ]]; then
  for ((r = 1; r <= rounds; r++)); do
    if ((r % 2)); then order=(peer fabtrack fabtrack_I0); else order=(fabtrack_I0 fabtrack peer); fi
    for name in "${order[@]}"; do side "$name" "$r"; done
  done
  python3 scripts/gpu-compare.py "$out/runs" "$rounds" | tee "$out/comparison.txt" ||
    fail "side by side below target"
else
  fail "no nccl-tests in the bundle ($peer): the comparison did not run"
fi

# 4. nccl-tests as fabtrack's benchmark (issue 22): `fabtrack sweep --bench
# nccl-tests` launches the real programs itself (no launcher: one GPU),
# stores what they print (-J reports for two, printed tables for the other
# four) and, this machine having no PostgreSQL, spools every run: the spool
# comes back in the archive and is replayed into a real database there
# (README, "On a GPU machine"). Every collective must give one complete run.
export FABTRACK_SPOOL_DIR=$out/spool
rm -rf "$FABTRACK_SPOOL_DIR" "$out/nccl-tests-sweep"
nt_sweep() {  # nt_sweep NAME ARGS...: one sweep, its output to NAME.txt
  local name=$1
  shift
  timeout 300 "$bundle/bin/fabtrack" sweep --no-launcher --nodes 1 --bench nccl-tests \
    --nccl-tests-dir "$bundle/bin" --cluster gpu-check --ports off \
    --db "host=/nonexistent-gpu-check port=1 dbname=none connect_timeout=1" \
    --output-dir "$out/nccl-tests-sweep" "$@" -- -b 8 -e 1G -f 4 -n 20 -w 5 \
    >"$out/nccl-tests-sweep.$name.txt" 2>&1
  local code=$?
  grep -E '^(sweep|==|stored|fabtrack sweep)|spooled \(|nothing stored|:[0-9]+: ' \
    "$out/nccl-tests-sweep.$name.txt" | grep -v 'NCCL INFO'
  ((code == 0)) || fail "fabtrack sweep --bench nccl-tests ($name) exited $code"
}
if [[ -x $bundle/bin/all_gather_perf ]]; then
  NCCL_DEBUG=INFO nt_sweep json --collective all_reduce,all_gather
  nt_sweep text --collective reduce_scatter,alltoall,broadcast,sendrecv --nccl-tests-json off
  spooled=$(find "$FABTRACK_SPOOL_DIR" -name '*.batch' 2>/dev/null | wc -l)
  echo "gpu-check: nccl-tests sweep: $spooled run(s) spooled for the replay"
  ((spooled == 6)) || fail "nccl-tests sweep: $spooled runs spooled, 6 expected"
else
  fail "no nccl-tests collectives in the bundle: the sweep plug-in did not run"
fi

tar -czf "$out/gpu-check.tar.gz" -C "$out" runs gpu.txt environment.txt \
  $([[ -f $out/comparison.txt ]] && echo comparison.txt) \
  $(cd "$out" && ls -d spool nccl-tests-sweep nccl-tests-sweep.*.txt 2>/dev/null)
if [[ -n ${OUT:-} ]]; then
  cp "$out/gpu-check.tar.gz" "$out/gpu.txt" "$out/environment.txt" "$OUT/"
  [[ -f $out/comparison.txt ]] && cp "$out/comparison.txt" "$OUT/"
fi
echo "gpu-check: $([ $status -eq 0 ] && echo PASSED || echo FAILED); results in $out/gpu-check.tar.gz"
exit $status
