#!/usr/bin/env bash
# The Prometheus exporter end to end on fake sysfs trees: the exposition text
# against golden files (FABTRACK_UPDATE_GOLDEN=1 regenerates them), promtool's
# lint, absent counters left out, and a real HTTP scrape of `counters serve`.
set -euo pipefail
fabtrack=$1 fixtures=$2
golden="$fixtures/golden"
work=$(mktemp -d)
server=""
trap '[[ -n $server ]] && kill $server 2>/dev/null; rm -rf "$work"' EXIT
command -v promtool >/dev/null || { echo "FAIL: promtool missing (Debian package prometheus)"; exit 1; }

for tree in ndr_8hca roce_host mixed_faults; do
  "$fabtrack" counters metrics --sysfs "$fixtures/sysfs/$tree" >"$work/$tree.prom"
  promtool check metrics <"$work/$tree.prom" || { echo "FAIL: promtool on $tree"; exit 1; }
  # The scrape duration differs run to run; everything else is deterministic.
  grep -v '^fabtrack_scrape_collector_duration_seconds{' "$work/$tree.prom" >"$work/$tree.stable"
  if [[ ${FABTRACK_UPDATE_GOLDEN:-0} == 1 ]]; then
    cp "$work/$tree.stable" "$golden/$tree.prom"
  fi
  diff -u "$golden/$tree.prom" "$work/$tree.stable" || { echo "FAIL: $tree differs from golden"; exit 1; }
done
# N/A (no PMA) is absent, not 0: the iWARP device exports state but no error counters.
grep -q 'node_infiniband_state_id{device="i40iw0"' "$work/mixed_faults.prom"
if grep -q 'node_infiniband_symbol_error_total{device="i40iw0"' "$work/mixed_faults.prom"; then
  echo "FAIL: an N/A counter was exported"; exit 1
fi
grep -q 'fabtrack_rdma_saturated{device="qib0",port="1",counter="symbol_error"} 1' "$work/mixed_faults.prom"
grep -q 'node_infiniband_rate_bytes_per_second{device="mlx5_3",port="1"} 25000000000' "$work/ndr_8hca.prom"
grep -q 'fabtrack_rdma_hw_stat_total{device="mlx5_0",port="1",counter="np_cnp_sent"}' "$work/roce_host.prom"

# A real scrape over HTTP on loopback.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
"$fabtrack" counters serve --listen "127.0.0.1:$port" --sysfs "$fixtures/sysfs/ndr_8hca" --duration 300 \
  2>"$work/serve.err" &
server=$!
for _ in $(seq 50); do
  curl -sf "http://127.0.0.1:$port/metrics" >"$work/scrape.prom" 2>/dev/null && break
  sleep 0.1
done
[[ -s $work/scrape.prom ]] || { cat "$work/serve.err"; echo "FAIL: no scrape"; exit 1; }
promtool check metrics <"$work/scrape.prom" || { echo "FAIL: promtool on the scrape"; exit 1; }
[[ $(grep -c '^node_infiniband_port_data_transmitted_bytes_total{' "$work/scrape.prom") == 8 ]]
grep -q '^fabtrack_scrape_collector_success{collector="infiniband"} 1' "$work/scrape.prom"
# Apart from the scrape's own duration, a live scrape says what `counters metrics` says.
diff <(grep -v '^fabtrack_scrape_collector_duration_seconds{' "$work/scrape.prom") \
  <(grep -v '^fabtrack_scrape_collector_duration_seconds{' "$work/ndr_8hca.prom") ||
  { echo "FAIL: the live scrape differs from counters metrics"; exit 1; }
curl -sfD "$work/headers" -o /dev/null "http://127.0.0.1:$port/metrics"
grep -qi '^Content-Type: text/plain; version=0.0.4' "$work/headers" ||
  { cat "$work/headers"; echo "FAIL: exposition content type"; exit 1; }
# HEAD announces the body GET sends; other methods are refused; / links to /metrics.
head_length=$(curl -sfI "http://127.0.0.1:$port/metrics" | tr -d '\r' | awk -F': ' 'tolower($1) == "content-length" {print $2}')
[[ $head_length == $(curl -sf "http://127.0.0.1:$port/metrics" | wc -c) ]] ||
  { echo "FAIL: HEAD Content-Length $head_length does not match the body"; exit 1; }
[[ $(curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$port/metrics") == 405 ]] ||
  { echo "FAIL: POST /metrics was not refused"; exit 1; }
curl -sf "http://127.0.0.1:$port/" | grep -q 'href="/metrics"' || { echo "FAIL: landing page"; exit 1; }
# Scrapes from several clients at once all get whole answers.
# Wait for the clients only: a bare `wait` would also wait for the server.
clients=()
for i in 1 2 3 4 5 6 7 8; do
  curl -sf "http://127.0.0.1:$port/metrics" >"$work/parallel.$i" &
  clients+=($!)
done
wait "${clients[@]}"
for i in 1 2 3 4 5 6 7 8; do
  [[ $(grep -c '^node_infiniband_port_data_transmitted_bytes_total{' "$work/parallel.$i") == 8 ]] ||
    { echo "FAIL: concurrent scrape $i incomplete"; exit 1; }
  promtool check metrics <"$work/parallel.$i" >/dev/null || { echo "FAIL: promtool on concurrent scrape $i"; exit 1; }
done
# A second server on a port already taken fails clearly.
if "$fabtrack" counters serve --listen "127.0.0.1:$port" --sysfs "$fixtures/sysfs/ndr_8hca" --duration 5 2>"$work/busy.err"; then
  echo "FAIL: serve on a busy port succeeded"; exit 1
fi
grep -q "cannot listen on 127.0.0.1:$port" "$work/busy.err" || { cat "$work/busy.err"; echo "FAIL: busy-port message"; exit 1; }
echo "exporter: golden files, promtool and a live scrape agree"
