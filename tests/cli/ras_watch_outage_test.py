#!/usr/bin/env python3
"""`fabtrack ras watch` through a database outage: nothing the watch took is
lost, and a stuck job is still alerted.

A private embedded PostgreSQL (`fabtrack db start`) and the RAS stand-in:
 - the database down from the start: the watch still judges (a job frozen
   with one rank behind: exit 2, stuck), says "alert": "unconfirmed" (whether
   an earlier watch alerted it cannot be known), spools its snapshots, the
   events of RAS's stream and its verdict, warns in one line; once the server
   is back, `spool replay` stores them all; replaying the same batches again
   adds nothing;
 - the server killed after the watch's first snapshot: the rest spooled, the
   same verdict, everything stored once after the replay;
 - Ctrl-C or SIGTERM while spooling: exit 130 or 143, what was spooled said
   in the warning line, every batch whole, no verdict; the replay stores
   the snapshots;
 - an event with bytes that are not UTF-8: the watch still ends with its
   verdict (spooled or stored), the event kept with U+FFFD;
 - the database down at the start and back while the watch runs: the watch
   tries it once more before its verdict, replays what it spooled, stores the
   verdict, reads the port counters and says "alert": "new", the spool empty;
   in a watch longer than a minute it reconnects mid-watch (not before a
   minute has passed, not at every snapshot) and stores the later snapshots
   itself while it runs (~75 s: the retry is once a minute);
 - a misconfiguration (no such database) is exit 3 before RAS is asked at
   all, nothing spooled.

Usage: ras_watch_outage_test.py SOURCE_DIR FABTRACK
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SOURCE, FABTRACK = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(SOURCE, "tests", "support"))
from cli_checks import check, failures, psql  # noqa: E402
from ras_stand_in import StandIn, json_report  # noqa: E402

COMM = "0x5e1f00c2a9b4d731"
DEAD = {"event": "PEER_UNRESPONSIVE", "pid": 6103, "node": "10.77.0.12", "gpus": [1],
        "details": "peer not responding for 5s (keepalive warning)",
        "timestamp": "2026-12-05 03:12:40"}


def frozen(n):
    """n reports: counts advance once, then freeze with rank 2 two behind."""
    out = []
    for i in range(n):
        counts = [100, 100, 100, 100] if i == 0 else [180, 180, 178, 180]
        ranks = [(r, "10.77.0.11" if r < 2 else "10.77.0.12", 6100 + r, r % 2,
                  {"AllReduce": counts[r]}) for r in range(4)]
        out.append(json_report([(COMM, ranks, [])]))
    return out


def fabtrack(*args, env=None, timeout=120):
    return subprocess.run([FABTRACK, *args], capture_output=True, text=True, timeout=timeout,
                          env=env)


def main():
    work = tempfile.mkdtemp()
    os.chmod(work, 0o755)  # the embedded server runs as an unprivileged user
    data = os.path.join(work, "db")
    spool = os.path.join(work, "spool")
    env = dict(os.environ, FABTRACK_SPOOL_DIR=spool, FABTRACK_CONNECT_ATTEMPTS="1")
    try:
        p = fabtrack("db", "start", "--data-dir", data, env=env)
        check("private database started", p.returncode == 0, p)
        db = "host=%s/run dbname=fabtrack user=fabtrack" % data
        run_cases(work, data, db, spool, env)
    finally:
        fabtrack("db", "stop", "--data-dir", data, env=env)
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        print("%d failed" % len(failures))
        sys.exit(1)
    print("all passed")


def watch(db, port, job, hosts_file, env, *args):
    return fabtrack("ras", "watch", "--host", "127.0.0.1", "--port", str(port), "--job", job,
                    "--cluster", "lab", "--db", db, "--hosts-file", hosts_file, "--no-resolve",
                    "--format", "json", *args, env=env, timeout=60)


def kill_server(data):
    """A crash: the postmaster and its backends SIGKILLed (the backends
    first: once the postmaster is dead they are init's). Its pid."""
    with open(os.path.join(data, "data", "postmaster.pid")) as f:
        pid = int(f.readline())
    subprocess.run(["pkill", "-9", "-P", str(pid)])
    os.kill(pid, signal.SIGKILL)
    return pid


def wait_reaped(pid):
    """Until the killed postmaster is reaped (init's work, a second or more
    late on a loaded machine): a zombie still holds its pid, and pg_ctl
    status and the server's lock file take it for a running server, so
    `db start` would not start one (it then fails connecting). True once
    gone; 30 s bounds a wait that takes milliseconds to seconds."""
    deadline = time.monotonic() + 30
    while os.path.exists("/proc/%d" % pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not os.path.exists("/proc/%d" % pid)


def counts(db, job):
    return (int(psql(db, "SELECT count(*) FROM ras_snapshots WHERE job_id = '%s'" % job)),
            int(psql(db, "SELECT count(*) FROM ras_events WHERE job_id = '%s'" % job)),
            int(psql(db, "SELECT count(*) FROM ras_job_verdicts WHERE job_id = '%s' AND stuck"
                     % job)))


def run_cases(work, data, db, spool, env):
    spooled_snapshots = {}
    hosts_file = os.path.join(work, "hosts")
    with open(hosts_file, "w") as f:
        f.write("10.77.0.11 gpu-w1\n10.77.0.12 gpu-w2\n")

    # Down from the start.
    p = fabtrack("db", "stop", "--data-dir", data, env=env)
    check("server stopped", p.returncode == 0, p)
    # The stand-in's event comes before the second snapshot (events_first):
    # RAS's stream is read between polls, so the watch would miss an event
    # that a loaded machine delays past its last one.
    s = StandIn(sequence=frozen(4), monitor=[(0.1, DEAD)], monitor_end="open", events_first=True)
    p = watch(db, s.port, "93001", hosts_file, env, "--every", "0.5", "--count", "3")
    s.close()
    doc = json.loads(p.stdout) if p.stdout.strip().startswith("{") else {}
    check("down: stuck judged all the same, exit 2", p.returncode == 2 and
          any(f["kind"] == "stuck" for f in doc.get("verdict", {}).get("findings", [])), p)
    check("down: alert unconfirmed, not stored", doc.get("alert") == "unconfirmed" and
          doc.get("stored") is False and doc.get("port_counters_read") is False, p)
    check("down: the event of RAS's stream read", doc.get("events") == 1, p)
    check("down: one warning line naming the spool",
          "unavailable" in p.stderr and "spooled in " + spool in p.stderr, p)
    pending = os.listdir(spool) if os.path.isdir(spool) else []
    check("down: 3 snapshots, 1 event and the verdict spooled (5 batches)", len(pending) == 5, p)
    kept = os.path.join(work, "spool-copy")
    shutil.copytree(spool, kept)

    p = fabtrack("db", "start", "--data-dir", data, env=env)
    check("server back", p.returncode == 0, p)
    p = fabtrack("spool", "replay", "--db", db, env=env)
    check("down: replayed", p.returncode == 0, p)
    check("down: 3 snapshots, 1 event, the stuck verdict stored", counts(db, "93001") == (3, 1, 1),
          p)
    check("down: the verdict stored is the watch's",
          psql(db, "SELECT health FROM ras_job_verdicts WHERE job_id = '93001'") == "critical")
    # The same batches again (a crash between a replay's commit and the
    # batch's removal): nothing twice.
    for f in os.listdir(kept):
        shutil.copy2(os.path.join(kept, f), os.path.join(spool, f))
    p = fabtrack("spool", "replay", "--db", db, env=env)
    check("down: replayed again", p.returncode == 0, p)
    check("down: replaying again adds nothing", counts(db, "93001") == (3, 1, 1), p)

    # Killed after the first snapshot. The stand-in holds the second query
    # until the server is dead: on a loaded machine the test's polling could
    # otherwise be slower than the watch, which then stored more (or all of
    # it, verdict included) before the kill.
    s = StandIn(sequence=frozen(4), hold_after=1)
    proc = subprocess.Popen([FABTRACK, "ras", "watch", "--host", "127.0.0.1", "--port", str(s.port),
                             "--job", "93002", "--cluster", "lab", "--db", db, "--hosts-file",
                             hosts_file, "--no-resolve", "--format", "json", "--every", "1.5",
                             "--count", "3"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and counts(db, "93002")[0] < 1:
        time.sleep(0.1)
    check("killed: the first snapshot stored while the server was up", counts(db, "93002")[0] == 1)
    postmaster = kill_server(data)
    s.release()
    out, err = proc.communicate(timeout=60)
    s.close()
    doc = json.loads(out) if out.strip().startswith("{") else {}
    p = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    check("killed: the watch went on, stuck, exit 2", proc.returncode == 2 and
          doc.get("verdict", {}).get("snapshots") == 3, p)
    check("killed: alert unconfirmed", doc.get("alert") == "unconfirmed", p)
    check("killed: the server gone", wait_reaped(postmaster))
    p = fabtrack("db", "start", "--data-dir", data, env=env)
    check("server back again", p.returncode == 0, p)
    p = fabtrack("spool", "replay", "--db", db, env=env)
    check("killed: every snapshot stored once, and the verdict", counts(db, "93002") == (3, 0, 1),
          p)

    # Interrupted while spooling: each snapshot already spooled is a whole
    # batch and is said in the warning line; exit 130 (143 for SIGTERM);
    # no verdict (none was made); the replay stores the snapshots.
    p = fabtrack("db", "stop", "--data-dir", data, env=env)
    check("server stopped again", p.returncode == 0, p)
    for sig, code, job in ((signal.SIGINT, 130, "93004"), (signal.SIGTERM, 143, "93005")):
        before = set(os.listdir(spool))
        s = StandIn(sequence=frozen(40))
        proc = subprocess.Popen([FABTRACK, "ras", "watch", "--host", "127.0.0.1", "--port",
                                 str(s.port), "--job", job, "--cluster", "lab", "--db", db,
                                 "--hosts-file", hosts_file, "--no-resolve", "--format", "json",
                                 "--every", "0.2", "--count", "40"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=env)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and len(set(os.listdir(spool)) - before) < 2:
            time.sleep(0.05)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
        s.close()
        p = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
        new = [f for f in set(os.listdir(spool)) - before if f.endswith(".batch")]
        check("interrupted (%s): exit %d" % (sig.name, code), proc.returncode == code, p)
        check("interrupted (%s): the spooled batches said in one warning line" % sig.name,
              ("%d batch(es) spooled in %s" % (len(new), spool)) in err and len(new) >= 2, p)
        st = fabtrack("spool", "status", env=env)
        check("interrupted (%s): every batch readable, no temporary file" % sig.name,
              "unreadable" not in st.stdout and
              not [f for f in os.listdir(spool) if f.endswith(".tmp")], st)
        spooled_snapshots[job] = len(new)

    # A RAS event with bytes that are not UTF-8 (a garbled text stream): the
    # watch goes on to its verdict, the event is spooled and stored with
    # U+FFFD in their place (before: exit 4 spooling, exit 3 storing, the
    # verdict lost).
    with open(os.path.join(SOURCE, "tests", "fixtures", "ras", "healthy.txt"), "rb") as f:
        healthy_text = f.read()
    garbled = (b"[2026-12-05 03:12:40] PEER_UNRESPONSIVE: 10.77.0.12<5555> bad \xff\xfe "
               b"bytes\n")
    s = StandIn(text=healthy_text, monitor=[(0.1, garbled)], monitor_end="open", events_first=True)
    p = watch(db, s.port, "93006", hosts_file, env, "--every", "0.5", "--count", "2")
    s.close()
    check("garbled event, down: a verdict, the event read",
          p.returncode in (0, 1, 2) and p.stdout.strip().startswith("{") and
          json.loads(p.stdout).get("events") == 1, p)
    p = fabtrack("db", "start", "--data-dir", data, env=env)
    check("server back a third time", p.returncode == 0, p)
    p = fabtrack("spool", "replay", "--db", db, env=env)
    check("interrupted and garbled: replayed, nothing set aside",
          p.returncode == 0 and "corrupt" not in p.stderr, p)
    for job, n in spooled_snapshots.items():
        check("interrupted (job %s): its %d snapshots stored, no verdict" % (job, n),
              counts(db, job)[0] == n and
              psql(db, "SELECT count(*) FROM ras_job_verdicts WHERE job_id = '%s'" % job) == "0")
    check("garbled event: stored with U+FFFD, and the verdict",
          psql(db, "SELECT count(*) FROM ras_events WHERE job_id = '93006' AND raw LIKE "
               "'%bad ' || chr(65533) || chr(65533) || ' bytes'") == "1" and
          psql(db, "SELECT count(*) FROM ras_job_verdicts WHERE job_id = '93006'") == "1")
    garbled_up = StandIn(text=healthy_text, monitor=[(0.1, garbled)], monitor_end="open",
                         events_first=True)
    p = watch(db, garbled_up.port, "93007", hosts_file, env, "--every", "0.5", "--count", "2")
    garbled_up.close()
    check("garbled event, up: stored, not refused", p.returncode in (0, 1, 2) and
          psql(db, "SELECT count(*) FROM ras_events WHERE job_id = '93007'") == "1", p)

    back_mid_watch(data, db, spool, hosts_file, env)

    # A misconfiguration: said at once, RAS not asked, nothing spooled.
    before = len(os.listdir(spool))
    s = StandIn(sequence=frozen(2))
    p = watch("host=%s/run dbname=nosuchdb user=fabtrack" % data, s.port, "93003", hosts_file,
              env, "--every", "0.5", "--count", "2")
    s.close()
    check("misconfigured: exit 3 naming the database", p.returncode == 3 and "nosuchdb" in p.stderr,
          p)
    check("misconfigured: RAS never asked", s.commands == [], p)
    check("misconfigured: nothing spooled", len(os.listdir(spool)) == before, p)


def watch_while_it_comes_back(data, db, spool, hosts_file, env, job, count, seen=None):
    """A watch started with the server down (one snapshot a second, `count`
    of them) and the server started once the first batch is spooled. `seen`
    is called while the watch runs. Returns the finished process and the
    watch's JSON."""
    p = fabtrack("db", "stop", "--data-dir", data, env=env)
    check("job %s: server stopped" % job, p.returncode == 0, p)
    before = set(os.listdir(spool))
    s = StandIn(sequence=frozen(4), monitor=[(0.1, DEAD)], monitor_end="open")
    # Output to files: a pipe nobody reads while `seen` polls would stop the
    # watch once full.
    out_file, err_file = tempfile.TemporaryFile("w+"), tempfile.TemporaryFile("w+")
    proc = subprocess.Popen([FABTRACK, "ras", "watch", "--host", "127.0.0.1", "--port", str(s.port),
                             "--job", job, "--cluster", "lab", "--db", db, "--hosts-file",
                             hosts_file, "--no-resolve", "--format", "json", "--every", "1",
                             "--count", str(count)], stdout=out_file, stderr=err_file, text=True,
                            env=env)
    started = time.monotonic()
    deadline = started + 20
    while time.monotonic() < deadline and not set(os.listdir(spool)) - before:
        time.sleep(0.05)
    p = fabtrack("db", "start", "--data-dir", data, env=env)
    check("job %s: server back while the watch runs" % job,
          p.returncode == 0 and proc.poll() is None, p)
    if seen:
        seen(proc, started)
    try:
        proc.wait(timeout=count + 90)
    finally:
        proc.kill()
        s.close()
    out_file.seek(0)
    err_file.seek(0)
    out, err = out_file.read(), err_file.read()
    p = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    return p, json.loads(out) if out.strip().startswith("{") else {}


def back_mid_watch(data, db, spool, hosts_file, env):
    def pending():
        return [f for f in os.listdir(spool) if f.endswith(".batch")]

    check("back: nothing spooled before", pending() == [], None)
    # Back before the verdict (a 10 s watch, no reconnect before the minute):
    # the reconnect before the verdict replays the snapshots and the event,
    # then stores the verdict, a new alert.
    p, doc = watch_while_it_comes_back(data, db, spool, hosts_file, env, "93008", 10)
    check("back before the verdict: stuck, exit 2, \"alert\": \"new\"",
          p.returncode == 2 and doc.get("alert") == "new", p)
    check("back before the verdict: stored, port counters read",
          doc.get("stored") is True and doc.get("port_counters_read") is True, p)
    check("back before the verdict: what was spooled replayed by the watch",
          "fabtrack: replayed " in p.stderr and "warning" not in p.stderr and
          "were replayed when it came back" in p.stderr, p)
    check("back before the verdict: 10 snapshots, the event, the verdict stored, no replay run",
          counts(db, "93008") == (10, 1, 1), p)
    check("back before the verdict: the spool empty", pending() == [], p)

    # Back mid-watch in a watch of 75 s: tried again a minute after the
    # failed connect (not at each snapshot), the spool replayed, the later
    # snapshots stored by the watch itself while it runs.
    stored_while_running = []

    def seen(proc, started):
        while proc.poll() is None and time.monotonic() < started + 165:
            n = counts(db, "93009")[0]
            if n and (not stored_while_running or stored_while_running[-1][1] != n):
                stored_while_running.append((time.monotonic() - started, n))
            time.sleep(0.5)

    p, doc = watch_while_it_comes_back(data, db, spool, hosts_file, env, "93009", 75, seen)
    first = stored_while_running[0] if stored_while_running else (None, 0)
    check("back mid-watch: snapshots stored while the watch ran, more after the replay",
          len(stored_while_running) >= 3 and stored_while_running[-1][1] > first[1], p)
    check("back mid-watch: not tried again before a minute had passed (first row at %s s)" %
          (None if first[0] is None else round(first[0], 1)),
          first[0] is not None and first[0] >= 55, p)
    check("back mid-watch: the spool replayed once, by the watch",
          p.stderr.count("fabtrack: replayed ") == 1, p)
    check("back mid-watch: 75 snapshots, the event, the verdict stored; \"alert\": \"new\"",
          counts(db, "93009") == (75, 1, 1) and doc.get("alert") == "new" and
          doc.get("stored") is True, p)
    check("back mid-watch: the spool empty", pending() == [], p)


if __name__ == "__main__":
    main()
