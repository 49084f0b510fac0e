#!/usr/bin/env bash
# Real degraded runs on the netns fabric: a throttled link must show as lower
# busbw and that node as the link straggler; a CPU-loaded node must show as
# higher small-message p99. Fails (never skips) without root / ip netns.
set -euo pipefail
repo=$1
allreduce=$2
fabric="$repo/scripts/netns-fabric.sh"
prefix="dg$$"
prefix=${prefix:0:10}
work=$(mktemp -d)
cleanup() { "$fabric" destroy --prefix "$prefix" >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT
[[ $(id -u) -eq 0 ]] || { echo "FAIL: needs root for network namespaces"; exit 1; }

"$fabric" create 3 --prefix "$prefix" >/dev/null
run() {  # run NAME ARGS...: harness across the 3 nodes, result in $work/NAME.json
  local name=$1; shift
  "$fabric" mpirun --prefix "$prefix" -- -np 3 "$allreduce" -q --output "$work/$name.json" "$@" \
    >"$work/$name.log" 2>&1 || { cat "$work/$name.log"; echo "FAIL: run $name"; exit 1; }
}
field() {  # field FILE EXPR: evaluate a python expression over the result document d
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"
}

run base -b 1M -e 1M -n 5 -w 1 --link-probe 4M
"$fabric" throttle 2 100mbit --prefix "$prefix" >/dev/null
run throttled -b 1M -e 1M -n 5 -w 1 --link-probe 4M
"$fabric" unthrottle 2 --prefix "$prefix" >/dev/null

base_bw=$(field "$work/base.json" "d['results'][0]['oop']['busbw']")
thr_bw=$(field "$work/throttled.json" "d['results'][0]['oop']['busbw']")
straggler=$(field "$work/throttled.json" "d['run']['link_straggler_host']")
echo "busbw 1 MiB: unthrottled $base_bw GB/s, node 2 throttled $thr_bw GB/s; link straggler: $straggler"
python3 -c "import sys; sys.exit(0 if float('$thr_bw') * 3 < float('$base_bw') else 1)" ||
  { echo "FAIL: throttling node 2 did not lower busbw 3x"; exit 1; }
[[ $straggler == "$prefix-node2" ]] || { echo "FAIL: expected $prefix-node2 as link straggler"; exit 1; }
[[ $(field "$work/base.json" "d['run']['link_straggler_host']") == None ]] ||
  { echo "FAIL: the healthy fabric named a link straggler"; exit 1; }

run quiet -b 8 -e 8 -n 300 -w 20 --link-probe 0
"$fabric" load 3 --cpus 2 --seconds 40 --prefix "$prefix" >/dev/null
run loaded -b 8 -e 8 -n 300 -w 20 --link-probe 0
p99_quiet=$(field "$work/quiet.json" "d['results'][0]['latency']['p99_us']")
p99_loaded=$(field "$work/loaded.json" "d['results'][0]['latency']['p99_us']")
echo "8 B p99: quiet $p99_quiet us, node 3 CPU-loaded $p99_loaded us"
python3 -c "import sys; sys.exit(0 if float('$p99_loaded') > 1.5 * float('$p99_quiet') else 1)" ||
  { echo "FAIL: loading node 3's CPUs did not raise p99 1.5x"; exit 1; }
echo "degraded fabric: throttle and CPU load both visible"
