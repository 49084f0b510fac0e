#!/usr/bin/env python3
"""Summary of bench/run_locate_netns_bench.sh's lines (tab-separated:
seed, placement, rep, kind, want, top, right, rounds, seconds, exit, settled,
confidence, suspects), from its output or a file of them.

Usage: bench/locate_netns_summary.py LINES_FILE
"""
import statistics
import sys

rows = []
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split("\t")
    if len(f) != 13 or not f[0].isdigit():
        continue
    rows.append(dict(seed=f[0], placement=f[1], rep=f[2], kind=f[3], want=f[4], top=f[5],
                     right=int(f[6]), rounds=int(f[7]), seconds=float(f[8]), rc=int(f[9]),
                     settled=f[10] == "True", suspects=int(f[12])))
faulted = [r for r in rows if r["kind"] != "none"]
clean = [r for r in rows if r["kind"] == "none"]
placements = {(r["seed"], r["placement"]) for r in rows}
print(f"locates {len(rows)} ({len(placements)} placements)")
if faulted:
    right = sum(r["right"] for r in faulted)
    silent = sum(1 for r in faulted if r["rc"] == 0 and r["top"] == "none")
    print(f"faulted: top-1 right {right}/{len(faulted)} ({100 * right / len(faulted):.0f}%); "
          f"settled with no suspect, exit 0: {silent}")
    for kind in ["node link", "uplink", "node CPU"]:
        rs = [r for r in faulted if r["kind"] == kind]
        if rs:
            wants = sorted({r["want"].split()[-1] for r in rs})
            print(f"  {kind} ({', '.join(wants)}): {sum(r['right'] for r in rs)}/{len(rs)} right")
if clean:
    with_suspect = sum(1 for r in clean if r["suspects"] > 0)
    named = sum(r["suspects"] for r in clean)
    print(f"clean: {len(clean) - with_suspect}/{len(clean)} without a suspect; "
          f"{named} suspect(s) in {len(clean)} clean runs ({named / len(clean):.2f} per run); "
          f"exit 0: {sum(1 for r in clean if r['rc'] == 0)}/{len(clean)}")
if rows:
    seconds = [r["seconds"] for r in rows]
    print(f"seconds per locate: median {statistics.median(seconds):.1f}, max {max(seconds):.1f} "
          f"(limit 90); over 90: {sum(1 for s in seconds if s > 90)}; rounds max "
          f"{max(r['rounds'] for r in rows)} (budget 8)")
