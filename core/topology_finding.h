// What the rail check and the fleet diff say about nodes' wiring.
#pragma once

#include <string>

#include "core/finding.h"

namespace fabtrack {

// What the rail check (analyzer/topology/rail_check.h) and the fleet diff
// (analyzer/topology/fleet_diff.h) conclude about nodes' wiring. Apart from
// node_topology.h so that the model does not bring Finding's name along.
struct TopologyFinding {
  // shared_nic | nic_far | gdr_off | link_degraded | no_nic (rail check);
  // topology_odd_node (fleet diff)
  std::string kind;
  Severity severity = Severity::kWarning;
  std::string gpu;  // "GPU3"; for shared_nic the GPUs, comma-separated
  std::string nic;  // "mlx5_3"
  std::string message;
  std::string host;  // the node, for the fleet diff; empty for one node's check

  friend bool operator==(const TopologyFinding&, const TopologyFinding&) = default;
};

}  // namespace fabtrack
