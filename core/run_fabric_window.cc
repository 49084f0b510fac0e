#include "core/run_fabric_window.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "core/fabric_scan_json.h"

namespace fabtrack {

std::vector<FabricLinkDelta> RunFabricLinkDeltas(const RunFabricWindow& window) {
  std::vector<FabricLinkDelta> out;
  std::map<std::string, const FabricNode*> nodes;
  for (const FabricNode& n : window.after.nodes) nodes[n.guid] = &n;
  for (const FabricLink& link : window.after.links) {
    if (std::find(window.before.links.begin(), window.before.links.end(), link) ==
        window.before.links.end()) {
      continue;
    }
    FabricLinkDelta d;
    d.link = link;
    auto a = nodes.find(link.a.guid), b = nodes.find(link.b.guid);
    d.uplink = a != nodes.end() && b != nodes.end() && a->second->type == "switch" &&
               b->second->type == "switch";
    for (const auto& [end, into] : {std::pair{&link.a, &d.a}, std::pair{&link.b, &d.b}}) {
      const FabricPort* then = FindFabricPort(window.before, end->guid, end->port);
      const FabricPort* now = FindFabricPort(window.after, end->guid, end->port);
      if (!then || !now) continue;
      for (const auto& [counter, value] : now->counters) {
        auto old = then->counters.find(counter);
        if (old == then->counters.end()) continue;
        const uint64_t grew = value >= old->second ? value - old->second : value;
        if (grew > 0) (*into)[counter] = grew;
      }
    }
    out.push_back(std::move(d));
  }
  return out;
}

nlohmann::json FabricLinkDeltasToJson(const std::vector<FabricLinkDelta>& deltas) {
  nlohmann::json out = nlohmann::json::array();
  for (const FabricLinkDelta& d : deltas) {
    if (d.a.empty() && d.b.empty()) continue;
    nlohmann::json item = {{"link", LinkName(d.link)}, {"uplink", d.uplink}};
    for (const auto& [label, end, counters] :
         {std::tuple{"a", &d.link.a, &d.a}, std::tuple{"b", &d.link.b, &d.b}}) {
      item[label] = {{"guid", end->guid},
                     {"description", end->description},
                     {"port", end->port},
                     {"deltas", *counters}};
    }
    out.push_back(std::move(item));
  }
  return out;
}

bool IsFabricTroubleCounter(const std::string& counter) {
  static const std::set<std::string> kData = {"port_xmit_data",         "port_rcv_data",
                                              "port_xmit_packets",      "port_rcv_packets",
                                              "unicast_xmit_packets",   "unicast_rcv_packets",
                                              "multicast_xmit_packets", "multicast_rcv_packets"};
  return !kData.count(counter);
}

nlohmann::json RunFabricWindowToJson(const RunFabricWindow& window) {
  nlohmann::json hosts = nlohmann::json::object();
  for (const auto& [host, guids] : window.hosts) hosts[host] = guids;
  return {{"before", FabricScanToJson(window.before)},
          {"after", FabricScanToJson(window.after)},
          {"hosts", hosts},
          {"unmapped_hosts", window.unmapped_hosts},
          {"leaves", window.leaves}};
}

std::optional<RunFabricWindow> RunFabricWindowFromJson(const nlohmann::json& doc,
                                                       std::string* why) {
  if (!doc.is_object()) {
    *why = "not an object";
    return std::nullopt;
  }
  RunFabricWindow window;
  for (const auto& [name, scan] :
       {std::pair{"before", &window.before}, std::pair{"after", &window.after}}) {
    if (!doc.contains(name)) {
      *why = std::string(name) + ": missing";
      return std::nullopt;
    }
    std::string inner;
    std::optional<FabricScan> read = FabricScanFromJson(doc.at(name), &inner);
    if (!read) {
      *why = std::string(name) + "." + inner;
      return std::nullopt;
    }
    *scan = std::move(*read);
  }
  try {
    if (doc.contains("hosts")) {
      for (const auto& [host, guids] : doc.at("hosts").items()) {
        window.hosts[host] = guids.get<std::vector<std::string>>();
      }
    }
    if (doc.contains("unmapped_hosts")) {
      window.unmapped_hosts = doc.at("unmapped_hosts").get<std::vector<std::string>>();
    }
    if (doc.contains("leaves")) window.leaves = doc.at("leaves").get<std::vector<std::string>>();
  } catch (const nlohmann::json::exception& e) {
    *why = std::string("hosts/unmapped_hosts/leaves: ") + e.what();
    return std::nullopt;
  }
  return window;
}

}  // namespace fabtrack
