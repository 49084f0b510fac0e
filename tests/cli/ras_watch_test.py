#!/usr/bin/env python3
"""`fabtrack ras watch` end to end: the RAS stand-in replays a job over time,
the real fabtrack binary watches it into a fresh database on the test run's
private PostgreSQL (FABTRACK_TEST_DB), and the port counters of a rank's host
are stored by `fabtrack counters snapshot --store` from a fake sysfs tree
whose link_downed rises during the watch.

 - counts advance, then freeze with one rank behind: stuck within two
   snapshots, the rank named with its host (from --hosts-file), GPU and pid,
   beside its host's port change; snapshots and the verdict stored; the
   first watch says "alert: new", the second "alert: repeat" (one alert per
   stuck job);
 - a rank that stops answering, then is considered dead: critical, named;
 - healthy advancing counts: exit 0, nothing stuck;
 - --until-done against a job that finalizes ends by itself; nothing
   listening is exit 3 at once; a stalled RAS is bounded by --timeout.

Usage: ras_watch_test.py SOURCE_DIR FABTRACK
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

SOURCE, FABTRACK = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(SOURCE, "tests", "support"))
from cli_checks import check, failures, migrated_database, psql  # noqa: E402
from ras_stand_in import StandIn, json_report  # noqa: E402



NODES = {"10.77.0.11": "gpu-w1", "10.77.0.12": "gpu-w2"}


def ranks(counts, skip=()):
    """Four ranks, two per node; counts[r] is rank r's AllReduce count."""
    out = []
    for r in range(4):
        if r in skip:
            continue
        node = "10.77.0.11" if r < 2 else "10.77.0.12"
        out.append((r, node, 6100 + r, r % 2, {"AllGather": 4, "AllReduce": counts[r]}))
    return out


def report(counts, missing=()):
    return json_report([("0x5e1f00c2a9b4d731",
                         ranks(counts, skip=[m[0] for m in missing]), list(missing))])


def watch(db, port, job, *args, timeout=60):
    start = time.monotonic()
    p = subprocess.run(
        [FABTRACK, "ras", "watch", "--host", "127.0.0.1", "--port", str(port), "--job", job,
         "--cluster", "lab", "--db", db, *args],
        capture_output=True, text=True, timeout=timeout)
    return p, time.monotonic() - start


def main():
    work = tempfile.mkdtemp()
    try:
        with migrated_database(FABTRACK, "fabtrack_test_ras_watch_") as db:
            hosts_file = os.path.join(work, "hosts")
            with open(hosts_file, "w") as f:
                f.write("# the job's nodes (Slurm's node list, resolved)\n")
                for ip, host in NODES.items():
                    f.write("%s %s %s.cluster.example\n" % (ip, host, host))
            run_cases(db, work, hosts_file)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        print("%d failed" % len(failures))
        sys.exit(1)
    print("all passed")


def run_cases(db, work, hosts_file):
    # gpu-w2's ports, stored before the watch (the baseline), and again
    # during it with mlx5_3's link_downed up by 2.
    tree = os.path.join(work, "sysfs")
    shutil.copytree(os.path.join(SOURCE, "tests", "fixtures", "sysfs", "ndr_8hca"), tree,
                    symlinks=True)
    link_downed = None
    for root, _, files in os.walk(os.path.join(tree, "devices")):
        if root.endswith(os.path.join("mlx5_3", "ports", "1", "counters")) and "link_downed" in files:
            link_downed = os.path.join(root, "link_downed")
    check("fixture tree has mlx5_3 port 1 link_downed", link_downed is not None)

    def snapshot_ports():
        return subprocess.run([FABTRACK, "counters", "snapshot", "--store", "--host", "gpu-w2",
                               "--cluster", "lab", "--sysfs", tree, "--db", db],
                              capture_output=True, text=True, timeout=60)

    p = snapshot_ports()
    check("baseline port snapshot stored", p.returncode == 0, p)

    def bump_later():
        time.sleep(1.0)
        with open(link_downed) as f:
            value = int(f.read().strip() or 0)
        with open(link_downed, "w") as f:
            f.write("%d\n" % (value + 2))
        snapshot_ports()

    # Advancing, then frozen with rank 2 (gpu-w2) two behind.
    seq = [report([100, 100, 100, 100]), report([180, 180, 178, 180]),
           report([180, 180, 178, 180]), report([180, 180, 178, 180])]
    s = StandIn(sequence=seq)
    bump = threading.Thread(target=bump_later)
    bump.start()
    p, took = watch(db, s.port, "81234", "--every", "1.5", "--count", "3", "--hosts-file",
                    hosts_file, "--no-resolve")
    bump.join()
    check("stuck: exit 2", p.returncode == 2, p)
    check("stuck: three snapshots printed", p.stdout.count("snapshot ") >= 3, p)
    check("stuck: named", "critical stuck 0x5e1f00c2a9b4d731 since" in p.stdout, p)
    check("stuck: rank 2 on gpu-w2 named with GPU and pid",
          "rank 2 on gpu-w2 (10.77.0.12)  GPU 0  pid 6102  AllReduce 178, others at 180" in p.stdout, p)
    check("stuck: its host's port counters over the window",
          "port gpu-w2: mlx5_3 port 1 link_downed +2 at " in p.stdout, p)
    check("stuck: laggard named too", "warning laggard 0x5e1f00c2a9b4d731" in p.stdout, p)
    check("stuck: alert new", "alert: new: job 81234 stuck" in p.stdout, p)
    check("stuck: 3 snapshots stored",
          psql(db, "SELECT count(*) FROM ras_snapshots WHERE job_id = '81234'") == "3")
    check("stuck: ranks stored with host, GPU, pid and counts",
          psql(db, "SELECT r->>'host' || ' ' || (r->>'pid') || ' ' || (r->'op_counts'->1->>1) "
                   "FROM ras_snapshots s, jsonb_array_elements(s.communicators->0->'ranks') r "
                   "WHERE s.job_id = '81234' AND r->>'rank' = '2' ORDER BY s.taken_at DESC LIMIT 1")
          == "gpu-w2 6102 178")
    check("stuck: verdict stored with its dedup key",
          psql(db, "SELECT stuck AND first_stuck_at IS NOT NULL FROM ras_job_verdicts "
                   "WHERE job_id = '81234'") == "t")
    s.close()

    # The same job still stuck, watched again: no second alert.
    s = StandIn(sequence=[report([180, 180, 178, 180])])
    p, _ = watch(db, s.port, "81234", "--every", "0.2", "--count", "2", "--hosts-file",
                 hosts_file, "--no-resolve", "--format", "json")
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        doc = {}
    check("again: exit 2", p.returncode == 2, p)
    check("again: alert repeat, not new", doc.get("alert") == "repeat", p)
    check("again: JSON verdict names stuck",
          any(f["kind"] == "stuck" for f in doc.get("verdict", {}).get("findings", [])), p)
    check("again: 5 snapshots of the job stored",
          psql(db, "SELECT count(*) FROM ras_snapshots WHERE job_id = '81234'") == "5")
    s.close()

    # A rank that stops answering, then is considered dead.
    seq = [report([50, 50, 50, 50]),
           report([90, 90, 90, 90], missing=[(3, "10.77.0.12", 6103, 1, "unresponsive")]),
           report([90, 90, 90, 90], missing=[(3, "10.77.0.12", 6103, 1, "dead")])]
    s = StandIn(sequence=seq)
    p, _ = watch(db, s.port, "81235", "--every", "0.2", "--count", "3", "--hosts-file",
                 hosts_file, "--no-resolve")
    check("dying: exit 2", p.returncode == 2, p)
    check("dying: dead rank named",
          "critical dead 0x5e1f00c2a9b4d731" in p.stdout
          and "rank 3 on gpu-w2 (10.77.0.12)  GPU 1  pid 6103  dead" in p.stdout, p)
    s.close()

    # Healthy: counts advance every time.
    seq = [report([10 * i] * 4) for i in range(1, 5)]
    s = StandIn(sequence=seq)
    p, _ = watch(db, s.port, "81236", "--every", "0.2", "--count", "3", "--no-resolve")
    check("healthy: exit 0", p.returncode == 0 and "job 81236 on lab: healthy" in p.stdout, p)
    check("healthy: unknown nodes said", "no host known for 2 nodes" in p.stdout, p)
    check("healthy: no alert", "alert:" not in p.stdout, p)
    s.close()

    # Text only (NCCL < 2.28.7): its report gives counts only where ranks
    # disagree, so a job frozen with every rank at one count reads healthy;
    # the watch says it cannot tell (exit unchanged: nothing is known wrong).
    with open(os.path.join(SOURCE, "tests", "fixtures", "ras", "healthy.txt"), "rb") as f:
        s = StandIn(text=f.read())
    p, _ = watch(db, s.port, "81241", "--every", "0.2", "--count", "2", "--no-resolve")
    check("text only: healthy, exit 0", p.returncode == 0 and "healthy" in p.stdout, p)
    check("text only: progress not judged is said",
          "every rank at one count is not seen" in p.stderr, p)
    s.close()

    # --until-done: the job ends (RAS stops answering) and the watch with it.
    s = StandIn(sequence=[report([i] * 4) for i in range(1, 40)])
    stopper = threading.Timer(1.0, s.close)
    stopper.start()
    p, took = watch(db, s.port, "81237", "--every", "0.3", "--until-done", "--timeout", "2",
                    "--no-resolve")
    stopper.join()
    check("until-done: ends when RAS stops answering", p.returncode == 0 and "ended: no answer" in p.stdout
          and took < 20, p)

    # Nothing listens: no snapshot, exit 3 at once.
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    free = probe.getsockname()[1]
    probe.close()
    p, took = watch(db, free, "81238", "--every", "1", "--count", "3", "--timeout", "2")
    check("nothing listening: exit 3", p.returncode == 3 and "no snapshot" in p.stderr, p)

    # A RAS that stalls: each query bounded by --timeout.
    s = StandIn(silent=True)
    p, took = watch(db, s.port, "81239", "--every", "1", "--count", "3", "--timeout", "1.5")
    check("stalled RAS: exit 3 within the deadline", p.returncode == 3 and took < 8, p)
    s.close()

    # The Slurm watchdog: a stuck job alerted once however many watches see it.
    alerts = os.path.join(work, "alerts")
    alert_cmd = os.path.join(work, "alert.sh")
    with open(alert_cmd, "w") as f:
        f.write("#!/bin/sh\necho \"$*\" >> %s\n" % alerts)
    os.chmod(alert_cmd, 0o755)
    s = StandIn(sequence=[report([70, 70, 69, 70])])
    env = dict(os.environ, SLURM_JOB_ID="91111", FABTRACK_RAS_WATCHDOG_CONF="/nonexistent",
               FABTRACK_RAS_WATCHDOG_FABTRACK=FABTRACK, FABTRACK_RAS_WATCHDOG_DB=db,
               FABTRACK_RAS_WATCHDOG_CLUSTER="lab", FABTRACK_RAS_WATCHDOG_AFTER="0",
               FABTRACK_RAS_WATCHDOG_INTERVAL="1", FABTRACK_RAS_WATCHDOG_EVERY="0.2",
               FABTRACK_RAS_WATCHDOG_COUNT="2", FABTRACK_RAS_WATCHDOG_TIMEOUT="2",
               FABTRACK_RAS_WATCHDOG_RAS_HOST="127.0.0.1",
               FABTRACK_RAS_WATCHDOG_RAS_PORT=str(s.port),
               FABTRACK_RAS_WATCHDOG_HOSTS_FILE=hosts_file,
               FABTRACK_RAS_WATCHDOG_ALERT_COMMAND=alert_cmd, FABTRACK_RAS_WATCHDOG_MAX_HOURS="1",
               FABTRACK_RAS_WATCHDOG_SCONTROL="/nonexistent/scontrol")
    stopper = threading.Timer(4.0, s.close)  # the job ends
    stopper.start()
    start = time.monotonic()
    p = subprocess.run([os.path.join(SOURCE, "scripts", "slurm", "fabtrack-ras-watchdog.sh")],
                       env=env, capture_output=True, text=True, timeout=60)
    took = time.monotonic() - start
    stopper.join()
    lines = open(alerts).read().splitlines() if os.path.exists(alerts) else []
    check("watchdog: ends with the job", p.returncode == 0 and took < 30, p)
    check("watchdog: watched more than once",
          psql(db, "SELECT count(*) >= 4 FROM ras_snapshots WHERE job_id = '91111'") == "t", p)
    check("watchdog: one alert for the stuck job", len(lines) == 1
          and lines[0].startswith("job 91111 on lab stuck (NCCL RAS, ") and "rank" in lines[0], p)
    check("watchdog: the alert names the rank behind by host, GPU and pid",
          len(lines) == 1 and "rank 2 on gpu-w2 (10.77.0.12)  GPU 0  pid 6102" in lines[0], p)
    if lines:
        print("     alert: " + lines[0])

    # What fabtrack knows of the hosts beside their counters (issue 34 item
    # 2): gpu-w2's topology names GPU 0's NIC; gpu-w2's mlx5_3 runs other
    # firmware and a slower link than the job's other host, gpu-w1.
    p = subprocess.run([FABTRACK, "topology", "ingest",
                        os.path.join(SOURCE, "tests", "fixtures", "topology", "node",
                                     "nccl_xml_rail8.xml"),
                        "--host", "gpu-w2", "--cluster", "lab", "--db", db],
                       capture_output=True, text=True, timeout=60)
    check("facts: gpu-w2's topology stored", p.returncode == 0, p)
    gpu0_nic = psql(db, "SELECT g->>'nic' FROM node_topologies t, jsonb_array_elements("
                        "t.topology->'gpus') g WHERE t.host = 'gpu-w2' AND g->>'gpu' = 'GPU0'")
    check("facts: the stored topology pairs GPU0 with a NIC", gpu0_nic.startswith("mlx5_"))
    mlx5_3 = link_downed
    for _ in range(4):  # .../mlx5_3/ports/1/counters/link_downed
        mlx5_3 = os.path.dirname(mlx5_3)
    with open(os.path.join(mlx5_3, "fw_ver"), "w") as f:
        f.write("28.40.1000\n")
    p = snapshot_ports()
    check("facts: gpu-w2 stored with its new firmware", p.returncode == 0, p)
    tree_w1 = os.path.join(work, "sysfs-w1")
    shutil.copytree(os.path.join(SOURCE, "tests", "fixtures", "sysfs", "ndr_8hca"), tree_w1,
                    symlinks=True)
    rate_w1 = os.path.join(tree_w1, os.path.relpath(mlx5_3, tree), "ports", "1", "rate")
    with open(rate_w1, "w") as f:
        f.write("400 Gb/sec (4X NDR)\n")
    p = subprocess.run([FABTRACK, "counters", "snapshot", "--store", "--host", "gpu-w1",
                        "--cluster", "lab", "--sysfs", tree_w1, "--db", db],
                       capture_output=True, text=True, timeout=60)
    check("facts: gpu-w1 stored", p.returncode == 0, p)
    with open(os.path.join(tree, os.path.relpath(mlx5_3, tree), "ports", "1", "rate")) as f:
        w2_rate = f.read().split()[0]
    with open(os.path.join(tree_w1, os.path.relpath(mlx5_3, tree), "fw_ver")) as f:
        w1_fw = f.read().strip()
    s = StandIn(sequence=[report([300, 300, 298, 300])])
    p, _ = watch(db, s.port, "81242", "--every", "0.2", "--count", "2", "--hosts-file",
                 hosts_file, "--no-resolve")
    check("facts: stuck, exit 2", p.returncode == 2, p)
    check("facts: rank 2 named with its GPU's NIC",
          "rank 2 on gpu-w2 (10.77.0.12)  GPU 0  NIC %s  pid 6102" % gpu0_nic in p.stdout, p)
    check("facts: rank 0 on gpu-w1 (no topology) named without a NIC",
          "rank 0 on gpu-w1" not in p.stdout or "rank 0 on gpu-w1 (10.77.0.11)  GPU 0  pid" in p.stdout, p)
    check("facts: the firmware gpu-w2 alone runs is named",
          "node gpu-w2: fw_ver mlx5_3 28.40.1000; %s on the job's other 1 host" % w1_fw in p.stdout, p)
    check("facts: gpu-w2's slower link is named",
          "node gpu-w2: link mlx5_3/1 %s Gb/s; 400 Gb/s on the job's other 1 host" % w2_rate
          in p.stdout, p)
    check("facts: the NIC and the facts are stored with the verdict",
          psql(db, "SELECT (verdict->'findings'->0->'ranks'->0->>'nic') || ' ' || "
                   "jsonb_array_length(verdict->'findings'->0->'node_facts') FROM ras_job_verdicts "
                   "WHERE job_id = '81242'") == gpu0_nic + " 2")
    s.close()

    # Usage: how long must be said.
    p, _ = watch(db, 1, "81240", "--every", "1")
    check("no --count nor --until-done: usage error", p.returncode == 2 and "--count N or --until-done" in p.stderr, p)


main()
