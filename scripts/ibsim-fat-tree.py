#!/usr/bin/env python3
"""Writes an ibsim net file (ibnetdiscover's format) of a two-tier fat tree.

Pure: the same arguments give the same file. Leaves are "leafNN", spines
"spineNN", hosts "nodeNNNN" (one HCA port each). Leaf port 1..H holds its
hosts, ports H+1.. its uplinks (`--uplinks` per spine); spine port L holds
leaf L's uplink (or L's uplinks, in order, when there are several per spine).
The first record is the first host's HCA: ibsim attaches its clients
(opensm, fabtrack, infiniband-diags) there, so scans start from a CA as on a
real cluster.

  scripts/ibsim-fat-tree.py --leaves 8 --spines 4 --hosts-per-leaf 8 > net
  scripts/ibsim-fat-tree.py ... --degrade leaf03:1=w=1   # leaf03's first uplink at 1x

ibsim's limits (printed at its start): 256 switches, 2048 nodes, 13312
ports (port 0 of each switch and every declared port counted); a shape past
them is refused here with the figures, not by ibsim half-way.
"""

import argparse
import sys

MAX_SWITCHES = 256
MAX_NODES = 2048
MAX_PORTS = 13312
MAX_SWITCH_PORTS = 254


def leaf_name(i):
    return f"leaf{i:02d}"


def spine_name(i):
    return f"spine{i:02d}"


def host_name(i):
    return f"node{i:04d}"


def fat_tree(leaves, spines, hosts_per_leaf, uplinks=1, degrade=None, describe=None):
    """Returns the net file's text, or raises ValueError naming the limit.

    describe: {host index (1-based): node description} for HCAs named other
    than "nodeNNNN" (a sweep's hosts: "gpu07 HCA-1", "gpu07 mlx5_0")."""
    degrade = degrade or {}
    describe = describe or {}

    def hca(index):
        return describe.get(index, host_name(index))

    if leaves < 1 or spines < 1 or hosts_per_leaf < 1 or uplinks < 1:
        raise ValueError("leaves, spines, hosts per leaf and uplinks must be >= 1")
    leaf_ports = hosts_per_leaf + spines * uplinks
    spine_ports = leaves * uplinks
    hosts = leaves * hosts_per_leaf
    switches = leaves + spines
    nodes = switches + hosts
    ports = leaves * (leaf_ports + 1) + spines * (spine_ports + 1) + hosts
    problems = []
    if switches > MAX_SWITCHES:
        problems.append(f"{switches} switches > ibsim's {MAX_SWITCHES}")
    if nodes > MAX_NODES:
        problems.append(f"{nodes} nodes > ibsim's {MAX_NODES}")
    if ports > MAX_PORTS:
        problems.append(f"{ports} ports > ibsim's {MAX_PORTS}")
    if max(leaf_ports, spine_ports) > MAX_SWITCH_PORTS:
        problems.append(f"{max(leaf_ports, spine_ports)} ports on one switch > {MAX_SWITCH_PORTS}")
    if problems:
        raise ValueError("; ".join(problems))

    def uplink_port(spine, k):  # leaf side
        return hosts_per_leaf + spine * uplinks + k + 1

    def downlink_port(leaf, k):  # spine side
        return leaf * uplinks + k + 1

    def options(leaf, up):
        opt = degrade.get((leaf_name(leaf + 1), up))
        return f"\t{opt}" if opt else ""

    out = [f"# two-tier fat tree: {leaves} leaves, {spines} spines, {hosts_per_leaf} hosts per leaf,"
           f" {uplinks} uplink(s) per leaf-spine pair (scripts/ibsim-fat-tree.py)", ""]
    # Hosts first: the first record is where ibsim attaches its clients.
    for leaf in range(leaves):
        for h in range(hosts_per_leaf):
            index = leaf * hosts_per_leaf + h + 1
            out += [f'Hca\t1\t"{hca(index)}"', f'[1]\t"{leaf_name(leaf + 1)}"[{h + 1}]', ""]
    for leaf in range(leaves):
        out.append(f'Switch\t{leaf_ports}\t"{leaf_name(leaf + 1)}"')
        for h in range(hosts_per_leaf):
            out.append(f'[{h + 1}]\t"{hca(leaf * hosts_per_leaf + h + 1)}"[1]')
        for s in range(spines):
            for k in range(uplinks):
                up = s * uplinks + k + 1
                out.append(f'[{uplink_port(s, k)}]\t"{spine_name(s + 1)}"[{downlink_port(leaf, k)}]'
                           + options(leaf, up))
        out.append("")
    for s in range(spines):
        out.append(f'Switch\t{spine_ports}\t"{spine_name(s + 1)}"')
        for leaf in range(leaves):
            for k in range(uplinks):
                out.append(f'[{downlink_port(leaf, k)}]\t"{leaf_name(leaf + 1)}"[{uplink_port(s, k)}]'
                           + options(leaf, s * uplinks + k + 1))
        out.append("")
    return "\n".join(out)


def parse_degrade(items):
    """'leaf03:2=w=1' -> {('leaf03', 2): 'w=1'}: the leaf's 2nd uplink's option."""
    result = {}
    for item in items:
        try:
            where, option = item.split("=", 1)
            leaf, up = where.split(":")
            result[(leaf, int(up))] = option
        except ValueError:
            raise ValueError(f"--degrade {item!r}: expected LEAF:UPLINK=OPTION, e.g. leaf03:1=w=1")
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--leaves", type=int, required=True)
    parser.add_argument("--spines", type=int, required=True)
    parser.add_argument("--hosts-per-leaf", type=int, required=True)
    parser.add_argument("--uplinks", type=int, default=1, help="links per leaf-spine pair")
    parser.add_argument("--degrade", action="append", default=[],
                        help="LEAF:UPLINK=OPTION, an ibsim port option on a leaf's n-th uplink "
                             "(w=1: 1x width, s=1: SDR speed)")
    args = parser.parse_args()
    try:
        text = fat_tree(args.leaves, args.spines, args.hosts_per_leaf, args.uplinks,
                        parse_degrade(args.degrade))
    except ValueError as error:
        print(f"ibsim-fat-tree: {error}", file=sys.stderr)
        return 2
    sys.stdout.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
