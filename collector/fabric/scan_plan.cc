#include "collector/fabric/scan_plan.h"

namespace fabtrack::fabric {

std::vector<PmaQuery> PlanCapabilityReads(const FabricScan& discovered) {
  std::vector<PmaQuery> out;
  for (const FabricNode& n : discovered.nodes) {
    if (n.lid && *n.lid > 0) out.push_back({n.guid, 0, *n.lid, kClassPortInfo});
  }
  return out;
}

std::vector<PmaQuery> PlanAggregateReads(const FabricScan& discovered,
                                         const std::map<std::string, PmaCapabilities>& caps,
                                         bool errors_only) {
  std::vector<PmaQuery> out;
  for (const FabricNode& n : discovered.nodes) {
    if (n.type != "switch" || !n.lid || *n.lid <= 0) continue;
    auto cap = caps.find(n.guid);
    if (cap == caps.end() || !cap->second.all_port_select()) continue;
    if (!errors_only && (!cap->second.extended_counters() || cap->second.additional_extended()))
      continue;
    out.push_back({n.guid, kAllPorts, *n.lid, kPortCounters});
  }
  return out;
}

bool ErrorsKnownZero(const std::map<std::string, uint64_t>& aggregate, bool xmit_wait) {
  for (const std::string& name : ErrorCounterNames(xmit_wait)) {
    auto it = aggregate.find(name);
    if (it == aggregate.end() || it->second != 0) return false;
  }
  return true;
}

std::vector<PmaQuery> PlanCounterReads(const FabricScan& discovered,
                                       const std::map<std::string, PmaCapabilities>& caps,
                                       const std::set<std::string>& errors_zero, bool errors_only) {
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
    const PmaCapabilities& c = cap->second;
    if (errors_only) {
      if (errors_zero.count(p.node_guid)) continue;
      out.push_back({p.node_guid, p.port, lid,
                     c.additional_extended() ? kPortCountersExtended : kPortCounters});
      continue;
    }
    const bool extended_says_all =
        c.additional_extended() || (c.extended_counters() && errors_zero.count(p.node_guid));
    if (!extended_says_all) out.push_back({p.node_guid, p.port, lid, kPortCounters});
    if (c.extended_counters()) {
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
