// `fabtrack topology ingest`: store one node's wiring for its cluster, then
// compare the cluster's nodes (the fleet diff). A database that cannot be
// used prints its reason to `err` and throws CommandExit{kExitDatabaseError}.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "core/database_choice.h"
#include "core/node_topology.h"
#include "core/topology_finding.h"

namespace fabtrack::app {

struct TopologyIngestResult {
  bool stored = false;                 // false: the host's newest stored wiring is the same
  int hosts = 0;                       // hosts of the cluster with a stored topology
  std::vector<TopologyFinding> fleet;  // DiffFleet over them
};

TopologyIngestResult IngestNodeTopology(const DatabaseChoice& choice, const std::string& cluster,
                                        const std::string& host, const std::string& format,
                                        const NodeTopology& topology,
                                        const std::string& source_path, std::ostream& err);

}  // namespace fabtrack::app
