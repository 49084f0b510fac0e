#!/usr/bin/env python3
"""Writes one nccl-tests all-reduce table of ROWS rows (default 300,000: 31 MB)
to PATH: a run far larger than any real one, for the spool outage test and the
spool memory benchmark.

Usage: large_nccl_tests_table.py PATH [ROWS]
"""
import sys

path = sys.argv[1]
rows = int(sys.argv[2]) if len(sys.argv) > 2 else 300000
with open(path, "w") as f:
    f.write("# nThread 1 nGpus 8 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20 validation: 1\n#\n")
    f.write("#                                                       out-of-place                       in-place\n")
    f.write("#       size         count      type   redop     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong\n")
    # Row i depends on i % 20 and i % 97 only: the rows repeat every 1940,
    # so those are formatted once and written over and over (seconds less
    # for every test that makes the table).
    period = 20 * 97
    lines = []
    for i in range(period):
        size = 8 << (i % 20)
        lines.append("%12d %12d %8s %6s %8.2f %7.2f %7.2f %6d %8.2f %7.2f %7.2f %6d\n" % (size, size // 4, "float", "sum", 30.0 + i % 97, 1.0, 1.75, 0, 30.5, 1.0, 1.75, 0))
    block = "".join(lines)
    for _ in range(rows // period):
        f.write(block)
    f.write("".join(lines[:rows % period]))
    f.write("# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 1.75\n#\n")
