// The fleet diff (issue 21 item 3): nodes of one cluster are built alike, so
// a node whose wiring differs from the majority's is the one to look at.
// Pure: the newest topology of every host in, findings out.
//
// For each GPU (by name) the rail "nic path" most hosts share is the
// cluster's; a host whose GPU has another rail gets a `topology_odd_node`
// finding naming both ("node17: GPU3 -> mlx5_3 is SYS, 63 other nodes PIX"),
// critical when its path is SYS and the majority's is not, else a warning.
// A host with fewer or more GPUs or NICs than the majority is one finding.
// Nothing is said where no value is shared by more than half of the hosts
// (no majority), or with fewer than three hosts.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/node_topology.h"
#include "core/topology_finding.h"

namespace fabtrack {

std::vector<TopologyFinding> DiffFleet(const std::map<std::string, NodeTopology>& by_host);

}  // namespace fabtrack
