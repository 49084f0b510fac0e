"""What the CLI tests written in python share: named checks that print
"ok"/"FAIL" and keep the failures (with the process's exit code and output
tails when one is given), and psql against the suite's database."""
import subprocess

failures = []


def check(name, cond, p=None):
    if cond:
        print("ok   " + name)
    else:
        failures.append(name)
        print("FAIL " + name)
        if p is not None:
            print("  rc=%s\n  stdout=%s\n  stderr=%s" % (p.returncode, p.stdout[-3000:],
                                                      p.stderr[-3000:]))


def psql(conninfo, sql):
    out = subprocess.run(["psql", "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", conninfo, "-c", sql],
                         capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        raise RuntimeError("psql: %s" % out.stderr)
    return out.stdout.strip()
