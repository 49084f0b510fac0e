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
# The sampler says it reads on its fast path (one log line says why).
grep -q '^fabtrack_exporter_sampler_mode{mode="fast"} 1' "$work/scrape.prom"
grep -q '^fabtrack_exporter_sampler_mode{mode="fallback"} 0' "$work/scrape.prom"
grep -q 'sampler fast: ' "$work/serve.err" || { cat "$work/serve.err"; echo "FAIL: no plan log line"; exit 1; }
# Apart from the scrape's own duration and the sampler's mode (serve only), a
# live scrape says what `counters metrics` says.
diff <(grep -v -e '^fabtrack_scrape_collector_duration_seconds{' -e 'fabtrack_exporter_sampler_mode' "$work/scrape.prom") \
  <(grep -v '^fabtrack_scrape_collector_duration_seconds{' "$work/ndr_8hca.prom") ||
  { echo "FAIL: the live scrape differs from counters metrics"; exit 1; }
curl -sfD "$work/headers" -o /dev/null "http://127.0.0.1:$port/metrics"
grep -qi '^Content-Type: text/plain; version=0.0.4' "$work/headers" ||
  { cat "$work/headers"; echo "FAIL: exposition content type"; exit 1; }
# GET's Content-Length frames its body exactly; HEAD announces what a GET
# sends (give or take the digits of the scrape's own duration) and no body.
curl -sfD "$work/get.headers" -o "$work/get.body" "http://127.0.0.1:$port/metrics"
get_length=$(tr -d '\r' <"$work/get.headers" | awk -F': ' 'tolower($1) == "content-length" {print $2}')
[[ $get_length == $(wc -c <"$work/get.body") ]] ||
  { echo "FAIL: GET Content-Length $get_length does not frame the body"; exit 1; }
head_length=$(curl -sfI "http://127.0.0.1:$port/metrics" | tr -d '\r' | awk -F': ' 'tolower($1) == "content-length" {print $2}')
(( head_length > 0 && head_length - get_length < 12 && get_length - head_length < 12 )) ||
  { echo "FAIL: HEAD Content-Length $head_length, GET sends $get_length"; exit 1; }
[[ $(curl -s -o /dev/null -w '%{size_download}' -I "http://127.0.0.1:$port/metrics") == 0 ]] ||
  { echo "FAIL: HEAD sent a body"; exit 1; }
[[ $(curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$port/metrics") == 405 ]] ||
  { echo "FAIL: POST /metrics was not refused"; exit 1; }
# Bodies go to a file before grep: with pipefail, `curl | grep -q` fails
# whenever grep exits before curl has written everything (SIGPIPE).
curl -sf -o "$work/landing" "http://127.0.0.1:$port/" && grep -q 'href="/metrics"' "$work/landing" ||
  { echo "FAIL: landing page"; exit 1; }
[[ $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/debug") == 404 ]] ||
  { echo "FAIL: an unknown path was not 404"; exit 1; }
curl -sf -o "$work/query" "http://127.0.0.1:$port/metrics?collect%5B%5D=infiniband" &&
  grep -q '^node_infiniband_state_id{' "$work/query" ||
  { echo "FAIL: a query string broke /metrics"; exit 1; }
[[ $(curl -s -o /dev/null -w '%{http_code}' -H "X-Padding: $(head -c 9000 /dev/zero | tr '\0' a)" \
  "http://127.0.0.1:$port/metrics") == 431 ]] || { echo "FAIL: oversized headers were not refused"; exit 1; }
# The server has one thread: a client that connects and says nothing, and one
# that stops halfway through its request, must not hold up a scrape.
exec 3<>"/dev/tcp/127.0.0.1/$port"
exec 4<>"/dev/tcp/127.0.0.1/$port"
printf 'GET /metrics HTTP/1.1\r\nHost: x\r\n' >&4
curl -sf --max-time 3 -o "$work/beside_idle" "http://127.0.0.1:$port/metrics" &&
  grep -q '^node_infiniband_state_id{' "$work/beside_idle" ||
  { echo "FAIL: an idle client held up a scrape"; exit 1; }
exec 3>&- 4>&-
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
