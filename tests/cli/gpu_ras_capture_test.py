#!/usr/bin/env python3
"""scripts/gpu-ras-capture.sh, here, with the RAS stand-in as the job.

On a GPU machine the script starts one NCCL rank and asks its RAS thread;
here GPU_RAS_JOB starts tests/support/ras_stand_in.py on the port the script
asks (NCCL_RAS_ADDR), serving the healthy fixtures. Checked: the raw replies
are kept byte for byte as the server sent them, the refused command is
kept, `fabtrack ras status` answers 0 in each form, a frozen job (SIGSTOP)
gives 3, the job is stopped at the end, and a job that never listens is
exit 2, said.

Usage: gpu_ras_capture_test.py SOURCE_DIR FABTRACK
"""
import os
import socket
import subprocess
import sys
import tempfile

SOURCE, FABTRACK = sys.argv[1], sys.argv[2]
FIXTURES = os.path.join(SOURCE, "tests", "fixtures", "ras")
SCRIPT = os.path.join(SOURCE, "scripts", "gpu-ras-capture.sh")
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def capture(tmp, job, port):
    env = dict(os.environ, GPU_RAS_JOB=job, NCCL_RAS_ADDR="127.0.0.1:%d" % port,
               FABTRACK=FABTRACK, GPU_RAS_DIR=os.path.join(tmp, "out"), GPU_RAS_SETTLE_S="0",
               GPU_RAS_MONITOR_S="0.5", GPU_RAS_FROZEN_S="1")
    env.pop("OUT", None)
    return subprocess.run(["bash", SCRIPT], env=env, capture_output=True, text=True, timeout=120)


with tempfile.TemporaryDirectory() as tmp:
    port = free_port()
    # The job: the stand-in bound to the asked port, serving until killed; it
    # writes its pid so the test can see that the script stopped it.
    job_py = os.path.join(tmp, "job.py")
    pid_file = os.path.join(tmp, "job.pid")
    with open(job_py, "w") as f:
        f.write(f"""
import os, socket, sys, time
sys.path.insert(0, {os.path.join(SOURCE, "tests", "support")!r})
bind = socket.socket.bind
socket.socket.bind = lambda self, addr: bind(self, (addr[0], {port}))
from ras_stand_in import StandIn
read = lambda name: open(os.path.join({FIXTURES!r}, name), "rb").read()
StandIn(text=read("healthy.txt"), json_report=read("healthy.json"))
open({pid_file!r}, "w").write(str(os.getpid()))
while True:
    time.sleep(60)
""")
    p = capture(tmp, "/usr/bin/python3 " + job_py, port)
    print(p.stdout, p.stderr, sep="\n")
    out = os.path.join(tmp, "out")
    check(p.returncode == 0, "capture against the stand-in exits 0 (got %d)" % p.returncode)

    def raw(name):
        path = os.path.join(out, "raw", name)
        return open(path, "rb").read() if os.path.exists(path) else None

    healthy_txt = open(os.path.join(FIXTURES, "healthy.txt"), "rb").read()
    healthy_json = open(os.path.join(FIXTURES, "healthy.json"), "rb").read()
    check(raw("verbose_status.txt") == healthy_txt, "VERBOSE STATUS kept byte for byte")
    check(raw("status.txt") == healthy_txt, "STATUS kept byte for byte")
    check(raw("json_verbose_status.txt") == healthy_json,
          "SET FORMAT json + VERBOSE STATUS kept byte for byte")
    transcript = (raw("json_verbose_status.transcript") or b"").decode()
    check("> SET FORMAT json\n< b'OK\\n'" in transcript and "server closed" in transcript,
          "the transcript has each command, its answer and how the reply ended")
    check(b"ERROR" in (raw("unknown_command.txt") or b""), "a refused command's answer is kept")
    check("fabtrack ras status on a frozen job: exit 3" in p.stdout,
          "a frozen job (SIGSTOP) is exit 3 from ras status")
    for form in ("text", "json", "text_verbose"):
        check(os.path.exists(os.path.join(out, "ras_status_%s.out" % form)),
              "ras status --format %s output kept" % form)
    json_out = open(os.path.join(out, "ras_status_json.out")).read()
    check('"health": "healthy"' in json_out or '"health":"healthy"' in json_out,
          "ras status --format json says healthy")
    pid = int(open(pid_file).read())
    try:
        os.kill(pid, 0)
        alive = True
    except OSError:
        alive = False
    check(not alive, "the job is stopped at the end")

    # A job that never listens: exit 2, said, quickly.
    q = capture(tmp, "/usr/bin/python3 -c pass", free_port())
    check(q.returncode == 2 and "RAS never listened" in q.stdout,
          "a job that ends without RAS listening is exit 2, said (got %d)" % q.returncode)

if failures:
    print("%d failed" % len(failures))
    sys.exit(1)
print("all passed")
