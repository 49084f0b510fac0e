#!/usr/bin/env python3
"""A month of nightly nccl-tests outputs, concatenated as a log collector keeps them.

The shape `fabtrack parse` meets in practice (issue 30): hundreds of short runs,
each with its own NCCL_DEBUG=INFO lines (bootstrap, plugin, NET/IB device list,
`comm ... nRanks` init lines, ring/tree listings, channel connection lines,
Init COMPLETE) interleaved across ranks, then a nccl-tests table and trailer.
Written in the image of the reference captures (a16's newest nccl-tests header,
b07/b23's init lines, b14's channel lines): nights run on different node pairs
of a 32-node pool, NCCL is upgraded mid-month (2.21.5 with the bare version
banner, then 2.27.6 with the version as an INFO line and the NET plugin lines),
nccl-tests likewise; pids, bus ids, comm ids and the numbers vary per run.

One month is generated from SEED and repeated until SIZE_MB is reached (a month
is a few MB; the benchmark needs hundreds).

Usage: bench/make_nightly_month.py OUT SIZE_MB [SEED]   (SIZE_MB 0: one month)
"""
import random
import sys

COLLECTIVES = [  # program, collective word in the header, bytes per element scale
    ("all_reduce_perf", "sum"),
    ("all_gather_perf", "none"),
    ("reduce_scatter_perf", "sum"),
    ("alltoall_perf", "none"),
    ("broadcast_perf", "none"),
    ("sendrecv_perf", "sum"),
]
BUS_IDS = ["18", "2a", "3a", "5d", "9a", "ab", "ba", "db"]
NICS = ["mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11"]


def night_runs(rng, night):
    """The runs of one night: (program, redop) for each collective run that night."""
    return COLLECTIVES if night % 7 != 6 else COLLECTIVES[:2]  # a short Sunday


def make_run(rng, night, program, redop):
    new = night >= 15  # NCCL 2.27.6 / nccl-tests 2.17 from the 16th
    nccl = "2.27.6" if new else "2.21.5"
    cuda = "12.9" if new else "12.4"
    code = 22706 if new else 22105
    nodes = rng.sample(range(1, 33), 2 if night % 5 else 1)
    hosts = [f"gpu-b{n:02d}" for n in nodes]
    gpus = 8
    nranks = len(hosts) * gpus
    pids = {h: rng.randint(2000, 4_000_000) for h in hosts}
    comm = {r: f"0x{rng.randrange(0x5500_0000_0000, 0x5fff_ffff_ffff):x}" for r in range(nranks)}
    comm_id = f"0x{rng.getrandbits(64):016x}"
    out = []
    if new:
        out.append(f"# nccl-tests version 2.17.6 nccl-headers={code} nccl-library={code}")
        out.append(f"# Collective test starting: {program}")
    out.append(
        "# nThread 1 nGpus 1 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 "
        "iters: 20 agg iters: 1 validation: 1 graph: 0" + (" unalign: 0" if new else ""))
    out.append("#")
    out.append("# Using devices")
    for r in range(nranks):
        h = hosts[r // gpus]
        bus = f"[0000:{BUS_IDS[r % gpus]}:00]" if new else f"[0x{BUS_IDS[r % gpus]}]"
        out.append(f"#  Rank {r:2d} Group  0 Pid {pids[h] + r % gpus:6d} on {h:>10} device "
                   f"{r % gpus:2d} {bus} NVIDIA H100 80GB HBM3")

    def prefix(r, tid_offset=0):
        h = hosts[r // gpus]
        pid = pids[h] + r % gpus
        return f"{h}:{pid}:{pid + tid_offset} [{r % gpus}] NCCL INFO "

    # Init, per rank, interleaved the way several processes write one stream.
    phases = []
    boot = []
    for r in range(nranks):
        p = prefix(r)
        ip = f"10.{40 + nodes[r // gpus] // 8}.{nodes[r // gpus]}.{r % gpus + 10}"
        lines = [p + ("Bootstrap: Using" if new else "Bootstrap : Using") + f" ib0:{ip}<0>"]
        if new:
            lines.append(p + "cudaDriverVersion 12090")
            lines.append(p + f"NCCL version {nccl}+cuda{cuda}")
            lines.append(p + "NCCL_IB_HCA set by environment to mlx5")
        else:
            lines.append(p + "NET/Plugin : dlerror=libnccl-net.so: cannot open shared object "
                         "file: No such file or directory No plugin found (libnccl-net.so), "
                         "using internal implementation")
            lines.append(p + "cudaDriverVersion 12040")
            lines.append(p + "NCCL_IB_HCA set by environment to mlx5")
        boot.append(lines)
    phases.append(boot)
    nets = []
    for r in range(nranks):
        p = prefix(r, 71 + r % gpus)
        ip = f"10.{40 + nodes[r // gpus] // 8}.{nodes[r // gpus]}.{r % gpus + 10}"
        devs = " ".join(f"[{i}]{n}:1/IB" for i, n in enumerate(NICS))
        lines = []
        if new:
            lines.append(p + "NET/Plugin: Could not find: libnccl-net.so. Using internal net plugin.")
        lines.append(p + f"NET/IB : Using {devs} [RO]; OOB ib0:{ip}<0>")
        if new:
            lines.append(p + "Initialized NET plugin IB")
            lines.append(p + "Assigned NET plugin IB to comm")
        lines.append(p + "Using network IB")
        lines.append(p + f"DMA-BUF is available on GPU device {r % gpus}")
        lines.append(p + f"ncclCommInitRank{'Config' if new else ''} comm {comm[r]} rank {r} "
                     f"nranks {nranks} cudaDev {r % gpus} nvmlDev {r % gpus} busId "
                     f"{BUS_IDS[r % gpus]}000 commId {comm_id} - Init START")
        lines.append(p + f"comm {comm[r]} rank {r} nRanks {nranks} nNodes {len(hosts)} "
                     f"localRanks {gpus} localRank {r % gpus} MNNVL 0")
        nets.append(lines)
    phases.append(nets)
    channels = 4
    rings = []
    for r in range(nranks):
        p = prefix(r, 71 + r % gpus)
        lines = []
        if r == 0:
            order = " ".join(str(x) for x in range(nranks))
            for c in range(channels):
                lines.append(p + f"Channel {c:02d}/{channels:02d} : {order}")
        nxt, prv = (r + 1) % nranks, (r - 1) % nranks
        lines.append(p + "Trees " + " ".join(
            f"[{c}] {nxt if r % gpus != gpus - 1 else -1}/-1/-1->{r}->{prv}" for c in range(channels)))
        lines.append(p + f"P2P Chunksize set to 524288")
        rings.append(lines)
    phases.append(rings)
    conns = []
    for r in range(nranks):
        p = prefix(r, 90 + r % gpus)
        nxt = (r + 1) % nranks
        lines = []
        for c in range(channels):
            bus_r, bus_n = BUS_IDS[r % gpus] + "000", BUS_IDS[nxt % gpus] + "000"
            if r // gpus == nxt // gpus:
                kind = "P2P/CUMEM/read" if new else "P2P/IPC/read"
                lines.append(p + f"Channel {c:02d}/0 : {r}[{r % gpus}] -> {nxt}[{nxt % gpus}] via {kind}")
            else:
                nic = (r + c) % len(NICS)
                gdr = "GDRDMA" if rng.random() > 0.02 else "GDRDMA(PCI)" if new else "GDRDMA"
                lines.append(p + f"Channel {c:02d}/0 : {r}[{bus_r}] -> {nxt}[{bus_n}] [send] via "
                             f"NET/IB/{nic}/{gdr}")
                lines.append(p + f"Channel {c:02d}/0 : {nxt}[{bus_n}] -> {r}[{bus_r}] [receive] via "
                             f"NET/IB/{nic}/{gdr}")
        lines.append(p + "Connected all rings" + (", use ring PXN 0 GDR 1" if new else ""))
        lines.append(p + "Connected all trees")
        lines.append(p + "threadThresholds 8/8/64 | 128/8/64 | 512 | 512")
        lines.append(p + f"{channels} coll channels, 4 collnet channels, 0 nvls channels, "
                     f"{channels} p2p channels, 2 p2p channels per peer")
        lines.append(p + f"ncclCommInitRank{'Config' if new else ''} comm {comm[r]} rank {r} "
                     f"nranks {nranks} cudaDev {r % gpus} nvmlDev {r % gpus} busId "
                     f"{BUS_IDS[r % gpus]}000 commId {comm_id} - Init COMPLETE")
        conns.append(lines)
    phases.append(conns)
    for phase in phases:
        cursors = [0] * len(phase)
        pending = [r for r in range(len(phase)) for _ in phase[r]]
        rng.shuffle(pending)
        for r in pending:
            out.append(phase[r][cursors[r]])
            cursors[r] += 1
        if phase is boot and not new:
            out.append(f"NCCL version {nccl}+cuda{cuda}")
    if rng.random() < 0.05:
        r = rng.randrange(nranks)
        h = hosts[r // gpus]
        out.append(f"{h}:{pids[h] + r % gpus}:{pids[h] + r % gpus + 95} [{r % gpus}] "
                   "transport/net_ib.cc:1102 NCCL WARN NET/IB: mlx5dv_get_data_direct_sysfs_path "
                   f"failed for {NICS[r % len(NICS)]}, falling back to PCI path")
    out.append("#")
    out.append("#                                                              out-of-place"
               "                       in-place          ")
    out.append("#       size         count      type   redop    root     time   algbw   busbw "
               "#wrong     time   algbw   busbw #wrong ")
    out.append("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)"
               "            (us)  (GB/s)  (GB/s)       ")
    peak = rng.uniform(180, 200) if len(hosts) > 1 else rng.uniform(330, 360)
    busbws = []
    size = 8
    while size <= 134217728:
        count = size // 4
        t = 18.0 + size / (peak * 1e3) * (2 * (nranks - 1) / nranks)
        rows = []
        for _ in range(2):
            tt = t * rng.uniform(0.97, 1.05)
            algbw = size / tt / 1e3
            busbw = algbw * 2 * (nranks - 1) / nranks
            rows.append((tt, algbw, busbw))
        busbws.append(rows[0][2])
        def fmt_t(x):
            return f"{x:8.2f}" if x < 10000 else f"{x:8.1f}" if x < 100000 else f"{x:8.0f}"
        out.append(f"{size:12d}  {count:12d}     float  {redop:>6}      -1 "
                   f"{fmt_t(rows[0][0])} {rows[0][1]:7.2f} {rows[0][2]:7.2f}       0 "
                   f"{fmt_t(rows[1][0])} {rows[1][1]:7.2f} {rows[1][2]:7.2f}       0")
        size *= 2
    out.append("# Out of bounds values : 0 OK")
    out.append(f"# Avg bus bandwidth    : {sum(busbws) / len(busbws):g} ")
    out.append("#")
    if new:
        out.append(f"# Collective test concluded: {program}")
        out.append("#")
    for r in range(nranks):
        out.append(prefix(r) + f"comm {comm[r]} rank {r} nranks {nranks} cudaDev {r % gpus} "
                   f"busId {BUS_IDS[r % gpus]}000 - Destroy COMPLETE")
    return "\n".join(out) + "\n"


def month(seed):
    rng = random.Random(seed)
    parts = []
    for night in range(30):
        for program, redop in night_runs(rng, night):
            parts.append(make_run(rng, night, program, redop))
    return "".join(parts)


def main():
    out, size_mb = sys.argv[1], int(sys.argv[2])
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 30
    one = month(seed).encode()
    target = size_mb * 1_000_000
    with open(out, "wb") as f:
        f.write(one)
        written = len(one)
        while written < target:
            f.write(one)
            written += len(one)


if __name__ == "__main__":
    main()
