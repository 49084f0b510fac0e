// The JSON of one node's topology and of the rail check's findings, as
// `fabtrack topology check --format json` prints them (README):
//   gpus:     [{"gpu", "bus_id", "nic", "path", "gdr", "numa_node", "link_gts", "link_width"}]
//   nics:     [{"name", "speed_mbps", "port", "gdr", "bus_id", "numa_node", "link_gts",
//               "link_width"}]
//   findings: [{"kind", "severity", "gpu", "nic", "message"}]
// A GPU's "gdr" is the pair's: false when the GPU or its NIC cannot do
// GPUDirect RDMA, true when both can, null when the source does not say.
// Unknown values are null; a GPU without a NIC has "nic" and "path" null.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "core/node_topology.h"

namespace fabtrack {

// GPUDirect RDMA between `gpu` and its NIC (see above).
std::optional<bool> PairGdr(const NodeTopology& topology, const TopoGpu& gpu);

nlohmann::json TopologyGpusToJson(const NodeTopology& topology);
nlohmann::json TopologyNicsToJson(const NodeTopology& topology);
nlohmann::json TopologyFindingsToJson(const std::vector<TopologyFinding>& findings);

}  // namespace fabtrack
