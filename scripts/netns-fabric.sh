#!/usr/bin/env bash
# netns-fabric.sh: a multi-node fabric on one machine, for running fabtrack's MPI
# pipeline for real on a laptop or in CI.
#
# Each "node" is a network namespace (<prefix>-node1..K) with loopback and one veth
# (eth0 inside) plugged into a Linux bridge (<prefix>-br) in the root namespace.
# Nodes get <subnet>.1..K; the bridge itself has NO address, so the root namespace
# is not on the fabric and nothing can route off it (every node has only the
# connected route of the private subnet: no default route, no DNS server reachable).
# Open MPI runs across the nodes through an rsh agent that turns "ssh HOST CMD"
# into "ip netns exec HOST unshare --uts sh -c 'hostname HOST; exec CMD'": every
# node has its own hostname, so Open MPI sees K hosts and ranks on different nodes
# talk TCP across veth -> bridge -> veth.
#
# Where mpirun runs: inside node1 (its own UTS namespace, hostname <prefix>-node1),
# like mpirun on the first node of a Slurm allocation. Ranks on node1 are forked by
# mpirun itself; the other nodes get an orted through the agent. This keeps the root
# namespace off the fabric (no bridge address, no extra route in the host), resolves
# node names from /etc/netns/<node>/hosts (bind-mounted by `ip netns exec` into each
# node only), so no name lookup ever leaves the machine, and lets fabrics with the
# same subnet but different prefixes coexist.
#
# Latency finding. A first try measured ~4 ms for an 8-byte MPI message between two
# nodes against tens of microseconds on loopback. Cause: CPU binding. Each node's
# mpirun/orted believes it has the whole machine, so with <= 2 ranks per node Open
# MPI binds the first rank of EVERY node to core 0 (`--report-bindings`: both ranks
# "[B/.]"). Two busy-polling ranks pinned on one core only take turns at the
# scheduler tick, and this kernel has CONFIG_HZ=250: 4 ms = one tick, per message.
# Fix: no binding (hwloc_base_binding_policy=none), plus mpi_yield_when_idle=1 when
# there are more ranks than CPUs (Open MPI turns yielding on by itself only when it
# sees one node oversubscribed; here each node looks idle).
# Ruled out by measurement: the network path. A raw TCP ping-pong (TCP_NODELAY,
# perl) gave 8 B one-way 12.6 us node1->node2 vs 16.3 us on loopback, so not the
# veth/bridge, br_netfilter (loaded, but no iptables tables exist), STP/forward
# delay (off/0), multicast snooping (off), IPv6 DAD (IPv6 off), Nagle (Open MPI
# sets TCP_NODELAY: btl_tcp_use_nagle=0) or delayed ACK (that would be 40 ms).
# The rsh agent only matters at start-up (hostname on 2 nodes: 0.4 s in all).
# vader cannot bypass the links: `--mca btl vader,self` across two nodes fails
# with "unable to reach each other", so ranks on different nodes always use TCP.
# Medians of 5 runs, Open MPI 4.1.4, kernel 6.18, 2 vCPUs shared with other work,
# 8 B one-way latency / 1 MiB ping-pong bandwidth / 8 B MPI_Allreduce:
#   before (Open MPI default binding)
#     loopback, 2 ranks in node1       13.4 us  3667 MB/s   15.1 us
#     2 nodes, 1 rank each           4046   us    87 MB/s 4053   us
#     2 nodes x 2 ranks              5299   us    77 MB/s 7359   us
#   after (defaults of this script)
#     loopback, 2 ranks in node1       12.8 us  4409 MB/s   15.5 us
#     2 nodes, 1 rank each             16.5 us  1475 MB/s   20.2 us
#     2 nodes x 2 ranks (yielding)    120   us   666 MB/s  332   us
#     (no binding without yielding, 2 x 2 ranks: 6420 us / 12517 us allreduce)
# The remaining 1 MiB gap to loopback is the MTU (1500 vs 65536 on lo): raw TCP
# across the bridge gave 982 MB/s at MTU 1500 and 5248 MB/s with --mtu 65535.
#
# Two tiers (create K --leaves L): instead of one bridge, leaf bridges
# <prefix>-l1..L (nodes spread evenly, in order: node i on leaf ceil(i*L/K))
# and one spine bridge <prefix>-sp; leaf J's uplink is a veth pair,
# <prefix>-uJ on the leaf bridge and <prefix>-dJ on the spine bridge
# (interface names are at most 15 characters, so bridges and uplinks get
# these short names; the fabric's logical names, printed by `topology` and
# used by `throttle-uplink`, are leafJ, spine and the uplink leafJ-spine).
# throttle-uplink shapes one direction only, from the leaf toward the spine:
# an htb qdisc on the egress of <prefix>-uJ (frames the leaf bridge forwards
# up), so what leafJ sends out is slow and what it receives is not, as with
# a congested or mis-shaped egress port. (A symmetric fault of one uplink
# cannot be told from the other leaf's by pair tests on two leaves; a
# one-way fault can, with one-way probes: see analyzer/locate.)
#
# Usage: see `netns-fabric.sh help`.
# shellcheck disable=SC2015,SC2016  # `A && B || die` is intended; sh -c bodies are literal
set -euo pipefail

readonly PROG=${0##*/}
readonly STATE_ROOT=/run/fabtrack-netns
readonly NETNS_ETC=/etc/netns

usage() {
  cat <<EOF
Usage: $PROG COMMAND [OPTIONS]   (run as root)

Commands:
  create K [--prefix NAME] [--subnet CIDR] [--mtu N] [--leaves L]
        Build K nodes (network namespaces NAME-node1..K) on a bridge NAME-br,
        or with --leaves L (1..K) on L leaf bridges under one spine (see the
        top of this script for the names).
        Node i gets host address i of CIDR (default 10.77.0.0/24; must be in
        10/8, 172.16/12 or 192.168/16). MTU default 1500 (65535: loopback-like
        bandwidth). Refuses if any piece of fabric NAME exists; a create that
        fails removes what it built.
  destroy [--prefix NAME]
        Stop every process in the nodes, remove namespaces, veths, bridge, qdiscs,
        /etc/netns/NAME-node* and the state dir. Safe after a failed create.
  status [--prefix NAME]
        Show the nodes, their addresses and qdiscs.
  hostfile [--prefix NAME] [--slots N]
        Print an Open MPI hostfile of the node names (slots default 1).
  mpirun [--prefix NAME] [--slots N] -- MPIRUN_ARGS...
        Run Open MPI's mpirun from inside node1 across all nodes (TCP over the
        bridge). Defaults: btl tcp,self on the fabric subnet, no binding, and
        mpi_yield_when_idle=1 when the ranks (-np, else nodes x slots) exceed the
        CPUs. MPIRUN_ARGS may override them with --mca / --bind-to.
  exec NODE [--prefix NAME] -- CMD...
        Run CMD inside NODE (a node number or a namespace name) with its hostname.
  throttle NODE RATE [--prefix NAME]
        Limit NODE's link to RATE (tc rate, e.g. 100mbit) in both directions (htb).
  unthrottle NODE [--prefix NAME]
  throttle-uplink LEAF RATE [--prefix NAME]
        Limit the uplink of LEAF (leafJ or J) to RATE in the direction from the
        leaf toward the spine only (htb on the egress of NAME-uJ).
  unthrottle-uplink LEAF [--prefix NAME]
  topology [--prefix NAME]
        Print the fabric in the format of fabtrack locate --topology
        ("leafJ: NAME-nodeI ...", then "spine: leaf1 ... leafL").
  load NODE [--prefix NAME] [--cpus N] [--seconds S]
        Start N (default 1) CPU burners in NODE for S seconds (default 30, max 3600).
        They stop by themselves; destroy stops them too.
  cpulimit NODE PERCENT [--prefix NAME] [--period-us P]
        Give NODE's MPI processes (orted and its ranks, started after this) only
        PERCENT of one CPU per period (cgroup CPU quota, P default 5000 us; the kernel wants a quota of at least 1000 us): the
        node is throttled for the rest of every period, as a node whose CPUs
        are taken by other work, or a container at its CPU limit. Not node 1
        (mpirun runs there). destroy removes the cgroup; so does
  uncpulimit NODE [--prefix NAME]

NAME: 1-10 characters [a-z0-9], default "ft". NODE: 1..K or NAME-nodeI.
EOF
}

die() {
  echo "$PROG: error: $*" >&2
  exit 1
}
log() { echo "$PROG: $*" >&2; }

need_root() {
  [[ $(id -u) -eq 0 ]] || die "must run as root (network namespaces, bridges and tc need CAP_NET_ADMIN)"
  command -v ip >/dev/null || die "'ip' (iproute2) not found"
  ip netns list >/dev/null 2>&1 || die "'ip netns' is not usable here"
}

# --- names and state -----------------------------------------------------------------

prefix=ft
set_prefix() {
  [[ $1 =~ ^[a-z0-9]{1,10}$ ]] || die "bad prefix '$1': 1-10 characters [a-z0-9]"
  prefix=$1
}
state_dir() { echo "$STATE_ROOT/$prefix"; }
bridge_name() { echo "$prefix-br"; }
leaf_bridge() { echo "$prefix-l$1"; }
spine_bridge() { echo "$prefix-sp"; }
uplink_leaf_end() { echo "$prefix-u$1"; }  # on the leaf bridge; its egress goes up
uplink_spine_end() { echo "$prefix-d$1"; } # on the spine bridge
# Leaves of the fabric (0: one flat bridge).
leaf_count() {
  local f
  f="$(state_dir)/leaves"
  if [[ -r $f ]]; then cat "$f"; else echo 0; fi
}
# The leaf (1..L) of node i of k nodes on l leaves: evenly, in order.
leaf_of_node() { echo $((($1 * $3 + $2 - 1) / $2)); }
ns_name() { echo "$prefix-node$1"; }
veth_name() { echo "$prefix-h$1"; } # root-namespace end; the node end is eth0

# Namespaces of this prefix, in node order.
list_ns() {
  ip netns list | awk '{print $1}' | grep -E "^${prefix}-node[0-9]+$" | sort -V || true
}
node_count() {
  local f
  f="$(state_dir)/nodes"
  [[ -r $f ]] || die "no fabric '$prefix' (missing $f); run: $PROG create K --prefix $prefix"
  cat "$f"
}

# NODE argument -> namespace name, checked to exist.
resolve_node() {
  local arg=$1 n ns
  n=$(node_count)
  if [[ $arg =~ ^[0-9]+$ ]]; then
    ((arg >= 1 && arg <= n)) || die "node $arg out of range 1..$n"
    ns=$(ns_name "$arg")
  elif [[ $arg =~ ^${prefix}-node([0-9]+)$ ]]; then
    ns=$arg
  else
    die "bad node '$arg' (use 1..$n or $prefix-nodeI)"
  fi
  [[ -e /run/netns/$ns ]] || die "namespace $ns does not exist"
  echo "$ns"
}
node_index() { echo "${1##*-node}"; }

# --- addresses ------------------------------------------------------------------------

ip_to_int() {
  local a b c d
  IFS=. read -r a b c d <<<"$1"
  echo $(((a << 24) | (b << 16) | (c << 8) | d))
}
int_to_ip() {
  local x=$1
  echo "$(((x >> 24) & 255)).$(((x >> 16) & 255)).$(((x >> 8) & 255)).$((x & 255))"
}

# Sets SUBNET_BASE (int, network address) and SUBNET_LEN; refuses non-private ranges.
parse_subnet() {
  local cidr=$1 addr len o
  [[ $cidr =~ ^([0-9]{1,3}(\.[0-9]{1,3}){3})/([0-9]{1,2})$ ]] || die "bad subnet '$cidr' (want a.b.c.d/len)"
  addr=${BASH_REMATCH[1]}
  len=${BASH_REMATCH[3]}
  for o in ${addr//./ }; do ((o <= 255)) || die "bad subnet '$cidr'"; done
  ((len >= 8 && len <= 29)) || die "subnet length /$len out of range /8../29"
  local a mask
  a=$(ip_to_int "$addr")
  mask=$(((0xffffffff << (32 - len)) & 0xffffffff))
  ((a == (a & mask))) || die "subnet '$cidr' has host bits set (network is $(int_to_ip $((a & mask))))/$len"
  # Private only: 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, and the whole subnet inside one.
  local ok=0 net plen
  for net in 10.0.0.0/8 172.16.0.0/12 192.168.0.0/16; do
    plen=${net#*/}
    local pm=$(((0xffffffff << (32 - plen)) & 0xffffffff))
    if ((len >= plen && (a & pm) == $(ip_to_int "${net%/*}"))); then ok=1; fi
  done
  ((ok)) || die "subnet '$cidr' is not inside a private range (10/8, 172.16/12, 192.168/16)"
  SUBNET_BASE=$a
  SUBNET_LEN=$len
}
node_ip() { int_to_ip $((SUBNET_BASE + $1)); }

# --- create / destroy -----------------------------------------------------------------

fabric_exists() {
  [[ -n $(list_ns) ]] || [[ -d $(state_dir) ]] || ip link show "$(bridge_name)" >/dev/null 2>&1 ||
    ip -o link show | grep -qE "^[0-9]+: ${prefix}-(h|u|d|l)[0-9]+[@:]" ||
    ip link show "$(spine_bridge)" >/dev/null 2>&1
}

cmd_create() {
  local k="" subnet=10.77.0.0/24 mtu=1500 leaves=0
  while (($#)); do
    case $1 in
      --prefix) set_prefix "${2:?--prefix needs a value}"; shift 2 ;;
      --leaves) leaves=${2:?--leaves needs a value}; shift 2 ;;
      --subnet) subnet=${2:?--subnet needs a value}; shift 2 ;;
      --mtu) mtu=${2:?--mtu needs a value}; shift 2 ;;
      -*) die "create: unknown option '$1'" ;;
      *) [[ -z $k ]] || die "create: extra argument '$1'"; k=$1; shift ;;
    esac
  done
  [[ $k =~ ^[0-9]+$ ]] && ((k >= 1 && k <= 999)) || die "create: need a node count K (1..999)"
  parse_subnet "$subnet"
  [[ $mtu =~ ^[0-9]+$ ]] && ((mtu >= 1280 && mtu <= 65535)) || die "create: bad --mtu '$mtu' (1280..65535)"
  [[ $leaves =~ ^[0-9]+$ ]] && ((leaves <= k)) || die "create: bad --leaves '$leaves' (1..K)"
  ((k <= (1 << (32 - SUBNET_LEN)) - 2)) || die "create: $k nodes do not fit in $subnet"
  need_root
  if fabric_exists; then
    die "fabric '$prefix' already exists or is half-built; run: $PROG destroy --prefix $prefix"
  fi

  # Any failure from here on removes what was made, so no half-built fabric stays.
  # shellcheck disable=SC2154
  trap 'rc=$?; log "create failed (exit $rc); removing the partial fabric"; destroy_all || true; exit $rc' ERR
  set -E

  local sd br i ns ip
  sd=$(state_dir)
  br=$(bridge_name)
  mkdir -p "$sd"
  echo "$k" >"$sd/nodes.tmp"
  echo "$subnet" >"$sd/subnet"

  # Bridges: no address, no STP, no forward delay, no multicast snooping, no IPv6.
  # Two tiers: a tree (each leaf joined to the spine by one veth), so no loop.
  if ((leaves > 0)); then
    echo "$leaves" >"$sd/leaves"
    add_bridge "$(spine_bridge)" "$mtu"
    local j up down
    for ((j = 1; j <= leaves; j++)); do
      add_bridge "$(leaf_bridge "$j")" "$mtu"
      up=$(uplink_leaf_end "$j")
      down=$(uplink_spine_end "$j")
      ip link add "$up" mtu "$mtu" type veth peer name "$down" mtu "$mtu"
      for l in "$up" "$down"; do
        ip link set "$l" addrgenmode none
        sysctl_if_present "net.ipv6.conf.$l.disable_ipv6" 1
      done
      ip link set "$up" master "$(leaf_bridge "$j")" up
      ip link set "$down" master "$(spine_bridge)" up
    done
  else
    add_bridge "$br" "$mtu"
  fi

  for ((i = 1; i <= k; i++)); do
    ns=$(ns_name "$i")
    ip=$(node_ip "$i")
    ip netns add "$ns"
    ip link add "$(veth_name "$i")" mtu "$mtu" type veth peer name eth0 netns "$ns" mtu "$mtu"
    ip link set "$(veth_name "$i")" addrgenmode none
    sysctl_if_present "net.ipv6.conf.$(veth_name "$i").disable_ipv6" 1
    if ((leaves > 0)); then
      ip link set "$(veth_name "$i")" master "$(leaf_bridge "$(leaf_of_node "$i" "$k" "$leaves")")" up
    else
      ip link set "$(veth_name "$i")" master "$br" up
    fi
    # Inside the node: IPv6 off (no DAD, no router solicitations), lo and eth0 up.
    ip netns exec "$ns" sh -c '
      for f in /proc/sys/net/ipv6/conf/all/disable_ipv6 /proc/sys/net/ipv6/conf/default/disable_ipv6; do
        [ -w "$f" ] && echo 1 >"$f"; done; true'
    ip -n "$ns" link set lo up
    ip -n "$ns" addr add "$ip/$SUBNET_LEN" dev eth0
    ip -n "$ns" link set eth0 up
  done

  # Name resolution inside the nodes only (ip netns exec bind-mounts these files).
  local hosts="127.0.0.1 localhost"$'\n'
  for ((i = 1; i <= k; i++)); do hosts+="$(node_ip "$i") $(ns_name "$i")"$'\n'; done
  for ((i = 1; i <= k; i++)); do
    ns=$(ns_name "$i")
    mkdir -p "$NETNS_ETC/$ns"
    printf '%s' "$hosts" >"$NETNS_ETC/$ns/hosts"
    printf '%s: files\n' passwd group shadow gshadow hosts networks protocols services \
      ethers rpc netgroup >"$NETNS_ETC/$ns/nsswitch.conf"
    : >"$NETNS_ETC/$ns/resolv.conf" # no DNS server: lookups never leave the node
  done

  write_agent "$sd/rsh-agent"
  mv "$sd/nodes.tmp" "$sd/nodes"
  trap - ERR
  if ((leaves > 0)); then
    log "fabric '$prefix': $k nodes on $leaves leaves under one spine, $subnet, mtu $mtu (node1 = $(node_ip 1)); state in $sd"
  else
    log "fabric '$prefix': $k nodes on $br, $subnet, mtu $mtu (node1 = $(node_ip 1)); state in $sd"
  fi
}

add_bridge() {
  ip link add "$1" mtu "$2" type bridge stp_state 0 forward_delay 0 mcast_snooping 0
  ip link set "$1" addrgenmode none
  sysctl_if_present "net.ipv6.conf.$1.disable_ipv6" 1
  ip link set "$1" up
}

sysctl_if_present() {
  local f=/proc/sys/${1//./\/}
  if [[ -w $f ]]; then echo "$2" >"$f"; fi
}

write_agent() {
  cat >"$1" <<'AGENT'
#!/bin/sh
# rsh agent for Open MPI: "rsh-agent [ssh options] HOST CMD..." runs CMD in network
# namespace HOST with hostname HOST (as ssh would run it through a remote shell).
while [ $# -gt 0 ]; do
  case $1 in
    -x | -X | -q | -T | -t | -n) shift ;;
    -o | -p | -l) shift 2 ;;
    -*) shift ;;
    *) break ;;
  esac
done
[ $# -ge 2 ] || { echo "rsh-agent: usage: rsh-agent HOST CMD..." >&2; exit 255; }
host=$1
shift
[ -e "/run/netns/$host" ] || { echo "rsh-agent: no network namespace '$host'" >&2; exit 255; }
# A CPU-limited node (netns-fabric.sh cpulimit): its processes join the cgroup.
limit="$(dirname "$0")/cgroup/$host"
if [ -f "$limit" ]; then
  echo $$ >"$(cat "$limit")" || { echo "rsh-agent: cannot join $(cat "$limit")" >&2; exit 255; }
fi
exec ip netns exec "$host" unshare --uts sh -c "hostname '$host'; exec $*"
AGENT
  chmod 0755 "$1"
}

# Removes everything of fabric $prefix: works from the names alone, no state needed.
destroy_all() {
  local ns l pids br
  # Processes first (burners, stray orteds/ranks): only those inside our namespaces.
  for ns in $(list_ns); do
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    if [[ -n $pids ]]; then
      # shellcheck disable=SC2086
      kill -TERM $pids 2>/dev/null || true
    fi
  done
  local sd
  sd=$(state_dir)
  if [[ -d $sd/load ]]; then
    for f in "$sd"/load/*.pid; do
      [[ -e $f ]] || continue
      kill -TERM "$(cat "$f")" 2>/dev/null || true
    done
  fi
  for ns in $(list_ns); do
    for _ in 1 2 3 4 5 6 7 8 9 10; do
      [[ -z $(ip netns pids "$ns" 2>/dev/null || true) ]] && break
      sleep 0.2
    done
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    if [[ -n $pids ]]; then
      # shellcheck disable=SC2086
      kill -KILL $pids 2>/dev/null || true
    fi
  done
  # CPU limits: their processes are gone by now, so the cgroups can go.
  if [[ -d $sd/cgroup ]]; then
    for f in "$sd"/cgroup/*; do
      [[ -e $f ]] || continue
      remove_cpulimit "$(basename "$f")"
    done
  fi
  # Links in the root namespace (deleting one veth end deletes its peer and qdiscs).
  for l in $(ip -o link show | awk -F': ' '{print $2}' | cut -d@ -f1 | grep -E "^${prefix}-(h|u|d)[0-9]+$" || true); do
    ip link del "$l" 2>/dev/null || true
  done
  for br in $(ip -o link show | awk -F': ' '{print $2}' | cut -d@ -f1 | grep -E "^${prefix}-(br|sp|l[0-9]+)$" || true); do
    ip link del "$br" 2>/dev/null || true
  done
  for ns in $(list_ns); do
    ip netns del "$ns"
    rm -rf "${NETNS_ETC:?}/$ns"
  done
  # /etc/netns leftovers of a create that failed before its namespace existed.
  for d in "$NETNS_ETC/$prefix"-node*; do
    [[ -d $d && $d =~ /${prefix}-node[0-9]+$ ]] && rm -rf "$d"
  done
  if mountpoint -q "$sd/cgroup-fs" 2>/dev/null; then umount "$sd/cgroup-fs"; fi
  rm -rf "${sd:?}"
  rmdir "$STATE_ROOT" 2>/dev/null || true
  rmdir "$NETNS_ETC" 2>/dev/null || true
}

# prefix_only CMD ARGS...: the arguments of a command that takes only --prefix.
prefix_only() {
  local cmd=$1
  shift
  while (($#)); do
    case $1 in
      --prefix) set_prefix "${2:?--prefix needs a value}"; shift 2 ;;
      *) die "$cmd: unknown argument '$1'" ;;
    esac
  done
}

cmd_destroy() {
  prefix_only destroy "$@"
  need_root
  destroy_all
  # Verify.
  local left=()
  [[ -z $(list_ns) ]] || left+=("namespaces: $(list_ns | tr '\n' ' ')")
  if ip -o link show | awk -F': ' '{print $2}' | cut -d@ -f1 | grep -qE "^${prefix}-(br|sp|[hudl][0-9]+)$"; then
    left+=("links")
  fi
  [[ ! -e $(state_dir) ]] || left+=("$(state_dir)")
  ((${#left[@]} == 0)) || die "destroy: left behind: ${left[*]}"
  log "fabric '$prefix' destroyed"
}

cmd_status() {
  prefix_only status "$@"
  need_root
  local n ns
  n=$(node_count)
  local leaves j
  leaves=$(leaf_count)
  if ((leaves > 0)); then
    echo "fabric $prefix: $n nodes, subnet $(cat "$(state_dir)/subnet"), $leaves leaves under $(spine_bridge)"
  else
    echo "fabric $prefix: $n nodes, subnet $(cat "$(state_dir)/subnet"), bridge $(bridge_name)"
  fi
  for ns in $(list_ns); do
    printf '%s %s\n' "$ns" "$(ip -n "$ns" -4 -o addr show dev eth0 | awk '{print $4}')"
    tc -n "$ns" qdisc show dev eth0 | sed 's/^/  out: /'
    tc qdisc show dev "$(veth_name "$(node_index "$ns")")" | sed 's/^/  in:  /'
  done
  for ((j = 1; j <= leaves; j++)); do
    echo "leaf$j-spine ($(uplink_leaf_end "$j") -> $(uplink_spine_end "$j"))"
    tc qdisc show dev "$(uplink_leaf_end "$j")" | sed 's/^/  up:  /'
  done
}

cmd_topology() {
  prefix_only topology "$@"
  local n leaves i j line
  n=$(node_count)
  leaves=$(leaf_count)
  echo "# fabric $prefix (scripts/netns-fabric.sh): fabtrack locate --topology format"
  if ((leaves == 0)); then
    line="leaf1:"
    for ((i = 1; i <= n; i++)); do line+=" $(ns_name "$i")"; done
    echo "$line   # one bridge, no uplink"
    return
  fi
  for ((j = 1; j <= leaves; j++)); do
    line="leaf$j:"
    for ((i = 1; i <= n; i++)); do
      if (($(leaf_of_node "$i" "$n" "$leaves") == j)); then line+=" $(ns_name "$i")"; fi
    done
    echo "$line"
  done
  line="spine:"
  for ((j = 1; j <= leaves; j++)); do line+=" leaf$j"; done
  echo "$line"
}

# LEAF argument (leafJ or J) -> J, checked against the fabric.
resolve_leaf() {
  local arg=$1 leaves
  leaves=$(leaf_count)
  ((leaves > 0)) || die "fabric '$prefix' has no leaves (create it with --leaves L)"
  [[ $arg =~ ^(leaf)?([0-9]+)$ ]] || die "bad leaf '$arg' (use leafJ or J)"
  local j=${BASH_REMATCH[2]}
  ((j >= 1 && j <= leaves)) || die "leaf $j out of range 1..$leaves"
  echo "$j"
}

# take_args CMD USAGE N ARGS...: the arguments of a command whose only option
# is --prefix: N positional ones, each filling the first empty slot of ARGS;
# an unknown option, an extra argument or an empty slot left dies naming USAGE.
take_args() {
  local cmd=$1 usage=$2 n=$3 i
  shift 3
  ARGS=()
  for ((i = 0; i < n; i++)); do ARGS+=(""); done
  while (($#)); do
    case $1 in
      --prefix) set_prefix "${2:?--prefix needs a value}"; shift 2 ;;
      -*) die "$cmd: unknown option '$1'" ;;
      *)
        for ((i = 0; i < n; i++)); do [[ -n ${ARGS[i]} ]] || break; done
        ((i < n)) || die "$cmd: extra argument '$1'"
        ARGS[i]=$1
        shift ;;
    esac
  done
  for ((i = 0; i < n; i++)); do
    [[ -n ${ARGS[i]} ]] || die "$cmd: usage: $PROG $cmd $usage [--prefix NAME]"
  done
}

# node_ns CMD ARGS...: a command taking NODE and --prefix, run as root; sets NS
# to NODE's namespace.
node_ns() {
  take_args "$1" NODE 1 "${@:2}"
  need_root
  NS=$(resolve_node "${ARGS[0]}")
}

cmd_throttle_uplink() {
  take_args throttle-uplink "LEAF RATE" 2 "$@"
  local leaf=${ARGS[0]} rate=${ARGS[1]}
  [[ $rate =~ ^[0-9]+(\.[0-9]+)?([kmgt]?bit|[kmgt]?bps)$ ]] || die "throttle-uplink: bad rate '$rate' (e.g. 100mbit, 1gbit)"
  need_root
  node_count >/dev/null
  local j
  j=$(resolve_leaf "$leaf")
  set_htb "$rate" "" "$(uplink_leaf_end "$j")"
  log "leaf$j-spine limited to $rate from leaf$j toward the spine (egress of $(uplink_leaf_end "$j"))"
}

cmd_unthrottle_uplink() {
  take_args unthrottle-uplink LEAF 1 "$@"
  local leaf=${ARGS[0]}
  need_root
  node_count >/dev/null
  local j
  j=$(resolve_leaf "$leaf")
  tc qdisc del dev "$(uplink_leaf_end "$j")" root 2>/dev/null || true
  log "leaf$j-spine unthrottled"
}

# --- MPI ------------------------------------------------------------------------------

hostfile_text() {
  local slots=$1 n i
  n=$(node_count)
  for ((i = 1; i <= n; i++)); do echo "$(ns_name "$i") slots=$slots"; done
}

# take_slots CMD HINT ARGS...: --prefix and --slots N (into SLOTS, default 1).
# With a HINT, -- ends them and what follows goes to REST; anything else dies
# (saying HINT).
take_slots() {
  local cmd=$1 hint=$2
  shift 2
  SLOTS=1
  REST=()
  while (($#)); do
    case $1 in
      --prefix) set_prefix "${2:?--prefix needs a value}"; shift 2 ;;
      --slots) SLOTS=${2:?--slots needs a value}; shift 2 ;;
      --) [[ -n $hint ]] || die "$cmd: unknown argument '$1'"; shift; REST=("$@"); break ;;
      *) die "$cmd: unknown argument '$1'${hint:+ ($hint)}" ;;
    esac
  done
  [[ $SLOTS =~ ^[1-9][0-9]*$ ]] || die "$cmd: bad --slots '$SLOTS'"
}

cmd_hostfile() {
  take_slots hostfile "" "$@"
  hostfile_text "$SLOTS"
}

cmd_mpirun() {
  take_slots mpirun "put mpirun's arguments after --" "$@"
  local slots=$SLOTS
  set -- "${REST[@]}"
  (($#)) || die "mpirun: nothing to run (usage: $PROG mpirun [--prefix NAME] -- ARGS...)"
  need_root
  command -v mpirun >/dev/null || die "mpirun not found (install openmpi-bin: scripts/install-deps.sh)"
  local sd subnet node1
  sd=$(state_dir)
  node_count >/dev/null
  subnet=$(cat "$sd/subnet")
  node1=$(ns_name 1)
  [[ -e /run/netns/$node1 ]] || die "namespace $node1 missing; fabric '$prefix' is broken (destroy and create)"
  hostfile_text "$slots" >"$sd/hostfile"
  [[ -x $sd/rsh-agent ]] || write_agent "$sd/rsh-agent"

  # Defaults as OMPI_MCA_* so that --mca in the arguments overrides them.
  # btl tcp,self: ranks on different nodes always use TCP over the bridge. (vader only
  # ever joins ranks of one node: `--mca btl vader,self` across two nodes fails with
  # "unreachable", so adding vader would only change ranks sharing a node.)
  # Binding off and yielding when oversubscribed: see "Latency finding" at the top.
  local yield=0 ranks a prev=""
  ranks=$(($(node_count) * slots))
  for a in "$@"; do
    case $prev in -np | -n | --np | -c) [[ $a =~ ^[0-9]+$ ]] && ranks=$a ;; esac
    prev=$a
  done
  if ((ranks > $(nproc))); then yield=1; fi
  local -a env=(
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    OMPI_MCA_plm_rsh_agent="$sd/rsh-agent"
    OMPI_MCA_plm_rsh_no_tree_spawn=1
    OMPI_MCA_orte_default_hostfile="$sd/hostfile"
    "OMPI_MCA_btl=tcp,self"
    OMPI_MCA_btl_tcp_if_include="$subnet"
    OMPI_MCA_oob_tcp_if_include="$subnet"
    OMPI_MCA_pml=ob1
    OMPI_MCA_hwloc_base_binding_policy=none
  )
  if ((yield)); then env+=(OMPI_MCA_mpi_yield_when_idle=1); fi
  exec env "${env[@]}" ip netns exec "$node1" unshare --uts -- \
    sh -c 'hostname "$0" && exec "$@"' "$node1" \
    mpirun --allow-run-as-root "$@"
}

cmd_exec() {
  local node=""
  while (($#)); do
    case $1 in
      --prefix) set_prefix "${2:?--prefix needs a value}"; shift 2 ;;
      --) shift; break ;;
      -*) die "exec: unknown option '$1'" ;;
      *) [[ -z $node ]] || die "exec: extra argument '$1' (command goes after --)"; node=$1; shift ;;
    esac
  done
  [[ -n $node ]] && (($#)) || die "exec: usage: $PROG exec NODE [--prefix NAME] -- CMD..."
  need_root
  local ns
  ns=$(resolve_node "$node")
  exec ip netns exec "$ns" unshare --uts -- sh -c 'hostname "$0" && exec "$@"' "$ns" "$@"
}

# --- throttle / load ------------------------------------------------------------------

cmd_throttle() {
  take_args throttle "NODE RATE" 2 "$@"
  local node=${ARGS[0]} rate=${ARGS[1]}
  [[ $rate =~ ^[0-9]+(\.[0-9]+)?([kmgt]?bit|[kmgt]?bps)$ ]] || die "throttle: bad rate '$rate' (e.g. 100mbit, 1gbit)"
  need_root
  local ns veth
  ns=$(resolve_node "$node")
  veth=$(veth_name "$(node_index "$ns")")
  # Out of the node: egress of eth0 inside it. Into the node: egress of its bridge port.
  set_htb "$rate" -n "$ns" eth0
  set_htb "$rate" "" "$veth"
  log "$ns limited to $rate both ways"
}

# set_htb RATE NSOPT... DEV ; NSOPT is "-n NS" or "".
set_htb() {
  local rate=$1 dev=${*: -1}
  local -a ns=()
  [[ $2 == -n ]] && ns=(-n "$3")
  tc "${ns[@]}" qdisc del dev "$dev" root 2>/dev/null || true
  # One class; quantum fixed at one MTU-sized frame (the r2q default warns above ~16mbit).
  tc "${ns[@]}" qdisc add dev "$dev" root handle 1: htb default 10 &&
    tc "${ns[@]}" class add dev "$dev" parent 1: classid 1:10 htb rate "$rate" ceil "$rate" quantum 1514 ||
    die "throttle: tc failed on $dev${ns[1]:+ in ${ns[1]}} (is sch_htb available?)"
}

cmd_unthrottle() {
  node_ns unthrottle "$@"
  local ns
  ns=$NS
  tc -n "$ns" qdisc del dev eth0 root 2>/dev/null || true
  tc qdisc del dev "$(veth_name "$(node_index "$ns")")" root 2>/dev/null || true
  log "$ns unthrottled"
}

cmd_load() {
  local node="" cpus=1 secs=30
  while (($#)); do
    case $1 in
      --prefix) set_prefix "${2:?--prefix needs a value}"; shift 2 ;;
      --cpus) cpus=${2:?--cpus needs a value}; shift 2 ;;
      --seconds) secs=${2:?--seconds needs a value}; shift 2 ;;
      -*) die "load: unknown option '$1'" ;;
      *) [[ -z $node ]] || die "load: extra argument '$1'"; node=$1; shift ;;
    esac
  done
  [[ -n $node ]] || die "load: usage: $PROG load NODE [--cpus N] [--seconds S] [--prefix NAME]"
  [[ $cpus =~ ^[1-9][0-9]*$ ]] && ((cpus <= 256)) || die "load: bad --cpus '$cpus' (1..256)"
  [[ $secs =~ ^[1-9][0-9]*$ ]] && ((secs <= 3600)) || die "load: bad --seconds '$secs' (1..3600)"
  need_root
  local ns sd i pid
  ns=$(resolve_node "$node")
  sd=$(state_dir)
  mkdir -p "$sd/load"
  for ((i = 1; i <= cpus; i++)); do
    # Bounded: timeout ends the burner; destroy kills everything in the namespace.
    setsid ip netns exec "$ns" timeout "$secs" bash -c 'while :; do :; done' \
      </dev/null >/dev/null 2>&1 &
    pid=$!
    echo "$pid" >"$sd/load/$ns.$pid.pid"
  done
  log "$cpus CPU burner(s) in $ns for ${secs}s"
}

# Mounts the cgroup hierarchy holding the CPU controller (v1 cpu, else v2)
# at $1 and prints the hierarchy's kind. `ip netns exec` remounts /sys, so
# the rsh agent (running inside node 1) cannot reach /sys/fs/cgroup: it
# joins the cgroup through this mount under the state directory.
mount_cpu_cgroup() {
  local at=$1
  mkdir -p "$at"
  if mountpoint -q "$at"; then :
  elif [[ -f /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]]; then
    mount -t cgroup -o cpu cgroup "$at" || die "cpulimit: cannot mount the cgroup v1 cpu hierarchy"
  elif [[ -f /sys/fs/cgroup/cgroup.controllers ]] && grep -qw cpu /sys/fs/cgroup/cgroup.controllers; then
    mount -t cgroup2 cgroup2 "$at" || die "cpulimit: cannot mount cgroup2"
  else
    die "cpulimit: no cgroup CPU controller (neither v1 /sys/fs/cgroup/cpu nor v2 with cpu)"
  fi
  if [[ -f $at/cpu.cfs_quota_us ]]; then echo v1; else echo v2; fi
}

cmd_cpulimit() {
  local node="" percent="" period=5000
  while (($#)); do
    case $1 in
      --prefix) set_prefix "${2:?--prefix needs a value}"; shift 2 ;;
      --period-us) period=${2:?--period-us needs a value}; shift 2 ;;
      -*) die "cpulimit: unknown option '$1'" ;;
      *)
        if [[ -z $node ]]; then node=$1; elif [[ -z $percent ]]; then percent=$1; else
          die "cpulimit: extra argument '$1'"; fi
        shift ;;
    esac
  done
  [[ -n $node && -n $percent ]] || die "cpulimit: usage: $PROG cpulimit NODE PERCENT [--prefix NAME]"
  [[ $percent =~ ^[1-9][0-9]?$ ]] || die "cpulimit: bad PERCENT '$percent' (1..99)"
  [[ $period =~ ^[0-9]+$ ]] && ((period >= 1000 && period <= 1000000)) ||
    die "cpulimit: bad --period-us '$period' (1000..1000000)"
  need_root
  local ns sd dir quota
  ns=$(resolve_node "$node")
  [[ $ns != "$(ns_name 1)" ]] || die "cpulimit: not node 1 (mpirun and its ranks run there)"
  sd=$(state_dir)
  quota=$((period * percent / 100))
  ((quota >= 1000)) || die "cpulimit: $percent% of $period us is under the kernel's 1000 us minimum quota"
  local kind
  kind=$(mount_cpu_cgroup "$sd/cgroup-fs")
  dir=$sd/cgroup-fs/fabtrack-$ns
  mkdir -p "$dir" "$sd/cgroup"
  if [[ $kind == v1 ]]; then
    echo "$period" >"$dir/cpu.cfs_period_us"
    echo "$quota" >"$dir/cpu.cfs_quota_us"
  else
    grep -qw cpu "$sd/cgroup-fs/cgroup.subtree_control" ||
      echo +cpu >"$sd/cgroup-fs/cgroup.subtree_control"
    echo "$quota $period" >"$dir/cpu.max"
  fi
  echo "$dir/cgroup.procs" >"$sd/cgroup/$ns"
  log "$ns limited to $percent% of a CPU (${quota} of every ${period} us)"
}

# Ends $1's CPU limit: processes go back to the root cgroup, the cgroup goes.
remove_cpulimit() {
  local ns=$1 sd procs root pid
  sd=$(state_dir)
  [[ -f $sd/cgroup/$ns ]] || return 0
  procs=$(cat "$sd/cgroup/$ns")
  root=$(dirname "$(dirname "$procs")")/cgroup.procs
  if [[ -f $procs ]]; then
    while read -r pid; do echo "$pid" >"$root" 2>/dev/null || true; done <"$procs"
    rmdir "$(dirname "$procs")" 2>/dev/null || true
  fi
  rm -f "$sd/cgroup/$ns"
  if ! compgen -G "$sd/cgroup/*" >/dev/null && mountpoint -q "$sd/cgroup-fs"; then
    umount "$sd/cgroup-fs" && rmdir "$sd/cgroup-fs"
  fi
}

cmd_uncpulimit() {
  node_ns uncpulimit "$@"
  local ns
  ns=$NS
  remove_cpulimit "$ns"
  log "$ns CPU limit removed"
}

main() {
  (($#)) || { usage >&2; exit 2; }
  local cmd=$1
  shift
  case $cmd in
    create) cmd_create "$@" ;;
    destroy) cmd_destroy "$@" ;;
    status) cmd_status "$@" ;;
    hostfile) cmd_hostfile "$@" ;;
    mpirun) cmd_mpirun "$@" ;;
    exec) cmd_exec "$@" ;;
    throttle) cmd_throttle "$@" ;;
    unthrottle) cmd_unthrottle "$@" ;;
    throttle-uplink) cmd_throttle_uplink "$@" ;;
    unthrottle-uplink) cmd_unthrottle_uplink "$@" ;;
    topology) cmd_topology "$@" ;;
    load) cmd_load "$@" ;;
    cpulimit) cmd_cpulimit "$@" ;;
    uncpulimit) cmd_uncpulimit "$@" ;;
    help | -h | --help) usage ;;
    *) usage >&2; die "unknown command '$cmd'" ;;
  esac
}

main "$@"
