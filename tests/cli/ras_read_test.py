#!/usr/bin/env python3
"""`fabtrack ras read FILE|-`: a saved RAS report judged like a live one.

The same fixture is served by the stand-in RAS server to `ras status` and
saved to a file for `ras read`: the two print the same verdict (but for the
line naming the source) and exit alike. Then the ways a saved file goes
wrong: cut short, broken JSON, empty, missing: exit 3, "FILE:LINE: what".

Usage: ras_read_test.py SOURCE_DIR FABTRACK
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

SOURCE, FABTRACK = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(SOURCE, "tests", "support"))
from cli_checks import check, failures  # noqa: E402
from ras_stand_in import StandIn  # noqa: E402
FIXTURES = os.path.join(SOURCE, "tests", "fixtures", "ras")


def fixture(name):
    with open(os.path.join(FIXTURES, name), "rb") as f:
        return f.read()


def fabtrack(*args, stdin=None):
    return subprocess.run([FABTRACK, "ras", *args], input=stdin, capture_output=True,
                          timeout=30)


def dom_layout(out):
    """`out` as nlohmann's dump(2) writes its document (keys sorted, two
    spaces a level, UTF-8 as is, lower-case \\u escapes), as Python writes
    the same: the verdict is written straight from the structs where no
    string needs escaping, through the DOM where one does, and must read the
    same byte for byte either way."""
    return json.dumps(json.loads(out), indent=2, sort_keys=True,
                      ensure_ascii=False).encode() + b"\n"


def main():
    tmp = tempfile.mkdtemp(prefix="ras_read_test.")

    def saved(name, body):
        path = os.path.join(tmp, name)
        with open(path, "wb") as f:
            f.write(body)
        return path

    # Live and saved, text and JSON reports, each exit code: the same verdict.
    for name, text, js, code in [
        ("healthy.txt", "healthy.txt", None, 0),
        ("mismatch.txt", "mismatch.txt", None, 1),
        ("dead.txt", "dead.txt", None, 2),
        ("missing_rank_2_28_8.json", "dead.txt", "missing_rank_2_28_8.json", 2),
    ]:
        s = StandIn(text=fixture(text), json_report=fixture(js) if js else None)
        path = saved(name, fixture(js or text))
        for fmt in ("text", "json"):
            live = fabtrack("status", "--host", "127.0.0.1", "--port", str(s.port),
                            "--format", fmt)
            read = fabtrack("read", path, "--format", fmt)
            check("%s --format %s exits %d live and read" % (name, fmt, code),
                  live.returncode == code and read.returncode == code, read)
            if fmt == "text":
                same = live.stdout.replace(b"RAS at 127.0.0.1:%d" % s.port,
                                           b"RAS report " + path.encode())
                check("%s: the same text as ras status" % name, read.stdout == same, read)
            else:
                a, b = json.loads(live.stdout), json.loads(read.stdout)
                for doc in (a, b):
                    for key in ("host", "port", "file"):
                        doc.pop(key, None)
                check("%s: the same JSON as ras status" % name, a == b, read)
                check("%s: JSON laid out as the DOM's dump, live and read" % name,
                      live.stdout == dom_layout(live.stdout) and
                      read.stdout == dom_layout(read.stdout), read)
                verbose = fabtrack("read", path, "--format", "json", "--verbose")
                check("%s: --verbose JSON (through the DOM) laid out as its dump" % name,
                      verbose.stdout == dom_layout(verbose.stdout) and
                      json.loads(verbose.stdout).get("report") == fixture(js or text).decode(),
                      verbose)
        s.close()

    # Names that need escaping (a quote, a backslash, UTF-8, a tab): the
    # verdict through the DOM, escaped as it escapes them.
    odd = fixture("missing_rank.json").replace(b'"host": "10.12.0.6"',
                                               b'"host": "n\xc3\xb6de \\"6\\" \\\\ \\t"')
    path = saved("odd-names.json", odd)
    p = fabtrack("read", path, "--format", "json")
    doc = json.loads(p.stdout or b"{}")
    nodes = {k["node"] for f in doc.get("findings", []) for k in f["ranks"]}
    check("names needing escapes: read, escaped as the DOM does",
          p.returncode == 2 and 'n\u00f6de "6" \\ \t' in nodes and
          p.stdout == dom_layout(p.stdout) and b'\\"6\\"' in p.stdout, p)

    # Standard input, as an nc session saved it (the protocol's answers first).
    p = fabtrack("read", "-", stdin=b"SERVER PROTOCOL 2\nOK\n" + fixture("healthy.json"))
    check("an nc session on stdin is read as JSON, exit 0",
          p.returncode == 0 and b"RAS report <stdin> (NCCL 2.29.2, json report): healthy"
          in p.stdout, p)

    # `ncclras >> f` twice: the newest report is judged, and that is said.
    healthy = fixture("healthy.txt")
    path = saved("appended.txt", healthy + fixture("dead.txt"))
    p = fabtrack("read", path)
    check("appended reports: the last judged (exit 2), said on stderr", p.returncode == 2 and
          ("holds 2 reports; the last, from line %d, is judged" %
           (healthy.count(b"\n") + 1)).encode() in p.stderr, p)

    # An uneven job (2.27): its outlier node is shown, not judged.
    p = fabtrack("read", os.path.join(FIXTURES, "uneven_2_27.txt"))
    check("an uneven job's outlier node is listed", p.returncode == 2 and
          b"outlier node 10.77.4.31: its process count differs" in p.stdout, p)
    p = fabtrack("read", os.path.join(FIXTURES, "uneven_2_27.txt"), "--format", "json")
    check("an uneven job's outlier node in the JSON, laid out as the DOM's dump",
          p.stdout == dom_layout(p.stdout) and
          [n["node"] for n in json.loads(p.stdout or b"{}").get("outlier_nodes", [])] ==
          ["10.77.4.31"], p)

    # Cut short after the table (a RAS thread that died mid-report).
    path = saved("cut.txt", fixture("cut_after_table.txt"))
    p = fabtrack("read", path)
    check("a report cut after the table: exit 3, FILE:LINE", p.returncode == 3 and
          (path + ":17: the reply ends before its Warnings section").encode() in p.stderr, p)
    check("a report cut short prints no verdict", p.stdout == b"", p)

    broken = fixture("healthy.json").replace(b'"size": 2,', b'"size": 2')
    path = saved("broken.json", broken)
    p = fabtrack("read", path)
    check("broken JSON: exit 3, FILE:LINE", p.returncode == 3 and
          (path + ":12: not valid JSON").encode() in p.stderr, p)

    path = saved("empty.txt", b"\n\n")
    p = fabtrack("read", path)
    check("an empty file: exit 3", p.returncode == 3 and (path + ":1: empty").encode()
          in p.stderr, p)

    missing = os.path.join(tmp, "no-such-file.txt")
    p = fabtrack("read", missing)
    check("a missing file: exit 3, says so", p.returncode == 3 and
          (missing + ": cannot read: No such file or directory").encode() in p.stderr, p)

    # A 131,072-rank job's JSON report (71 MB, generated), 60% of the ranks
    # one AllReduce behind and one dead: read whole (the cap was once 64 MiB),
    # every rank behind named. Saved by NCCL 2.28.9 (the lost comma), 16,384
    # ranks 1% behind, too (the comma put back in a report of 9 MB).
    gen = os.path.join(SOURCE, "tests", "support", "big_ras_report.py")
    for fmt, ranks, percent, behind in (("json", 131072, 60, 78643),
                                        ("json-2.28", 16384, 1, 163)):
        big = os.path.join(tmp, "big-%s.json" % fmt)
        with open(big, "wb") as f:
            subprocess.run([sys.executable, gen, fmt, str(ranks), str(percent), "-1", "--dead",
                            str(ranks - 1)], stdout=f, check=True)
        p = fabtrack("read", big, "--format", "json")
        doc = json.loads(p.stdout or b"{}")
        kinds = {f["kind"]: f for f in doc.get("findings", [])}
        check("%d-rank %s report: read, critical" % (ranks, fmt), p.returncode == 2, p)
        check("%d-rank %s report: JSON laid out as the DOM's dump" % (ranks, fmt),
              p.stdout == dom_layout(p.stdout), p)
        check("%d-rank %s report: %d ranks behind, 1 dead" % (ranks, fmt, behind),
              len(kinds.get("behind", {}).get("ranks", [])) == behind and
              [k["rank"] for k in kinds.get("dead", {}).get("ranks", [])] == [ranks - 1], p)
        os.remove(big)

    # A file past the cap (a sparse 513 MiB: never written, and refused
    # before it is read): said as a size, not as a misread.
    big = os.path.join(tmp, "huge.json")
    with open(big, "wb") as f:
        f.truncate(513 << 20)
    p = fabtrack("read", big)
    check("a file past 512 MiB: exit 3, said as its size", p.returncode == 3 and
          (big + ": larger than 512 MiB, the cap on a live RAS reply").encode() in p.stderr, p)

    shutil.rmtree(tmp)
    if failures:
        print("%d failed" % len(failures))
        sys.exit(1)
    print("all passed")


main()
