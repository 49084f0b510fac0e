// The JSON of one node's topology and of the rail check's findings, as
// `fabtrack topology check --format json` prints them (README):
//   gpus:     [{"gpu", "bus_id", "nic", "path", "gdr", "numa_node", "link_gts", "link_width",
//               "gpu_gdr", "rank"}]
//   nics:     [{"name", "speed_mbps", "port", "gdr", "bus_id", "numa_node", "link_gts",
//               "link_width"}]
//   findings: [{"kind", "severity", "gpu", "nic", "message"}]
// A GPU's "gdr" is the pair's: false when the GPU or its NIC cannot do
// GPUDirect RDMA, true when both can, null when the source does not say.
// "gpu_gdr" is the GPU's own flag. Unknown values are null; a GPU without a
// NIC has "nic" and "path" null.
#pragma once

#include <optional>
#include <vector>

#include "core/json_instances.h"
#include "core/node_topology.h"
#include "core/topology_finding.h"

namespace fabtrack {

// GPUDirect RDMA between `gpu` and its NIC (see above).
std::optional<bool> PairGdr(const NodeTopology& topology, const TopoGpu& gpu);

nlohmann::json TopologyGpusToJson(const NodeTopology& topology);
nlohmann::json TopologyNicsToJson(const NodeTopology& topology);
nlohmann::json TopologyFindingsToJson(const std::vector<TopologyFinding>& findings);

// The whole node, {"gpus": [...], "nics": [...]}, as stored
// (node_topologies.topology), and back; nullopt with `why` for a document
// that is not one.
nlohmann::json NodeTopologyToJson(const NodeTopology& topology);
std::optional<NodeTopology> NodeTopologyFromJson(const nlohmann::json& j, std::string* why);

// Identifies a node's wiring: the SHA-256 of its canonical JSON.
std::string TopologyFingerprint(const NodeTopology& topology);

}  // namespace fabtrack
