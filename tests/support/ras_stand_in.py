#!/usr/bin/env python3
"""A stand-in for NCCL's RAS thread, for the `ras status` and `ras watch` tests.

It speaks RAS's client protocol (NCCL src/ras/client_support.cc):
"CLIENT PROTOCOL n" -> "SERVER PROTOCOL 2", "TIMEOUT s" -> "OK",
"SET FORMAT json|text" -> "OK" (2.28.7+) or "ERROR: Unknown command ..." (older),
then "VERBOSE STATUS" -> the report, streamed until the server closes. It
replays one report (text and/or JSON) or a sequence of JSON reports (a job
over time: counts advancing, then frozen, a rank dying), and misbehaves on
request: stalls mid-reply, says nothing, sends a reply past a size cap.
hold_after=n answers the first n STATUS queries and holds each later one
until release() (a test that must act between two snapshots of a watch,
whatever the machine's load: the watch cannot take the next one before).
events_first=True (with a monitor script) holds every STATUS query after the
first until the script's events are sent: a watch that opens the stream
after its first snapshot has them before its second, however late the
stand-in's thread runs on a loaded machine.

json_report() builds a JSON report in the image of NCCL 2.29's
(`SET FORMAT json`): per communicator its ranks with their collective
counts and missing ranks marked unresponsive or considered dead.

"MONITOR [groups]" (NCCL >= 2.29) is answered as an older server does
("ERROR: Unknown command MONITOR ...", the connection left open) unless a
script of events is given (monitor=[(delay_s, event), ...]; monitor="ignore"
never answers it): then "OK" and
each event after its delay, as rasClientsNotifyEvent formats it in the
session's format (monitor_event()), or raw bytes as given (a line cut
short); then the stream closes (monitor_end="close", the job ended) or
stays open and quiet (monitor_end="open").
"""
import json
import socket
import threading


def json_report(communicators, timestamp="2026-12-05 03:12:00"):
    """communicators: [(hash, ranks, missing)] where ranks is
    [(rank, host, pid, cuda_dev, {op: count})] and missing is
    [(rank, host, pid, cuda_dev, "unresponsive"|"dead")]."""
    comms = []
    for comm_hash, ranks, missing in communicators:
        present = []
        for rank, host, pid, dev, counts in ranks:
            present.append({
                "rank": rank, "host": host, "pid": pid, "cuda_dev": dev, "nvml_dev": dev,
                "status": {"init_state": 0, "async_error": 0, "finalize_called": False,
                           "destroy_flag": False, "abort_flag": False},
                "collective_counts": counts,
            })
        absent = []
        for rank, host, pid, dev, how in missing:
            absent.append({
                "rank": rank, "host": host, "pid": pid, "cuda_dev": dev, "nvml_dev": dev,
                "status": {"unresponsive": True, "considered_dead": how == "dead"},
            })
        comms.append({
            "hash": comm_hash, "secondary_hash": "0x0:0x0",
            "size": len(present) + len(absent), "ranks_count": len(present),
            "missing_ranks_count": len(absent), "ranks": present, "missing_ranks": absent,
        })
    doc = {"nccl_version": "2.29.2", "cuda_runtime_version": 12090,
           "cuda_driver_version": 12090, "timestamp": timestamp,
           "communicators_count": len(comms), "communicators": comms,
           "ras": {"collection_time_sec": 0.01, "timeouts_count": 0}}
    return (json.dumps(doc, indent=2) + "\n").encode()


def monitor_event(fmt, event, pid=None, node=None, gpus=(), nvml=None, port=None, details="",
                  timestamp="2026-12-05 03:12:40"):
    """One event of RAS's stream in `fmt` ("text" or "json"), as NCCL 2.29's
    rasClientsNotifyEvent writes it: the peer as a process (pid, node,
    gpus), as an address (node, port), or none."""
    nvml = list(gpus) if nvml is None else list(nvml)
    group = "LIFECYCLE" if event in ("PEER_NEW", "PEER_DEAD") else "TRACE"
    if fmt == "json":
        out = '{\n  "timestamp": "%s",\n  "group": "%s",\n  "event": "%s",\n' % (timestamp, group, event)
        if pid is not None:
            out += ('  "peer": {\n    "host": "%s",\n    "pid": %d,\n    "cuda_devs": [%s],\n'
                    '    "nvml_devs": [%s]\n  },\n' % (node, pid, ",".join(map(str, gpus)),
                                                      ",".join(map(str, nvml))))
        elif node is not None:
            out += '  "peer": {\n    "addr": "%s<%s>"\n  },\n' % (node, port)
        return (out + '  "details": "%s"\n}\n' % details).encode()
    if pid is not None:
        devs = ",".join(map(str, gpus))
        if list(gpus) != nvml:
            devs += " (NVML %s)" % ",".join(map(str, nvml))
        peer = "Process %d on node %s managing GPU%s %s" % (pid, node, "s" if len(gpus) > 1 else "", devs)
    elif node is not None:
        peer = "%s<%s>" % (node, port)
    else:
        return ("[%s] %s: %s\n" % (timestamp, event, details)).encode()
    return ("[%s] %s: %s %s\n" % (timestamp, event, peer, details)).encode()


class StandIn:
    """One RAS thread: serves connections until stopped."""

    def __init__(self, text=None, json_report=None, stall_after=None, silent=False, huge=0,
                 sequence=None, monitor=None, monitor_end="close", port=0, hold_after=None,
                 events_first=False):
        self.text, self.json_report = text, json_report
        self.monitor, self.monitor_end = monitor, monitor_end
        # A job over time: each STATUS query answered with the next JSON
        # report of the sequence, the last one repeated.
        self.sequence, self.served = sequence, 0
        self.stall_after, self.silent, self.huge = stall_after, silent, huge
        self.commands = []
        self.hold_after, self.asked, self.released = hold_after, 0, threading.Event()
        self.events_first = events_first
        if events_first:
            self.hold_after = 1
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", port))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        self.sock.settimeout(0.2)
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            threading.Thread(target=self.session, args=(conn,), daemon=True).start()

    def session(self, conn):
        with conn:
            if self.silent:
                self.stop.wait(30)
                return
            fmt = "text"
            buf = b""
            while True:
                data = conn.recv(4096)
                if not data:
                    return
                buf += data
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    cmd = line.decode().strip()
                    self.commands.append(cmd)
                    low = cmd.lower()
                    if low.startswith("client protocol "):
                        conn.sendall(b"SERVER PROTOCOL 2\n")
                    elif low.startswith("timeout "):
                        conn.sendall(b"OK\n")
                    elif low.startswith("set format ") and (self.json_report is not None or
                                                            self.sequence is not None):
                        # 2.28.7+ (client_support.cc, rasClientEventLoop):
                        # text or json, anything else refused; older
                        # servers fall through to "Unknown command".
                        want = low[len("set format "):]
                        if want in ("text", "json"):
                            fmt = want
                            conn.sendall(b"OK\n")
                        else:
                            conn.sendall(("ERROR: Invalid format %s\n" %
                                          cmd[len("set format "):]).encode())
                    elif low in ("status", "verbose status"):
                        self.report(conn, fmt)
                        return
                    elif (low == "monitor" or low.startswith("monitor ")) and self.monitor == "ignore":
                        continue  # a peer that never answers the command
                    elif (low == "monitor" or low.startswith("monitor ")) and self.monitor is not None:
                        conn.sendall(b"OK\n")
                        self.stream(conn, fmt)
                        return
                    else:
                        conn.sendall(("ERROR: Unknown command %s\n" % cmd).encode())

    def stream(self, conn, fmt):
        try:
            for delay, event in self.monitor:
                if self.stop.wait(delay):
                    return
                conn.sendall(event if isinstance(event, bytes) else monitor_event(fmt, **event))
        except OSError:
            return
        finally:
            if self.events_first:
                self.release()
        if self.monitor_end == "open":
            self.stop.wait(30)

    def release(self):
        """Answers the queries held by hold_after, and every later one."""
        self.released.set()

    def report(self, conn, fmt):
        self.asked += 1
        if self.hold_after is not None and self.asked > self.hold_after:
            while not self.released.wait(0.05) and not self.stop.is_set():
                pass
        if self.huge:
            chunk = b"  Rank 1 -- GPU 1 managed by process 2 on node 10.0.0.1\n" * 1024
            sent = 0
            try:
                while sent < self.huge and not self.stop.is_set():
                    conn.sendall(chunk)
                    sent += len(chunk)
            except OSError:
                pass
            return
        if self.sequence is not None:
            body = self.sequence[min(self.served, len(self.sequence) - 1)]
            self.served += 1
        else:
            body = self.json_report if fmt == "json" else self.text
        if self.stall_after is not None:
            conn.sendall(body[: self.stall_after])
            self.stop.wait(30)
            return
        # Streamed in pieces, as RAS does (header first, the table later);
        # a big job's report in pieces of 64 KiB (97 bytes at a time, 71 MB
        # would take the stand-in longer than the client).
        piece = 97 if len(body) < (1 << 20) else 1 << 16
        try:
            for i in range(0, len(body), piece):
                conn.sendall(body[i : i + piece])
        except OSError:
            pass  # the client hung up (a reply it refused)

    def close(self):
        self.stop.set()
        self.sock.close()


def main():
    """ras_stand_in.py frozen|dead|healthy|laggards PORT_FILE [PORT]: serves, until
    killed, a job for `ras watch` on 127.0.0.1:PORT (any free port without
    PORT), and writes the port it listens on to PORT_FILE once it listens.
    frozen: AllReduce counts frozen with rank 2 two behind (a stuck job).
    dead: counts advancing, and RAS's event stream (MONITOR) declaring rank
    3's process dead at once (NCCL 2.29+'s PEER_DEAD); the stream stays open.
    healthy: counts advancing at every query, no event stream (pre-2.29).
    laggards: a big job frozen, 4,096 ranks on 512 nodes, 60 % of them one
    AllReduce behind (big_ras_report.py's report: findings naming thousands)."""
    import os
    import sys
    import time

    if len(sys.argv) not in (3, 4) or sys.argv[1] not in ("frozen", "dead", "healthy", "laggards"):
        sys.exit("usage: ras_stand_in.py frozen|dead|healthy|laggards PORT_FILE [PORT]")
    port = int(sys.argv[3]) if len(sys.argv) == 4 else 0
    host = lambda r: "10.88.0.%d" % (11 + r // 2)
    if sys.argv[1] == "frozen":
        counts = [500, 500, 498, 500]
        ranks = [(r, host(r), 7100 + r, r % 2, {"AllReduce": c}) for r, c in enumerate(counts)]
        s = StandIn(sequence=[json_report([("0x7f00aa55c3e1d2b9", ranks, [])])], port=port)
    elif sys.argv[1] == "laggards":
        import io
        import big_ras_report
        out = io.StringIO()
        big_ras_report.json_report(4096, 60, -1, None, False, out)
        s = StandIn(sequence=[out.getvalue().encode()], port=port)
    elif sys.argv[1] == "healthy":
        sequence = [json_report([("0x51d2c0ffee0a7b13",
                                  [(r, host(r), 7300 + r, r % 2, {"AllReduce": 10 * (n + 1)})
                                   for r in range(4)], [])]) for n in range(400)]
        s = StandIn(sequence=sequence, port=port)
    else:
        sequence = [json_report([("0x3c19e0d7a4b2f681",
                                  [(r, host(r), 7200 + r, r % 2, {"AllReduce": 100 * (n + 1)})
                                   for r in range(4)], [])]) for n in range(50)]
        dead = {"event": "PEER_DEAD", "pid": 7203, "node": host(3), "gpus": [1]}
        s = StandIn(sequence=sequence, monitor=[(0.1, dead)], monitor_end="open", port=port)
    with open(sys.argv[2] + ".tmp", "w") as f:
        f.write("%d\n" % s.port)
    os.replace(sys.argv[2] + ".tmp", sys.argv[2])
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
