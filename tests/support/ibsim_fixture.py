"""A simulated InfiniBand subnet for tests and benchmarks: ibsim + opensm.

ibsim (ibsim-utils) simulates the switches, HCAs and cables of a net file and
answers real MADs; programs reach it through libumad2sim.so preloaded
(LD_PRELOAD), which replaces /dev/infiniband/umad*. Each instance gets its
own socket name (IBSIM_SOCKNAME, read by ibsim and by umad2sim), so tests run
in parallel. ibsim's console is its stdin, kept open as a pipe (with stdin
closed it spins); `console()` writes commands there (PerformanceSet, Unlink,
Error, ...). opensm assigns the LIDs and keeps running (SA queries of
ibqueryerrors need it). Everything started here is stopped on exit, also
when the test fails or is interrupted.
"""

import atexit
import os
import shutil
import signal
import subprocess
import tempfile
import time

UMAD2SIM = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"


def available():
    """Why the simulator cannot run here, or None."""
    for tool in ("ibsim", "opensm", "ibnetdiscover"):
        if shutil.which(tool) is None:
            return f"{tool} not installed (scripts/install-deps.sh: ibsim-utils opensm infiniband-diags)"
    if not os.path.exists(UMAD2SIM):
        return f"{UMAD2SIM} missing (libumad2sim0)"
    return None


class Subnet:
    def __init__(self, net_text, workdir=None, sm_wait_s=120):
        self.own_dir = workdir is None
        self.dir = workdir or tempfile.mkdtemp(prefix="fabtrack-ibsim-")
        self.net = os.path.join(self.dir, "net")
        with open(self.net, "w") as f:
            f.write(net_text)
        self.sockname = f"fabtrack-{os.getpid()}-{id(self) & 0xffff:x}"
        self.ibsim = None
        self.opensm = None
        self.sm_wait_s = sm_wait_s
        atexit.register(self.stop)

    def env(self):
        """The environment of a program that talks to this subnet."""
        env = dict(os.environ)
        env["IBSIM_SOCKNAME"] = self.sockname
        env["LD_PRELOAD"] = UMAD2SIM
        # opensm's cache and the umad2sim sysfs copy (./sys-PID) stay here.
        env["OSM_CACHE_DIR"] = self.dir
        return env

    def start(self):
        env = dict(os.environ, IBSIM_SOCKNAME=self.sockname)
        self.ibsim_log = open(os.path.join(self.dir, "ibsim.log"), "w")
        self.ibsim = subprocess.Popen(["stdbuf", "-o0", "ibsim", "-s", self.net], stdin=subprocess.PIPE,
                                      stdout=self.ibsim_log, stderr=subprocess.STDOUT,
                                      cwd=self.dir, env=env, text=True, start_new_session=True)
        self._wait_log("ibsim.log", "sim>", 30)
        # The log is read for "SUBNET UP": opensm must flush it as it writes.
        conf = os.path.join(self.dir, "opensm.conf")
        with open(conf, "w") as f:
            f.write("force_log_flush TRUE\n")
        self.opensm = subprocess.Popen(
            # No periodic sweeps (-s 0): a sweep that meets a port dropping
            # packets (Error) would leave it in Init. Link changes still
            # trap, and opensm then sweeps and routes around them.
            ["opensm", "-F", conf, "-f", os.path.join(self.dir, "osm.log"), "-s", "0"],
            stdout=open(os.path.join(self.dir, "osm.out"), "w"), stderr=subprocess.STDOUT,
            cwd=self.dir, env=self.env(), start_new_session=True)
        self._wait_log("osm.log", "SUBNET UP", self.sm_wait_s)
        return self

    def _wait_log(self, name, text, timeout_s):
        path = os.path.join(self.dir, name)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.ibsim.poll() is not None:
                raise RuntimeError(f"ibsim exited: {open(os.path.join(self.dir, 'ibsim.log')).read()[-2000:]}")
            try:
                with open(path, errors="replace") as f:
                    if text in f.read():
                        return
            except FileNotFoundError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"no {text!r} in {path} after {timeout_s} s")

    def sm_sweeps(self):
        """How many times opensm has brought the subnet up so far."""
        with open(os.path.join(self.dir, "osm.log"), errors="replace") as f:
            return f.read().count("SUBNET UP")

    def wait_sm_sweep(self, seen, timeout_s=60):
        """Waits until opensm has swept again since `seen` (sm_sweeps()):
        after an Unlink it routes around the cable (on the trap ibsim sends)."""
        deadline = time.monotonic() + timeout_s
        while self.sm_sweeps() <= seen:
            if time.monotonic() > deadline:
                raise RuntimeError(f"opensm did not sweep again in {timeout_s} s")
            time.sleep(0.2)

    def console(self, *commands):
        """Writes commands to ibsim's console and waits until it has read them."""
        for command in commands:
            self.ibsim.stdin.write(command + "\n")
        # A comment echoes back: once it is in the log, the commands before it ran.
        marker = f"# fabtrack-mark-{time.monotonic_ns()}"
        self.ibsim.stdin.write(marker + "\n")
        self.ibsim.stdin.flush()
        self._wait_log("ibsim.log", marker, 30)

    def run(self, argv, timeout=300, **kwargs):
        """Runs a program attached to the subnet; returns CompletedProcess."""
        return subprocess.run(argv, env=self.env(), cwd=self.dir, capture_output=True, text=True,
                              timeout=timeout, **kwargs)

    def stop(self):
        # A second SIGTERM during the cleanup must not leave ibsim behind.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        for proc in (self.opensm, self.ibsim):
            if proc is None or proc.poll() is not None:
                continue
            try:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(timeout=10)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait(timeout=10)
                except (ProcessLookupError, subprocess.TimeoutExpired):
                    pass
        self.opensm = self.ibsim = None
        if self.own_dir and os.environ.get("FABTRACK_KEEP_IBSIM_DIR") is None:
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        # SIGTERM (ctest's timeout) must stop the simulator too: turn it into an exit.
        signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(SystemExit(143)))
        return self.start()

    def __exit__(self, *exc):
        self.stop()
