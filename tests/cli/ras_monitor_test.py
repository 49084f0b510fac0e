#!/usr/bin/env python3
"""`fabtrack ras watch` with RAS's event stream (NCCL >= 2.29, MONITOR): the
stand-in answers STATUS with healthy reports and streams scripted events in
NCCL's format; the real binary watches into a fresh database of the test
run's private PostgreSQL (FABTRACK_TEST_DB).

 - a PEER_DEAD named from the event, before any status reports the rank
   dead: the watch ends at once, critical, the process on its host with its
   GPU, pid and ranks; the events stored and read back; alerted once (a
   second watch of the job, against an older server, says "repeat");
 - a server without JSON: the stream read as NCCL's text lines;
 - an older server (no MONITOR): polled as before, said once;
 - a stream cut mid-event, then closed: said with its line, polling goes on;
 - a stalled stream: the watch polls on time and ends on time, by --count,
   by the job's end (--until-done) and by SIGINT;
 - a peer that never answers MONITOR: snapshots on time, said once;
 - --no-monitor: no MONITOR asked.

Usage: ras_monitor_test.py SOURCE_DIR FABTRACK
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

SOURCE, FABTRACK = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(SOURCE, "tests", "support"))
from cli_checks import check, failures, migrated_database, psql  # noqa: E402
from ras_stand_in import StandIn, json_report  # noqa: E402

COMM = "0x5e1f00c2a9b4d731"


def healthy(n):
    """n reports of four healthy ranks, two per node, counts advancing."""
    out = []
    for i in range(1, n + 1):
        ranks = [(r, "10.77.0.11" if r < 2 else "10.77.0.12", 6100 + r, r % 2,
                  {"AllReduce": 10 * i}) for r in range(4)]
        out.append(json_report([(COMM, ranks, [])]))
    return out


DEAD = {"event": "PEER_DEAD", "pid": 6103, "node": "10.77.0.12", "gpus": [1],
        "timestamp": "2026-12-05 03:13:41"}
UNRESPONSIVE = {"event": "PEER_UNRESPONSIVE", "pid": 6103, "node": "10.77.0.12", "gpus": [1],
                "details": "peer not responding for 5s (keepalive warning)",
                "timestamp": "2026-12-05 03:12:40"}


def watch_args(db, port, job, hosts_file, *args):
    return [FABTRACK, "ras", "watch", "--host", "127.0.0.1", "--port", str(port), "--job", job,
            "--cluster", "lab", "--db", db, "--hosts-file", hosts_file, "--no-resolve", *args]


def watch(*args):
    start = time.monotonic()
    p = subprocess.run(watch_args(*args), capture_output=True, text=True, timeout=60)
    return p, time.monotonic() - start


def main():
    work = tempfile.mkdtemp()
    try:
        with migrated_database(FABTRACK, "fabtrack_test_ras_monitor_") as db:
            hosts_file = os.path.join(work, "hosts")
            with open(hosts_file, "w") as f:
                f.write("10.77.0.11 gpu-w1\n10.77.0.12 gpu-w2\n")
            run_cases(db, hosts_file)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        print("%d failed" % len(failures))
        sys.exit(1)
    print("all passed")


def run_cases(db, hosts_file):
    # A process declared dead: the status reports never show it (RAS says so
    # there only after 60 s); the event names it at once.
    s = StandIn(sequence=healthy(10), monitor=[(0.2, UNRESPONSIVE), (0.4, DEAD)], monitor_end="open")
    p, took = watch(db, s.port, "71001", hosts_file, "--every", "1", "--count", "6")
    check("dead peer: exit 2, ended at once by the event",
          p.returncode == 2 and "ended: peer dead" in p.stdout and took < 4, p)
    check("dead peer: MONITOR asked after SET FORMAT json",
          "MONITOR all" in s.commands and s.commands.index("SET FORMAT json") < s.commands.index("MONITOR all"))
    check("dead peer: the events printed as they came",
          "PEER_UNRESPONSIVE process 6103 on gpu-w2 (10.77.0.12)  GPU 1  peer not responding for 5s"
          in p.stdout and "PEER_DEAD process 6103 on gpu-w2 (10.77.0.12)  GPU 1" in p.stdout, p)
    check("dead peer: critical, the process named with host, GPU, pid, RAS's time and its rank",
          "critical peer_dead" in p.stdout and
          "process on gpu-w2 (10.77.0.12)  GPU 1  pid 6103  PEER_DEAD at 2026-12-05 03:13:41 "
          "(RAS's clock), rank 3 of %s" % COMM in p.stdout, p)
    check("dead peer: before any status said so", "critical dead " not in p.stdout
          and p.stdout.count("snapshot ") <= 2, p)
    check("dead peer: alert new", "alert: new: job 71001 has a process declared dead" in p.stdout, p)
    for line in p.stdout.splitlines():
        print("     | " + line)
    check("dead peer: both events stored with the job, mapped",
          psql(db, "SELECT string_agg(event || ' ' || host || ' ' || pid || ' ' || gpus || ' ' || "
                   "event_group || ' ' || event_time || ' ' || stream_format, '; ' ORDER BY id) "
                   "FROM ras_events WHERE job_id = '71001'")
          == "PEER_UNRESPONSIVE gpu-w2 6103 1 TRACE 2026-12-05 03:12:40 json; "
             "PEER_DEAD gpu-w2 6103 1 LIFECYCLE 2026-12-05 03:13:41 json")
    check("dead peer: verdict stored with its dedup key",
          psql(db, "SELECT first_peer_dead_at IS NOT NULL AND NOT stuck FROM ras_job_verdicts "
                   "WHERE job_id = '71001'") == "t")
    s.close()

    # The same job watched again through an older RAS: the stored events are
    # read back into the verdict, alerted as a repeat; no events, said once.
    s = StandIn(sequence=healthy(3))
    p, _ = watch(db, s.port, "71001", hosts_file, "--every", "0.3", "--count", "2", "--format", "json")
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        doc = {}
    findings = doc.get("verdict", {}).get("findings", [])
    check("again: stored PEER_DEAD read back into the verdict, exit 2",
          p.returncode == 2 and any(f["kind"] == "peer_dead" and f["ranks"][0]["pid"] == 6103
                                    and f["ranks"][0]["host"] == "gpu-w2" for f in findings), p)
    check("again: alert repeat", doc.get("alert") == "repeat"
          and doc.get("alert_reason") == "process dead" and doc.get("monitor") == "not offered", p)
    s.close()

    # A server without JSON (the text report): the stream comes as text lines.
    with open(os.path.join(SOURCE, "tests", "fixtures", "ras", "healthy.txt"), "rb") as f:
        healthy_text = f.read()
    s = StandIn(text=healthy_text, monitor=[(0.2, DEAD)], monitor_end="open")
    p, took = watch(db, s.port, "71008", hosts_file, "--every", "1", "--count", "4")
    check("text stream: PEER_DEAD read from a text line, exit 2 at once",
          p.returncode == 2 and "ended: peer dead" in p.stdout and took < 4
          and "process on gpu-w2 (10.77.0.12)  GPU 1  pid 6103  PEER_DEAD at 2026-12-05 03:13:41"
          in p.stdout, p)
    check("text stream: stored as text",
          psql(db, "SELECT event || ' ' || stream_format || ' ' || raw FROM ras_events "
                   "WHERE job_id = '71008'")
          == "PEER_DEAD text [2026-12-05 03:13:41] PEER_DEAD: Process 6103 on node 10.77.0.12 "
             "managing GPU 1")
    s.close()

    # An older server: polling exactly as before, one notice.
    s = StandIn(sequence=healthy(4))
    p, _ = watch(db, s.port, "71002", hosts_file, "--every", "0.3", "--count", "3")
    check("old server: polled, healthy", p.returncode == 0 and p.stdout.count("snapshot ") == 3
          and "events: not offered, 0 read" in p.stdout, p)
    check("old server: said once", p.stderr.count("does not stream events") == 1
          and "ERROR: Unknown command MONITOR all" in p.stderr and "NCCL before 2.29" in p.stderr, p)
    check("old server: MONITOR asked once", s.commands.count("MONITOR all") == 1)
    s.close()

    # A stream cut mid-event, then closed: the whole event stored, the cut
    # one said by its line, polling goes on.
    cut = b'{\n  "timestamp": "2026-12-05 03:12:41",\n  "group": "LIFE'
    s = StandIn(sequence=healthy(4), monitor=[(0.1, UNRESPONSIVE), (0.1, cut)], monitor_end="close")
    p, _ = watch(db, s.port, "71003", hosts_file, "--every", "0.4", "--count", "3")
    check("cut stream: polling goes on", p.returncode == 0 and p.stdout.count("snapshot ") == 3, p)
    check("cut stream: the cut event said by its line",
          "event stream: line 13: the stream ended inside an event (cut off)" in p.stderr
          and "RAS closed its event stream" in p.stderr, p)
    check("cut stream: the whole event stored",
          psql(db, "SELECT count(*) FROM ras_events WHERE job_id = '71003'") == "1")
    s.close()

    # A stalled stream (half an event, then nothing): snapshots on time, the
    # watch ends on time.
    stall = b'{\n  "timestamp": "2026-12-05 03:12'
    s = StandIn(sequence=healthy(4), monitor=[(0.0, stall)], monitor_end="open")
    p, took = watch(db, s.port, "71004", hosts_file, "--every", "0.5", "--count", "3")
    check("stalled stream: on time", p.returncode == 0 and p.stdout.count("snapshot ") == 3
          and took < 4 and "events: streaming, 0 read" in p.stdout, p)
    s.close()

    # A peer that never answers MONITOR: the handshake gives up within
    # --every (1 s at least), not --timeout, and the snapshots stay on time.
    s = StandIn(sequence=healthy(4), monitor="ignore")
    p, took = watch(db, s.port, "71007", hosts_file, "--every", "0.5", "--count", "3",
                    "--timeout", "20")
    check("MONITOR never answered: polls on time, said once",
          p.returncode == 0 and p.stdout.count("snapshot ") == 3 and took < 5
          and p.stderr.count("events not available") == 1, p)
    s.close()

    # ... and --until-done ends with the job (RAS stops answering).
    s = StandIn(sequence=healthy(40), monitor=[(0.0, stall)], monitor_end="open")
    stopper = threading.Timer(1.0, s.close)
    stopper.start()
    p, took = watch(db, s.port, "71005", hosts_file, "--every", "0.3", "--until-done", "--timeout", "1")
    stopper.join()
    check("stalled stream: --until-done ends with the job",
          p.returncode == 0 and "ended: no answer" in p.stdout and took < 5, p)

    # ... and SIGINT ends it at once.
    s = StandIn(sequence=healthy(40), monitor=[(0.0, stall)], monitor_end="open")
    proc = subprocess.Popen(watch_args(db, s.port, "71006", hosts_file, "--every", "5", "--until-done"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)
    start = time.monotonic()
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
    took = time.monotonic() - start
    check("stalled stream: SIGINT ends the watch at once (130)", proc.returncode == 130 and took < 2,
          subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    s.close()

    # --no-monitor: the stream is not asked for.
    s = StandIn(sequence=healthy(3), monitor=[(0.1, DEAD)])
    p, _ = watch(db, s.port, "71007", hosts_file, "--every", "0.3", "--count", "2", "--no-monitor")
    check("--no-monitor: polls only", p.returncode == 0 and not any(
        c.lower().startswith("monitor") for c in s.commands) and "events:" not in p.stdout, p)
    s.close()


main()
