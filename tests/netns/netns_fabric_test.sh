#!/usr/bin/env bash
# End-to-end test of scripts/netns-fabric.sh: a 2-node fabric of network namespaces,
# MPI across it (hostnames, MPI_Allreduce, traffic really on the veth links), a
# throttled node, a CPU burner, and a destroy that leaves nothing behind.
# Needs root and `ip netns`; without them it FAILS (it never skips).
# Usage: tests/netns/netns_fabric_test.sh SOURCE_DIR
# shellcheck disable=SC2015,SC2016  # `A && B || fail` is intended; perl bodies are literal
set -euo pipefail

src=${1:?usage: netns_fabric_test.sh SOURCE_DIR}
fabric=$src/scripts/netns-fabric.sh
step() { echo "--- $*"; }
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# Preconditions: fail, do not skip.
[[ $(id -u) -eq 0 ]] || fail "must run as root (creates network namespaces, a bridge and qdiscs); run: sudo ctest -R netns_fabric"
command -v ip >/dev/null || fail "'ip' (iproute2) not installed"
ip netns list >/dev/null 2>&1 || fail "'ip netns' unavailable (no network namespace support or no CAP_SYS_ADMIN)"
command -v tc >/dev/null || fail "'tc' (iproute2) not installed"
command -v unshare >/dev/null || fail "'unshare' (util-linux) not installed"
for c in mpicc mpirun; do command -v $c >/dev/null || fail "$c not found: run scripts/install-deps.sh"; done
perl -MNet::Ping -e 1 2>/dev/null || fail "perl Net::Ping not available (perl, pulled in by build-essential)"
[[ -x $fabric ]] || fail "$fabric missing or not executable"

prefix=ftt$$ # unique per run; at most 10 characters
subnet=10.77.0.0/24
ns1=$prefix-node1
ns2=$prefix-node2
work=$(mktemp -d /tmp/netns-fabric-test.XXXXXX)
cleanup() {
  local rc=$?
  "$fabric" destroy --prefix "$prefix" >/dev/null 2>&1 || echo "cleanup: destroy --prefix $prefix failed" >&2
  rm -rf "$work"
  exit $rc
}
trap cleanup EXIT

step "refuses bad input without touching anything"
if "$fabric" create 2 --prefix "$prefix" --subnet 8.8.8.0/24 2>"$work/err"; then fail "public subnet accepted"; fi
grep -q "private" "$work/err" || fail "no clear message for a public subnet: $(cat "$work/err")"
if "$fabric" create 2 --prefix "BAD_NAME" 2>/dev/null; then fail "bad prefix accepted"; fi
if "$fabric" mpirun --prefix "$prefix" -- -np 1 true 2>/dev/null; then fail "mpirun ran without a fabric"; fi

step "create 2 nodes ($prefix, $subnet)"
"$fabric" create 2 --prefix "$prefix" --subnet "$subnet"
if "$fabric" create 2 --prefix "$prefix" --subnet "$subnet" 2>"$work/err"; then fail "second create on the same prefix succeeded"; fi
grep -q "already exists" "$work/err" || fail "no clear message for an existing fabric: $(cat "$work/err")"

step "namespaces, addresses, routes"
nslist=$(ip netns list | awk '{print $1}')
for ns in "$ns1" "$ns2"; do grep -qx "$ns" <<<"$nslist" || fail "namespace $ns missing"; done
ip1=$(ip -n "$ns1" -4 -o addr show dev eth0 | awk '{print $4}')
ip2=$(ip -n "$ns2" -4 -o addr show dev eth0 | awk '{print $4}')
[[ $ip1 == 10.77.0.1/24 && $ip2 == 10.77.0.2/24 ]] || fail "addresses: $ns1=$ip1 $ns2=$ip2"
for ns in "$ns1" "$ns2"; do
  ip -n "$ns" link show lo | grep -q "UP" || fail "lo down in $ns"
  routes=$(ip -n "$ns" -4 route show)
  [[ $routes == "10.77.0.0/24 dev eth0 "* && $(wc -l <<<"$routes") -eq 1 ]] ||
    fail "$ns must only route the fabric subnet, has: $routes"
done
ip link show "$prefix-br" >/dev/null || fail "bridge $prefix-br missing"
[[ -z $(ip -4 addr show dev "$prefix-br") ]] || fail "bridge must have no address"

step "ping $ns1 -> $ns2 over the bridge"
ip netns exec "$ns1" perl -MNet::Ping -e '
  my $p = Net::Ping->new("icmp", 2); my $ok = 0;
  for (1 .. 3) { $ok++ if $p->ping($ARGV[0]) }
  exit($ok == 3 ? 0 : 1)' 10.77.0.2 || fail "$ns1 cannot ping 10.77.0.2"

step "hostfile"
"$fabric" hostfile --prefix "$prefix" --slots 2 >"$work/hostfile"
diff <(printf '%s slots=2\n' "$ns1" "$ns2") "$work/hostfile" || fail "unexpected hostfile"

step "mpirun hostname on 2 ranks, one per node"
timeout 120 "$fabric" mpirun --prefix "$prefix" -- -np 2 hostname >"$work/hostnames" ||
  fail "mpirun hostname failed: $(cat "$work/hostnames")"
diff <(printf '%s\n' "$ns1" "$ns2") <(sort "$work/hostnames") || fail "hostnames: $(cat "$work/hostnames")"

step "compile an MPI check"
cat >"$work/mpicheck.c" <<'EOF'
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
/* Prints every rank's hostname, checks an MPI_Allreduce sum, and times a 1 MiB
   ping-pong between ranks 0 and 1 (MB/s, one direction). */
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  char host[64] = {0};
  gethostname(host, sizeof host - 1);
  char *all = calloc((size_t)size, sizeof host);
  MPI_Gather(host, sizeof host, MPI_CHAR, all, sizeof host, MPI_CHAR, 0, MPI_COMM_WORLD);
  long mine = rank + 1, sum = 0;
  MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  int n = 1 << 20, iters = argc > 1 ? atoi(argv[1]) : 10;
  char *buf = calloc((size_t)n, 1);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int i = 0; i < iters && size > 1; i++) {
    if (rank == 0) {
      MPI_Send(buf, n, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
      MPI_Recv(buf, n, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
      MPI_Recv(buf, n, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buf, n, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
    }
  }
  double dt = MPI_Wtime() - t0;
  if (rank == 0) {
    for (int r = 0; r < size; r++) printf("host %d %s\n", r, all + r * sizeof host);
    long want = (long)size * (size + 1) / 2;
    printf("allreduce %ld %s\n", sum, sum == want ? "ok" : "WRONG");
    printf("mbps %.1f\n", 2.0 * iters * n / dt / 1e6);
  }
  free(buf);
  free(all);
  MPI_Finalize();
  return 0;
}
EOF
mpicc -O2 -o "$work/mpicheck" "$work/mpicheck.c" || fail "mpicc failed"

run_check() { # ITERS OUTFILE
  timeout 200 "$fabric" mpirun --prefix "$prefix" -- -np 2 "$work/mpicheck" "$1" >"$2" 2>&1 ||
    fail "MPI check failed: $(cat "$2")"
  grep -qx "host 0 $ns1" "$2" && grep -qx "host 1 $ns2" "$2" || fail "MPI check hostnames: $(cat "$2")"
  grep -qx "allreduce 3 ok" "$2" || fail "MPI_Allreduce sum: $(cat "$2")"
  awk '$1 == "mbps" {print $2}' "$2"
}

step "MPI across the nodes (hostnames, MPI_Allreduce, traffic on the veth of $ns2)"
before=$(awk '{s+=$1} END {print s}' "/sys/class/net/$prefix-h2/statistics/"{rx,tx}_bytes)
fast=$(run_check 20 "$work/fast.txt")
after=$(awk '{s+=$1} END {print s}' "/sys/class/net/$prefix-h2/statistics/"{rx,tx}_bytes)
cat "$work/fast.txt"
# 20 round trips of 1 MiB = 40 MiB must have crossed $ns2's veth.
((after - before >= 40 * 1048576)) || fail "only $((after - before)) bytes crossed $prefix-h2: MPI did not use the bridge"

step "throttle $ns2 to 100mbit (both directions)"
"$fabric" throttle 2 100mbit --prefix "$prefix"
tc -n "$ns2" qdisc show dev eth0 | grep -q htb || fail "no htb on $ns2 eth0"
tc qdisc show dev "$prefix-h2" | grep -q htb || fail "no htb on $prefix-h2"
slow=$(run_check 4 "$work/slow.txt")
echo "unthrottled ${fast} MB/s, throttled ${slow} MB/s (100mbit = 12.5 MB/s)"
awk -v f="$fast" -v s="$slow" 'BEGIN {exit !(s < 15 && s * 4 < f)}' ||
  fail "throttle had no effect: ${fast} MB/s -> ${slow} MB/s"
"$fabric" unthrottle 2 --prefix "$prefix"
tc -n "$ns2" qdisc show dev eth0 | grep -q htb && fail "htb still on $ns2 after unthrottle"
tc qdisc show dev "$prefix-h2" | grep -q htb && fail "htb still on $prefix-h2 after unthrottle"

step "CPU load in $ns2 (stopped by destroy)"
"$fabric" load 2 --cpus 1 --seconds 120 --prefix "$prefix"
sleep 0.5
burners=$(ip netns pids "$ns2")
[[ -n $burners ]] || fail "no burner running in $ns2"

step "destroy leaves nothing behind"
"$fabric" destroy --prefix "$prefix"
ip netns list | grep -E "^$prefix-" && fail "namespaces left: $(ip netns list)"
ip -o link show | grep -E ": $prefix-" && fail "links left"
[[ ! -e /run/fabtrack-netns/$prefix ]] || fail "state dir /run/fabtrack-netns/$prefix left"
compgen -G "/etc/netns/$prefix-*" >/dev/null && fail "/etc/netns/$prefix-* left"
for p in $burners; do # gone, or a zombie waiting for its parent (not running)
  state=$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null || true)
  [[ -z $state || $state == Z ]] || fail "burner $p still running after destroy (state $state)"
done
"$fabric" destroy --prefix "$prefix" || fail "second destroy failed"
echo "PASS"
