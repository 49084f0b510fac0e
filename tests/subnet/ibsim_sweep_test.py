#!/usr/bin/env python3
"""`fabtrack sweep --fabric-scan` against a simulated subnet (ibsim + opensm).

A fat tree whose first HCA's node description names this host ("<host>
HCA-1"), a real sweep of fabtrack-allreduce over MPI ranks on this host into
the test database, and faults injected through ibsim's console while the run
runs (the sweep's launcher is a wrapper that waits for them): symbol errors
on this host's leaf's uplink to spine01, PortXmitWait on its uplink to
spine02, and symbol errors on another leaf's uplink (not the run's). The
stored run's window must hold the deltas of its own leaf's uplinks, both ends
named, and not the other leaf's; `analyze` must cite them for that run; a
second, clean run cites nothing.

  ibsim_sweep_test.py SOURCE_DIR FABTRACK FABTRACK_ALLREDUCE

Needs FABTRACK_TEST_DB (the suite's private PostgreSQL). Exit 77 (ctest
SKIP_RETURN_CODE) where the simulator or mpirun is not installed.
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

SOURCE, FABTRACK, ALLREDUCE = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path.insert(0, os.path.join(SOURCE, "tests", "support"))
sys.path.insert(0, os.path.join(SOURCE, "scripts"))
import ibsim_fixture  # noqa: E402

fat_tree = __import__("ibsim-fat-tree").fat_tree

failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print(f"FAIL: {what}", file=sys.stderr)


# The launcher: says the run is about to start (the "before" scan is done),
# waits for the test to inject its faults, then runs mpirun without the
# simulator's preload (the ranks have nothing to do with the simulated subnet).
# The wrapper holds the sweep's first launch until the faults are injected:
# the CPU bracket (`--cpu nodes`) would be that first launch, so it is off.
WRAPPER = """#!/bin/sh
touch "{work}/launched"
i=0
while [ ! -e "{work}/go" ]; do
  i=$((i + 1)); [ $i -gt 600 ] && exit 99
  sleep 0.1
done
rm -f "{work}/go" "{work}/launched"
exec env -u LD_PRELOAD -u IBSIM_SOCKNAME mpirun "$@"
"""


def sweep(subnet, work, cluster, inject):
    env = subnet.env()
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               FABTRACK_SPOOL_DIR=os.path.join(work, "spool"))
    argv = [FABTRACK, "sweep", "--db", os.environ["FABTRACK_TEST_DB"], "--cluster", cluster,
            "--nodes", "1", "--ranks-per-node", "2", "--ports", "off", "--cpu", "off", "--fabric-scan",
            "--allreduce", ALLREDUCE, "--mpirun", os.path.join(work, "mpirun-wrapper"),
            "--", "-b", "8", "-e", "1K", "-f", "8", "-n", "3", "-w", "1"]
    proc = subprocess.Popen(argv, env=env, cwd=subnet.dir, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while not os.path.exists(os.path.join(work, "launched")):
        if proc.poll() is not None or time.monotonic() > deadline:
            out, err = proc.communicate(timeout=30) if proc.poll() is not None else ("", "")
            proc.kill()
            raise SystemExit(f"sweep never launched: {proc.returncode}\n{out}\n{err}")
        time.sleep(0.1)
    if inject:
        subnet.console(*inject)
    open(os.path.join(work, "go"), "w").close()
    out, err = proc.communicate(timeout=300)
    print(out)
    print(err, file=sys.stderr)
    if proc.returncode != 0:
        raise SystemExit(f"sweep exit {proc.returncode}")
    return out, err


def psql(sql):
    r = subprocess.run(["psql", os.environ["FABTRACK_TEST_DB"], "-At", "-c", sql],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"psql: {r.stderr}")
    return r.stdout.strip()


def main():
    why = ibsim_fixture.available()
    if why or shutil.which("mpirun") is None:
        print(f"SKIP: {why or 'mpirun not installed'}")
        return 77
    host = socket.gethostname()
    cluster = f"ibsim-sweep-{os.getpid()}"
    work = tempfile.mkdtemp(prefix="fabtrack-ibsim-sweep-")
    try:
        with open(os.path.join(work, "mpirun-wrapper"), "w") as f:
            f.write(WRAPPER.format(work=work))
        os.chmod(os.path.join(work, "mpirun-wrapper"), 0o755)
        # 4 leaves x 2 spines x 4 hosts: this host is node 1 on leaf01, whose
        # ports 5 and 6 go to spine01 and spine02 (their port 1).
        net = fat_tree(4, 2, 4, describe={1: f"{host} HCA-1"})
        with ibsim_fixture.Subnet(net) as subnet:
            out, err = sweep(subnet, work, cluster, [
                'PerformanceSet "leaf01"[5] PortCounters.SymbolErrorCounter=17',
                'PerformanceSet "leaf01"[6] PortCounters.PortXmitWait=4000000',
                'PerformanceSet "leaf03"[5] PortCounters.SymbolErrorCounter=99'])
            check("uplink leaf01/5 <-> spine01/1: symbol_error +17 at leaf01/5" in out,
                  "the sweep prints the uplink's symbol errors, both ends")
            check("uplink leaf01/6 <-> spine02/1: port_xmit_wait +4000000 at leaf01/6" in out,
                  "the sweep prints the uplink's XmitWait, both ends")
            check("leaf03" not in out, "another leaf's uplink is not the run's")
            check("fabric scan before:" in err and "fabric scan after:" in err,
                  "both scans said on stderr")
            check("no HCA's node description names" not in err, "this host was mapped")
            out2, _ = sweep(subnet, work, cluster, [])
            check("uplink" not in out2, f"a clean run prints no uplink: {out2}")

        rows = psql("SELECT w.run_id, w.links, w.unmapped_hosts, "
                    "w.fabric_window->'link_deltas', w.fabric_window->'leaves' "
                    "FROM run_fabric_windows w JOIN runs r ON r.id = w.run_id "
                    f"WHERE r.cluster = '{cluster}' ORDER BY w.run_id").splitlines()
        check(len(rows) == 2, f"both runs stored with their window: {rows}")
        faulted, clean = [r.split("|") for r in rows[:2]]
        faulted_id, clean_id = int(faulted[0]), int(clean[0])
        check(faulted[1] == "6" and faulted[2] == "{}", f"leaf01's 6 cables, all hosts mapped: {faulted[1:3]}")
        check(json.loads(faulted[4]) == ["leaf01"], f"the run's leaf: {faulted[4]}")
        deltas = {d["link"]: d for d in json.loads(faulted[3])}
        up1 = deltas.get("leaf01/5 <-> spine01/1")
        check(up1 is not None and up1["uplink"] and up1["a"]["deltas"].get("symbol_error") == 17
              and up1["b"]["description"] == "spine01" and up1["b"]["port"] == 1,
              f"the stored window holds the uplink's symbol errors: {up1}")
        up2 = deltas.get("leaf01/6 <-> spine02/1")
        check(up2 is not None and up2["a"]["deltas"].get("port_xmit_wait") == 4000000,
              f"the stored window holds the uplink's XmitWait: {up2}")
        check(not any("leaf03" in name for name in deltas), f"leaf03 is not in the window: {list(deltas)}")
        # The scans' own MADs and the SM's traffic move data and packet
        # counters; nothing else moved during the clean run.
        traffic = {"port_xmit_data", "port_rcv_data", "port_xmit_packets", "port_rcv_packets",
                   "unicast_xmit_packets", "unicast_rcv_packets", "multicast_xmit_packets",
                   "multicast_rcv_packets"}
        moved = [(d["link"], c) for d in json.loads(clean[3]) for end in ("a", "b")
                 for c in d[end]["deltas"] if c not in traffic]
        check(moved == [], f"the clean run's window moved no error or wait counter: {moved}")

        r = subprocess.run([FABTRACK, "runs", "show", str(faulted_id), "--db", os.environ["FABTRACK_TEST_DB"]],
                           capture_output=True, text=True, timeout=60)
        shown = [line for line in r.stdout.splitlines() if "uplink leaf01/5 <-> spine01/1 " in line]
        check(len(shown) == 1 and "symbol_error +17 at leaf01/5" in shown[0],
              f"runs show lists the uplink's delta: exit {r.returncode} {r.stdout[-1500:]} {r.stderr}")

        r = subprocess.run([FABTRACK, "analyze", "--db", os.environ["FABTRACK_TEST_DB"],
                            "--cluster", cluster, "--format", "json", "--no-store"],
                           capture_output=True, text=True, timeout=300)
        check(r.returncode in (0, 1, 2), f"analyze ran: {r.returncode} {r.stderr}")
        doc = json.loads(r.stdout)
        by_run = {}
        for f in doc["findings"]:
            by_run.setdefault(f.get("run_id"), []).append(f)
        mine = {f["kind"]: f for f in by_run.get(faulted_id, []) if f["kind"].startswith("fabric_")}
        sym = mine.get("fabric_symbol_errors")
        check(sym is not None and sym["subject"] == "leaf01/5 <-> spine01/1"
              and sym["evidence"]["a"]["description"] == "leaf01"
              and sym["evidence"]["b"]["description"] == "spine01",
              f"analyze names the uplink's symbol errors for the run: {sym}")
        cong = mine.get("fabric_congestion")
        check(cong is not None and cong["subject"] == "leaf01/6 <-> spine02/1",
              f"analyze names the uplink's XmitWait for the run: {cong}")
        check(set(mine) == {"fabric_symbol_errors", "fabric_congestion"},
              f"nothing else on the run's cables: {list(mine)}")
        # The run's other findings (if any) cite the uplinks.
        for f in by_run.get(faulted_id, []):
            if not f["kind"].startswith("fabric_"):
                links = [u["link"] for u in f["evidence"].get("fabric_uplinks", [])]
                check("leaf01/5 <-> spine01/1" in links, f"{f['kind']} cites the uplink: {links}")
        check(not any(f["kind"].startswith("fabric_") or "fabric_uplinks" in f["evidence"]
                      for f in by_run.get(clean_id, [])),
              f"the clean run cites nothing: {by_run.get(clean_id)}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
