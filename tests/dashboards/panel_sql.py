#!/usr/bin/env python3
"""Runs the dashboards' SQL the way Grafana runs it, against a real database.

Grafana sends a panel's rawSql through three steps before PostgreSQL sees it;
this file reproduces each one from Grafana's source (10.x/11.x):
  1. the browser replaces template variables (scenes' sceneInterpolator with
     the SQL data source's interpolateVariable for unformatted variables:
     public/app/features/plugins/sql/datasource/SqlDatasource.ts, and the
     format registry for ${var:csv}, ${var:sqlstring}, ...), and the scoped
     variables $__interval / $__interval_ms (rangeutil.calculateInterval);
  2. the backend's global substitutions (sqleng.Interpolate: $__interval_ms,
     $__interval, $__unixEpochFrom(), $__unixEpochTo());
  3. the PostgreSQL macro engine (pkg/tsdb/grafana-postgresql-datasource/
     macros.go: $__timeFilter, $__timeGroup(Alias), $__unixEpoch*, ...,
     including its pre-5.3 quirk that turns `$__timeGroup(...),` into an alias).
Then it checks what Grafana would check on the result (sqleng processFrame:
a "time" column for time series, numeric value columns, long frames sorted by
time) plus what each panel type needs, and what tests/dashboards/
expectations.json says each panel must return for the test's data.

Python 3 standard library only; the database is reached through psql.

Usage:
  panel_sql.py self-test
  panel_sql.py structure DASHBOARD.json...
  panel_sql.py provisioning DATASOURCE.yaml DASHBOARDS_PROVIDER.yaml
  panel_sql.py panels --db CONNINFO --expectations FILE --datasource FILE DASHBOARD.json...
  panel_sql.py alerting --db CONNINFO --expectations FILE RULES.yaml
"""

import argparse
import csv
import io
import json
import math
import os
import re
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from decimal import Decimal

DATASOURCE_TYPE = "grafana-postgresql-datasource"
DATASOURCE_UID = "fabtrack-pg"
# Grafana 10.0 (38) to 11.x (41); all dashboards must agree.
SCHEMA_VERSIONS = range(38, 42)
# Tables that grow with history: a panel must reach them through an index.
GROWING_TABLES = ("runs", "run_results", "latency_samples", "rank_timings", "link_probes",
                  "run_net_devices", "transport_observations", "run_port_deltas", "findings",
                  "port_counter_samples", "run_ranks", "inspector_jobs", "inspector_collectives",
                  "locate_verdicts", "locate_suspects", "locate_verdict_runs", "ras_snapshots",
                  "ras_job_verdicts", "ras_events")
NUMERIC_TYPES = ("smallint", "integer", "bigint", "real", "double precision", "numeric")
TIME_TYPES = ("timestamp with time zone", "timestamp without time zone", "date")
NULL = object()  # a NULL cell as psql prints it with -P null=...
NULL_TEXT = "<<NULL>>"
SEPARATOR = "<<fabtrack-panel-sql>>"


class Failure(Exception):
    pass


# --------------------------------------------------------------------------
# Go formatting as the Grafana backend does it

def go_rfc3339nano(t):
    """time.Time.UTC().Format(time.RFC3339Nano): fraction without trailing zeros."""
    t = t.astimezone(timezone.utc)
    out = t.strftime("%Y-%m-%dT%H:%M:%S")
    if t.microsecond:
        out += "." + ("%06d" % t.microsecond).rstrip("0")
    return out + "Z"


def go_float(v):
    """fmt's %v of a float64 (strconv 'g', shortest): the fewest digits that
    round-trip, in %e form when the exponent is < -4 or >= 6 (1036800 -> 1.0368e+06)."""
    if v == 0:
        return "0"
    sign, digits, exp = Decimal(repr(float(v))).normalize().as_tuple()
    ds = "".join(map(str, digits))
    nd = len(ds)
    dp = nd + exp  # position of the decimal point
    x = dp - 1
    s = "-" if sign else ""
    if x < -4 or x >= 6:
        mant = ds[0] + ("." + ds[1:] if nd > 1 else "")
        return "%s%se%s%02d" % (s, mant, "-" if x < 0 else "+", abs(x))
    if dp <= 0:
        return s + "0." + "0" * (-dp) + ds
    if dp >= nd:
        return s + ds + "0" * (dp - nd)
    return s + ds[:dp] + "." + ds[dp:]


_GO_DURATION_UNITS = {"ns": 1e-9, "us": 1e-6, "\u00b5s": 1e-6, "ms": 1e-3, "s": 1, "m": 60,
                      "h": 3600}


def go_parse_interval(text):
    """gtime.ParseInterval: N[dw] (calendar days) or a Go duration ("5m", "1h30m")."""
    m = re.fullmatch(r"(\d+)([dwMy])", text)
    if m:
        n, unit = int(m.group(1)), m.group(2)
        if unit in "My":
            raise Failure("interval %r: months and years depend on the calendar; not used" % text)
        return timedelta(days=n * (7 if unit == "w" else 1))
    if not re.fullmatch(r"(?:\d+(?:\.\d*)?(?:ns|us|\u00b5s|ms|s|m|h))+", text):
        raise Failure("error parsing interval %s" % text)
    seconds = 0.0
    for num, unit in re.findall(r"(\d+(?:\.\d*)?)(ns|us|\u00b5s|ms|s|m|h)", text):
        seconds += float(num) * _GO_DURATION_UNITS[unit]
    return timedelta(seconds=seconds)


def go_format_interval(d):
    """gtime.FormatInterval."""
    ms = int(d / timedelta(milliseconds=1))
    for unit, size in (("y", 365 * 86400000), ("d", 86400000), ("h", 3600000), ("m", 60000),
                       ("s", 1000), ("ms", 1)):
        if ms >= size:
            return "%d%s" % (ms // size, unit)
    return "1ms"


# --------------------------------------------------------------------------
# $__interval as the browser computes it (rangeutil.calculateInterval)

_ROUND_STEPS = [
    (10, 1), (15, 10), (35, 20), (75, 50), (150, 100), (350, 200), (750, 500), (1500, 1000),
    (3500, 2000), (7500, 5000), (12500, 10000), (17500, 15000), (25000, 20000), (45000, 30000),
    (90000, 60000), (210000, 120000), (450000, 300000), (750000, 600000), (1050000, 900000),
    (1500000, 1200000), (2700000, 1800000), (5400000, 3600000), (9000000, 7200000),
    (16200000, 10800000), (32400000, 21600000), (86400000, 43200000), (604800000, 86400000),
    (1814400000, 604800000), (3628800000, 2592000000)]


def round_interval(ms):
    for bound, value in _ROUND_STEPS:
        if ms < bound:
            return value
    return 31536000000


def interval_to_ms(text):
    m = re.fullmatch(r"(\d+)(ms|s|m|h|d|w|M|y)?", text.strip())
    if not m:
        raise Failure("bad interval %r" % text)
    unit = {"ms": 0.001, "s": 1, None: 1, "m": 60, "h": 3600, "d": 86400, "w": 604800,
            "M": 2592000, "y": 31536000}[m.group(2)]
    return int(m.group(1)) * unit * 1000


def seconds_to_hms(seconds):
    """rangeutil.secondsToHms: the largest unit only."""
    rest = seconds % 31536000
    for n, unit in ((math.floor(seconds / 31536000), "y"), (math.floor(rest / 86400), "d"),
                    (math.floor(rest % 86400 / 3600), "h"), (math.floor(rest % 3600 / 60), "m"),
                    (math.floor(rest % 60), "s")):
        if n:
            return "%d%s" % (n, unit)
    ms = math.floor(seconds * 1000)
    return "%dms" % ms if ms else "less than a millisecond"


def calculate_interval(t_from, t_to, resolution, low_limit=None):
    span_ms = (t_to - t_from) / timedelta(milliseconds=1)
    interval_ms = round_interval(span_ms / resolution)
    if low_limit:
        interval_ms = max(interval_ms, interval_to_ms(low_limit))
    return interval_ms, seconds_to_hms(interval_ms / 1000)


# --------------------------------------------------------------------------
# Step 1: template variables (browser)

VARIABLE_RE = re.compile(
    r"\$(\w+)|\[\[(\w+?)(?::(\w+))?\]\]|\$\{(\w+)(?:\.([^:^\}]+))?(?::([^\}]+))?\}")
ALL_VALUE = "$__all"


class Variable:
    """A dashboard variable with its current selection, as Grafana holds it."""

    def __init__(self, name, multi=False, include_all=False, all_value=None):
        self.name, self.multi, self.include_all = name, multi, include_all
        self.all_value = all_value
        self.options = []  # (text, value)
        self.value = ""    # str, list of str, or ALL_VALUE
        self.text = ""

    def is_all(self):
        return self.value == ALL_VALUE or self.value == [ALL_VALUE]


def quote_literal(value):
    """PostgresQueryModel.quoteLiteral."""
    return "'" + str(value).replace("'", "''") + "'"


def format_variable(var, fmt):
    if var.is_all():
        if var.all_value is not None and fmt not in ("text", "percentencode", "queryparam"):
            return var.all_value  # a custom all value goes in as it is, unescaped
        value = [v for _, v in var.options]
        text = "All"
    else:
        value, text = var.value, var.text
    if fmt is None:  # SqlDatasource.interpolateVariable
        if isinstance(value, str):
            if var.multi or var.include_all:
                return quote_literal(value)
            return value.replace("'", "''")
        return ",".join(quote_literal(v) for v in value)
    values = value if isinstance(value, list) else [value]
    if fmt == "sqlstring":
        return ",".join(quote_literal(v) for v in values)
    if fmt in ("csv", "raw"):
        return ",".join(values)
    if fmt == "pipe":
        return "|".join(values)
    if fmt == "singlequote":
        return ",".join("'" + v.replace("'", "\\'") + "'" for v in values)
    if fmt == "doublequote":
        return ",".join('"' + v.replace('"', '\\"') + '"' for v in values)
    if fmt == "json":
        return json.dumps(value, separators=(",", ":"))
    if fmt == "text":
        return text if isinstance(text, str) else " + ".join(text)
    raise Failure("variable format %r is not reproduced here; use sqlstring, csv or raw" % fmt)


def interpolate_variables(sql, variables, builtins):
    def replace(m):
        name = m.group(1) or m.group(2) or m.group(4)
        fmt = m.group(3) or m.group(6)
        if m.group(5):
            raise Failure("field paths (${%s.%s}) are not used in SQL" % (name, m.group(5)))
        if name in builtins:
            value = builtins[name]
            if callable(value):
                return value(fmt)
            return str(value)
        if name in variables:
            return format_variable(variables[name], fmt)
        return m.group(0)  # not a variable: a macro for the backend, or an unknown name
    return VARIABLE_RE.sub(replace, sql)


def time_builtins(t_from, t_to, interval_ms, interval_text):
    def epoch_ms(t):
        def fmt_date(fmt):
            ms = int(t.timestamp() * 1000)
            if fmt in (None, "date:ms", "raw"):
                return str(ms)
            if fmt == "date:seconds":
                return str(ms // 1000)
            if fmt in ("date", "date:iso"):
                return t.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + \
                    "%03dZ" % (ms % 1000)
            raise Failure("format %r of a time variable" % fmt)
        return fmt_date
    span = (t_to - t_from).total_seconds()
    return {"__interval": interval_text, "__interval_ms": str(interval_ms),
            "__from": epoch_ms(t_from), "__to": epoch_ms(t_to),
            "__range_s": str(int(span)), "__range_ms": str(int(span * 1000)),
            "__range": seconds_to_hms(span)}


# --------------------------------------------------------------------------
# Steps 2 and 3: the backend

def backend_global(sql, interval, t_from, t_to):
    """sqleng.Interpolate."""
    sql = sql.replace("$__interval_ms", str(int(interval / timedelta(milliseconds=1))))
    sql = sql.replace("$__interval", go_format_interval(interval))
    sql = sql.replace("$__unixEpochFrom()", str(math.floor(t_from.timestamp())))
    sql = sql.replace("$__unixEpochTo()", str(math.floor(t_to.timestamp())))
    return sql


MACRO_RE = re.compile(r"\$([_a-zA-Z0-9]+)\(([^\)]*)\)")


def _fill_mode(arg):
    if arg in ("NULL", "previous"):
        return
    try:
        float(arg)
    except ValueError:
        raise Failure("error parsing fill value %s" % arg)


def _macro(name, args, t_from, t_to):
    def need_column():
        if not args or args == [""]:
            raise Failure("missing time column argument for macro %s" % name)
    if name == "__time":
        need_column()
        return '%s AS "time"' % args[0]
    if name == "__timeEpoch":
        need_column()
        return 'extract(epoch from %s) as "time"' % args[0]
    if name == "__timeFilter":
        need_column()
        return "%s BETWEEN '%s' AND '%s'" % (args[0], go_rfc3339nano(t_from), go_rfc3339nano(t_to))
    if name == "__timeFrom":
        return "'%s'" % go_rfc3339nano(t_from)
    if name == "__timeTo":
        return "'%s'" % go_rfc3339nano(t_to)
    if name in ("__timeGroup", "__unixEpochGroup"):
        if len(args) < 2:
            raise Failure("macro %s needs time column and interval and optional fill value" % name)
        seconds = go_float(go_parse_interval(args[1].strip("'")).total_seconds())
        if len(args) == 3:
            _fill_mode(args[2])
        if name == "__timeGroup":
            return "floor(extract(epoch from %s)/%s)*%s" % (args[0], seconds, seconds)
        return "floor((%s)/%s)*%s" % (args[0], seconds, seconds)
    if name in ("__timeGroupAlias", "__unixEpochGroupAlias"):
        return _macro(name[:-len("Alias")], args, t_from, t_to) + ' AS "time"'
    if name == "__unixEpochFilter":
        need_column()
        return "%s >= %d AND %s <= %d" % (args[0], math.floor(t_from.timestamp()), args[0],
                                          math.floor(t_to.timestamp()))
    if name == "__unixEpochNanoFilter":
        need_column()
        return "%s >= %d AND %s <= %d" % (args[0], _nanos(t_from), args[0], _nanos(t_to))
    if name == "__unixEpochNanoFrom":
        return str(_nanos(t_from))
    if name == "__unixEpochNanoTo":
        return str(_nanos(t_to))
    raise Failure('unknown macro "%s"' % name)


def _nanos(t):
    delta = t.astimezone(timezone.utc) - datetime(1970, 1, 1, tzinfo=timezone.utc)
    return (delta.days * 86400 + delta.seconds) * 10**9 + delta.microseconds * 1000


def backend_macros(sql, t_from, t_to):
    """postgresMacroEngine.Interpolate (no TimescaleDB)."""
    out, last = [], 0
    for m in MACRO_RE.finditer(sql):
        name = m.group(1)
        if name == "__timeGroup":
            # Pre-5.3 compatibility: a ',' right after the first occurrence of
            # this exact call makes it $__timeGroupAlias.
            index = sql.find(m.group(0))
            if index >= 0 and len(sql) > index + len(m.group(0)) and \
                    sql[index + len(m.group(0))] == ",":
                name = "__timeGroupAlias"
        args = [a.strip(" ") for a in m.group(2).split(",")]
        out.append(sql[last:m.start()])
        out.append(_macro(name, args, t_from, t_to))
        last = m.end()
    out.append(sql[last:])
    return "".join(out)


LEFTOVER_RE = re.compile(r"\$\w|\$\{|\[\[\w")


class TimeContext:
    def __init__(self, t_from, t_to, interval_ms, interval_text):
        self.t_from, self.t_to = t_from, t_to
        self.interval_ms, self.interval_text = interval_ms, interval_text


def expand(sql, variables, ctx):
    """Everything Grafana does to rawSql before PostgreSQL sees it."""
    sql = interpolate_variables(sql, variables, time_builtins(ctx.t_from, ctx.t_to, ctx.interval_ms,
                                                              ctx.interval_text))
    sql = backend_global(sql, timedelta(milliseconds=ctx.interval_ms), ctx.t_from, ctx.t_to)
    sql = backend_macros(sql, ctx.t_from, ctx.t_to)
    left = LEFTOVER_RE.search(sql)
    if left:
        raise Failure("left after expansion: %r in\n%s" %
                      (sql[left.start():left.start() + 30], sql))
    return sql


# --------------------------------------------------------------------------
# psql

class Database:
    """Panel queries go through one long-lived psql session (a process per
    query made the test's ~1000 queries spend most of their time starting psql
    and connecting); scalar() still runs its own psql."""

    def __init__(self, conninfo):
        self.conninfo = conninfo
        self.env = dict(os.environ, PGTZ="UTC", PGOPTIONS="-c statement_timeout=20000")
        self.session = None
        self.count = 0

    def _psql(self, args, stdin=None):
        p = subprocess.run(["psql", self.conninfo, "-X", "-q", "-v", "ON_ERROR_STOP=1"] + args,
                           input=stdin, capture_output=True, text=True, env=self.env)
        if p.returncode != 0:
            raise Failure("psql: %s" % p.stderr.strip())
        return p.stdout

    def _session(self):
        # Errors must not end the session (ON_ERROR_STOP stays off): they come
        # back on the same pipe as the results (stderr merged), in order, since
        # stdbuf makes psql's stdout line-buffered; each script ends with its
        # own marker line, so a reply is read up to that marker.
        if self.session is None or self.session.poll() is not None:
            self.session = subprocess.Popen(
                ["stdbuf", "-oL", "psql", self.conninfo, "-X", "-q", "--csv"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                text=True, env=self.env, bufsize=1)
            self.session.stdin.write("\\pset null '%s'\n" % NULL_TEXT)
        return self.session

    def _run_script(self, script):
        session = self._session()
        self.count += 1
        marker = "<<fabtrack-panel-sql-end-%d>>" % self.count
        session.stdin.write(script + "\n\\echo '%s'\n" % marker)
        session.stdin.flush()
        lines = []
        while True:
            line = session.stdout.readline()
            if not line:
                raise Failure("psql ended: %s" % "".join(lines[-20:]).strip())
            if line.rstrip("\n") == marker:
                break
            lines.append(line)
        errors = [i for i, l in enumerate(lines) if re.match(r"(psql:[^:]*:\d+: )?(ERROR|FATAL):  ", l)]
        if errors:
            raise Failure("psql: %s" % "".join(lines[errors[0]:errors[0] + 4]).strip())
        return "".join(lines)

    def close(self):
        if self.session is not None:
            self.session.stdin.close()
            self.session.wait(timeout=30)
            self.session = None

    def query(self, sql):
        """The column names and types (\\gdesc, also when no row comes back),
        the rows (NULL told apart from ''), and the growing tables the planner
        could only read whole even with sequential scans discouraged (a panel
        that cannot use an index)."""
        body = sql.rstrip().rstrip(";")
        script = "\n".join([
            "RESET enable_seqscan;",
            body, "\\gdesc", "\\echo '%s'" % SEPARATOR,
            body + ";", "\\echo '%s'" % SEPARATOR,
            "SET enable_seqscan = off;", "EXPLAIN (FORMAT JSON) " + body + ";"])
        parts = self._run_script(script).split(SEPARATOR + "\n")
        if len(parts) != 3:
            raise Failure("unexpected psql output: %r" % parts[0][:200])
        desc = list(csv.reader(io.StringIO(parts[0])))
        if not desc or desc[0] != ["Column", "Type"]:
            raise Failure("unexpected \\gdesc output: %r" % parts[0][:200])
        columns = [(r[0], r[1]) for r in desc[1:]]
        table = list(csv.reader(io.StringIO(parts[1])))
        rows = [[NULL if c == NULL_TEXT else c for c in r] for r in table[1:]]
        plan = json.loads(list(csv.reader(io.StringIO(parts[2])))[1][0])
        scans = []

        def walk(node):
            if node.get("Node Type") == "Seq Scan":
                rel = node.get("Relation Name", "")
                if any(rel == t or rel.startswith(t + "_") for t in GROWING_TABLES):
                    scans.append(rel)
            for child in node.get("Plans", []):
                walk(child)
        walk(plan[0]["Plan"])
        return columns, rows, sorted(set(scans))

    def scalar(self, sql):
        out = self._psql(["-At", "-c", sql])
        return out.strip()


# --------------------------------------------------------------------------
# What Grafana does with the result

def is_numeric(t):
    return t in NUMERIC_TYPES


def is_time(t):
    return t in TIME_TYPES


def is_string(t):
    # Anything Grafana's SQL frame reader does not map to number, time, bool or
    # JSON becomes a string field (text, varchar, name, arrays, ...).
    return not (is_numeric(t) or is_time(t) or t in ("boolean", "json", "jsonb"))


def parse_time(cell, t):
    if is_time(t):
        return datetime.fromisoformat(cell)
    return float(cell)


def check_frame(kind, columns, rows, where):
    """Raises Failure when Grafana would reject the result or the panel could not draw it.
    kind: time_series, table, annotation, variable."""
    names = [c for c, _ in columns]
    types = dict(columns)
    if len(set(names)) != len(names):
        raise Failure("%s: duplicate column names %s" % (where, names))
    for tcol in ("time", "timeend"):
        if tcol in types and not (is_time(types[tcol]) or is_numeric(types[tcol])):
            raise Failure("%s: column %s is %s; Grafana converts it to a time" %
                          (where, tcol, types[tcol]))
    if kind == "variable":
        if "__text" in names or "__value" in names:
            if not ("__text" in names and "__value" in names):
                raise Failure("%s: __text and __value come together" % where)
        elif len(names) != 1:
            raise Failure("%s: a variable query returns one column (or __text and __value), got %s"
                          % (where, names))
        for r in rows:
            if any(c is NULL for c in r):
                raise Failure("%s: NULL option %r" % (where, r))
        return
    if kind == "annotation":
        if "time" not in names:
            raise Failure("%s: annotations need a time column" % where)
        for c in ("text", "tags"):
            if c in types and not is_string(types[c]):
                raise Failure("%s: annotation %s is %s" % (where, c, types[c]))
        return
    if kind != "time_series":
        return
    if "time" not in names:
        raise Failure("%s: time series without a time column: %s" % (where, names))
    values, labels = [], []
    for name, t in columns:
        if name == "time":
            continue
        if is_numeric(t):
            values.append(name)
        elif is_string(t) and not t.endswith("[]"):
            labels.append(name)
        else:
            raise Failure("%s: column %s (%s) is neither a number nor a label" % (where, name, t))
    if not values:
        raise Failure("%s: no numeric value column in %s" % (where, names))
    ti = names.index("time")
    label_idx = [names.index(n) for n in labels]
    previous, seen = None, set()
    for r in rows:
        if r[ti] is NULL:
            raise Failure("%s: NULL time" % where)
        t = parse_time(r[ti], types["time"])
        if previous is not None and t < previous:
            raise Failure("%s: rows not sorted by time (%s after %s)" % (where, t, previous))
        previous = t
        key = (t,) + tuple(r[i] for i in label_idx)
        if key in seen:
            raise Failure("%s: two rows for one time and series %r" % (where, key))
        seen.add(key)


def check_panel_fields(panel, columns, rows, where):
    """What the visualisation needs beyond Grafana's frame rules."""
    names = [c for c, _ in columns]
    types = dict(columns)
    ptype = panel.get("type")
    numeric = [n for n, t in columns if is_numeric(t)]
    if ptype in ("stat", "gauge", "bargauge", "barchart", "trend", "xychart") and not numeric:
        raise Failure("%s: a %s panel needs a numeric column" % (where, ptype))
    x = panel.get("options", {}).get("xField")
    if ptype in ("trend", "barchart") and x:
        if x not in names:
            raise Failure("%s: xField %s is not a column (%s)" % (where, x, names))
        if ptype == "trend":
            if not is_numeric(types[x]):
                raise Failure("%s: trend x %s must be numeric" % (where, x))
            xi = names.index(x)
            xs = [float(r[xi]) for r in rows if r[xi] is not NULL]
            if xs != sorted(xs) or len(xs) != len(rows):
                raise Failure("%s: trend x %s must be non-NULL and ascending" % (where, x))


# --------------------------------------------------------------------------
# A small YAML reader (the subset our provisioning files use: block mappings
# and sequences, plain/quoted scalars, `|`/`|-` blocks, [a, b] and {})

class Yaml:
    def __init__(self, text, name):
        self.lines = text.split("\n")
        self.name = name
        self.i = 0

    def error(self, msg):
        raise Failure("%s:%d: %s" % (self.name, self.i + 1, msg))

    def _next_content(self):
        while self.i < len(self.lines):
            s = self.lines[self.i]
            if s.strip() == "" or s.lstrip().startswith("#") or s.strip() in ("---",):
                self.i += 1
                continue
            if "\t" in s[:len(s) - len(s.lstrip())]:
                self.error("tab in indentation")
            return len(s) - len(s.lstrip()), s.strip()
        return None

    def parse(self):
        first = self._next_content()
        if first is None:
            return None
        value = self._node(first[0])
        if self._next_content() is not None:
            self.error("unexpected content")
        return value

    def _node(self, indent):
        cur = self._next_content()
        if cur is None or cur[0] < indent:
            return None
        if cur[1] == "-" or cur[1].startswith("- "):
            return self._seq(cur[0])
        return self._map(cur[0])

    def _seq(self, indent):
        out = []
        while True:
            cur = self._next_content()
            if cur is None or cur[0] != indent or not (cur[1] == "-" or cur[1].startswith("- ")):
                if cur is not None and cur[0] > indent:
                    self.error("bad indentation")
                return out
            item = cur[1][1:].lstrip()
            if not item:
                self.i += 1
                out.append(self._node(indent + 1))
            elif self._split_key(item) is not None:
                # "- key: value" opens a mapping indented at the item's column
                col = indent + (len(cur[1]) - len(item))
                self.lines[self.i] = " " * col + item
                out.append(self._map(col))
            else:
                self.i += 1
                out.append(self._scalar(item))

    @staticmethod
    def _split_key(s):
        quote = None
        for k, c in enumerate(s):
            if quote:
                if c == quote:
                    quote = None
            elif c in "'\"" and k == 0:
                quote = c
            elif c == ":" and (k + 1 == len(s) or s[k + 1] == " "):
                key = s[:k].strip()
                if key[:1] in "'\"":
                    key = key[1:-1]
                return key, s[k + 1:].strip()
            elif c == "#" and k > 0 and s[k - 1] == " ":
                return None
        return None

    def _map(self, indent):
        out = {}
        while True:
            cur = self._next_content()
            if cur is None or cur[0] < indent:
                return out
            if cur[0] > indent:
                self.error("bad indentation")
            if cur[1] == "-" or cur[1].startswith("- "):
                return out
            kv = self._split_key(cur[1])
            if kv is None:
                self.error("expected key: value")
            key, rest = kv
            if key in out:
                self.error("duplicate key %s" % key)
            self.i += 1
            rest_nc = self._strip_comment(rest)
            if rest_nc in ("|", "|-", "|+"):
                out[key] = self._block(indent, rest_nc)
            elif rest_nc.startswith(">"):
                self.error("folded scalars are not supported here")
            elif rest_nc == "":
                nxt = self._next_content()
                seq_next = nxt is not None and (nxt[1] == "-" or nxt[1].startswith("- "))
                if seq_next and nxt[0] == indent:
                    out[key] = self._seq(indent)
                elif nxt is not None and nxt[0] > indent:
                    out[key] = self._node(nxt[0])
                else:
                    out[key] = None
            else:
                out[key] = self._scalar(rest)

    def _block(self, parent_indent, style):
        lines, block_indent = [], None
        while self.i < len(self.lines):
            s = self.lines[self.i]
            if s.strip() == "":
                lines.append("")
                self.i += 1
                continue
            ind = len(s) - len(s.lstrip())
            if ind <= parent_indent:
                break
            if block_indent is None:
                block_indent = ind
            if ind < block_indent:
                self.error("block scalar line less indented than its first line")
            lines.append(s[block_indent:])
            self.i += 1
        while lines and lines[-1] == "":
            lines.pop()
        text = "\n".join(lines)
        return text if style == "|-" else text + "\n"

    @staticmethod
    def _strip_comment(s):
        quote = None
        for k, c in enumerate(s):
            if quote:
                if c == quote:
                    quote = None
            elif c in "'\"":
                quote = c
            elif c == "#" and (k == 0 or s[k - 1] == " "):
                return s[:k].rstrip()
        return s.strip()

    def _scalar(self, s):
        s = self._strip_comment(s)
        if s.startswith("'"):
            if not s.endswith("'") or len(s) < 2:
                self.error("unterminated string")
            return s[1:-1].replace("''", "'")
        if s.startswith('"'):
            if not s.endswith('"') or len(s) < 2:
                self.error("unterminated string")
            return json.loads(s)
        if s == "{}":
            return {}
        if s.startswith("["):
            if not s.endswith("]"):
                self.error("flow sequences stay on one line")
            inner = s[1:-1].strip()
            return [self._scalar(x.strip()) for x in inner.split(",")] if inner else []
        if s.startswith(("{", "&", "*", "!", "|", ">", "%", "@", "`")):
            self.error("unsupported YAML: %s" % s)
        if s in ("true", "True"):
            return True
        if s in ("false", "False"):
            return False
        if s in ("null", "~", ""):
            return None
        if re.fullmatch(r"[-+]?\d+", s):
            return int(s)
        if re.fullmatch(r"[-+]?(\d+\.\d*|\.\d+)([eE][-+]?\d+)?", s):
            return float(s)
        return s


def load_yaml(path):
    with open(path, encoding="utf-8") as f:
        return Yaml(f.read(), path).parse()


# --------------------------------------------------------------------------
# Structure of the dashboards

PANEL_TYPES = {"row", "timeseries", "table", "stat", "gauge", "bargauge", "barchart", "trend",
               "xychart", "state-timeline", "status-history", "text", "piechart", "heatmap",
               "histogram", "dashlist"}


def all_panels(dashboard):
    for p in dashboard.get("panels", []):
        yield p
        for q in p.get("panels", []):
            yield q


def datasource_refs(node, path="$"):
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "datasource":
                yield path + ".datasource", v
            yield from datasource_refs(v, path + "." + k)
    elif isinstance(node, list):
        for k, v in enumerate(node):
            yield from datasource_refs(v, "%s[%d]" % (path, k))


def check_sql_text(sql, where):
    if not sql or not sql.strip():
        raise Failure("%s: empty rawSql" % where)
    # Grafana 12 strips comments before expanding macros; earlier versions
    # expand macros and variables inside them. Either way they only mislead.
    stripped = re.sub(r"'(?:[^']|'')*'", "''", sql)
    if "--" in stripped or "/*" in stripped:
        raise Failure("%s: SQL comments in rawSql" % where)
    for m in MACRO_RE.finditer(sql):
        if "(" in m.group(2):
            raise Failure("%s: macro argument with parentheses: %s" % (where, m.group(0)))


def check_structure(paths):
    dashboards, problems = {}, []
    versions = set()
    for path in paths:
        with open(path, encoding="utf-8") as f:
            d = json.load(f)
        where = os.path.basename(path)
        try:
            _check_dashboard(d, where)
        except Failure as e:
            problems.append(str(e))
        versions.add(d.get("schemaVersion"))
        if d.get("uid") in dashboards:
            problems.append("%s: uid %s used twice" % (where, d.get("uid")))
        dashboards[d.get("uid")] = d
    if len(versions) > 1:
        problems.append("dashboards disagree on schemaVersion: %s" % sorted(map(str, versions)))
    # links between dashboards must point at dashboards that exist
    for uid, d in dashboards.items():
        for link in re.findall(r"/d/([A-Za-z0-9_-]+)", json.dumps(d)):
            if link not in dashboards:
                problems.append("%s: link to unknown dashboard %s" % (uid, link))
    return dashboards, problems


def _check_dashboard(d, where):
    problems = []

    def bad(msg):
        problems.append("%s: %s" % (where, msg))

    if d.get("schemaVersion") not in SCHEMA_VERSIONS:
        bad("schemaVersion %r is not Grafana 10/11 (38..41)" % d.get("schemaVersion"))
    uid = d.get("uid")
    if not isinstance(uid, str) or not re.fullmatch(r"[A-Za-z0-9_-]{1,40}", uid):
        bad("uid %r" % uid)
    if d.get("id") is not None:
        bad("a provisioned dashboard has id null")
    if not d.get("title"):
        bad("no title")
    for path, ref in datasource_refs(d):
        if not (isinstance(ref, dict) and ref.get("uid") == DATASOURCE_UID and
                ref.get("type") == DATASOURCE_TYPE):
            bad("%s is %r, not {type: %s, uid: %s}" % (path, ref, DATASOURCE_TYPE, DATASOURCE_UID))
    ids, titles = set(), set()
    for p in all_panels(d):
        pid, title = p.get("id"), p.get("title")
        if not isinstance(pid, int):
            bad("panel %r without an integer id" % title)
        elif pid in ids:
            bad("panel id %d used twice" % pid)
        ids.add(pid)
        if p.get("type") not in PANEL_TYPES:
            bad("panel %r: type %r" % (title, p.get("type")))
        if not title:
            bad("panel %s without a title" % pid)
        elif title in titles:
            bad("panel title %r used twice" % title)
        titles.add(title)
        g = p.get("gridPos", {})
        if not all(isinstance(g.get(k), int) for k in "hwxy") or g["x"] + g["w"] > 24:
            bad("panel %r: gridPos %r" % (title, g))
        if p.get("type") == "row":
            continue
        targets = p.get("targets", [])
        if not targets:
            bad("panel %r has no query" % title)
        if "datasource" not in p:
            bad("panel %r has no datasource" % title)
        refs = set()
        for t in targets:
            w = "panel %r %s" % (title, t.get("refId"))
            if t.get("refId") in refs or not t.get("refId"):
                bad("%s: refId missing or repeated" % w)
            refs.add(t.get("refId"))
            if t.get("format") not in ("time_series", "table"):
                bad("%s: format %r" % (w, t.get("format")))
            if t.get("rawQuery") is not True or t.get("editorMode") != "code":
                bad("%s: not a raw SQL (code) query" % w)
            if "datasource" not in t:
                bad("%s: no datasource" % w)
            try:
                check_sql_text(t.get("rawSql"), w)
            except Failure as e:
                problems.append("%s: %s" % (where, e))
        if p.get("type") in ("stat", "gauge", "bargauge", "barchart", "trend", "table") and \
                any(t.get("format") != "table" for t in targets):
            bad("panel %r: a %s panel reads a table" % (title, p.get("type")))
    names = set()
    for v in d.get("templating", {}).get("list", []):
        name = v.get("name")
        if not name or name in names:
            bad("variable %r missing or repeated" % name)
        names.add(name)
        if v.get("type") == "query":
            if v.get("refresh") not in (1, 2):
                bad("variable %s: refresh %r (1 on load, 2 on time change)" %
                    (name, v.get("refresh")))
            q = v.get("query")
            sql = q.get("rawSql") if isinstance(q, dict) else q
            try:
                check_sql_text(sql, "variable %s" % name)
            except Failure as e:
                problems.append("%s: %s" % (where, e))
            if v.get("definition") != sql:
                bad("variable %s: definition differs from its query" % name)
        elif v.get("type") != "custom":
            bad("variable %s: type %r" % (name, v.get("type")))
    for a in d.get("annotations", {}).get("list", []):
        t = a.get("target", {})
        if t.get("format") != "table":
            bad("annotation %r: format %r" % (a.get("name"), t.get("format")))
        try:
            check_sql_text(t.get("rawSql"), "annotation %r" % a.get("name"))
        except Failure as e:
            problems.append("%s: %s" % (where, e))
    if problems:
        raise Failure("\n".join(problems))


# --------------------------------------------------------------------------
# Running the dashboards

def load_variables(d):
    out = []
    for v in d.get("templating", {}).get("list", []):
        var = Variable(v["name"], bool(v.get("multi")), bool(v.get("includeAll")),
                       v.get("allValue") or None)
        q = v.get("query")
        var.sql = (q.get("rawSql") if isinstance(q, dict) else q) if v["type"] == "query" else None
        var.custom = v.get("query") if v["type"] == "custom" else None
        var.current = v.get("current") or {}
        out.append(var)
    return out


def resolve_pin(db, pin):
    if isinstance(pin, dict) and "sql" in pin:
        value = db.scalar(pin["sql"])
        if value == "":
            raise Failure("pin %s returned nothing" % pin["sql"])
        return value
    return pin


def resolve_variables(db, d, ctx, pins, mode, where, strict_pins=True):
    """Runs the variable queries in order, as Grafana does, and picks each value:
    pinned, else the saved current value when it is an option or All, else the first.
    A pinned value must be an option when strict_pins; otherwise it is kept as a
    value from the URL would be (the empty time range offers no runs to pick from)."""
    variables, results = {}, []
    for var in load_variables(d):
        if var.custom is not None:
            var.options = [(o.strip(), o.strip()) for o in var.custom.split(",") if o.strip()]
        else:
            sql = expand(var.sql, variables, ctx)
            columns, rows, scans = db.query(sql)
            if scans:
                raise Failure("%s variable %s: reads %s without an index:\n%s" %
                              (where, var.name, ", ".join(scans), sql))
            check_frame("variable", columns, rows, "%s variable %s" % (where, var.name))
            names = [c for c, _ in columns]
            if "__text" in names:
                ti, vi = names.index("__text"), names.index("__value")
                opts = [(r[ti], r[vi]) for r in rows]
            else:
                opts = [(r[0], r[0]) for r in rows]
            seen, var.options = set(), []
            for text, value in opts:  # ResponseParser: unique by text
                if text not in seen:
                    seen.add(text)
                    var.options.append((text, value))
            results.append((var.name, sql, columns, rows))
        values = [v for _, v in var.options]
        if var.name in pins:
            want = resolve_pin(db, pins[var.name])
            wants = want if isinstance(want, list) else [want]
            for w in wants:
                if strict_pins and w not in values:
                    raise Failure("%s: pinned %s=%r is not among its options %r" %
                                  (where, var.name, w, values))
            var.value = wants if var.multi else wants[0]
        elif mode == "first" and var.multi and values:
            var.value = [values[0]]
        else:
            cur = var.current.get("value")
            curs = cur if isinstance(cur, list) else [cur]
            if var.include_all and (ALL_VALUE in curs or not values):
                var.value = ALL_VALUE
            elif cur is not None and all(c in values for c in curs) and curs:
                var.value = curs if var.multi else curs[0]
            elif values:
                var.value = [values[0]] if var.multi else values[0]
            else:
                var.value = [] if var.multi else ""
        texts = dict((v, t) for t, v in var.options)
        var.text = [texts.get(v, v) for v in var.value] if isinstance(var.value, list) else \
            texts.get(var.value, var.value)
        variables[var.name] = var
    return variables, results


class Report:
    def __init__(self):
        self.failures, self.lines = [], []

    def fail(self, msg):
        self.failures.append(msg)
        print("FAIL: " + msg, file=sys.stderr)

    def ok(self, msg):
        self.lines.append(msg)


class Computed(str):
    """An expected value computed by SQL on the test's data (same connection): numbers
    compare with a relative tolerance of 1e-9, anything else as text."""


def resolve_expected(db, values, where):
    """Expected cell values; {"sql": ...} is replaced by what the query returns, which
    must be something (an expectation cannot hold vacuously on a missing row)."""
    out = {}
    for col, v in values.items():
        if isinstance(v, dict) and "sql" in v:
            got = db.scalar(v["sql"])
            if got == "":
                raise Failure("%s: expected %s from %s, which returned nothing" %
                              (where, col, v["sql"]))
            v = Computed(got)
        out[col] = v
    return out


def cell(names, row, col, where):
    if col not in names:
        raise Failure("%s: no column %s" % (where, col))
    v = row[names.index(col)]
    return None if v is NULL else v


def row_matches(names, row, want, where):
    for col, expected in want.items():
        got = cell(names, row, col, where)
        if isinstance(expected, Computed) and got is not None:
            try:
                a, b = float(got), float(expected)
            except ValueError:
                if got != expected:
                    return False
                continue
            if not math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12):
                return False
        elif got != expected:
            return False
    return True


def run_query(db, report, kind, sql, where, panel=None, expect=None, scenario=None,
              data=False, must_rows=None):
    """Runs one expanded query and checks it. With data (the full test history and the
    saved variables), the expectations for this scenario apply: rows, non-NULL columns,
    values of the first row, rows with and without given values, row count, ranges."""
    expect = expect or {}
    if must_rows is None:
        must_rows = data and scenario in expect.get("rows", [])
    try:
        columns, rows, scans = db.query(sql)
        check_frame(kind, columns, rows, where)
        if panel is not None:
            check_panel_fields(panel, columns, rows, where)
        names = [c for c, _ in columns]
        if "columns" in expect and names != expect["columns"]:
            raise Failure("%s: columns %s, expected %s" % (where, names, expect["columns"]))
        if must_rows and not rows:
            raise Failure("%s: no rows, but the test data must give some" % where)
        if data:
            nonnull = expect.get("nonnull", [])
            if isinstance(nonnull, dict):
                nonnull = nonnull.get(scenario, [])
            elif not must_rows:
                nonnull = []
            for col in nonnull:
                if col not in names:
                    raise Failure("%s: no column %s" % (where, col))
                i = names.index(col)
                if all(r[i] is NULL for r in rows):
                    raise Failure("%s: column %s is NULL in every row" % (where, col))
            first = expect.get("first_row", {}).get(scenario)
            if first:
                if not rows:
                    raise Failure("%s: no rows; expected a first row %r" % (where, first))
                want = resolve_expected(db, first, where)
                if not row_matches(names, rows[0], want, where):
                    got = {c: cell(names, rows[0], c, where) for c in first}
                    raise Failure("%s: first row %r, expected %r" % (where, got, want))
            row_with = expect.get("row_with", {}).get(scenario, [])
            for wanted in row_with if isinstance(row_with, list) else [row_with]:
                want = resolve_expected(db, wanted, where)
                if not any(row_matches(names, r, want, where) for r in rows):
                    raise Failure("%s: no row with %r among %d row(s)" % (where, want, len(rows)))
            row_without = expect.get("row_without", {}).get(scenario, [])
            for unwanted in row_without if isinstance(row_without, list) else [row_without]:
                bad = resolve_expected(db, unwanted, where)
                if any(row_matches(names, r, bad, where) for r in rows):
                    raise Failure("%s: a row with %r, which the test data must not give" %
                                  (where, bad))
            count = expect.get("row_count", {}).get(scenario)
            if count is not None and len(rows) != count:
                raise Failure("%s: %d row(s), expected %d" % (where, len(rows), count))
            for col, (low, high) in expect.get("ranges", {}).items():
                if col not in names:
                    raise Failure("%s: no column %s" % (where, col))
                i = names.index(col)
                for r in rows:
                    if r[i] is NULL:
                        continue
                    try:
                        v = float(r[i])
                    except ValueError:
                        raise Failure("%s: %s = %r is not a number" % (where, col, r[i]))
                    if not low <= v <= high:
                        raise Failure("%s: %s = %s outside its plausible range [%s, %s]" %
                                      (where, col, r[i], low, high))
        if scans:
            raise Failure("%s: reads %s without an index:\n%s" % (where, ", ".join(scans), sql))
        report.ok("%s: %d row(s), columns %s" % (where, len(rows), names))
        return columns, rows
    except Failure as e:
        report.fail(str(e))
        return None, None


def run_dashboard(db, report, d, expectations, ctx, ctx_name, min_interval):
    uid = d["uid"]
    exp = expectations.get(uid)
    if exp is None:
        report.fail("%s: no entry in expectations.json" % uid)
        return
    titles = [p["title"] for p in all_panels(d) if p.get("type") != "row"]
    for t in titles:
        if t not in exp["panels"]:
            report.fail("%s: panel %r has no expectation" % (uid, t))
    for t in exp["panels"]:
        if t not in titles:
            report.fail("%s: expectation for missing panel %r" % (uid, t))
    ann_names = [a["name"] for a in d.get("annotations", {}).get("list", [])]
    if sorted(ann_names) != sorted(exp.get("annotations", {})):
        report.fail("%s: annotations %s, expectations for %s" %
                    (uid, ann_names, sorted(exp.get("annotations", {}))))
    for scenario in exp["scenarios"]:
        for mode in ("saved", "first"):
            where0 = "%s[%s,%s,%s]" % (uid, scenario["name"], ctx_name, mode)
            data = ctx_name == "full" and mode == "saved"
            try:
                variables, var_results = resolve_variables(
                    db, d, ctx, scenario.get("vars", {}), mode, where0,
                    strict_pins=ctx_name == "full")
            except Failure as e:
                report.fail(str(e))
                continue
            for name, sql, columns, rows in var_results:
                must = data and scenario["name"] in exp.get("variables", {}).get(name, {}).get(
                    "rows", [])
                if must and not rows:
                    report.fail("%s variable %s: no options" % (where0, name))
                else:
                    report.ok("%s variable %s: %d option(s)" % (where0, name, len(rows)))
            for p in all_panels(d):
                if p.get("type") == "row":
                    continue
                pexp = exp["panels"].get(p["title"], {})
                resolution = p.get("maxDataPoints") or 1000
                interval_ms, text = calculate_interval(ctx.t_from, ctx.t_to, resolution,
                                                       p.get("interval") or min_interval)
                pctx = TimeContext(ctx.t_from, ctx.t_to, interval_ms, text)
                for t in p.get("targets", []):
                    if t.get("hide"):
                        continue
                    where = "%s panel %r %s" % (where0, p["title"], t["refId"])
                    try:
                        sql = expand(t["rawSql"], variables, pctx)
                    except Failure as e:
                        report.fail("%s: %s" % (where, e))
                        continue
                    _, rows = run_query(db, report, t["format"], sql, where, panel=p, expect=pexp,
                                        scenario=scenario["name"], data=data)
                    if ctx_name == "empty" and t["format"] == "time_series" and rows:
                        report.fail("%s: %d row(s) on a day without data: is the time range "
                                    "applied?" % (where, len(rows)))
            for a in d.get("annotations", {}).get("list", []):
                aexp = exp.get("annotations", {}).get(a["name"], {})
                where = "%s annotation %r" % (where0, a["name"])
                try:
                    sql = expand(a["target"]["rawSql"], variables, ctx)
                except Failure as e:
                    report.fail("%s: %s" % (where, e))
                    continue
                must = data and scenario["name"] in aexp.get("rows", [])
                if "rows_if" in aexp and data:
                    # rows exactly when the database holds what the annotation shows
                    want = db.scalar(aexp["rows_if"].replace(
                        "{cluster}", quote_literal(variables["cluster"].value))) not in ("", "0")
                    columns, rows = run_query(db, report, "annotation", sql, where, expect=aexp,
                                              scenario=scenario["name"], data=data, must_rows=want)
                    if rows is not None and rows and not want:
                        report.fail("%s: rows although %s says none" % (where, aexp["rows_if"]))
                    continue
                run_query(db, report, "annotation", sql, where, expect=aexp,
                          scenario=scenario["name"], data=data, must_rows=must)


def time_ranges(db):
    """full: the whole test history; empty: a day without data (every query must cope)."""
    first, now = db.scalar(
        "SELECT to_char((min(started_at) - interval '1 day') AT TIME ZONE 'UTC', "
        "'YYYY-MM-DD\"T\"HH24:MI:SS'), to_char((now() + interval '1 hour') AT TIME ZONE 'UTC', "
        "'YYYY-MM-DD\"T\"HH24:MI:SS') FROM runs").split("|")
    if not first:
        raise Failure("no runs in the database")
    utc = timezone.utc
    full = (datetime.fromisoformat(first).replace(tzinfo=utc),
            datetime.fromisoformat(now).replace(tzinfo=utc))
    empty = (datetime(2001, 1, 1, tzinfo=utc), datetime(2001, 1, 2, 0, 0, 0, 500000, tzinfo=utc))
    return {"full": full, "empty": empty}


def cmd_panels(args):
    db = Database(args.db)
    with open(args.expectations, encoding="utf-8") as f:
        expectations = json.load(f)["dashboards"]
    ds = load_yaml(args.datasource)["datasources"][0]
    min_interval = (ds.get("jsonData") or {}).get("timeInterval")
    dashboards, problems = check_structure(args.dashboards)
    report = Report()
    for p in problems:
        report.fail(p)
    for name, (t_from, t_to) in time_ranges(db).items():
        ctx = TimeContext(t_from, t_to, 0, "")
        for d in dashboards.values():
            run_dashboard(db, report, d, expectations, ctx, name, min_interval)
    for line in report.lines:
        print("ok  " + line)
    if report.failures:
        print("%d failure(s)" % len(report.failures), file=sys.stderr)
        return 1
    print("panels: %d checks passed" % len(report.lines))
    return 0


# --------------------------------------------------------------------------
# Grafana alert rules (unified alerting provisioning)

def cmd_alerting(args):
    db = Database(args.db)
    with open(args.expectations, encoding="utf-8") as f:
        expectations = json.load(f)["alerting"]
    doc = load_yaml(args.rules)
    report = Report()
    if doc.get("apiVersion") != 1:
        report.fail("alerting: apiVersion %r" % doc.get("apiVersion"))
    uids, seen_exp = set(), set()
    now = datetime.now(timezone.utc)
    for group in doc.get("groups", []):
        for key in ("orgId", "name", "folder", "interval"):
            if key not in group:
                report.fail("alerting group %r: no %s" % (group.get("name"), key))
        for rule in group.get("rules", []):
            uid = rule.get("uid")
            where = "alert rule %s" % uid
            if not uid or uid in uids or not re.fullmatch(r"[A-Za-z0-9_-]{1,40}", uid):
                report.fail("%s: uid missing, repeated or malformed" % where)
            uids.add(uid)
            for key in ("title", "condition", "data", "noDataState", "execErrState", "for"):
                if key not in rule:
                    report.fail("%s: no %s" % (where, key))
            data = {q.get("refId"): q for q in rule.get("data", [])}
            if rule.get("condition") not in data:
                report.fail("%s: condition %r is not a query" % (where, rule.get("condition")))
            results = {}
            for ref, q in data.items():
                dsuid, model = q.get("datasourceUid"), q.get("model") or {}
                if model.get("refId") != ref:
                    report.fail("%s %s: model.refId %r" % (where, ref, model.get("refId")))
                if dsuid == "__expr__":
                    continue
                if dsuid != DATASOURCE_UID:
                    report.fail("%s %s: datasourceUid %r" % (where, ref, dsuid))
                    continue
                if model.get("format") != "table":
                    report.fail("%s %s: SQL alert queries use table format" % (where, ref))
                rtr = q.get("relativeTimeRange") or {}
                t_from = now - timedelta(seconds=rtr.get("from", 600))
                t_to = now - timedelta(seconds=rtr.get("to", 0))
                ctx = TimeContext(t_from, t_to, *calculate_interval(t_from, t_to, 43200))
                try:
                    check_sql_text(model.get("rawSql"), "%s %s" % (where, ref))
                    sql = expand(model["rawSql"], {}, ctx)
                except Failure as e:
                    report.fail(str(e))
                    continue
                columns, rows = run_query(db, report, "table", sql, "%s %s" % (where, ref))
                if columns is None:
                    continue
                # One numeric column per row is the value; string columns are labels
                # and must tell the rows apart (multi-dimensional alert).
                numeric = [i for i, (_, t) in enumerate(columns) if is_numeric(t)]
                strings = [i for i, (_, t) in enumerate(columns) if is_string(t)]
                if len(numeric) != 1 or len(numeric) + len(strings) != len(columns):
                    report.fail("%s %s: needs one numeric column and string labels: %s" %
                                (where, ref, columns))
                    continue
                keys = [tuple(r[i] for i in strings) for r in rows]
                if len(set(keys)) != len(keys):
                    report.fail("%s %s: two rows with the same labels" % (where, ref))
                results[ref] = [({columns[i][0]: r[i] for i in strings},
                                 None if r[numeric[0]] is NULL else float(r[numeric[0]]))
                                for r in rows]
            firing = evaluate_condition(rule, data, results, where, report)
            exp = expectations.get(uid)
            if exp is None:
                report.fail("%s: no entry in expectations.json" % where)
                continue
            seen_exp.add(uid)
            if exp.get("rows") and not any(results.values()):
                report.fail("%s: no rows, but every cluster should give one" % where)
            if firing is None:
                continue
            fired = sorted(l.get("cluster", "") for l in firing)
            for c in exp.get("fires_for", []):
                if c not in fired:
                    report.fail("%s: should fire for cluster %s on the test data; fires for %s" %
                                (where, c, fired))
            for c in exp.get("quiet_for", []):
                if c in fired:
                    report.fail("%s: must stay quiet for cluster %s; fires for %s" %
                                (where, c, fired))
            report.ok("%s: fires for %s" % (where, fired))
    for uid in expectations:
        if uid not in seen_exp:
            report.fail("alerting expectation for missing rule %s" % uid)
    for line in report.lines:
        print("ok  " + line)
    if report.failures:
        print("%d failure(s)" % len(report.failures), file=sys.stderr)
        return 1
    print("alerting: %d checks passed" % len(report.lines))
    return 0


def evaluate_condition(rule, data, results, where, report):
    """The server-side expressions we use: threshold (gt/lt) on a SQL query."""
    cond = data.get(rule.get("condition"))
    if cond is None:
        return None
    model = cond.get("model") or {}
    if cond.get("datasourceUid") != "__expr__" or model.get("type") != "threshold":
        report.fail("%s: the condition is a threshold expression here" % where)
        return None
    src = model.get("expression")
    if src not in results:
        report.fail("%s: threshold on %r, which is not a SQL query" % (where, src))
        return None
    ev = (model.get("conditions") or [{}])[0].get("evaluator") or {}
    op, params = ev.get("type"), ev.get("params") or []
    ops = {"gt": lambda v: v > params[0], "lt": lambda v: v < params[0]}
    if op not in ops or not params:
        report.fail("%s: evaluator %r" % (where, ev))
        return None
    return [labels for labels, v in results[src] if v is not None and ops[op](v)]


# --------------------------------------------------------------------------
# Provisioning files

def cmd_provisioning(args):
    problems = []
    ds_doc = load_yaml(args.datasource)
    if ds_doc.get("apiVersion") != 1:
        problems.append("datasource: apiVersion %r" % ds_doc.get("apiVersion"))
    sources = ds_doc.get("datasources") or []
    if len(sources) != 1:
        problems.append("datasource: one data source expected, got %d" % len(sources))
    ds = sources[0] if sources else {}
    want = {"type": DATASOURCE_TYPE, "uid": DATASOURCE_UID, "user": "fabtrack_grafana"}
    for k, v in want.items():
        if ds.get(k) != v:
            problems.append("datasource: %s is %r, expected %r" % (k, ds.get(k), v))
    if (ds.get("jsonData") or {}).get("database") != "fabtrack":
        problems.append("datasource: jsonData.database is not fabtrack")
    pw = (ds.get("secureJsonData") or {}).get("password")
    if pw not in ("$FABTRACK_GRAFANA_DB_PASSWORD", "${FABTRACK_GRAFANA_DB_PASSWORD}"):
        problems.append("datasource: secureJsonData.password must be $FABTRACK_GRAFANA_DB_PASSWORD "
                        "(Grafana expands it from the environment), got %r" % pw)
    if "password" in ds or "password" in (ds.get("jsonData") or {}):
        problems.append("datasource: a password outside secureJsonData")
    with open(args.datasource, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if re.search(r"password\s*:", line, re.I) and "$" not in line:
                problems.append("datasource:%d: literal password" % n)
    prov = load_yaml(args.provider)
    providers = prov.get("providers") or []
    if prov.get("apiVersion") != 1 or not providers:
        problems.append("dashboard provider: apiVersion 1 with providers expected")
    for p in providers:
        if p.get("type") != "file" or not (p.get("options") or {}).get("path"):
            problems.append("dashboard provider %r: a file provider with options.path" %
                            p.get("name"))
    for p in problems:
        print("FAIL: " + p, file=sys.stderr)
    if not problems:
        print("provisioning: data source %s (%s, user %s, password from the environment), "
              "%d dashboard provider(s)" % (ds["uid"], ds["type"], ds["user"], len(providers)))
    return 1 if problems else 0


def cmd_structure(args):
    _, problems = check_structure(args.dashboards)
    for p in problems:
        print("FAIL: " + p, file=sys.stderr)
    if not problems:
        print("structure: %d dashboard(s) ok" % len(args.dashboards))
    return 1 if problems else 0


# --------------------------------------------------------------------------
# Self-test: the expansion against Grafana's own test cases

def cmd_self_test(_args):
    utc = timezone.utc
    f = datetime(2018, 4, 12, 18, 0, 0, tzinfo=utc)
    t = f + timedelta(minutes=5)
    cases = [
        ("select $__time(time_column)", 'select time_column AS "time"'),
        ("select min($__time(time_column))", 'select min(time_column AS "time")'),
        ("WHERE $__timeFilter(time_column)",
         "WHERE time_column BETWEEN '2018-04-12T18:00:00Z' AND '2018-04-12T18:05:00Z'"),
        ("select $__timeFrom()", "select '2018-04-12T18:00:00Z'"),
        ("select $__timeTo()", "select '2018-04-12T18:05:00Z'"),
        ("SELECT $__timeGroup(time_column,'5m'), value",
         'SELECT floor(extract(epoch from time_column)/300)*300 AS "time", value'),
        ("SELECT $__timeGroup(time_column,'5m') as time, value",
         "SELECT floor(extract(epoch from time_column)/300)*300 as time, value"),
        ("SELECT $__timeGroup(time_column,'5m')",
         "SELECT floor(extract(epoch from time_column)/300)*300"),
        ("SELECT $__timeGroupAlias(time_column,'5m')",
         'SELECT floor(extract(epoch from time_column)/300)*300 AS "time"'),
        ("$__timeGroup(time_column , '5m')", "floor(extract(epoch from time_column)/300)*300"),
        ("$__timeGroup(t, '12d')", "floor(extract(epoch from t)/1.0368e+06)*1.0368e+06"),
        ("$__timeGroup(t, 20ms, NULL)", "floor(extract(epoch from t)/0.02)*0.02"),
        ("select $__unixEpochFilter(time)", "select time >= %d AND time <= %d" %
         (f.timestamp(), t.timestamp())),
        ("select $__unixEpochNanoFilter(time)", "select time >= %d AND time <= %d" %
         (f.timestamp() * 10**9, t.timestamp() * 10**9)),
        ("select $__unixEpochNanoFrom()", "select %d" % (f.timestamp() * 10**9)),
        ("SELECT $__unixEpochGroup(time_column+time_adjustment,'5m')",
         "SELECT floor((time_column+time_adjustment)/300)*300"),
        ("SELECT $__unixEpochGroupAlias(time_column+time_adjustment,'5m')",
         'SELECT floor((time_column+time_adjustment)/300)*300 AS "time"'),
        ("$__unixEpochFrom() $__unixEpochTo() $__interval $__interval_ms",
         "%d %d 1h 3600000" % (f.timestamp(), t.timestamp())),
    ]
    failures = 0
    ctx = TimeContext(f, t, 3600000, "1h")
    for sql, want in cases:
        got = backend_macros(backend_global(sql, timedelta(hours=1), f, t), f, t)
        if got != want:
            failures += 1
            print("FAIL macro %r -> %r, want %r" % (sql, got, want), file=sys.stderr)
    f2 = datetime(1960, 2, 1, 7, 0, 0, 500000, tzinfo=utc)
    t2 = datetime(1980, 2, 3, 8, 0, 0, 500000, tzinfo=utc)
    got = backend_macros("WHERE $__timeFilter(c)", f2, t2)
    if got != "WHERE c BETWEEN '1960-02-01T07:00:00.5Z' AND '1980-02-03T08:00:00.5Z'":
        failures += 1
        print("FAIL fractional time range: %r" % got, file=sys.stderr)
    # Template variables
    single = Variable("cluster")
    single.value = single.text = "it's"
    multi = Variable("host", multi=True, include_all=True)
    multi.options = [("a", "a"), ("b'c", "b'c")]
    multi.value = ["a", "b'c"]
    one = Variable("nodes", multi=True, include_all=True)
    one.options = [("1", "1"), ("2", "2")]
    one.value = ["2"]
    star = Variable("dev", multi=True, include_all=True, all_value="'*'")
    star.options = [("x", "x")]
    star.value = ALL_VALUE
    every = Variable("coll", multi=True, include_all=True)
    every.options = [("all_reduce", "all_reduce"), ("all_gather", "all_gather")]
    every.value = ALL_VALUE
    none = Variable("empty", multi=True, include_all=True)
    none.value = ALL_VALUE
    variables = {v.name: v for v in (single, multi, one, star, every, none)}
    var_cases = [
        ("'$cluster'", "'it''s'"), ("'${cluster}'", "'it''s'"), ("[[cluster]]", "it''s"),
        ("${cluster:sqlstring}", "'it''s'"), ("${cluster:csv}", "it's"), ("${cluster:raw}", "it's"),
        ("$host", "'a','b''c'"), ("${host:sqlstring}", "'a','b''c'"), ("${host:csv}", "a,b'c"),
        ("${host:pipe}", "a|b'c"), ("$nodes", "'2'"), ("${nodes:csv}", "2"),
        ("${dev:sqlstring}", "'*'"), ("${dev:text}", "All"), ("$coll", "'all_reduce','all_gather'"),
        ("ARRAY[${empty:sqlstring}]", "ARRAY[]"),
        ("$unknown $__timeFilter(x)", "$unknown $__timeFilter(x)"),
        ("$__interval $__interval_ms ${__from:date:seconds}", "1h 3600000 %d" % f.timestamp()),
    ]
    builtins = time_builtins(f, t, 3600000, "1h")
    for sql, want in var_cases:
        got = interpolate_variables(sql, variables, builtins)
        if got != want:
            failures += 1
            print("FAIL variable %r -> %r, want %r" % (sql, got, want), file=sys.stderr)
    for v, want in ((300.0, "300"), (86400.0, "86400"), (604800.0, "604800"),
                    (1036800.0, "1.0368e+06"), (2592000.0, "2.592e+06"), (0.02, "0.02"),
                    (0.5, "0.5"), (0.00001, "1e-05")):
        if go_float(v) != want:
            failures += 1
            print("FAIL go_float(%r) = %r, want %r" % (v, go_float(v), want), file=sys.stderr)
    d30 = calculate_interval(f, f + timedelta(days=30), 1000)
    d1 = calculate_interval(f, f + timedelta(days=1), 1000, "5m")
    h6 = calculate_interval(f, f + timedelta(hours=6), 1000)
    for got, want in ((d30, (1800000, "30m")), (d1, (300000, "5m")), (h6, (20000, "20s"))):
        if got != want:
            failures += 1
            print("FAIL interval %r, want %r" % (got, want), file=sys.stderr)
    for text, want in (("1h", "1h"), ("90s", "1m"), ("1d", "1d"), ("2w", "14d")):
        got = go_format_interval(go_parse_interval(text))
        if got != want:
            failures += 1
            print("FAIL interval %s -> %s, want %s" % (text, got, want), file=sys.stderr)
    try:
        expand("SELECT $__nope(x)", {}, ctx)
        failures += 1
        print("FAIL unknown macro accepted", file=sys.stderr)
    except Failure:
        pass
    try:
        expand("SELECT ${missing}", {}, ctx)
        failures += 1
        print("FAIL leftover variable accepted", file=sys.stderr)
    except Failure:
        pass
    y = Yaml("a: 1\nb:\n  - x: 'it''s'\n    y: [0, 1.5]\n  - z\nc: |\n  SELECT 1\n    FROM t\n"
             "d: {}\ne: \"q\" # c\n", "self-test").parse()
    want_y = {"a": 1, "b": [{"x": "it's", "y": [0, 1.5]}, "z"], "c": "SELECT 1\n  FROM t\n",
              "d": {}, "e": "q"}
    if y != want_y:
        failures += 1
        print("FAIL yaml %r" % y, file=sys.stderr)
    if failures:
        print("self-test: %d failure(s)" % failures, file=sys.stderr)
        return 1
    print("self-test: %d macro, %d variable cases as Grafana expands them" %
          (len(cases) + 1, len(var_cases)))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("self-test")
    s = sub.add_parser("structure")
    s.add_argument("dashboards", nargs="+")
    s = sub.add_parser("provisioning")
    s.add_argument("datasource")
    s.add_argument("provider")
    s = sub.add_parser("panels")
    s.add_argument("--db", required=True)
    s.add_argument("--expectations", required=True)
    s.add_argument("--datasource", required=True)
    s.add_argument("dashboards", nargs="+")
    s = sub.add_parser("alerting")
    s.add_argument("--db", required=True)
    s.add_argument("--expectations", required=True)
    s.add_argument("rules")
    args = ap.parse_args()
    try:
        return {"self-test": cmd_self_test, "structure": cmd_structure,
                "provisioning": cmd_provisioning, "panels": cmd_panels,
                "alerting": cmd_alerting}[args.cmd](args)
    except Failure as e:
        print("FAIL: %s" % e, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
