#!/usr/bin/env python3
"""A RAS VERBOSE STATUS report of a big job, for the big-reply tests and
bench/run_ras_bench.sh: one communicator of RANKS ranks (8 per node), a share of
them (BEHIND percent, the lowest rank numbers spread over the job by a fixed
stride) one AllReduce behind the rest.

  big_ras_report.py FORMAT RANKS BEHIND SNAPSHOT [--dead R] > report

FORMAT: json (NCCL 2.29's SET FORMAT json layout, pretty-printed as NCCL
prints it), json-2.28 (the same with 2.28.7-2.28.9's lost comma after a
missing rank's "nvml_dev"), or text (2.26's VERBOSE STATUS: the Communicators
table and a MISMATCH block; a group is listed rank by rank when it is under
half the communicator, as RAS does in verbose mode). SNAPSHOT: the counts are
1000 + 10 * SNAPSHOT (a job advancing), or, with SNAPSHOT < 0, frozen at
5000 (a stuck job). --dead R: rank R missing and considered dead.
"""
import sys

OPS = ("Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce")
PER_NODE = 8
HASH = "5ca1ab1e0dd5eed5"


def node(r):
    n = r // PER_NODE
    return "10.%d.%d.%d" % (n >> 16 & 255, n >> 8 & 255, n & 255)


def behind_set(n, percent):
    k = n * percent // 100
    if percent and k == 0:
        k = 1
    if k == 0:
        return set()
    stride = n / k
    return {int(i * stride) for i in range(k)}


def counts(n, percent, snapshot):
    top = 5000 if snapshot < 0 else 1000 + 10 * snapshot
    behind = behind_set(n, percent)
    return [top - 1 if r in behind else top for r in range(n)]


def json_report(n, percent, snapshot, dead, lost_comma, out):
    c = counts(n, percent, snapshot)
    present = [r for r in range(n) if r != dead]
    out.write('{\n  "nccl_version": "%s",\n  "cuda_runtime_version": 12090,\n'
              '  "cuda_driver_version": 12090,\n  "timestamp": "2026-12-06 12:00:00",\n'
              '  "communicators_count": 1,\n  "communicators": [\n' %
              ("2.28.9" if lost_comma else "2.29.7"))
    out.write('    {\n      "hash": "0x%s",\n      "secondary_hash": "0x1:0x2",\n'
              '      "size": %d,\n      "ranks_count": %d,\n      "missing_ranks_count": %d,\n'
              '      "ranks": [\n' % (HASH, n, len(present), n - len(present)))
    status = ('          "status": {\n            "init_state": 0,\n'
              '            "async_error": 0,\n            "finalize_called": false,\n'
              '            "destroy_flag": false,\n            "abort_flag": false\n'
              '          },\n          "collective_counts": {\n')
    parts = []
    for r in present:
        g = r % PER_NODE
        cc = ",\n".join('            "%s": %d' % (op, c[r] if op == "AllReduce" else 0)
                        for op in OPS)
        parts.append('        {\n          "rank": %d,\n          "host": "%s",\n'
                     '          "pid": %d,\n          "cuda_dev": %d,\n          "nvml_dev": %d,\n'
                     % (r, node(r), 40000 + r, g, g) + status + cc + '\n          }\n        }')
        if len(parts) >= 4096:
            out.write(",\n".join(parts))
            parts = [""]
    out.write(",\n".join(parts))
    out.write('\n      ],\n      "missing_ranks": [\n')
    if dead is not None:
        g = dead % PER_NODE
        out.write('        {\n          "rank": %d,\n          "host": "%s",\n          "pid": %d,\n'
                  '          "cuda_dev": %d,\n          "nvml_dev": %d%s\n'
                  '          "status": {\n            "unresponsive": true,\n'
                  '            "considered_dead": true\n          }\n        }\n' %
                  (dead, node(dead), 40000 + dead, g, g, "" if lost_comma else ","))
    out.write('      ]\n    }\n  ],\n  "ras": {\n    "collection_time_sec": 0.012,\n'
              '    "timeouts_count": 0\n  }\n}\n')


def rank_line(r, extra=""):
    return "  Rank %d%s -- GPU %d managed by process %d on node %s\n" % (
        r, extra, r % PER_NODE, 40000 + r, node(r))


def text_report(n, percent, snapshot, dead, out):
    c = counts(n, percent, snapshot)
    present = [r for r in range(n) if r != dead]
    nodes = n // PER_NODE
    out.write("NCCL version 2.26.2\nCUDA runtime version 12090, driver version 12090\n\n"
              "Job summary\n===========\n\n"
              "  Nodes  Processes         GPUs  Processes     GPUs\n"
              "(total)   per node  per process    (total)  (total)\n"
              "%7d  %9d  %11d  %9d  %7d\n\n" % (nodes, PER_NODE, 1, n, n))
    groups = {}
    for r in present:
        groups.setdefault(c[r], []).append(r)
    errors = (["INCOMPLETE"] if dead is not None else []) + (["MISMATCH"] if len(groups) > 1 else [])
    out.write("Communicators... (0.012s)\n=============\n\n"
              "Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors\n"
              "    #  in group  per comm  per node  per comm  in group\n"
              "%5d  %8d  %8d  %8d  %8d  %8d  %8s  %6s\n\n" %
              (0, 1, nodes, PER_NODE, n, len(present), "RUNNING", ",".join(errors) or "OK"))
    out.write("Errors\n======\n\n")
    if dead is not None:
        out.write("DEAD\n  1 job process is considered dead (unreachable via the RAS network)\n"
                  "  Process %d on node %s managing GPU %d\n\n" % (40000 + dead, node(dead),
                                                                   dead % PER_NODE))
        out.write("#0-0 (%s) INCOMPLETE\n  Missing communicator data from 1 rank\n" % HASH)
        out.write(rank_line(dead) + "\n")
    out.write("Warnings\n========\n\n")
    if len(groups) > 1:
        out.write("#0-0 (%s) MISMATCH\n  Communicator ranks have different AllReduce "
                  "operation counts\n" % HASH)
        for value, ranks in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            if len(ranks) > 1:
                out.write("  %d ranks have launched up to operation %d\n" % (len(ranks), value))
            if len(ranks) == 1:
                out.write(rank_line(ranks[0], " has launched up to operation %d" % value))
            elif len(ranks) < n * 0.5:
                out.write("".join(rank_line(r) for r in ranks))
        out.write("\n")


def main():
    args = sys.argv[1:]
    dead = None
    if "--dead" in args:
        i = args.index("--dead")
        dead = int(args[i + 1])
        del args[i:i + 2]
    if len(args) != 4 or args[0] not in ("json", "json-2.28", "text"):
        sys.exit(__doc__)
    fmt, n, percent, snapshot = args[0], int(args[1]), int(args[2]), int(args[3])
    out = sys.stdout
    if fmt == "text":
        text_report(n, percent, snapshot, dead, out)
    else:
        json_report(n, percent, snapshot, dead, fmt == "json-2.28", out)


if __name__ == "__main__":
    main()
