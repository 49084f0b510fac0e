#!/usr/bin/env bash
# Port counters bracket every run on every node: a 2-node sweep on the netns
# fabric, each node reading a fake sysfs tree (the same tree, told apart by
# each node's own hostname), must store before/after samples and per-port
# deltas for exactly the nodes of each run. Fails (never skips) without root.
# Usage: tests/netns/sweep_ports_test.sh SOURCE_DIR FABTRACK
set -euo pipefail
repo=$1
fabtrack=$2
fabric="$repo/scripts/netns-fabric.sh"
prefix="sp$$"
prefix=${prefix:0:10}
work=$(mktemp -d)
chmod 755 "$work"  # the embedded server runs as an unprivileged user
cleanup() {
  "$fabtrack" db stop --data-dir "$work/db" >/dev/null 2>&1 || true
  "$fabric" destroy --prefix "$prefix" >/dev/null 2>&1 || true
  [[ -n ${KEEP:-} ]] || rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || fail "needs root for network namespaces"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

"$fabric" create 2 --prefix "$prefix" >/dev/null
tree="$repo/tests/fixtures/sysfs/ndr_8hca"
timeout 300 "$fabtrack" sweep --data-dir "$work/db" --cluster lab --nodes 1,2 \
  --mpirun "$fabric mpirun --prefix $prefix --" --output-dir "$work/out" \
  --sysfs "$tree" --ports nodes -- -b 8 -e 1K -f 4 -n 3 -w 1 >"$work/sweep.log" 2>&1 ||
  { cat "$work/sweep.log"; fail "sweep failed"; }
grep -q "port counters of 2 node(s)" "$work/sweep.log" || { cat "$work/sweep.log"; fail "2-node run not bracketed on both nodes"; }

q() { psql "host=$work/db/run dbname=fabtrack user=fabtrack" -Atc "$1"; }
got=$(q "SELECT r.nodes || ':' || p.host || ':' || s.phase || ':' || count(*)
         FROM port_counter_samples s JOIN ports p ON p.id = s.port_id JOIN runs r ON r.id = s.run_id
         GROUP BY r.nodes, p.host, s.phase ORDER BY 1")
want=$(printf '%s\n' "1:$prefix-node1:after:8" "1:$prefix-node1:before:8" \
  "2:$prefix-node1:after:8" "2:$prefix-node1:before:8" \
  "2:$prefix-node2:after:8" "2:$prefix-node2:before:8")
[[ $got == "$want" ]] || fail "samples per run/host/phase:
$got
want:
$want"
deltas=$(q "SELECT count(DISTINCT (d.run_id, p.host)) FROM run_port_deltas d JOIN ports p ON p.id = d.port_id
            WHERE d.counter = 'xmit_bytes' AND d.delta = 0")
[[ $deltas == 3 ]] || fail "expected xmit_bytes deltas for 3 run/host pairs, got $deltas"
echo "per-node port bracketing: ok"
