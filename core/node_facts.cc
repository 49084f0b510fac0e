#include "core/node_facts.h"

#include <algorithm>
#include <set>

namespace fabtrack {

NodeFacts HostFactsFromPorts(const HostPorts& host) {
  NodeFacts facts;
  if (host.kernel_release) facts["kernel"] = *host.kernel_release;
  for (const PortSample& p : host.ports) {
    if (p.fw_version) facts["fw_ver " + p.device] = *p.fw_version;
    if (p.rate_text) facts["link " + p.device + "/" + std::to_string(p.port)] = *p.rate_text;
  }
  return facts;
}

NodeFacts MergeNodeFacts(const std::vector<std::pair<std::string, NodeFacts>>& per_host) {
  // fact -> value -> hosts
  std::map<std::string, std::map<std::string, std::set<std::string>>> seen;
  for (const auto& [host, facts] : per_host) {
    for (const auto& [key, value] : facts) seen[key][value].insert(host);
  }
  NodeFacts merged;
  for (const auto& [key, values] : seen) {
    if (values.size() == 1) {
      merged[key] = values.begin()->first;
      continue;
    }
    std::vector<std::pair<std::string, std::set<std::string>>> ordered(values.begin(),
                                                                       values.end());
    std::stable_sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) {
      return a.second.size() > b.second.size();
    });
    std::string text;
    for (const auto& [value, hosts] : ordered) {
      std::string list;
      for (const std::string& h : hosts) list += (list.empty() ? "" : ",") + h;
      text += (text.empty() ? "" : "; ") + value + " (" + list + ")";
    }
    merged[key] = text;
  }
  return merged;
}

}  // namespace fabtrack
