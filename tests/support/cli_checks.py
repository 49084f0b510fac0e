"""What the CLI tests written in python share: named checks that print
"ok"/"FAIL" and keep the failures (with the process's exit code and output
tails when one is given), psql, and a fresh migrated database of the suite's
server (ctest's 'postgres' fixture, FABTRACK_TEST_DB)."""
import contextlib
import os
import subprocess
import sys
import uuid

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


@contextlib.contextmanager
def migrated_database(fabtrack, prefix):
    """A database of its own on the suite's server, migrated by `fabtrack db
    migrate` (a checked step), dropped afterwards; yields its conninfo."""
    base = os.environ.get("FABTRACK_TEST_DB", "")
    if not base:
        print("FAIL FABTRACK_TEST_DB is not set: run through ctest (fixture 'postgres')")
        sys.exit(1)
    name = prefix + uuid.uuid4().hex[:12]
    psql(base, "CREATE DATABASE %s" % name)
    try:
        db = base + " dbname=" + name
        m = subprocess.run([fabtrack, "db", "migrate", "--db", db], capture_output=True, text=True,
                           timeout=120)
        check("database migrated", m.returncode == 0, m)
        yield db
    finally:
        psql(base, "DROP DATABASE IF EXISTS %s WITH (FORCE)" % name)
