#include "core/fabric_scan.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <tuple>

namespace fabtrack {

// The special members, out of line (the header says why).
FabricScan::FabricScan() = default;
FabricScan::FabricScan(const FabricScan&) = default;
FabricScan::FabricScan(FabricScan&&) noexcept = default;
FabricScan& FabricScan::operator=(const FabricScan&) = default;
FabricScan& FabricScan::operator=(FabricScan&&) noexcept = default;
FabricScan::~FabricScan() = default;

const FabricPort* FindFabricPort(const FabricScan& scan, const std::string& guid, int port) {
  for (const FabricPort& p : scan.ports) {
    if (p.port == port && p.node_guid == guid) return &p;
  }
  return nullptr;
}

const FabricNode* FindFabricNode(const FabricScan& scan, const std::string& guid) {
  for (const FabricNode& n : scan.nodes) {
    if (n.guid == guid) return &n;
  }
  return nullptr;
}

std::string EndName(const FabricLinkEnd& end) {
  return (end.description.empty() ? end.guid : end.description) + "/" + std::to_string(end.port);
}

std::string LinkName(const FabricLink& link) { return EndName(link.a) + " <-> " + EndName(link.b); }

FabricLink MakeLink(FabricLinkEnd one, const std::string& one_type, FabricLinkEnd other,
                    const std::string& other_type) {
  bool one_switch = one_type == "switch", other_switch = other_type == "switch";
  bool one_first = one_switch != other_switch
                       ? one_switch
                       : std::tie(one.guid, one.port) < std::tie(other.guid, other.port);
  if (one_first) return {std::move(one), std::move(other)};
  return {std::move(other), std::move(one)};
}

namespace {

// Sorts unless already sorted: a scanner hands its parts over in this order,
// and sorting thousands of ports (each with its counter map) moves them all.
template <typename T, typename Less>
void SortUnlessSorted(std::vector<T>& items, Less less) {
  if (!std::is_sorted(items.begin(), items.end(), less))
    std::sort(items.begin(), items.end(), less);
}

}  // namespace

void SortFabricScan(FabricScan& scan) {
  SortUnlessSorted(scan.nodes,
                   [](const FabricNode& x, const FabricNode& y) { return x.guid < y.guid; });
  SortUnlessSorted(scan.ports, [](const FabricPort& x, const FabricPort& y) {
    return std::tie(x.node_guid, x.port) < std::tie(y.node_guid, y.port);
  });
  SortUnlessSorted(scan.links, [](const FabricLink& x, const FabricLink& y) {
    return std::tie(x.a.guid, x.a.port, x.b.guid, x.b.port) <
           std::tie(y.a.guid, y.a.port, y.b.guid, y.b.port);
  });
}

namespace {

std::pair<std::string, int> SysfsState(const std::string& state) {
  static const std::map<std::string, int> kCodes = {
      {"Down", 1}, {"Init", 2}, {"Armed", 3}, {"Active", 4}};
  auto it = kCodes.find(state);
  std::string upper;
  for (char c : state) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return {upper, it == kCodes.end() ? 0 : it->second};
}

int PhysCode(const std::string& phys) {
  static const std::map<std::string, int> kCodes = {
      {"Sleep", 1},  {"Polling", 2},           {"Disabled", 3}, {"Training", 4},
      {"LinkUp", 5}, {"LinkErrorRecovery", 6}, {"PhyTest", 7}};
  auto it = kCodes.find(phys);
  return it == kCodes.end() ? 0 : it->second;
}

}  // namespace

std::vector<HostPorts> FabricSwitchPorts(const FabricScan& scan) {
  std::map<std::string, const FabricNode*> switches;
  for (const FabricNode& n : scan.nodes) {
    if (n.type == "switch") switches[n.guid] = &n;
  }
  std::map<std::string, HostPorts> hosts;
  for (const FabricPort& p : scan.ports) {
    if (p.port == 0 || !switches.count(p.node_guid) || p.counters.empty()) continue;
    HostPorts& h = hosts[p.node_guid];
    h.host = p.node_guid;
    PortSample s;
    s.device = "switch";
    s.port = p.port;
    s.link_layer = "InfiniBand";
    if (p.state) {
      auto [text, code] = SysfsState(*p.state);
      s.state = text;
      if (code) s.state_code = code;
    }
    if (p.phys_state) {
      s.phys_state = *p.phys_state;
      if (int code = PhysCode(*p.phys_state)) s.phys_state_code = code;
    }
    s.rate_gbps = p.rate_gbps;
    if (p.rate_gbps && p.width && p.speed) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%g Gb/sec (%dX %s)", *p.rate_gbps, *p.width,
                    p.speed->c_str());
      s.rate_text = buf;
    }
    if (p.lid) {
      char buf[16];
      std::snprintf(buf, sizeof buf, "0x%x", *p.lid);
      s.lid = buf;
    }
    s.node_guid = p.node_guid;
    s.counters = p.counters;
    // port_{xmit,rcv}_data count 4-octet words (as sysfs's do).
    if (auto it = p.counters.find("port_xmit_data"); it != p.counters.end())
      s.xmit_bytes = it->second * 4;
    if (auto it = p.counters.find("port_rcv_data"); it != p.counters.end())
      s.rcv_bytes = it->second * 4;
    h.ports.push_back(std::move(s));
  }
  std::vector<HostPorts> out;
  for (auto& [guid, h] : hosts) out.push_back(std::move(h));
  return out;
}

}  // namespace fabtrack
