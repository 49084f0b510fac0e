#!/usr/bin/env python3
"""`fabtrack fabric scan` against infiniband-diags on the largest subnet ibsim
takes (256 switches), in one simulator, side by side, alternating order.

Per round, each reader reads the subnet's counters once:
  fabtrack   `fabtrack fabric scan` (discovery, ClassPortInfo per node, an
             AllPortSelect sum per switch, then PortCountersExtended of
             every port and PortCounters where the sum shows errors or the
             node has no sum, a window of MADs in flight; text output)
  fabtrack-json  the same with --format json (13 MB on 256 switches)
  fabtrack-errors  `fabtrack fabric scan --errors-only` (ibqueryerrors'
             reading: an AllPortSelect sum per switch, per port only where
             it shows errors; no data counters on clean switches)
  iqe        `ibqueryerrors` (discovery, then per switch one PortCounters
             with AllPortSelect, per port only where that shows errors)
  iqe-counters  `ibqueryerrors --counters` (every port's data counters)
  perfquery  a loop of `perfquery -x`: one process per switch with -l (each
             port asked in turn), one per HCA port
Wall-clock seconds per reader and round; odd rounds in the order above, even
rounds reversed. Prints each round, then per reader the median and range and
the median ratios. The simulator is one process (ibsim) answering every MAD
in turn, so these measure what each reader costs around it: process starts,
discovery, waiting one MAD at a time or many at once.

  bench/subnet_scan_bench.py [--rounds 5] [--leaves 240 --spines 16 --hosts 7]
                             [--window 64] [--perfquery-nodes N] [--base OLD_FABTRACK]
                             [--no-json] [--no-errors-only]

--perfquery-nodes N times the loop over N switches and N HCAs only and
scales by the port count (said in the output); 0 (default) runs it whole.
--base adds another fabtrack build (text output) as the reader "fabtrack-base",
so a change is measured against the build before it in the same rounds.
Besides the medians of each reader's times, the per-round ratios to
fabtrack (their median and range) are printed, of the wall clock and of the
CPU seconds (the reader's own and ibsim's meanwhile): a loaded machine slows
the readers of one round alike, so the ratios are steadier than the times.
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import ibsim_fixture  # noqa: E402

fat_tree = __import__("ibsim-fat-tree").fat_tree


def process_cpu_s(pid):
    """User + system seconds a running process has used so far."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed(subnet, argv_list):
    """(wall seconds, the reader's CPU seconds, ibsim's CPU seconds meanwhile),
    or None when a reader crashed (ibqueryerrors --counters segfaulted once in
    5 rounds here): said, and left out of the medians. On a shared machine the
    CPU seconds are what the others' load changes least."""
    started = time.monotonic()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    sim = process_cpu_s(subnet.ibsim.pid)
    for argv in argv_list:
        r = subnet.run(argv, timeout=3600)
        if r.returncode not in (0, 1):  # ibqueryerrors exits 1 when it found errors
            print(f"  {' '.join(argv)}: exit {r.returncode}: {r.stderr.strip()[-300:]}", flush=True)
            return None
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - children.ru_utime) + (after.ru_stime - children.ru_stime)
    return time.monotonic() - started, cpu, process_cpu_s(subnet.ibsim.pid) - sim


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--leaves", type=int, default=240)
    ap.add_argument("--spines", type=int, default=16)
    ap.add_argument("--hosts", type=int, default=7)
    ap.add_argument("--window", type=int, default=64)
    ap.add_argument("--perfquery-nodes", type=int, default=0)
    ap.add_argument("--fabtrack", default=os.path.join(ROOT, "build", "cli", "fabtrack"))
    ap.add_argument("--base", help="another fabtrack build to time beside it")
    ap.add_argument("--no-json", action="store_true", help="leave out the --format json reader")
    ap.add_argument("--no-errors-only", action="store_true",
                    help="leave out fabtrack --errors-only (a --fabtrack build without it)")
    args = ap.parse_args()
    why = ibsim_fixture.available()
    if why:
        raise SystemExit(why)
    net = fat_tree(args.leaves, args.spines, args.hosts)
    with ibsim_fixture.Subnet(net, sm_wait_s=600) as subnet:
        doc = json.loads(subnet.run([args.fabtrack, "fabric", "scan", "--format", "json"], timeout=600).stdout)
        switches = [n for n in doc["nodes"] if n["type"] == "switch"]
        cas = [n for n in doc["nodes"] if n["type"] == "ca"]
        ports = sum(1 for l in doc["links"] for _ in "ab") + len(doc["ports_without_link"])
        print(f"subnet: {len(switches)} switches, {len(cas)} HCAs, {len(doc['links'])} links, "
              f"{ports} ports; fabtrack read them with {doc['mads']['sent']} MADs "
              f"({doc['mads']['retried']} retried), {len(doc['unanswered'])} unanswered")
        mads = {"fabtrack": doc["mads"]["sent"]}
        variants = {"fabtrack-errors": [args.fabtrack, "--errors-only"]} if not args.no_errors_only else {}
        if args.base:
            variants["fabtrack-base"] = [args.base]
        for name, (binary, *extra) in variants.items():
            other = json.loads(subnet.run([binary, "fabric", "scan", "--format", "json", *extra],
                                          timeout=600).stdout)
            mads[name] = other["mads"]["sent"]
        print("PMA MADs per scan: " + ", ".join(f"{k} {v}" for k, v in mads.items()))
        pq_switches, pq_cas = switches, cas
        scale = 1.0
        if args.perfquery_nodes:
            pq_switches, pq_cas = switches[:args.perfquery_nodes], cas[:args.perfquery_nodes]
            all_ports = sum(n["ports"] for n in switches) + len(cas)
            sample_ports = sum(n["ports"] for n in pq_switches) + len(pq_cas)
            scale = all_ports / sample_ports
            print(f"perfquery loop timed over {len(pq_switches)} switches + {len(pq_cas)} HCAs "
                  f"({sample_ports} ports) and scaled x{scale:.2f} to all {all_ports}")
        readers = {
            "fabtrack": [[args.fabtrack, "fabric", "scan", "--window", str(args.window)]],
            "fabtrack-json": [[args.fabtrack, "fabric", "scan", "--format", "json", "--window", str(args.window)]],
            "fabtrack-errors": [[args.fabtrack, "fabric", "scan", "--errors-only", "--window", str(args.window)]],
            "iqe": [["ibqueryerrors"]],
            "iqe-counters": [["ibqueryerrors", "--counters"]],
            "perfquery": [["perfquery", "-x", "-l", str(n["lid"])] for n in pq_switches]
                         + [["perfquery", "-x", str(n["lid"]), "1"] for n in pq_cas],
        }
        if args.base:  # next to fabtrack, so both meet the same moment of the machine
            base = [[args.base, "fabric", "scan", "--window", str(args.window)]]
            readers = {"fabtrack": readers.pop("fabtrack"), "fabtrack-base": base, **readers}
        if args.no_json:
            del readers["fabtrack-json"]
        if args.no_errors_only:
            del readers["fabtrack-errors"]
        print(f"load before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
        times = {name: [] for name in readers}
        cpus = {name: [] for name in readers}
        per_round = []
        cpu_round = []  # per round, each reader's CPU seconds with ibsim's meanwhile
        order = list(readers)
        for r in range(1, args.rounds + 1):
            this = order if r % 2 else order[::-1]
            line = []
            got = {}
            for name in this:
                measured = timed(subnet, readers[name])
                if measured is None:
                    line.append(f"{name} crashed")
                    continue
                t, cpu, sim = (x * (scale if name == "perfquery" else 1) for x in measured)
                times[name].append(t)
                cpus[name].append((cpu, sim))
                got[name] = t
                line.append(f"{name} {t:.2f} s (CPU {cpu:.2f} + ibsim {sim:.2f} s)")
            per_round.append(got)
            cpu_round.append({name: sum(cpus[name][-1]) for name in got})
            print(f"round {r} ({' -> '.join(this)}): " + ", ".join(line), flush=True)
        print(f"load after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        print()
        for name, ts in times.items():
            if ts:
                own = statistics.median(c for c, _ in cpus[name])
                sim = statistics.median(s for _, s in cpus[name])
                print(f"{name:14s} median {statistics.median(ts):8.2f} s  range {min(ts):.2f}-{max(ts):.2f} s"
                      f"  CPU median {own:.2f} s + ibsim {sim:.2f} s")
        for name in readers:
            if name == "fabtrack":
                continue
            ratios = [g[name] / g["fabtrack"] for g in per_round if name in g and "fabtrack" in g]
            if ratios:
                print(f"{name} / fabtrack per round: median {statistics.median(ratios):.2f}x, "
                      f"range {min(ratios):.2f}-{max(ratios):.2f}x ({len(ratios)} rounds)")
            cpu_ratios = [c[name] / c["fabtrack"] for c in cpu_round if name in c and "fabtrack" in c]
            if cpu_ratios:
                print(f"{name} / fabtrack CPU (own + ibsim) per round: median "
                      f"{statistics.median(cpu_ratios):.2f}x, range {min(cpu_ratios):.2f}-"
                      f"{max(cpu_ratios):.2f}x")


if __name__ == "__main__":
    main()
