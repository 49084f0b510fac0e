#!/usr/bin/env bash
# The ethtool statistics ioctl against a real driver: a veth pair in a private
# network namespace. veth reports peer_ifindex, which must be the ifindex of
# the other end. Fails (never skips) without root.
set -euo pipefail
fabtrack=$1
[[ $(id -u) -eq 0 ]] || { echo "FAIL: needs root to create a network namespace"; exit 1; }
ns="ftet$$"
trap 'ip netns del "$ns" 2>/dev/null || true' EXIT
ip netns add "$ns"
ip -n "$ns" link add vA type veth peer name vB
json=$(ip netns exec "$ns" "$fabtrack" counters ethtool vA --all --format json)
peer=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["peer_ifindex"])' "$json")
want=$(ip netns exec "$ns" cat /sys/class/net/vB/ifindex)
[[ $peer == "$want" ]] || { echo "FAIL: peer_ifindex $peer, vB is $want"; exit 1; }
# Only flow-control counters by default: veth has none.
[[ $(ip netns exec "$ns" "$fabtrack" counters ethtool vA --format json 2>"/tmp/$ns.err") == "{}" ]] ||
  { echo "FAIL: veth has no pause/PFC counters"; exit 1; }
# ...and says so rather than printing nothing (which would read as "no pauses").
grep -q "vA: the driver reports [1-9][0-9]* statistic(s), none of them flow control" "/tmp/$ns.err" ||
  { echo "FAIL: no word about the missing flow-control statistics:"; cat "/tmp/$ns.err"; exit 1; }
if ip netns exec "$ns" "$fabtrack" counters ethtool nosuch0 2>"/tmp/$ns.err"; then
  echo "FAIL: a missing netdev must fail"; exit 1
fi
grep -q "nosuch0: No such device" "/tmp/$ns.err" || { cat "/tmp/$ns.err"; exit 1; }
rm -f "/tmp/$ns.err"
echo "ethtool ioctl: veth peer_ifindex $peer read through SIOCETHTOOL"
