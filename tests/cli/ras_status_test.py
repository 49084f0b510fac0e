#!/usr/bin/env python3
"""`fabtrack ras status` against a stand-in RAS server.

The stand-in (tests/support/ras_stand_in.py) speaks NCCL's RAS client
protocol and replays the fixtures in tests/fixtures/ras/, and misbehaves on
request: stalls mid-reply, says nothing, sends a reply past the size cap;
and a big job's report, generated (tests/support/big_ras_report.py).

Usage: ras_status_test.py SOURCE_DIR FABTRACK
"""
import json
import os
import socket
import subprocess
import sys
import threading
import time

SOURCE, FABTRACK = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(SOURCE, "tests", "support"))
from cli_checks import check, failures  # noqa: E402
from ras_stand_in import StandIn  # noqa: E402
FIXTURES = os.path.join(SOURCE, "tests", "fixtures", "ras")


def fixture(name):
    with open(os.path.join(FIXTURES, name), "rb") as f:
        return f.read()


def run(port, *args, timeout=30):
    start = time.monotonic()
    p = subprocess.run(
        [FABTRACK, "ras", "status", "--host", "127.0.0.1", "--port", str(port), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return p, time.monotonic() - start


# Runs a command and writes its peak resident memory (wait4's ru_maxrss,
# KiB) to the file named first. A small process of its own starts it: Linux
# counts in a child's ru_maxrss the memory of the process it was forked
# from, and this test holds a big report.
MEASURE = """
import os, subprocess, sys
p = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(p.pid, 0)
open(sys.argv[1], "w").write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def run_measured(port, *args, timeout=60):
    """run(), and the command's peak resident memory in bytes."""
    rss_file = os.path.join(os.environ.get("TMPDIR", "/tmp"), "ras_status_rss.%d" % os.getpid())
    start = time.monotonic()
    p = subprocess.run(
        [sys.executable, "-c", MEASURE, rss_file, FABTRACK, "ras", "status", "--host",
         "127.0.0.1", "--port", str(port), *args],
        capture_output=True, text=True, timeout=timeout)
    with open(rss_file) as f:
        rss = int(f.read()) * 1024
    os.remove(rss_file)
    return p, time.monotonic() - start, rss


def big_report(fmt, ranks, behind, *extra):
    return subprocess.run(
        [sys.executable, os.path.join(SOURCE, "tests", "support", "big_ras_report.py"), fmt,
         str(ranks), str(behind), "0", *extra], check=True, capture_output=True).stdout


def main():
    # Text-only server (before 2.28.7): SET FORMAT refused, the text report read.
    for name, code, needles in [
        ("healthy.txt", 0, ["healthy, 9 communicators", "2 nodes, 16 GPUs"]),
        ("dead.txt", 2, ["critical dead", "process 77120  node 10.40.3.17  GPU 2",
                         "rank 10  node 10.40.3.17  GPU 2  pid 77120"]),
        ("mismatch.txt", 1, ["warning mismatch #0-0 (b41f07c2d9e38a16)",
                             "rank 13  node 192.168.20.12  GPU 5 (NVML 6)  pid 30556  behind: launched up to operation 12039"]),
        # 60% behind: RAS names the ranks ahead; those behind are the rest.
        ("behind_most_2_26.txt", 2, [
            "rank 0  node ?  behind: launched up to operation 999 (not named by RAS: the "
            "communicator's other ranks)",
            "rank 3  node 10.1.0.1  GPU 3  pid 40003  ahead: launched up to operation 1000",
            "rank 5  node 10.1.0.2  GPU 1  pid 40005  considered dead"]),
        ("incomplete.txt", 2, ["critical incomplete", "critical missing #0-0", "warning timeout",
                               "rank 5  node 172.20.1.42  GPU 5  pid 9184  behind: launched up to operation 874"]),
    ]:
        s = StandIn(text=fixture(name))
        p, _ = run(s.port)
        check("text %s exits %d" % (name, code), p.returncode == code, p)
        for n in needles:
            check("text %s says %r" % (name, n), n in p.stdout, p)
        check("text %s asked VERBOSE STATUS after a refused SET FORMAT" % name,
              s.commands[-2:] == ["SET FORMAT json", "VERBOSE STATUS"], p)
        s.close()

    # JSON server (2.28.7+), including 2.28.8's lost comma; --format json.
    for name, repaired in [("missing_rank.json", False), ("missing_rank_2_28_8.json", True)]:
        s = StandIn(text=fixture("dead.txt"), json_report=fixture(name))
        p, _ = run(s.port, "--format", "json")
        check("json %s exits 2" % name, p.returncode == 2, p)
        try:
            doc = json.loads(p.stdout)
        except ValueError:
            doc = {}
        check("json %s is JSON, report_format json" % name, doc.get("report_format") == "json", p)
        check("json %s json_repaired %s" % (name, repaired), doc.get("json_repaired") == repaired, p)
        kinds = {f["kind"]: f for f in doc.get("findings", [])}
        dead = kinds.get("dead", {}).get("ranks", [{}])[0]
        check("json %s names dead rank 3 on 10.12.0.6 pid 38812" % name,
              dead.get("rank") == 3 and dead.get("node") == "10.12.0.6" and dead.get("pid") == 38812, p)
        behind = kinds.get("behind", {}).get("ranks", [{}])[0]
        check("json %s names rank 2 behind" % name, behind.get("rank") == 2, p)
        s.close()

    s = StandIn(json_report=fixture("healthy.json"), text=fixture("healthy.txt"))
    p, _ = run(s.port)
    check("json healthy exits 0", p.returncode == 0 and "healthy, 1 communicator" in p.stdout, p)
    s.close()

    # A JSON report that cannot be read: asked again as text.
    broken = fixture("healthy.json").replace(b'"size": 2,', b'"size": 2')
    s = StandIn(json_report=broken, text=fixture("mismatch.txt"))
    p, _ = run(s.port)
    check("unreadable JSON falls back to the text report", p.returncode == 1
          and "text report" in p.stdout and "asking for the text report" in p.stderr, p)
    s.close()

    # Nothing listens.
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    free = probe.getsockname()[1]
    probe.close()
    p, took = run(free, "--timeout", "3")
    check("nothing listening: exit 3", p.returncode == 3, p)
    check("nothing listening: says cannot connect", "cannot connect" in p.stderr
          and "127.0.0.1:%d" % free in p.stderr, p)

    # A peer that stalls mid-reply: the deadline, exit 3, no hang.
    s = StandIn(text=fixture("dead.txt"), stall_after=200)
    p, took = run(s.port, "--timeout", "2")
    check("stall mid-reply: exit 3 within the deadline", p.returncode == 3 and took < 6, p)
    check("stall mid-reply: says stalled mid-reply", "mid-reply, after 200 bytes" in p.stderr, p)
    s.close()

    # A peer that accepts and says nothing.
    s = StandIn(silent=True)
    p, took = run(s.port, "--timeout", "1.5")
    check("silent peer: exit 3 within the deadline", p.returncode == 3 and took < 5, p)
    check("silent peer: says it stalled", "stalled" in p.stderr, p)
    s.close()

    # A job of 131,072 ranks, 1% one AllReduce behind: its JSON report (71
    # MB, past the 64 MiB the client once capped replies at) read whole, the
    # 1,310 ranks behind named, in memory under 3x the reply (read without
    # a DOM: with one, over 5x).
    body = big_report("json", 131072, 1)
    s = StandIn(text=b"unused", json_report=body)
    p, took, rss = run_measured(s.port, "--format", "json", "--timeout", "60", timeout=90)
    check("131,072-rank JSON report: read, warning", p.returncode == 1, p)
    behind = [f for f in json.loads(p.stdout or "{}").get("findings", [])
              if f.get("kind") == "behind"]
    check("131,072-rank JSON report: 1,310 ranks behind named",
          len(behind) == 1 and len(behind[0]["ranks"]) == 1310 and
          behind[0]["ranks"][0]["node"] == "10.0.0.0", p)
    check("131,072-rank JSON report: peak memory %.0f MB under 3x the reply's %.0f MB" %
          (rss / 1e6, len(body) / 1e6), rss < 3 * len(body), p)
    s.close()

    # A reply past the cap (512 MiB): cut off, said, exit 3, and no more
    # memory held than the cap.
    s = StandIn(text=b"", huge=600 << 20)
    p, took, rss = run_measured(s.port, "--timeout", "60", timeout=90)
    check("huge reply: exit 3, capped", p.returncode == 3 and "passed 536870912 bytes" in p.stderr, p)
    check("huge reply: peak memory %.0f MB under 600 MB" % (rss / 1e6), rss < 600e6, p)
    s.close()

    # A JSON reply of 2^21 + 1 empty rank objects in a communicator
    # claiming 2^31 ranks (6 MB): refused as not a RAS report, not held.
    body = (b'{"nccl_version": "2.29.7", "communicators": [{"hash": "0x1", "size": 2147483648,'
            b' "ranks": [' + b"{}," * (2 << 20) + b'{}]}]}')
    s = StandIn(text=b"not a report\n", json_report=body)
    p, took, rss = run_measured(s.port, "--timeout", "60", timeout=90)
    check("2^21 + 1 empty ranks: exit 3", p.returncode == 3, p)
    check("2^21 + 1 empty ranks: said", "more than 2097152 rank entries" in p.stderr, p)
    check("2^21 + 1 empty ranks: peak memory %.0f MB under 300 MB" % (rss / 1e6), rss < 300e6,
          p)
    s.close()

    # A server that is not RAS.
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)

    def http():
        c, _ = srv.accept()
        c.recv(100)
        c.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")
        c.close()

    threading.Thread(target=http, daemon=True).start()
    p, _ = run(srv.getsockname()[1], "--timeout", "3")
    check("not a RAS server: exit 3", p.returncode == 3 and "not a RAS server" in p.stderr, p)
    srv.close()

    if failures:
        print("%d failed" % len(failures))
        sys.exit(1)
    print("all passed")


main()
