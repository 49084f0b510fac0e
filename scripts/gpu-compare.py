#!/usr/bin/env python3
"""Side by side of fabtrack-allreduce and nccl-tests' all_reduce_perf from the
tables gpu-check.sh leaves in RUNS_DIR (NAME.ROUND.txt for NAME in peer,
fabtrack, fabtrack_I0 and ROUND 1..ROUNDS). Per size, the median over the
rounds of the per-round ratio peer time / fabtrack time (= algbw ratio; the
printed algbw has two decimals, 0.00 below 10 KB). Exit 0 when the median
over sizes is >= 0.98 and every size >= 0.95 with 28 sizes and #wrong 0.
Rounds from several gpu-check runs pool by renumbering their files.
Usage: scripts/gpu-compare.py RUNS_DIR ROUNDS"""
import statistics, sys
runs_dir, rounds = sys.argv[1], int(sys.argv[2])
def table(path):  # size -> (out-of-place time us, in-place time us, #wrong oop, #wrong ip)
    rows = {}
    for line in open(path):
        f = line.split()
        if len(f) >= 13 and f[0].isdigit() and f[1].isdigit():
            rows[int(f[0])] = (float(f[5]), float(f[9]), f[8], f[12])
    return rows
def runs(name):
    return [table(f"{runs_dir}/{name}.{r}.txt") for r in range(1, rounds + 1)]
def compare(ours_name, peer_name, verdict):
    peer, ours = runs(peer_name), runs(ours_name)
    sizes = sorted(set.intersection(*(set(t) for t in peer + ours)))
    wrong = [(s, t[s][2:]) for t in peer + ours for s in sizes if set(t[s][2:]) - {"0", "N/A"}]
    print(f"== {ours_name} / {peer_name}: medians of {rounds} alternating rounds; "
          "ratio = algbw ratio = time ratio peer/ours, out-of-place (in-place beside)")
    print(f"{'size (B)':>11} {peer_name + ' us':>14} {ours_name + ' us':>14} {'ratio':>7} {'min':>6} {'max':>6} {'ip ratio':>9}")
    medians, ip_medians = [], []
    for s in sizes:
        ratios = [p[s][0] / o[s][0] if o[s][0] > 0 else 0.0 for p, o in zip(peer, ours)]
        ip = statistics.median(p[s][1] / o[s][1] if o[s][1] > 0 else 0.0 for p, o in zip(peer, ours))
        m = statistics.median(ratios)
        medians.append(m)
        ip_medians.append(ip)
        print(f"{s:>11} {statistics.median(p[s][0] for p in peer):>14.2f} "
              f"{statistics.median(o[s][0] for o in ours):>14.2f} {m:>7.3f} {min(ratios):>6.3f} "
              f"{max(ratios):>6.3f} {ip:>9.3f}")
    overall = statistics.median(medians) if medians else 0
    lowest = min(medians) if medians else 0
    print(f"{len(sizes)} sizes: median ratio {overall:.3f} (in-place {statistics.median(ip_medians):.3f}), "
          f"lowest size {lowest:.3f}; #wrong {wrong or 'none'}")
    ok = len(sizes) >= 28 and overall >= 0.98 and lowest >= 0.95 and not wrong
    if verdict:
        print("side by side:", "PASS" if ok else "FAIL (target: median >= 0.98, every size >= 0.95, 28 sizes)")
    return ok
compare("fabtrack_I0", "peer", False)
sys.exit(0 if compare("fabtrack", "peer", True) else 1)
