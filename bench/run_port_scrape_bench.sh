#!/usr/bin/env bash
# CPU per scrape of a host's RDMA ports: `fabtrack counters serve` against
# prometheus-node-exporter with only its infiniband collector, both as daemons
# on the same fake sysfs tree on tmpfs, scraped the same number of times per
# round; the order alternates (odd rounds fabtrack first, even rounds
# node_exporter first) so that neither side always gets the warmer or the
# quieter half. CPU from /proc/PID/stat (utime + stime, 10 ms ticks).
# Trees: cx7-16 and cx7-64 are ConnectX-7 HCAs with real values, saturated
# legacy counters included (tests/fixtures/sysfs/make_cx7_tree.sh);
# cx7-16-clean and cx7-64-clean the same files with nothing saturated; clean-16
# (on request) the 8-HCA NDR fixture with a second port per HCA. A tree name
# followed by :SELECTION runs fabtrack with --hw-counters SELECTION on that
# tree (node_exporter reads no hw_counters/ whatever the tree): cx7-16:none
# is the full ConnectX-7 tree with both sides reading the same values.
# Prints per-round figures, then per tree the median ratio and its spread.
# Usage: bench/run_port_scrape_bench.sh [scrapes per round, default 500] [rounds, default 5]
#          [trees, default "cx7-16 cx7-16:none cx7-16-clean cx7-64 cx7-64:none cx7-64-clean";
#          also cx7-16-nohw, cx7-64-nohw: no hw_counters/ in the tree at all, and
#          TREE:NAME[,NAME...] for a list]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
scrapes=${1:-500}
rounds=${2:-5}
trees=${3:-cx7-16 cx7-16:none cx7-16-clean cx7-64 cx7-64:none cx7-64-clean}
cmake --build build -j2 --target fabtrack >/dev/null
command -v prometheus-node-exporter >/dev/null || { echo "install prometheus-node-exporter"; exit 1; }
work=$(mktemp -d /dev/shm/fabtrack-scrape-XXXXXX)
pids=()
cleanup() { [[ ${#pids[@]} -gt 0 ]] && kill "${pids[@]}" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }  # clock ticks
tick=$(getconf CLK_TCK)
scrape() { for _ in $(seq 1 "$scrapes"); do curl -sf "$1/metrics" >/dev/null; done; }
ms_per_scrape() { awk -v t="$1" -v k="$tick" -v n="$scrapes" 'BEGIN {printf "%.3f", t * 1000 / k / n}'; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
minmax() { printf '%s\n' "$@" | sort -g | awk 'NR == 1 {lo = $1} {hi = $1} END {printf "%s-%s", lo, hi}'; }

summary=()
for name in $trees; do
  hw=all
  [[ $name == *:* ]] && hw=${name#*:}
  tree=$work/${name//[:,]/_}
  bench_sysfs_tree "${name%%:*}" "$tree"
  ports=$(ls -d "$tree"/class/infiniband/*/ports/* | wc -l)
  # Below the ephemeral range (32768-60999 by default): thousands of scrapes
  # leave client sockets in TIME_WAIT on ephemeral ports.
  fport=$((20000 + RANDOM % 10000))
  nport=$((fport + 1))
  build/cli/fabtrack counters serve --sysfs "$tree" --listen "127.0.0.1:$fport" --hw-counters "$hw" \
    2>"$work/${name//[:,]/_}.serve.err" &
  fpid=$!
  pids+=($fpid)
  prometheus-node-exporter --path.sysfs="$tree" --collector.disable-defaults --collector.infiniband \
    --web.listen-address="127.0.0.1:$nport" >/dev/null 2>&1 &
  npid=$!
  pids+=($npid)
  for _ in $(seq 1 100); do
    curl -sf "127.0.0.1:$fport/metrics" >/dev/null && curl -sf "127.0.0.1:$nport/metrics" >/dev/null && break
    sleep 0.1
  done
  series() { curl -sf "$1/metrics" | grep -c '^node_infiniband_port_data_transmitted_bytes_total{' || true; }
  fseries=$(series 127.0.0.1:$fport)
  nseries=$(series 127.0.0.1:$nport)
  mode=$(curl -sf "127.0.0.1:$fport/metrics" | awk '/^fabtrack_exporter_sampler_mode\{/ && $2 == 1 {print $1}')
  saturated=$(curl -sf "127.0.0.1:$fport/metrics" | grep -c '^fabtrack_rdma_saturated{' || true)
  hw_series=$(curl -sf "127.0.0.1:$fport/metrics" | grep -c '^fabtrack_rdma_hw_stat_total{' || true)
  echo "== $name: $ports ports, $saturated saturated counters; exported: fabtrack $fseries (--hw-counters $hw: $hw_series hw series), node_exporter $nseries; $mode"
  [[ $fseries == "$ports" && $nseries == "$ports" ]] || { echo "an exporter did not start or does not export every port"; exit 1; }
  for _ in $(seq 1 20); do curl -sf "127.0.0.1:$fport/metrics" >/dev/null; curl -sf "127.0.0.1:$nport/metrics" >/dev/null; done
  f_ms=() n_ms=() ratios=()
  for r in $(seq 1 "$rounds"); do
    if (( r % 2 )); then order="fabtrack first"; else order="node_exporter first"; fi
    for side in $( ((r % 2)) && echo "f n" || echo "n f"); do
      if [[ $side == f ]]; then
        a=$(cpu $fpid); scrape "127.0.0.1:$fport"; f=$(ms_per_scrape $(($(cpu $fpid) - a)))
      else
        c=$(cpu $npid); scrape "127.0.0.1:$nport"; n=$(ms_per_scrape $(($(cpu $npid) - c)))
      fi
    done
    f_ms+=("$f") n_ms+=("$n")
    ratio=$(awk -v a="$n" -v b="$f" 'BEGIN {printf "%.1f", (b > 0 ? a / b : 0)}')
    ratios+=("$ratio")
    echo "round $r ($order): fabtrack $f ms CPU/scrape, node_exporter $n ms CPU/scrape ($ratio x)"
  done
  line="$name ($ports ports): median CPU/scrape fabtrack $(median "${f_ms[@]}") ms, node_exporter $(median "${n_ms[@]}") ms; node_exporter/fabtrack median of per-round ratios $(median "${ratios[@]}")x (rounds $(minmax "${ratios[@]}")x)"
  echo "$line"
  summary+=("$line")
  kill $fpid $npid 2>/dev/null || true
  wait $fpid $npid 2>/dev/null || true
  pids=()
done
echo "== summary ($rounds rounds x $scrapes scrapes, alternating order)"
printf '%s\n' "${summary[@]}"
