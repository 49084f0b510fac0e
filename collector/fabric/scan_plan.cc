#include "collector/fabric/scan_plan.h"

#include <string_view>

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
  std::map<std::string_view, const FabricNode*> nodes;
  for (const FabricNode& n : discovered.nodes) nodes[n.guid] = &n;
  std::vector<PmaQuery> out;
  // A node's ports come one after another: its lookups are made once.
  const std::string* looked_up = nullptr;
  const FabricNode* node = nullptr;
  const PmaCapabilities* cap = nullptr;
  bool zero = false;
  for (const FabricPort& p : discovered.ports) {
    if (!looked_up || *looked_up != p.node_guid) {
      looked_up = &p.node_guid;
      auto n = nodes.find(p.node_guid);
      auto c = caps.find(p.node_guid);
      node = n == nodes.end() ? nullptr : n->second;
      cap = c == caps.end() ? nullptr : &c->second;
      zero = errors_zero.count(p.node_guid) > 0;
    }
    if (!node || !cap) continue;
    bool is_switch = node->type == "switch";
    if (is_switch && p.port == 0) continue;
    int lid = is_switch ? node->lid.value_or(0) : p.lid.value_or(0);
    if (lid <= 0) continue;
    const PmaCapabilities& c = *cap;
    if (errors_only) {
      if (zero) continue;
      out.push_back({p.node_guid, p.port, lid,
                     c.additional_extended() ? kPortCountersExtended : kPortCounters});
      continue;
    }
    const bool extended_says_all = c.additional_extended() || (c.extended_counters() && zero);
    if (!extended_says_all) out.push_back({p.node_guid, p.port, lid, kPortCounters});
    if (c.extended_counters()) {
      out.push_back({p.node_guid, p.port, lid, kPortCountersExtended});
    }
  }
  return out;
}

std::vector<PmaQuery> PlanRcvErrorDetailReads(const FabricScan& scanned) {
  std::map<std::string_view, const FabricNode*> nodes;
  for (const FabricNode& n : scanned.nodes) nodes[n.guid] = &n;
  std::vector<PmaQuery> out;
  for (const FabricPort& p : scanned.ports) {
    auto errors = p.counters.find("port_rcv_errors");
    if (errors == p.counters.end() || errors->second == 0) continue;
    auto node = nodes.find(p.node_guid);
    if (node == nodes.end()) continue;
    const bool is_switch = node->second->type == "switch";
    if (is_switch && p.port == 0) continue;
    const int lid = is_switch ? node->second->lid.value_or(0) : p.lid.value_or(0);
    if (lid > 0) out.push_back({p.node_guid, p.port, lid, kPortRcvErrorDetails});
  }
  return out;
}

std::string NoAnswerText(const ScanPolicy& policy) {
  return "no answer after " + std::to_string(policy.retries + 1) + " tries (" +
         std::to_string(policy.timeout_ms) + " ms each)";
}

}  // namespace fabtrack::fabric
