// What a run's nodes were when it ran, beside the versions the run records
// itself (issue 21 item 4): each HCA's firmware, each port's link rate and
// width, the kernel, and the node's topology fingerprint. Stored with the
// run (runs.node_facts) so that `fabtrack diff` and a change point's "what
// changed" name a firmware update, a link that trained down or a new kernel.
// Keys are stable (they are compared run against run):
//   "kernel"          "6.8.0-45-generic"
//   "fw_ver mlx5_0"   "28.39.1002"
//   "link mlx5_0/1"   "400 Gb/sec (4X NDR)"   (rate and width as sysfs says)
//   "topology"        the node's TopologyFingerprint
// A value the nodes disagree on lists each value with its hosts, most hosts
// first: "28.39.1002 (node1,node2); 28.40.1000 (node3)". Pure.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/port_sample.h"

namespace fabtrack {

using NodeFacts = std::map<std::string, std::string>;

// One node's facts from its port sample (fw_ver and link of every port, the
// kernel release when the sample has it).
NodeFacts HostFactsFromPorts(const HostPorts& host);

// The run's facts from its nodes' (host, facts): a fact every node that has
// it agrees on is its value; otherwise each value with its hosts.
NodeFacts MergeNodeFacts(const std::vector<std::pair<std::string, NodeFacts>>& per_host);

}  // namespace fabtrack
