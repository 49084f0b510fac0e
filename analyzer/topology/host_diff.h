// What differs between the nodes of one file (issue 30): people post two
// hosts' dumps side by side because one of them is slow, and the difference
// is the finding (the same NIC slot at x8 on one, x16 on the other). Pure.
//
// GPUs are matched by name, NICs by bus id where both hosts have one (a slot),
// else by position. For every value one host has and another has otherwise
// (a GPU's NIC, path, PCIe width and speed, NUMA node, GDR; a NIC's name,
// port rate, PCIe width and speed, NUMA node, GDR), and for GPU and NIC
// counts, the host that differs gets one `host_differs` warning naming both
// values and hosts: the differing host is the one off the majority's value,
// or, with no majority (two hosts), the second against the first.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/node_topology.h"
#include "core/topology_finding.h"

namespace fabtrack {

// Findings per host, in the order of `hosts`; each has its host set.
std::vector<std::vector<TopologyFinding>> DiffHosts(
    const std::vector<std::pair<std::string, const NodeTopology*>>& hosts);

}  // namespace fabtrack
