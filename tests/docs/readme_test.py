#!/usr/bin/env python3
"""README doc test (issue 22 item 6): the README cannot drift from the program.

1. Every `fabtrack ...` command in the README, in shell blocks and in inline
   code, names a subcommand that exists and only options that its --help
   lists (bracketed optional parts included).
2. Every command line of the README's shell blocks is either run here,
   verbatim, against a private PostgreSQL the test starts the way the README
   says (`fabtrack db start` with FABTRACK_DATA_DIR), with the exit status
   it must have; or listed below with the reason it cannot run on a machine
   without GPUs, HCAs, Slurm or a Pushgateway. A new command in the README
   that is in neither list fails the test, so docs get checked as they grow.
3. The README's JSON example of a command's output has the shape the command
   prints (DOCUMENTED_JSON): the same top-level kind (an array, not one
   object per file), the same keys in its objects, down the first element of
   every list.

Usage: readme_test.py REPO_ROOT FABTRACK_BINARY
"""
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

# README command lines run here, verbatim (bracketed optional parts dropped),
# with the exit status each must end with.
RUN_HERE = {
    "fabtrack db start": 0,
    "fabtrack db status": 0,
    "fabtrack db migrate": 0,
    "fabtrack sweep --nodes 1-4 --cluster laptop -- -b 8 -e 4M -f 8": 0,
    "fabtrack sweep --nodes 2 --cluster laptop --ab OMPI_MCA_btl_tcp_eager_limit=4096 -- -b 8 -e 32K -f 8 -n 5": 0,
    "fabtrack counters metrics --sysfs /sys": 0,
    "fabtrack counters metrics --sysfs /sys --hw-counters out_of_buffer,out_of_sequence": 0,
    "fabtrack db prune --older-than 400d": 0,
    "fabtrack db stop": 0,
}

# README command lines that cannot run here, and why. (Their options are
# still checked against --help above.)
CANNOT_RUN_HERE = {
    "scripts/demo.sh": "the README's own set-up command; CI runs scripts/test.sh, demo.sh is run by hand",
    "scripts/test.sh": "this test is part of it",
    "mpirun -np 16 --hostfile hosts fabtrack-allreduce --backend nccl": "16 GPUs over a hostfile",
    "fabtrack sweep --slurm": "a Slurm allocation with GPUs",
    "fabtrack sweep --hostfile hosts": "a hostfile of GPU nodes",
    "fabtrack sweep --no-launcher --nodes 1 --cluster dgx --bench nccl-tests": "8 GPUs and nccl-tests (tests/cli/sweep_nccl_tests_test.cc runs the plug-in with stand-ins)",
    "scripts/netns-fabric.sh": "root and network namespaces (tests/netns/ run it)",
    "fabtrack sweep --nodes 1-4 --cluster lab --mpirun \"scripts/netns-fabric.sh": "root and network namespaces (tests/netns/)",
    "fabtrack locate --hosts": "root and the netns fabric (tests/netns/)",
    "fabtrack counters watch --interval 5 --duration 600": "ten minutes of sampling (tests/counters/ run short watches)",
    "fabtrack counters serve": "a daemon (tests/counters/ run it on a port)",
    "fabtrack counters verbs": "an HCA and libibverbs devices",
    "fabtrack counters ethtool ens1f0np0": "a RoCE netdev of that name",
    "FABTRACK_PUSHGATEWAY_USER=fabtrack": "a Pushgateway (tests/cli/pushgateway_test.sh runs one)",
    "fabtrack analyze --cluster prod --pushgateway": "a Pushgateway (tests/cli/pushgateway_test.sh)",
    "cmake -S . -B build": "the build this test runs in",
    "cd build && ctest": "the suite this test runs in",
    "scripts/sanitize.sh": "a second, sanitizer build (CI runs it apart)",
    "scripts/fuzz.sh": "a clang build and minutes of fuzzing",
    "clang-format -i": "rewrites the sources",
    "scripts/ibsim-fat-tree.py": "the simulated subnet's set-up (tests/subnet/ibsim_scan_test.py runs it)",
    "mkfifo console": "the simulated subnet's set-up (tests/subnet/ibsim_scan_test.py runs it)",
    "IBSIM_SOCKNAME=try": "a simulated subnet: ibsim and opensm (tests/subnet/ibsim_scan_test.py)",
    "echo 'PerformanceSet": "ibsim's console (tests/subnet/ibsim_scan_test.py injects faults so)",
    "echo 'Unlink": "ibsim's console (tests/subnet/ibsim_scan_test.py injects faults so)",
    "fabtrack ras status": "a running NCCL job's RAS thread (tests/cli/ras_status_test.py runs a stand-in)",
    "fabtrack ras watch": "a running NCCL job's RAS thread and its database (tests/cli/ras_watch_test.py runs a stand-in)",
    "/usr/local/sbin/fabtrack-ras-watchdog.sh": "a Slurm job's batch script, Prolog or Epilog (tests/nightly/slurm_ras_watchdog_test.sh runs these lines under a real Slurm)",
    "cmake --build build && (cd build && cpack -G DEB)": "the package's build (tests/package/package_deb_test.sh runs cpack)",
    "sudo apt install ./build/fabtrack_0.1.0_amd64.deb": "installs system-wide (tests/package/package_deb_test.sh installs and removes it)",
    "sudo systemctl enable --now fabtrack-db": "systemd as init (tests/package/package_deb_test.sh verifies the units)",
    "sudo systemctl enable --now fabtrack-exporter": "systemd as init (tests/package/package_deb_test.sh verifies the units)",
    "sudo cp /usr/share/doc/fabtrack/examples/nightly.conf /etc/fabtrack/nightly.conf": "writes /etc (the package test checks the example)",
    "sudo systemctl enable --now fabtrack-nightly.timer": "systemd as init (tests/package/package_deb_test.sh verifies the units)",
    "man fabtrack": "the installed package's man page (tests/package/package_deb_test.sh checks its sections)",
}

# README headings whose first ```json block after them documents what a
# command run here prints: (heading, fabtrack arguments, keys printed only
# sometimes, so either side may lack them).
DOCUMENTED_JSON = [
    ("### `fabtrack parse ",
     ["parse", "--format", "json", "tests/fixtures/cli/allreduce_2node_ib.txt"],
     {"dropped"}),
]

failures = []


def fail(message):
    failures.append(message)
    print("FAIL " + message)


def shell_blocks(readme):
    """Command lines of the ```sh / ```bash / ``` blocks, continuations joined,
    comments and blank lines dropped, with their README line numbers."""
    commands, lang, acc, start = [], None, "", 0
    for number, line in enumerate(readme.split("\n"), 1):
        if line.startswith("```"):
            lang = line[3:].strip() if lang is None else None
            continue
        if lang not in ("sh", "bash", ""):
            continue
        text = line.strip()
        if not acc:
            start = number
        acc = (acc + " " + text) if acc else text
        if acc.endswith("\\"):
            acc = acc[:-1].rstrip()
            continue
        if acc and not acc.startswith("#"):
            commands.append((start, acc))
        acc = ""
    return commands


def without_comment(command):
    return re.sub(r"\s+#\s.*$", "", command).strip()


def without_brackets(command):
    """`fabtrack db start [--data-dir DIR]` as one would type it bare."""
    return re.sub(r"\s*\[[^\]]*\]", "", command).strip()


def fabtrack_invocations(text):
    """(subcommand words, options) of each `fabtrack` call in a command line."""
    calls = []
    for m in re.finditer(r"(?:^|[\s/;|&(])fabtrack(?:\s+([^|;&`]*))?", text):
        try:
            # A quoted argument is one word: --mpirun "netns-fabric.sh mpirun --prefix ft --".
            words = shlex.split(m.group(1) or "", comments=True)
        except ValueError:
            words = (m.group(1) or "").split()
        sub = []
        for w in words:
            if re.fullmatch(r"[a-z][a-z-]*", w) and len(sub) < 2:
                sub.append(w)
            else:
                break
        options = set()
        for w in words:
            if w == "--":
                break  # the benchmark's own flags follow
            mo = re.match(r"\[?(--[a-z][a-z0-9-]*)", w)
            if mo:
                options.add(mo.group(1))
        calls.append((sub, options))
    return calls


help_cache = {}


def help_text(fabtrack, words):
    key = tuple(words)
    if key not in help_cache:
        r = subprocess.run([fabtrack] + list(words) + ["--help"], capture_output=True, text=True)
        help_cache[key] = (r.returncode, r.stdout + r.stderr)
    return help_cache[key]


def check_options(fabtrack, where, text):
    for sub, options in fabtrack_invocations(text):
        if not sub:
            continue
        # The longest subcommand path --help accepts (db start, counters watch).
        for n in range(len(sub), 0, -1):
            code, out = help_text(fabtrack, sub[:n])
            if code == 0 and ("Usage" in out or "Options" in out):
                break
        else:
            fail("%s: `fabtrack %s` is not a command" % (where, " ".join(sub)))
            continue
        for option in sorted(options):
            if not re.search(re.escape(option) + r"(?![a-z0-9-])", out):
                fail("%s: `fabtrack %s` has no option %s" % (where, " ".join(sub[:n]), option))


def kind(value):
    return "an array" if isinstance(value, list) else "an object" if isinstance(value, dict) else "a value"


def shape_differences(documented, printed, path, optional):
    """Where the README's example and the printed JSON differ in shape."""
    if documented is None or printed is None:
        return []
    if kind(documented) != kind(printed):
        return ["%s: the README shows %s, the command prints %s" %
                (path, kind(documented), kind(printed))]
    problems = []
    if isinstance(documented, dict):
        for key in sorted(set(documented) - set(printed) - optional):
            problems.append("%s.%s: in the README's example, not printed" % (path, key))
        for key in sorted(set(printed) - set(documented) - optional):
            problems.append("%s.%s: printed, not in the README's example" % (path, key))
        for key in sorted(set(documented) & set(printed)):
            problems += shape_differences(documented[key], printed[key], path + "." + key, optional)
    elif isinstance(documented, list) and documented and printed:
        problems += shape_differences(documented[0], printed[0], path + "[0]", optional)
    return problems


def check_documented_json(root, fabtrack, readme, env):
    for heading, args, optional in DOCUMENTED_JSON:
        at = readme.find(heading)
        start = readme.find("```json\n", at)
        if at < 0 or start < 0:
            fail("README.md: no ```json example after %r" % heading)
            continue
        start += len("```json\n")
        number = readme.count("\n", 0, start) + 1
        documented = json.loads(readme[start:readme.index("```", start)])
        r = subprocess.run([fabtrack] + args, cwd=root, env=env, capture_output=True, text=True)
        try:
            printed = json.loads(r.stdout)
        except ValueError as e:
            fail("README.md:%d: `fabtrack %s` printed no JSON (%s): %s" %
                 (number, " ".join(args), e, r.stderr[-500:]))
            continue
        for problem in shape_differences(documented, printed, "$", optional):
            fail("README.md:%d: `fabtrack %s`: %s" % (number, " ".join(args), problem))


def main():
    root, fabtrack = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    readme = open(os.path.join(root, "README.md")).read()
    bin_dir = tempfile.mkdtemp(prefix="readme-test-")
    # Run as root, `fabtrack db start` runs PostgreSQL as its own user, which
    # must reach the data directory below.
    os.chmod(bin_dir, 0o755)
    # `fabtrack` as the README types it: the build's binary first on PATH.
    os.symlink(fabtrack, os.path.join(bin_dir, "fabtrack"))
    env = dict(os.environ)
    env["PATH"] = bin_dir + os.pathsep + env["PATH"]
    env["FABTRACK_DATA_DIR"] = os.path.join(bin_dir, "postgres")
    env["FABTRACK_SPOOL_DIR"] = os.path.join(bin_dir, "spool")
    for key in ("FABTRACK_DB", "PGHOST", "PGDATABASE", "PGUSER", "PGPORT"):
        env.pop(key, None)

    # 1. Options of every fabtrack call, fenced and inline.
    checked = 0
    for number, line in enumerate(readme.split("\n"), 1):
        for span in re.findall(r"`([^`]*fabtrack [a-z][^`]*)`", line):
            check_options(fabtrack, "README.md:%d" % number, span)
            checked += 1
    commands = shell_blocks(readme)
    for number, command in commands:
        check_options(fabtrack, "README.md:%d" % number, without_comment(command))

    # 3. Documented output shapes (no database needed).
    check_documented_json(root, fabtrack, readme, env)

    # 2. Each shell-block line run here or excused.
    ran = 0
    try:
        for number, command in commands:
            bare = without_brackets(without_comment(command))
            if bare in RUN_HERE:
                expected = RUN_HERE[bare]
                r = subprocess.run(bare, shell=True, cwd=root, env=env, capture_output=True,
                                   text=True, timeout=300)
                ran += 1
                status = "ok  " if r.returncode == expected else "FAIL"
                print("%s README.md:%d: %s (exit %d)" % (status, number, bare, r.returncode))
                if r.returncode != expected:
                    fail("README.md:%d: `%s` exited %d, expected %d:\n%s%s" %
                         (number, bare, r.returncode, expected, r.stdout[-1500:], r.stderr[-1500:]))
                continue
            if any(bare.startswith(prefix) for prefix in CANNOT_RUN_HERE):
                continue
            fail("README.md:%d: `%s` is neither run by this test nor listed with why it "
                 "cannot run here (tests/docs/readme_test.py)" % (number, bare))
        missing = set(RUN_HERE) - {without_brackets(without_comment(c)) for _, c in commands}
        for command in sorted(missing):
            fail("`%s` is run by this test but no longer in the README" % command)
    finally:
        subprocess.run([fabtrack, "db", "stop"], env=env, capture_output=True)
        subprocess.run(["rm", "-rf", bin_dir])
    print("README: %d inline fabtrack command(s) and %d block line(s) checked against --help; "
          "%d run here" % (checked, len(commands), ran))
    if failures:
        print("%d failure(s)" % len(failures))
        sys.exit(1)


if __name__ == "__main__":
    main()
