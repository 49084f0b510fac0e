#include "collector/fabric/run_window.h"

#include <algorithm>
#include <map>
#include <set>

namespace fabtrack::fabric {
namespace {

std::string ShortName(const std::string& host) { return host.substr(0, host.find('.')); }

// The scan with only the nodes, ports, cables and unanswered entries that
// touch `leaves` (node GUIDs).
FabricScan Cut(const FabricScan& scan, const std::set<std::string>& leaves) {
  FabricScan out;
  out.scanned_at = scan.scanned_at;
  out.source = scan.source;
  out.duration_s = scan.duration_s;
  out.discovery_s = scan.discovery_s;
  out.mads_sent = scan.mads_sent;
  out.mads_retried = scan.mads_retried;
  std::set<std::string> nodes = leaves;
  std::set<std::pair<std::string, int>> ends;
  for (const FabricLink& link : scan.links) {
    if (!leaves.count(link.a.guid) && !leaves.count(link.b.guid)) continue;
    out.links.push_back(link);
    for (const FabricLinkEnd* end : {&link.a, &link.b}) {
      nodes.insert(end->guid);
      ends.insert({end->guid, end->port});
    }
  }
  for (const FabricNode& node : scan.nodes) {
    if (nodes.count(node.guid)) out.nodes.push_back(node);
  }
  for (const FabricPort& port : scan.ports) {
    if (leaves.count(port.node_guid) || ends.count({port.node_guid, port.port})) {
      out.ports.push_back(port);
    }
  }
  for (const FabricUnanswered& u : scan.unanswered) {
    if (nodes.count(u.guid)) out.unanswered.push_back(u);
  }
  return out;
}

}  // namespace

std::string DescribedHost(const std::string& description) {
  const size_t start = description.find_first_not_of(" \t");
  if (start == std::string::npos) return "";
  const size_t end = description.find_first_of(" \t", start);
  return description.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

bool SameHost(const std::string& run_host, const std::string& described_host) {
  if (run_host.empty() || described_host.empty()) return false;
  if (run_host == described_host) return true;
  const bool either_short =
      run_host.find('.') == std::string::npos || described_host.find('.') == std::string::npos;
  return either_short && ShortName(run_host) == ShortName(described_host);
}

RunFabricWindow CutRunFabricWindow(const FabricScan& before, const FabricScan& after,
                                   const std::vector<std::string>& hosts) {
  RunFabricWindow window;
  std::set<std::string> cas;
  for (const FabricScan* scan : {&before, &after}) {
    for (const FabricNode& node : scan->nodes) {
      if (node.type != "ca") continue;
      const std::string described = DescribedHost(node.description);
      for (const std::string& host : hosts) {
        if (!SameHost(host, described)) continue;
        std::vector<std::string>& guids = window.hosts[host];
        if (std::find(guids.begin(), guids.end(), node.guid) == guids.end()) {
          guids.push_back(node.guid);
        }
        cas.insert(node.guid);
      }
    }
  }
  for (const std::string& host : hosts) {
    if (!window.hosts.count(host) &&
        std::find(window.unmapped_hosts.begin(), window.unmapped_hosts.end(), host) ==
            window.unmapped_hosts.end()) {
      window.unmapped_hosts.push_back(host);
    }
  }
  std::set<std::string> leaves;
  std::set<std::string> leaf_names;
  for (const FabricScan* scan : {&before, &after}) {
    std::set<std::string> switches;
    for (const FabricNode& node : scan->nodes) {
      if (node.type == "switch") switches.insert(node.guid);
    }
    for (const FabricLink& link : scan->links) {
      for (const auto& [ca, other] : {std::pair{&link.a, &link.b}, std::pair{&link.b, &link.a}}) {
        if (cas.count(ca->guid) && switches.count(other->guid)) {
          leaves.insert(other->guid);
          leaf_names.insert(other->description.empty() ? other->guid : other->description);
        }
      }
    }
  }
  window.leaves.assign(leaf_names.begin(), leaf_names.end());
  window.before = Cut(before, leaves);
  window.after = Cut(after, leaves);
  return window;
}

std::vector<std::string> UplinkCounterLines(const FabricScan& scan, const std::string& leaf) {
  std::map<std::string, const FabricNode*> nodes;
  for (const FabricNode& n : scan.nodes) nodes[n.guid] = &n;
  auto is_switch = [&](const std::string& guid) {
    auto it = nodes.find(guid);
    return it != nodes.end() && it->second->type == "switch";
  };
  std::vector<std::string> lines;
  for (const FabricLink& link : scan.links) {
    if (!is_switch(link.a.guid) || !is_switch(link.b.guid)) continue;
    if (link.a.description != leaf && link.b.description != leaf) continue;
    std::string counted;
    for (const FabricLinkEnd* end : {&link.a, &link.b}) {
      const FabricPort* port = FindFabricPort(scan, end->guid, end->port);
      if (!port) continue;
      for (const auto& [counter, value] : port->counters) {
        if (value == 0 || !IsFabricTroubleCounter(counter)) continue;
        counted += (counted.empty() ? "" : ", ") + counter + " " + std::to_string(value) + " at " +
                   EndName(*end);
      }
    }
    lines.push_back(LinkName(link) + ": " +
                    (counted.empty() ? "no error or wait counted" : counted));
  }
  return lines;
}

}  // namespace fabtrack::fabric
