// What `ras watch` adds to its verdict from what fabtrack knows of the job's
// hosts beside RAS (issue 34 item 2): each rank's NIC, its GPU's nearest in
// the host's stored topology, and where a finding's hosts differ from the
// job's other hosts in firmware, link rate or GPU/NIC wiring. The question
// is "what is different about the node holding the job": a host whose link
// trained down to 200 Gb/s or that missed a firmware update among hosts
// that did not. Pure.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/ras_snapshot.h"

namespace fabtrack::analyzer {

// The topology index ("GPU3") of the GPU a rank names: the NVML index where
// RAS printed one ("1 (NVML 3)" -> 3: CUDA_VISIBLE_DEVICES renumbers CUDA's
// devices, topologies number them as NVML does), else the CUDA index
// ("1" -> 1); nullopt when it names none, or several ("0,1": a process
// of RAS's events that drives two GPUs).
std::optional<int> TopologyGpuIndex(const std::string& gpu);

// The host's newest link rate per port in `readings`: "link mlx5_0/1" ->
// "400 Gb/s" (the key of core/node_facts.h; the value as the samples store
// it, in Gb/s).
std::map<std::string, std::string> LinkFactsOf(const std::string& host,
                                               const std::vector<HostPortReading>& readings);

// At most this many node-fact lines per finding, then one saying how many
// more (a finding may name thousands of hosts).
inline constexpr size_t kNodeFactLines = 20;

// Names each rank's NIC (RasWatchRank::nic) from its host's topology, and
// adds to each finding (RasWatchFinding::node_facts) each fact of its ranks'
// hosts that differs from the value most of the job's other hosts with that
// fact share (`job_hosts`: every host the watch mapped a rank or event to;
// facts from `known` and the links of `readings`). A fact no other host has,
// or one where the other hosts are evenly split, says nothing.
void AttachNodeFacts(const RasHostKnowledge& known, const std::vector<HostPortReading>& readings,
                     const std::set<std::string>& job_hosts, RasWatchVerdict* verdict);

}  // namespace fabtrack::analyzer
