#include "collector/fabric/scan_plan.h"

namespace fabtrack::fabric {

std::vector<PmaQuery> PlanCapabilityReads(const FabricScan& discovered) {
  std::vector<PmaQuery> out;
  for (const FabricNode& n : discovered.nodes) {
    if (n.lid && *n.lid > 0) out.push_back({n.guid, 0, *n.lid, kClassPortInfo});
  }
  return out;
}

std::vector<PmaQuery> PlanCounterReads(const FabricScan& discovered,
                                       const std::map<std::string, PmaCapabilities>& caps) {
  std::map<std::string, const FabricNode*> nodes;
  for (const FabricNode& n : discovered.nodes) nodes[n.guid] = &n;
  std::vector<PmaQuery> out;
  for (const FabricPort& p : discovered.ports) {
    auto node = nodes.find(p.node_guid);
    auto cap = caps.find(p.node_guid);
    if (node == nodes.end() || cap == caps.end()) continue;
    bool is_switch = node->second->type == "switch";
    if (is_switch && p.port == 0) continue;
    int lid = is_switch ? node->second->lid.value_or(0) : p.lid.value_or(0);
    if (lid <= 0) continue;
    out.push_back({p.node_guid, p.port, lid, kPortCounters});
    if (cap->second.extended_counters()) {
      out.push_back({p.node_guid, p.port, lid, kPortCountersExtended});
    }
  }
  return out;
}

std::string NoAnswerText(const ScanPolicy& policy) {
  return "no answer after " + std::to_string(policy.retries + 1) + " tries (" +
         std::to_string(policy.timeout_ms) + " ms each)";
}

}  // namespace fabtrack::fabric
