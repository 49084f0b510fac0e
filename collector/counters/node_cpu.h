// Reads a node's CPUs once (`fabtrack counters cpu`, the sweep's CPU
// bracket): /proc/stat, /proc/loadavg and every user process's
// /proc/PID/stat under a proc root (tests point it at a fake tree), parsed by
// collector/parse/proc_cpu_parser. The edge that reads files; what the two
// samples of a run mean is core/node_cpu.h's CutNodeCpuWindow.
#pragma once

#include <string>

#include "core/node_cpu.h"

namespace fabtrack {

struct NodeCpuReading {
  NodeCpuSample sample;
  std::string error;  // non-empty: /proc/stat or /proc/loadavg unreadable (no sample)
};

// `self_pid`: the sampler, left out with the processes it runs under (its
// parent chain: the launcher's agent, orted, srun's step). Processes whose
// stat cannot be read (gone since the listing) are skipped. The namespace
// rule of NodeCpuSample::processes compares proc_root/PID/ns/net links: the
// sampler's own namespace is a node of its own when it is not the one most
// of the machine's processes are in (init's link is not always readable);
// processes whose link cannot be read (another user's, not root) belong to
// no namespace then.
NodeCpuReading ReadNodeCpu(const std::string& proc_root, int self_pid);

}  // namespace fabtrack
