// Which ranks share a physical machine, and whether they outnumber its CPUs.
// Hostnames cannot tell: network namespaces, containers and pods on one
// machine each have their own hostname but share its kernel and CPUs. The
// kernel's boot id (/proc/sys/kernel/random/boot_id) is the same inside all
// of them, so ranks with equal boot ids share a machine. More busy-polling
// ranks than CPUs on a machine make small-message latency measure the
// scheduler, not the fabric; the analyzer leaves latency of such runs unjudged.
#pragma once

#include <string>
#include <vector>

namespace fabtrack::harness {

struct MachinePlacement {
  int machines = 0;               // distinct boot ids
  int max_ranks_per_machine = 0;  // the most crowded machine's ranks
  int cpus_per_machine = 0;       // the CPUs those ranks may run on, together
  bool Oversubscribed() const { return max_ranks_per_machine > cpus_per_machine; }
};

// `boot_ids[r]` and `cpus[r]` as rank r saw them (empty id: unknown, that
// rank counts as its own machine; cpus: the CPU ids it may run on). A
// machine's CPUs are the union of its ranks' sets: ranks bound to one core
// each see one CPU but do not share it. Pure.
MachinePlacement PlaceOnMachines(const std::vector<std::string>& boot_ids,
                                 const std::vector<std::vector<int>>& cpus);

// This process's boot id ("" when unreadable).
std::string ReadBootId(const std::string& proc_root = "/proc");
// The CPU ids this process may run on (sched_getaffinity: binding and
// cpusets count, CPU quotas do not).
std::vector<int> UsableCpus();
// "0,1,5" and back, for gathering over MPI. Parsing skips what is not a
// number.
std::string CpuListText(const std::vector<int>& cpus);
std::vector<int> ParseCpuList(const std::string& text);

}  // namespace fabtrack::harness
