#!/usr/bin/env python3
"""`fabtrack fabric scan` against a simulated subnet (ibsim + opensm).

Each case starts its own simulator (tests/support/ibsim_fixture.py) on a fat
tree from scripts/ibsim-fat-tree.py, injects faults through ibsim's console
and checks the scan's JSON: nodes, cables with both ends, counters, and the
findings, each naming both ends of the right cable.

  ibsim_scan_test.py SOURCE_DIR FABTRACK CASE
  (CASE: small | unanswered | faults | no_subnet | prometheus | serve | discovery | outage)

"faults" stores scans in the test database (FABTRACK_TEST_DB). Exit 77
(ctest SKIP_RETURN_CODE) where the simulator is not installed.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

SOURCE, FABTRACK, CASE = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path.insert(0, os.path.join(SOURCE, "tests", "support"))
sys.path.insert(0, os.path.join(SOURCE, "scripts"))
import ibsim_fixture  # noqa: E402

fat_tree = __import__("ibsim-fat-tree").fat_tree

failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print(f"FAIL: {what}", file=sys.stderr)


def scan(subnet, *args, expect_rc=0):
    r = subnet.run([FABTRACK, "fabric", "scan", "--format", "json", *args], timeout=600)
    if r.returncode != expect_rc:
        raise SystemExit(f"fabric scan {' '.join(args)}: exit {r.returncode}\n{r.stderr}\n{r.stdout[-2000:]}")
    if r.stderr.strip():
        print(r.stderr, file=sys.stderr)
    return json.loads(r.stdout)


def link_named(doc, one, other):
    """The link whose ends are the (description, port) pairs, in either order."""
    for link in doc["links"]:
        ends = {(link["a"]["description"], link["a"]["port"]), (link["b"]["description"], link["b"]["port"])}
        if ends == {one, other}:
            return link
    return None


def findings_by_kind(doc):
    out = {}
    for f in doc["findings"]:
        out.setdefault(f["kind"], []).append(f)
    return out


def names_both_ends(finding, one, other):
    ends = {(finding["evidence"]["a"]["description"], finding["evidence"]["a"]["port"]),
            (finding["evidence"]["b"]["description"], finding["evidence"]["b"]["port"])}
    text = finding["subject"]
    return ends == {one, other} and f"{one[0]}/{one[1]}" in text and f"{other[0]}/{other[1]}" in text


def port_ends(doc):
    """Every port of the scan (switch port 0 left out), with its node's type."""
    types = {n["guid"]: n["type"] for n in doc["nodes"]}
    ends = [link[e] for link in doc["links"] for e in ("a", "b")] + doc["ports_without_link"]
    return [(e, types[e["guid"]]) for e in ends if not (types[e["guid"]] == "switch" and e["port"] == 0)]


RCV_ERROR_DETAILS = {"port_local_physical_errors", "port_malformed_packet_errors", "port_buffer_overrun_errors",
                     "port_dlid_mapping_errors", "port_vl_mapping_errors", "port_looping_errors"}


def with_rcv_errors(doc):
    """Ports asked PortRcvErrorDetails: those whose port_rcv_errors is not zero."""
    return sum(1 for e, _ in port_ends(doc) if e.get("counters", {}).get("port_rcv_errors", 0) > 0)


def pma_mads_without_sums(doc):
    """ClassPortInfo per node, PortCounters and PortCountersExtended per port."""
    return len(doc["nodes"]) + 2 * len(port_ends(doc)) + with_rcv_errors(doc)


def pma_mads_expected(doc, switches_with_errors):
    """ClassPortInfo per node, an AllPortSelect sum per switch, then per port
    PortCountersExtended, and PortCounters too on an HCA or a switch whose sum
    showed errors."""
    switches = sum(1 for n in doc["nodes"] if n["type"] == "switch")
    per_port = sum(1 if t == "switch" and e["description"] not in switches_with_errors else 2
                   for e, t in port_ends(doc))
    return len(doc["nodes"]) + switches + per_port + with_rcv_errors(doc)


def case_small():
    # 2 leaves x 2 spines x 2 hosts; leaf02's first uplink (port 3, to
    # spine01 port 2) trained at 1x where the others run 4x.
    net = fat_tree(2, 2, 2, degrade={("leaf02", 1): "w=1"})
    with ibsim_fixture.Subnet(net) as subnet:
        subnet.console('PerformanceSet "leaf01"[3] PortCounters.SymbolErrorCounter=17',
                       'PerformanceSet "leaf01"[3] PortCounters.LinkErrorRecoveryCounter=3',
                       'PerformanceSet "leaf01"[3] PortCounters.LinkDownedCounter=2',
                       'PerformanceSet "leaf01"[3] PortCounters.PortRcvErrors=5',
                       'PerformanceSet "leaf01"[3] PortCounters.PortXmitDiscards=7',
                       'PerformanceSet "leaf01"[3] PortCounters.PortXmitWait=123456',
                       'PerformanceSet "leaf01"[3] PortRcvErrorDetails.PortLocalPhysicalErrors=4',
                       'PerformanceSet "leaf01"[3] PortRcvErrorDetails.PortMalformedPacketErrors=1')
        doc = scan(subnet)
        types = sorted(n["type"] for n in doc["nodes"])
        check(types == ["ca"] * 4 + ["switch"] * 4, f"nodes: {types}")
        check(len(doc["links"]) == 8, f"8 links, got {len(doc['links'])}")
        check(doc["unanswered"] == [], f"nothing unanswered: {doc['unanswered']}")
        for link in doc["links"]:
            for end in ("a", "b"):
                check(link[end]["counters"].get("symbol_error") is not None,
                      f"{end} of {link['a']['description']}-{link['b']['description']} has counters")
        up = link_named(doc, ("leaf01", 3), ("spine01", 1))
        check(up is not None, "leaf01/3 <-> spine01/1 found")
        if up:
            a = up["a"] if up["a"]["description"] == "leaf01" else up["b"]
            c = a["counters"]
            check(c.get("symbol_error") == 17, f"symbol_error 17: {c}")
            check(c.get("link_error_recovery") == 3, f"link_error_recovery 3: {c}")
            check(c.get("link_downed") == 2, f"link_downed 2: {c}")
            check(c.get("port_rcv_errors") == 5, f"port_rcv_errors 5: {c}")
            check(c.get("port_xmit_discards") == 7, f"port_xmit_discards 7: {c}")
            check(c.get("port_xmit_wait") == 123456, f"port_xmit_wait 123456: {c}")
            # What the 5 receive errors were (PortRcvErrorDetails, read
            # because port_rcv_errors is not zero).
            check(c.get("port_local_physical_errors") == 4 and c.get("port_malformed_packet_errors") == 1
                  and c.get("port_looping_errors") == 0, f"receive error details: {c}")
            check(a["counters_64bit"] is True, "PortCountersExtended read (CapMask says so)")
            check(up["state"] == "Active" and up["width"] == 4, f"state/width: {up['state']} {up['width']}")
        # ibsim's switch PMAs have AllPortSelect: one PortCounters sum per
        # switch, and only leaf01's (where the errors are) is asked
        # PortCounters per port; every other switch port is asked
        # PortCountersExtended alone, an HCA port both. Every port still has
        # the same counters as one that was asked both.
        check(doc["mads"]["sent"] == pma_mads_expected(doc, {"leaf01"}),
              f"PMA MADs: {doc['mads']} (expected {pma_mads_expected(doc, {'leaf01'})}, "
              f"{pma_mads_without_sums(doc)} with both per port)")
        names = set(up["a"]["counters"]) - RCV_ERROR_DETAILS if up else set()
        for link in doc["links"]:
            for end in ("a", "b"):
                e = link[end]
                if (e["description"], e["port"]) != ("leaf01", 3):
                    check(not set(e["counters"]) & RCV_ERROR_DETAILS,
                          f"no receive error details where no receive errors: {e}")
                check(set(e["counters"]) - RCV_ERROR_DETAILS == names,
                      f"{e['description']}/{e['port']} has {sorted(set(e['counters']) ^ names)} unlike leaf01/3")
        kinds = findings_by_kind(doc)
        degraded = kinds.get("fabric_link_degraded", [])
        check(len(degraded) == 1 and names_both_ends(degraded[0], ("leaf02", 3), ("spine01", 2)),
              f"the 1x uplink named: {degraded}")
        check(set(kinds) == {"fabric_link_degraded"}, f"nothing else on one scan: {list(kinds)}")
        # --errors-only (ibqueryerrors' reading): per port only on leaf01,
        # whose sum shows errors, and on the HCAs, one PortCounters each;
        # the other switches' ports have their error counters (zero) and no
        # data counters.
        lean = scan(subnet, "--errors-only")
        switches = sum(1 for n in lean["nodes"] if n["type"] == "switch")
        per_port = sum(1 for e, t in port_ends(lean) if t == "ca" or e["description"] == "leaf01")
        per_port += with_rcv_errors(lean)
        check(lean["mads"]["sent"] == len(lean["nodes"]) + switches + per_port,
              f"--errors-only PMA MADs: {lean['mads']} (expected {len(lean['nodes']) + switches + per_port})")
        up = link_named(lean, ("leaf01", 3), ("spine01", 1))
        a = up["a"] if up and up["a"]["description"] == "leaf01" else (up or {}).get("b", {})
        check(a.get("counters", {}).get("symbol_error") == 17 and
              a.get("counters", {}).get("port_xmit_wait") == 123456,
              f"--errors-only: leaf01/3 read per port: {a}")
        for e, t in port_ends(lean):
            if t == "switch" and e["description"] != "leaf01" and "counters" in e:
                c = e["counters"]
                check(c.get("symbol_error") == 0 and c.get("port_xmit_wait") == 0 and
                      "port_xmit_data" not in c,
                      f"--errors-only: {e['description']}/{e['port']} errors 0, no data: {c}")
        check([f["kind"] for f in lean["findings"]] == ["fabric_link_degraded"],
              f"--errors-only: the same finding: {lean['findings']}")
        # Text output says the same in words.
        r = subnet.run([FABTRACK, "fabric", "scan"])
        check(r.returncode == 0 and "fabric_link_degraded" in r.stdout and "8 links" in r.stdout,
              f"text output: {r.returncode} {r.stdout}")


def case_unanswered():
    # spine02's PMA does not answer (ClassPortInfo dropped: attribute 1):
    # a critical finding naming it, and the scan still ends.
    with ibsim_fixture.Subnet(fat_tree(2, 2, 2)) as subnet:
        subnet.console('Error "spine02" 100 1')
        started = time.monotonic()
        doc = scan(subnet, "--timeout-ms", "200", "--retries", "1")
        took = time.monotonic() - started
        check(took < 30, f"an unanswering switch is a finding, not a hang: {took:.1f} s")
        f = [x for x in doc["findings"] if x["kind"] == "fabric_unanswered"]
        check(len(f) == 1 and f[0]["subject"] == "spine02" and f[0]["severity"] == "critical",
              f"spine02 named: {f}")
        check(any(u["description"] == "spine02" and u["what"] == "ClassPortInfo" for u in doc["unanswered"]),
              f"unanswered lists spine02: {doc['unanswered']}")


def case_no_subnet():
    # Outside the simulator, on a host without umad devices: a clear exit 1,
    # at once, naming why.
    if os.path.exists("/sys/class/infiniband_mad"):
        print("SKIP: this host has umad devices; the real subnet would answer")
        return
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "IBSIM_SOCKNAME")}
    started = time.monotonic()
    r = subprocess.run([FABTRACK, "fabric", "scan"], env=env, capture_output=True, text=True, timeout=60)
    check(r.returncode == 1 and "fabtrack fabric scan: subnet discovery failed" in r.stderr,
          f"no subnet: exit 1 with why: {r.returncode} {r.stderr}")
    check(time.monotonic() - started < 20, "no subnet: no wait")


def case_faults():
    cluster = f"ibsim-{os.getpid()}"
    db = ["--cluster", cluster, "--db", os.environ["FABTRACK_TEST_DB"]]
    # 8 leaves x 4 spines x 8 hosts: 64 HCAs, leaf ports 1-8 hosts, 9-12
    # uplinks to spine01-04; spine port L is leaf L's.
    with ibsim_fixture.Subnet(fat_tree(8, 4, 8)) as subnet:
        first = scan(subnet, *db)
        check(len(first["nodes"]) == 76 and len(first["links"]) == 64 + 32,
              f"76 nodes, 96 links: {len(first['nodes'])}, {len(first['links'])}")
        check(first["findings"] == [], f"a clean fabric flags nothing: {first['findings']}")
        check(first["window_start"] is None, "the first scan has no window")
        # Nothing happened: still nothing.
        again = scan(subnet, *db)
        check(again["findings"] == [], f"a clean window flags nothing: {again['findings']}")
        check(again["window_start"] == first["scanned_at"], "judged against the previous stored scan")

        sweeps = subnet.sm_sweeps()
        subnet.console('PerformanceSet "leaf02"[9] PortCounters.SymbolErrorCounter=17',
                       'PerformanceSet "leaf03"[10] PortCounters.PortXmitWait=123456',
                       'Unlink "leaf05"[12]')
        subnet.wait_sm_sweep(sweeps)  # the SM routes around the unlinked cable
        # Packets to node0049 now drop half the time on its port (and count
        # there); some traffic, then the drops stop so the scan reads it.
        subnet.console('Error "node0049"[1] 50')
        lid = next(n["lid"] for n in first["nodes"] if n["description"] == "node0049")
        for _ in range(20):
            subnet.run(["perfquery", "-t", "100", str(lid), "1"], timeout=30)
        subnet.console('Error "node0049"[1] 0')
        second = scan(subnet, *db)
        kinds = findings_by_kind(second)
        expected = {
            "fabric_symbol_errors": (("leaf02", 9), ("spine01", 2)),
            "fabric_congestion": (("leaf03", 10), ("spine02", 3)),
            "fabric_link_down": (("leaf05", 12), ("spine04", 5)),
            "fabric_rcv_errors": (("leaf07", 1), ("node0049", 1)),
        }
        for kind, (one, other) in expected.items():
            got = kinds.get(kind, [])
            check(len(got) == 1 and names_both_ends(got[0], one, other),
                  f"{kind} names {one} <-> {other}: {[g['subject'] for g in got]}")
        check(set(kinds) == set(expected),
              "nothing else flagged: " + "; ".join(f["message"] for f in second["findings"]))
        check(second["window_start"] == again["scanned_at"], "window since the previous stored scan")

        # The switch ports are port samples of their own (GUID + port).
        q = subprocess.run(["psql", os.environ["FABTRACK_TEST_DB"], "-At", "-c",
                            "SELECT count(DISTINCT p.id), count(*) FROM ports p JOIN port_counter_samples s "
                            f"ON s.port_id = p.id WHERE p.cluster = '{cluster}' AND p.device = 'switch'"],
                           capture_output=True, text=True)
        ports, samples = (int(x) for x in q.stdout.strip().split("|"))
        check(ports == 8 * 12 + 4 * 8 and samples >= 3 * ports - 2,
              f"switch ports stored as port samples: {ports} ports, {samples} samples ({q.stderr})")
        q = subprocess.run(["psql", os.environ["FABTRACK_TEST_DB"], "-At", "-c",
                            "SELECT d.delta FROM run_port_deltas d JOIN ports p ON p.id = d.port_id "
                            f"WHERE p.cluster = '{cluster}' AND p.device = 'switch' AND d.counter = 'symbol_error' "
                            "AND d.delta > 0"], capture_output=True, text=True)
        check(q.stdout.split() == ["17"], f"the uplink's symbol errors as a snapshot window delta: {q.stdout!r}")


def case_outage():
    # The cluster's database away (a private server, stopped): the scan is
    # taken, judged alone, spooled (exit 0, one warning line) and stored by
    # the replay once the server is back, once however often it is replayed.
    # A misconfigured database (no such database on a server that answers)
    # is exit 3 before the subnet is read.
    work = tempfile.mkdtemp()
    os.chmod(work, 0o755)  # the embedded server runs as an unprivileged user
    data, spool = os.path.join(work, "db"), os.path.join(work, "spool")
    # Every program of this case (the subnet's too) uses this spool.
    os.environ.update({"FABTRACK_SPOOL_DIR": spool, "FABTRACK_CONNECT_ATTEMPTS": "1"})
    env = dict(os.environ)
    db = f"host={data}/run dbname=fabtrack user=fabtrack"

    def fabtrack(*args):
        return subprocess.run([FABTRACK, *args], env=env, capture_output=True, text=True, timeout=120)

    def psql(sql):
        return subprocess.run(["psql", "-At", "-d", db, "-c", sql], capture_output=True,
                              text=True).stdout.strip()

    try:
        check(fabtrack("db", "start", "--data-dir", data).returncode == 0, "private database started")
        check(fabtrack("db", "stop", "--data-dir", data).returncode == 0, "server stopped")
        with ibsim_fixture.Subnet(fat_tree(2, 2, 2)) as subnet:
            def scan_into(conninfo):
                return subnet.run([FABTRACK, "fabric", "scan", "--format", "json", "--cluster", "lab",
                                   "--db", conninfo], timeout=300)
            r = scan_into(db)
            doc = json.loads(r.stdout) if r.stdout.strip().startswith("{") else {}
            check(r.returncode == 0 and doc.get("spooled") is True and "stored_scan_id" not in doc,
                  f"down: scanned and spooled, exit 0: {r.returncode} {r.stderr[-500:]}")
            check(len(doc.get("nodes", [])) == 8, f"down: the whole subnet read: {len(doc.get('nodes', []))}")
            check(doc.get("window_start", "x") is None, "down: judged alone")
            check("unavailable" in r.stderr and f"spooled in {spool}" in r.stderr,
                  f"down: one warning line naming the spool: {r.stderr}")
            kept = os.path.join(work, "kept")
            shutil.copytree(spool, kept)
            check(fabtrack("db", "start", "--data-dir", data).returncode == 0, "server back")
            bad = scan_into(f"host={data}/run dbname=nosuchdb user=fabtrack")
            check(bad.returncode == 3 and "nosuchdb" in bad.stderr and bad.stdout == "",
                  f"misconfigured: exit 3 before the scan: {bad.returncode} {bad.stderr}")
            check(os.listdir(spool) == os.listdir(kept), "misconfigured: nothing spooled")
        r = fabtrack("spool", "replay", "--db", db)
        check(r.returncode == 0 and psql("SELECT count(*) FROM fabric_scans") == "1",
              f"replayed: one scan stored: {r.stderr}")
        for f in os.listdir(kept):
            shutil.copy2(os.path.join(kept, f), os.path.join(spool, f))
        r = fabtrack("spool", "replay", "--db", db)
        check(r.returncode == 0 and psql("SELECT count(*) FROM fabric_scans") == "1",
              "replayed again: still one scan")
        samples = psql("SELECT count(*) FROM port_counter_samples s JOIN ports p ON p.id = s.port_id "
                       "WHERE p.device = 'switch'")
        check(samples == str(2 * 4 + 2 * 2), f"the switch ports stored once each: {samples}")
    finally:
        fabtrack("db", "stop", "--data-dir", data)
        shutil.rmtree(work, ignore_errors=True)


def case_prometheus():
    # Every switch port under infiniband_exporter's names, both ends of each
    # cable in infiniband_switch_uplink_info; promtool accepts it; --textfile
    # writes the same file atomically.
    import re
    import tempfile
    with ibsim_fixture.Subnet(fat_tree(2, 2, 2)) as subnet:
        subnet.console('PerformanceSet "leaf01"[3] PortCounters.SymbolErrorCounter=17',
                       'PerformanceSet "spine02"[2] PortCounters.PortXmitWait=4242')
        doc = scan(subnet)
        guid = {n["description"]: n["guid"] for n in doc["nodes"]}
        r = subnet.run([FABTRACK, "fabric", "scan", "--format", "prometheus"])
        check(r.returncode == 0, f"--format prometheus: exit {r.returncode} {r.stderr}")
        text = r.stdout
        lint = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
        check(lint.returncode == 0, f"promtool check metrics: {lint.stdout} {lint.stderr}")
        check(f'infiniband_switch_port_symbol_error_total{{guid="{guid["leaf01"]}",port="3"}} 17\n' in text,
              "leaf01/3's symbol errors under infiniband_exporter's name")
        check(f'infiniband_switch_port_transmit_wait_total{{guid="{guid["spine02"]}",port="2"}} 4242\n' in text,
              "spine02/2's XmitWait under infiniband_exporter's name")
        check(f'infiniband_switch_uplink_info{{guid="{guid["leaf01"]}",port="3",switch="leaf01",uplink="spine01",'
              f'uplink_guid="{guid["spine01"]}",uplink_type="SW",uplink_port="1",' in text,
              "the uplink's far end named (leaf01/3 -> spine01/1)")
        check(f'infiniband_switch_uplink_info{{guid="{guid["spine01"]}",port="1",switch="spine01",uplink="leaf01",'
              in text, "and from the other end (spine01/1 -> leaf01/3)")
        check(f'switch="leaf01",uplink="node0001",uplink_guid="{guid["node0001"]}",uplink_type="CA",uplink_port="1"'
              in text, "a host's cable names the CA")
        ports = set(re.findall(r'^infiniband_switch_port_symbol_error_total\{guid="([^"]+)",port="(\d+)"\}', text, re.M))
        check(len(ports) == 2 * 4 + 2 * 2, f"every switch port once: {len(ports)}")
        check(not any(g == guid["node0001"] for g, _ in ports), "HCA ports are not switch ports")
        folder = tempfile.mkdtemp(prefix="fabtrack-textfile-")
        try:
            r = subnet.run([FABTRACK, "fabric", "scan", "--textfile", folder])
            check(r.returncode == 0, f"--textfile: exit {r.returncode} {r.stderr}")
            check(os.listdir(folder) == ["fabtrack_fabric.prom"], f"one file, no temporary left: {os.listdir(folder)}")
            with open(os.path.join(folder, "fabtrack_fabric.prom")) as f:
                written = f.read()
            lint = subprocess.run(["promtool", "check", "metrics"], input=written, capture_output=True, text=True)
            check(lint.returncode == 0, f"promtool on the textfile: {lint.stdout} {lint.stderr}")
            check(f'infiniband_switch_port_symbol_error_total{{guid="{guid["leaf01"]}",port="3"}} 17\n' in written,
                  "the textfile holds the same counters")
            r = subnet.run([FABTRACK, "fabric", "scan", "--textfile", os.path.join(folder, "missing")])
            check(r.returncode == 2 and "not a folder" in r.stderr, f"a missing folder: {r.returncode} {r.stderr}")
        finally:
            shutil.rmtree(folder, ignore_errors=True)


def case_serve():
    # `fabric serve`: each scrape scans the subnet again (a counter set between
    # two scrapes shows in the second), --max-age answers from the last scan,
    # a subnet that cannot be scanned is fabtrack_fabric_scan_success 0 with
    # no switch metrics, SIGTERM ends it with exit 0.
    import signal
    import socket
    import urllib.request

    def free_port():
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            return sock.getsockname()[1]

    def start(subnet, *args):
        port = free_port()
        proc = subprocess.Popen([FABTRACK, "fabric", "serve", "--listen", f"127.0.0.1:{port}", *args],
                                env=subnet.env(), cwd=subnet.dir, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    return proc, port
            except OSError:
                if proc.poll() is not None:
                    raise SystemExit(f"fabric serve exited {proc.returncode}: {proc.stderr.read()}")
                time.sleep(0.1)
        proc.kill()
        raise SystemExit("fabric serve did not listen within 30 s")

    def scrape(port):
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=60) as r:
            return r.read().decode()

    def stop(proc):
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
        return proc.returncode, err

    with ibsim_fixture.Subnet(fat_tree(2, 2, 2)) as subnet:
        subnet.console('PerformanceSet "leaf01"[3] PortCounters.SymbolErrorCounter=17')
        guid = {n["description"]: n["guid"] for n in scan(subnet)["nodes"]}
        symbol = f'infiniband_switch_port_symbol_error_total{{guid="{guid["leaf01"]}",port="3"}} '

        proc, port = start(subnet)
        first = scrape(port)
        lint = subprocess.run(["promtool", "check", "metrics"], input=first, capture_output=True, text=True)
        check(lint.returncode == 0, f"promtool check metrics on a scrape: {lint.stdout} {lint.stderr}")
        check(symbol + "17\n" in first, "the first scrape has leaf01/3's symbol errors")
        check("fabtrack_fabric_scan_success 1\n" in first, "a scanned subnet is success 1")
        check('infiniband_switch_uplink_info{guid="%s",port="3",switch="leaf01",uplink="spine01"' % guid["leaf01"]
              in first, "the scrape names both ends of the uplink")
        subnet.console('PerformanceSet "leaf01"[3] PortCounters.SymbolErrorCounter=29')
        check(symbol + "29\n" in scrape(port), "a scrape scans again: the new counter shows")
        rc, err = stop(proc)
        check(rc == 0, f"SIGTERM ends fabric serve with exit 0: {rc} {err}")

        proc, port = start(subnet, "--max-age", "300")
        check(symbol + "29\n" in scrape(port), "--max-age: the first scrape scans")
        subnet.console('PerformanceSet "leaf01"[3] PortCounters.SymbolErrorCounter=41')
        cached = scrape(port)
        check(symbol + "29\n" in cached and "41" not in cached.split(symbol)[1][:4],
              "--max-age: a scrape within the age answers from the last scan")
        stop(proc)

        proc, port = start(subnet, "--ca", "mlx5_nosuch")
        bad = scrape(port)
        scrape(port)
        check("fabtrack_fabric_scan_success 0\n" in bad, f"no scan is success 0: {bad[-300:]}")
        check("infiniband_switch_port" not in bad, "no switch counters without a scan")
        rc, err = stop(proc)
        check(rc == 0 and err.count("no scan:") == 1,
              f"the reason is said once, not once per scrape: rc {rc} {err!r}")


IBNETDISCOVER_NODE = re.compile(r'^(Switch|Ca|Rt)\s+\d+\s+"[SHR]-([0-9a-f]+)".*?#\s+"(.*?)"')
IBNETDISCOVER_LINK = re.compile(r'^\[(\d+)\](?:\([0-9a-f]+\))?\s+"[SHR]-([0-9a-f]+)"\[(\d+)\]')


def ibnetdiscover_subnet(text):
    """ibnetdiscover's output as ({guid: (type, description)}, {cable}),
    a cable a frozenset of two (guid, port) ends: the independent oracle
    of what discovery must find."""
    kinds = {"Switch": "switch", "Ca": "ca", "Rt": "router"}
    nodes, cables, node = {}, set(), None
    for line in text.splitlines():
        m = IBNETDISCOVER_NODE.match(line)
        if m:
            node = f"0x{int(m.group(2), 16):016x}"
            nodes[node] = (kinds[m.group(1)], m.group(3))
            continue
        m = IBNETDISCOVER_LINK.match(line)
        if m and node:
            cables.add(frozenset({(node, int(m.group(1))), (f"0x{int(m.group(2), 16):016x}", int(m.group(3)))}))
    return nodes, cables


def without_readings(doc):
    """A scan's JSON without what changes from one scan to the next (times,
    counters: data counters advance with each scan's own MADs, MAD counts)."""
    if isinstance(doc, dict):
        return {k: without_readings(v) for k, v in doc.items()
                if k not in ("counters", "scanned_at", "duration_s", "discovery_s", "mads")}
    if isinstance(doc, list):
        return [without_readings(v) for v in doc]
    return doc


def case_discovery():
    # fabtrack's own discovery (directed-route SMPs) against ibnetdiscover
    # (libibnetdisc) on a fat tree with two cables between each leaf and
    # spine and one uplink trained at 1x: the same nodes, descriptions and
    # cables; and the whole scan the same as with `--discovery ibnetdisc`.
    net = fat_tree(4, 3, 2, uplinks=2, degrade={("leaf02", 1): "w=1"})
    with ibsim_fixture.Subnet(net) as subnet:
        r = subnet.run(["ibnetdiscover"])
        check(r.returncode == 0, f"ibnetdiscover: {r.returncode} {r.stderr[-500:]}")
        want_nodes, want_cables = ibnetdiscover_subnet(r.stdout)
        check(len(want_nodes) == 4 + 3 + 8 and len(want_cables) == 4 * 3 * 2 + 8,
              f"ibnetdiscover parsed: {len(want_nodes)} nodes, {len(want_cables)} cables")
        doc = scan(subnet)
        got_nodes = {n["guid"]: (n["type"], n["description"]) for n in doc["nodes"]}
        got_cables = {frozenset({(l["a"]["guid"], l["a"]["port"]), (l["b"]["guid"], l["b"]["port"])})
                      for l in doc["links"]}
        check(got_nodes == want_nodes,
              f"nodes as ibnetdiscover's: {set(got_nodes.items()) ^ set(want_nodes.items())}")
        check(got_cables == want_cables and len(doc["links"]) == len(want_cables),
              f"cables as ibnetdiscover's: {got_cables ^ want_cables}")
        check(doc["unanswered"] == [], f"nothing unanswered: {doc['unanswered']}")
        old = scan(subnet, "--discovery", "ibnetdisc")
        check(without_readings(doc) == without_readings(old),
              "the scan equals libibnetdisc's apart from times and counters")
        check(doc["mads"]["sent"] == old["mads"]["sent"], f"same PMA MADs: {doc['mads']} {old['mads']}")
        # spine02 answers no NodeInfo (attribute 0x11 dropped): its
        # neighbours' LinkUp ports are named, the rest is found, the scan
        # ends (libibnetdisc under libumad2sim, which has no send timeouts,
        # would wait for ever).
        subnet.console('Error "spine02" 100 0x11')
        started = time.monotonic()
        lost = scan(subnet, "--timeout-ms", "200", "--retries", "1")
        check(time.monotonic() - started < 30, "a switch that does not answer is no hang")
        named = sorted((u["description"], u["port"]) for u in lost["unanswered"] if u["what"] == "discovery")
        want = sorted((f"leaf{l:02d}", 2 + 2 + k) for l in range(1, 5) for k in (1, 2))
        check(named == want, f"the leaves' uplinks to spine02 named: {named} (want {want})")
        check(len(lost["nodes"]) == len(want_nodes) - 1 and
              all(n["description"] != "spine02" for n in lost["nodes"]),
              f"everything but spine02 found: {len(lost['nodes'])} nodes")
        f = [x for x in lost["findings"] if x["kind"] == "fabric_unanswered"]
        check(f and all(x["severity"] == "critical" for x in f), f"unanswered findings: {f}")


def main():
    why = ibsim_fixture.available()
    if why:
        print(f"SKIP: {why}")
        return 77
    cases = {"small": case_small, "unanswered": case_unanswered, "faults": case_faults,
             "no_subnet": case_no_subnet, "prometheus": case_prometheus, "serve": case_serve,
             "discovery": case_discovery, "outage": case_outage}
    cases[CASE]()
    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
