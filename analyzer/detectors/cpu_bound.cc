// cpu_bound (warning): a run whose transport is CPU-driven had nodes busy
// with other work, so what it measured is partly the CPUs, not the fabric.
//
// Over sockets (NCCL's NET/Socket) or the harness's MPI backend (host-memory
// reductions over MPI, TCP on an Ethernet cluster) every byte is copied by a
// CPU and every message waits for a rank to be scheduled: a node whose CPUs
// are taken by other work (a job left running, a backup, a noisy neighbour
// on a VM's host) slows the whole collective, and that reads as a slow
// fabric. The sweep's CPU bracket records each node's CPUs over the run
// (core/node_cpu.h, schema 023); a node is busy when processes other than the
// benchmark held at least `other_share` of its CPUs (and at least
// `other_min_cpus`) on average, or its hypervisor stole at least
// `steal_fraction` of its CPU time (NodeCpuBusy). The finding names the busy
// nodes and what kept them busy. The same run's regressions, scaling drop and
// jitter are its effects (analyzer/problems.h SharedCauses): they fold into
// this problem as evidence and do not raise it above a warning, since a
// CPU-bound run says nothing about the fabric either way. Runs over RDMA
// (the CPU is not in the data path), single-node runs (no fabric to blame:
// their figures are the node's, busy or not) and runs without windows say
// nothing.
#include <algorithm>
#include <string>
#include <vector>

#include "analyzer/detector.h"
#include "analyzer/run_facts.h"
#include "core/text.h"

namespace fabtrack::analyzer::cpu_bound_detector {
namespace {

// Why the run's transport puts the CPU in the data path, or empty.
std::string CpuDrivenTransport(const RunView& run) {
  if (std::find(run.transports.begin(), run.transports.end(), "NET/Socket") !=
      run.transports.end()) {
    return "NCCL's NET/Socket";
  }
  if (run.network == "Socket") return "NCCL's Socket network";
  if (run.backend == "mpi") return "MPI with host-memory reductions";
  return {};
}

void Detect(const InputIndex& input, const DetectorSettings& settings,
            std::vector<Finding>* findings) {
  const CpuBusyThresholds thresholds{.other_share = settings["other_share"],
                                     .other_min_cpus = settings["other_min_cpus"],
                                     .steal_fraction = settings["steal_fraction"]};
  const auto& windows = input.input().run_cpu_windows;
  for (const RunView* run : input.judged()) {
    auto it = windows.find(run->id);
    if (it == windows.end() || !MultiNode(*run)) continue;
    const std::string transport = CpuDrivenTransport(*run);
    if (transport.empty()) continue;
    std::vector<const NodeCpuWindow*> busy;
    nlohmann::json nodes = nlohmann::json::array();
    for (const NodeCpuWindow& w : it->second) {
      const bool is_busy = NodeCpuBusy(w, thresholds);
      if (is_busy) busy.push_back(&w);
      nlohmann::json node = NodeCpuWindowToJson(w);
      node["busy"] = is_busy;
      nodes.push_back(std::move(node));
    }
    if (busy.empty()) continue;
    // The busiest first.
    std::stable_sort(busy.begin(), busy.end(), [](const NodeCpuWindow* a, const NodeCpuWindow* b) {
      return a->other_cpus / std::max(1, a->cpus) > b->other_cpus / std::max(1, b->cpus);
    });
    std::vector<std::string> names, details;
    for (const NodeCpuWindow* w : busy) {
      names.push_back(w->host);
      details.push_back(w->host + ": " + DescribeNodeCpu(*w));
    }
    Finding f = FindingForRun(*run, ScalingFamilyName(*run), Severity::kWarning);
    if (busy.size() == 1) f.host = busy.front()->host;
    f.value = static_cast<double>(busy.size());
    f.baseline = 0;
    f.unit = "busy nodes";
    f.message = "CPU-bound: node" + std::string(busy.size() == 1 ? " " : "s ") + Join(names, ", ") +
                (busy.size() == 1 ? " was" : " were") + " busy during this " +
                std::to_string(run->nodes.value_or(static_cast<int>(it->second.size()))) +
                "-node run over " + transport +
                " (the CPU is in the data path): " + Join(details, "; ") +
                ". Its figures measure those CPUs, not the fabric";
    f.evidence = {{"transport", transport},
                  {"busy_hosts", names},
                  {"nodes", std::move(nodes)},
                  {"thresholds",
                   {{"other_share", thresholds.other_share},
                    {"other_min_cpus", thresholds.other_min_cpus},
                    {"steal_fraction", thresholds.steal_fraction}}}};
    findings->push_back(std::move(f));
  }
}

const DetectorRegistrar kRegistered({
    .name = "cpu_bound",
    .summary = "a socket/MPI-over-TCP run whose nodes were busy with other work (warning); its "
               "regressions fold into it",
    .params = {{"other_share", 0.25,
                "busy: other processes held at least this share of the node's CPUs on average"},
               {"other_min_cpus", 0.5, "... and at least this many CPUs"},
               {"steal_fraction", 0.10, "busy: the hypervisor stole at least this share"}},
    .detect = Detect,
});

}  // namespace
}  // namespace fabtrack::analyzer::cpu_bound_detector
