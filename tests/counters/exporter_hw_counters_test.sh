#!/usr/bin/env bash
# --hw-counters end to end on a ConnectX-7 tree (make_cx7_tree.sh, 16 HCAs):
# `counters metrics`, `counters serve` (through a hot unplug and replug) and
# `counters snapshot` read all, none or only the listed hw_counters/ files;
# promtool lints every exposition; strace shows that "none" opens nothing
# under hw_counters/; a listed name no port has is one warning; a malformed
# value is a usage error naming the option.
set -euo pipefail
fabtrack=$1 fixtures=$2
work=$(mktemp -d)
server=""
trap '[[ -n $server ]] && kill $server 2>/dev/null; rm -rf "$work"' EXIT
command -v promtool >/dev/null || { echo "FAIL: promtool missing (Debian package prometheus)"; exit 1; }
command -v strace >/dev/null || { echo "FAIL: strace missing (Debian package strace)"; exit 1; }
fail() { echo "FAIL: $*"; exit 1; }
tree=$work/cx7
"$fixtures/sysfs/make_cx7_tree.sh" "$tree" 16
hw_files=$(find "$tree/devices" -path '*/hw_counters/*' -type f ! -name lifespan | wc -l)
[[ $hw_files == 320 ]] || fail "the tree has $hw_files hw_counters files, not 16 x 20"

hw_lines() { grep -c '^fabtrack_rdma_hw_stat_total{' "$1" || true; }
# Everything but the hw counters, what says how they were chosen, and the
# scrape's own duration.
rest() {
  grep -v -e '^fabtrack_rdma_hw_stat_total' -e 'fabtrack_rdma_hw_stat_total ' \
    -e 'fabtrack_exporter_hw_counters_' -e '^fabtrack_scrape_collector_duration_seconds{' "$1"
}
"$fabtrack" counters metrics --sysfs "$tree" >"$work/all.prom"
"$fabtrack" counters metrics --sysfs "$tree" --hw-counters none >"$work/none.prom"
"$fabtrack" counters metrics --sysfs "$tree" --hw-counters out_of_buffer,np_cnp_sent \
  >"$work/list.prom" 2>"$work/list.err"
for f in all none list; do
  promtool check metrics <"$work/$f.prom" || fail "promtool on --hw-counters $f"
done
[[ $(hw_lines "$work/all.prom") == "$hw_files" ]] || fail "all: $(hw_lines "$work/all.prom") hw series"
[[ $(hw_lines "$work/none.prom") == 0 ]] || fail "none exported hw counters"
# No hw counter: no family either (HELP/TYPE go out with the first sample).
! grep -q 'fabtrack_rdma_hw_stat_total' "$work/none.prom" || fail "none: an empty hw family"
# The listed counter on every port, with the values the full read has.
diff <(grep '^fabtrack_rdma_hw_stat_total{' "$work/list.prom") \
  <(grep '^fabtrack_rdma_hw_stat_total{.*counter="out_of_buffer"}' "$work/all.prom") ||
  fail "the list did not export exactly out_of_buffer as all does"
[[ $(hw_lines "$work/list.prom") == 16 ]] || fail "list: $(hw_lines "$work/list.prom") hw series"
# Apart from the hw counters, every selection exports the same.
diff <(rest "$work/all.prom") <(rest "$work/none.prom") || fail "none changed other series"
diff <(rest "$work/all.prom") <(rest "$work/list.prom") || fail "a list changed other series"
# The exposition says what is read.
grep -q '^fabtrack_exporter_hw_counters_selection{selection="all"} 1$' "$work/all.prom" || fail "all not said"
grep -q '^fabtrack_exporter_hw_counters_selection{selection="none"} 1$' "$work/none.prom" || fail "none not said"
grep -q '^fabtrack_exporter_hw_counters_selection{selection="all"} 0$' "$work/none.prom" || fail "none: all not 0"
grep -q '^fabtrack_exporter_hw_counters_selection{selection="listed"} 1$' "$work/list.prom" || fail "list not said"
[[ $(grep -c '^fabtrack_exporter_hw_counters_listed{' "$work/list.prom") == 2 ]] || fail "listed names"
grep -q '^fabtrack_exporter_hw_counters_listed{counter="np_cnp_sent"} 1$' "$work/list.prom" || fail "np_cnp_sent not listed"
! grep -q '^fabtrack_exporter_hw_counters_listed{' "$work/all.prom" || fail "all lists names"
# A RoCE counter on an IB host: one warning naming it and what the ports have.
[[ $(wc -l <"$work/list.err") == 1 ]] || { cat "$work/list.err"; fail "not one warning line"; }
grep -q -- "--hw-counters: no port under $tree/class/infiniband has hw_counters/np_cnp_sent; the ports have: .*out_of_buffer" \
  "$work/list.err" || { cat "$work/list.err"; fail "the warning"; }
! grep -q 'hw_counters/out_of_buffer' "$work/list.err" || fail "warned about a name the ports have"

# "none" opens nothing under hw_counters/ (and "all" does, so strace sees opens).
strace -f -qq -e trace=open,openat -o "$work/trace.all" "$fabtrack" counters metrics --sysfs "$tree" >/dev/null
strace -f -qq -e trace=open,openat -o "$work/trace.none" "$fabtrack" counters metrics --sysfs "$tree" \
  --hw-counters none >/dev/null
# Files are opened relative to their directory's descriptor: "none" opens no
# hw_counters directory, so nothing in one; and exactly one directory and its
# 20 files a port fewer than "all".
! grep 'hw_counters' "$work/trace.none" || fail "none opened hw_counters/"
opens_all=$(wc -l <"$work/trace.all") opens_none=$(wc -l <"$work/trace.none")
(( opens_all - opens_none == hw_files + 16 )) ||
  fail "all opened $opens_all files, none $opens_none: not the $hw_files hw_counters files and 16 directories"

# Malformed values: usage errors (exit 2) naming the option, for every command.
for cmd in "counters metrics" "counters serve --duration 1" "counters snapshot" \
  "counters watch --cluster c --count 1" "sweep --cluster c"; do
  for bad in 'a,,b' 'lifespan' 'all,out_of_buffer' '../counters/symbol_error'; do
    rc=0
    # shellcheck disable=SC2086
    "$fabtrack" $cmd --sysfs "$tree" --hw-counters "$bad" >/dev/null 2>"$work/bad.err" || rc=$?
    [[ $rc == 2 ]] || { cat "$work/bad.err"; fail "$cmd --hw-counters '$bad' exited $rc"; }
    grep -q -- '--hw-counters' "$work/bad.err" || { cat "$work/bad.err"; fail "$cmd: the message does not name --hw-counters"; }
  done
done

# counters snapshot: the JSON holds only what was selected.
"$fabtrack" counters snapshot --sysfs "$tree" --hw-counters none --host h >"$work/none.json"
"$fabtrack" counters snapshot --sysfs "$tree" --hw-counters out_of_buffer --host h >"$work/list.json"
"$fabtrack" counters snapshot --sysfs "$tree" --host h >"$work/all.json"
python3 - "$work" <<'PY'
import json, sys
w = sys.argv[1]
load = lambda n: json.load(open(f"{w}/{n}.json"))["ports"]
every, none, listed = load("all"), load("none"), load("list")
assert len(every) == len(none) == len(listed) == 16
for a, n, l in zip(every, none, listed):
    assert len(a["hw_counters"]) == 20, a["hw_counters"]
    assert not n.get("hw_counters"), n.get("hw_counters")
    assert l["hw_counters"] == {"out_of_buffer": a["hw_counters"]["out_of_buffer"]}, l["hw_counters"]
    for k in a:
        if k != "hw_counters":
            assert a[k] == n.get(k) == l.get(k), k
PY

# counters serve with a list: live scrapes, through a hot unplug and replug
# (each a new plan that must keep the selection).
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
"$fabtrack" counters serve --listen "127.0.0.1:$port" --sysfs "$tree" --duration 300 \
  --hw-counters out_of_buffer,rx_write_requests 2>"$work/serve.err" &
server=$!
scrape() {
  for _ in $(seq 50); do
    curl -sf "http://127.0.0.1:$port/metrics" >"$work/$1.prom" 2>/dev/null && break
    sleep 0.1
  done
  [[ -s $work/$1.prom ]] || { cat "$work/serve.err"; fail "no scrape $1"; }
  promtool check metrics <"$work/$1.prom" || fail "promtool on scrape $1"
}
expect_hw() {  # scrape ports: every port has out_of_buffer and rx_write_requests, nothing else
  [[ $(hw_lines "$work/$1.prom") == $(($2 * 2)) ]] || fail "$1: $(hw_lines "$work/$1.prom") hw series for $2 ports"
  [[ $(grep '^fabtrack_rdma_hw_stat_total{' "$work/$1.prom" | grep -cv -e 'counter="out_of_buffer"' -e 'counter="rx_write_requests"') == 0 ]] ||
    fail "$1: an unselected hw counter"
  [[ $(grep -c '^node_infiniband_port_data_transmitted_bytes_total{' "$work/$1.prom") == "$2" ]] || fail "$1: ports"
  grep -q '^fabtrack_exporter_sampler_mode{mode="fast"} 1' "$work/$1.prom" || fail "$1: not on the fast path"
}
scrape first
expect_hw first 16
grep -q '(32 of them hw_counters)' "$work/serve.err" || { cat "$work/serve.err"; fail "the plan line does not count hw_counters"; }
link=$(readlink "$tree/class/infiniband/mlx5_15")
rm "$tree/class/infiniband/mlx5_15"
scrape unplugged
expect_hw unplugged 15
ln -s "$link" "$tree/class/infiniband/mlx5_15"
scrape replugged
expect_hw replugged 16
grep -q '^fabtrack_exporter_hw_counters_listed{counter="rx_write_requests"} 1$' "$work/replugged.prom" ||
  fail "the selection is not said after a replug"
[[ $(grep -c 'of them hw_counters' "$work/serve.err") == 3 ]] || { cat "$work/serve.err"; fail "three plans expected"; }
kill $server
wait $server 2>/dev/null || true
server=""

# counters serve --hw-counters none answers what `counters metrics --hw-counters none` prints.
"$fabtrack" counters serve --listen "127.0.0.1:$port" --sysfs "$tree" --duration 300 \
  --hw-counters none 2>"$work/serve.err" &
server=$!
scrape none_live
grep -q '(0 of them hw_counters)' "$work/serve.err" || { cat "$work/serve.err"; fail "none: the plan line"; }
diff <(grep -v -e '^fabtrack_scrape_collector_duration_seconds{' -e 'fabtrack_exporter_sampler_mode' "$work/none_live.prom") \
  <(grep -v '^fabtrack_scrape_collector_duration_seconds{' "$work/none.prom") ||
  fail "serve --hw-counters none differs from counters metrics --hw-counters none"
echo "exporter --hw-counters: all, none and a list read and export what they say"
