// topology_odd_node (warning; critical when the odd path is SYS): the fleet
// diff of the wiring `fabtrack topology ingest` stored for every host (issue
// 21 item 3). Nodes of a cluster are built alike; a node whose GPU reaches
// another NIC, or the same NIC by a longer path, than most of its peers is
// the one whose collectives will lag ("node17: GPU3 -> mlx5_3 is SYS, 63
// other nodes PIX"). Judged on every analysis (the wiring has no night): the
// finding stays open until the node is re-ingested wired like the others.
#include "analyzer/detector.h"
#include "analyzer/topology/fleet_diff.h"

namespace fabtrack::analyzer::topology_odd_node_detector {
namespace {

void Detect(const InputIndex& input, const DetectorSettings&, std::vector<Finding>* findings) {
  for (const TopologyFinding& t : DiffFleet(input.input().fleet_topologies)) {
    Finding f;
    f.kind = "topology_odd_node";
    f.severity = t.severity;
    // One problem per node and GPU: re-ingesting the same wiring refreshes it.
    f.subject = t.host + (t.gpu.empty() ? "" : " " + t.gpu);
    f.host = t.host;
    if (!t.nic.empty()) f.device = t.nic;
    f.message = t.message;
    f.evidence = {{"gpu", t.gpu}, {"nic", t.nic}, {"host", t.host}};
    findings->push_back(std::move(f));
  }
}

const DetectorRegistrar kRegistered({
    .name = "topology_odd_node",
    .summary = "a node wired differently from most of its cluster (GPU -> NIC path), from "
               "`fabtrack topology ingest` (warning, critical at SYS)",
    .params = {},
    .detect = Detect,
});

}  // namespace
}  // namespace fabtrack::analyzer::topology_odd_node_detector
