#!/usr/bin/env bash
# CPU per scrape of a large host's RDMA ports: `fabtrack counters serve`
# against prometheus-node-exporter with only its infiniband collector, both as
# daemons on the same sysfs tree (8 HCAs x 2 ports, every counter, on tmpfs),
# scraped alternately the same number of times; CPU from /proc/PID/stat
# (utime + stime). Prints per-round figures and the medians.
# Usage: bench/run_port_scrape_bench.sh [scrapes per round, default 500] [rounds, default 5]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
scrapes=${1:-500}
rounds=${2:-5}
cmake --build build -j"$(nproc)" --target fabtrack >/dev/null
command -v prometheus-node-exporter >/dev/null || { echo "install prometheus-node-exporter"; exit 1; }
work=$(mktemp -d /dev/shm/fabtrack-scrape-XXXXXX)
cleanup() { kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"; }
pids=()
trap cleanup EXIT

# The tree: the 8-HCA NDR fixture, each HCA given a second port.
tree=$work/sys
bench_large_sysfs "$tree"
ports=$(ls -d "$tree"/class/infiniband/*/ports/* | wc -l)

# Below the ephemeral range (32768-60999 by default): thousands of scrapes
# leave client sockets in TIME_WAIT on ephemeral ports, which a listener
# there could collide with.
fport=$((20000 + RANDOM % 10000))
nport=$((fport + 1))
build/cli/fabtrack counters serve --sysfs "$tree" --listen "127.0.0.1:$fport" 2>/dev/null &
pids+=($!)
fpid=$!
prometheus-node-exporter --path.sysfs="$tree" --collector.disable-defaults --collector.infiniband \
  --web.listen-address="127.0.0.1:$nport" >/dev/null 2>&1 &
pids+=($!)
npid=$!
for _ in $(seq 1 50); do
  curl -sf "127.0.0.1:$fport/metrics" >/dev/null && curl -sf "127.0.0.1:$nport/metrics" >/dev/null && break
  sleep 0.1
done
series() { curl -sf "$1/metrics" | grep -c '^node_infiniband_port_data_transmitted_bytes_total{' || true; }
fseries=$(series 127.0.0.1:$fport)
nseries=$(series 127.0.0.1:$nport)
echo "ports in the tree: $ports; exported: fabtrack $fseries, node_exporter $nseries"
[[ $fseries == "$ports" && $nseries == "$ports" ]] || { echo "an exporter did not start or does not export every port"; exit 1; }

cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }  # clock ticks
tick=$(getconf CLK_TCK)
scrape() { for _ in $(seq 1 "$scrapes"); do curl -sf "$1/metrics" >/dev/null; done; }
for _ in $(seq 1 20); do curl -sf "127.0.0.1:$fport/metrics" >/dev/null; curl -sf "127.0.0.1:$nport/metrics" >/dev/null; done

f_ms=()
n_ms=()
ratios=()
for r in $(seq 1 "$rounds"); do
  a=$(cpu $fpid); scrape "127.0.0.1:$fport"; b=$(cpu $fpid)
  c=$(cpu $npid); scrape "127.0.0.1:$nport"; d=$(cpu $npid)
  f=$(awk -v t=$((b - a)) -v k="$tick" -v n="$scrapes" 'BEGIN {printf "%.3f", t * 1000 / k / n}')
  n=$(awk -v t=$((d - c)) -v k="$tick" -v n="$scrapes" 'BEGIN {printf "%.3f", t * 1000 / k / n}')
  f_ms+=("$f")
  n_ms+=("$n")
  ratio=$(awk -v a="$n" -v b="$f" 'BEGIN {printf "%.1f", (b > 0 ? a / b : 0)}')
  ratios+=("$ratio")
  echo "round $r: fabtrack $f ms CPU/scrape, node_exporter $n ms CPU/scrape ($ratio x)"
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
fm=$(median "${f_ms[@]}")
nm=$(median "${n_ms[@]}")
echo "median CPU per scrape: fabtrack $fm ms, node_exporter $nm ms; node_exporter/fabtrack = $(awk -v a="$nm" -v b="$fm" 'BEGIN {printf "%.1f", (b > 0 ? a / b : 0)}')x"
echo "median of the per-round ratios: $(median "${ratios[@]}")x"
