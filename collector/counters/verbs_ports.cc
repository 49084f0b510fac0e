#include "collector/counters/verbs_ports.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <map>

namespace fabtrack {

nlohmann::json VerbsDevicesJson(const std::vector<VerbsDevice>& devices) {
  nlohmann::json out = nlohmann::json::array();
  for (const VerbsDevice& d : devices) {
    nlohmann::json ports = nlohmann::json::array();
    for (const VerbsPort& p : d.ports) {
      ports.push_back({{"port", p.port},
                       {"state", p.state},
                       {"link_layer", p.link_layer},
                       {"rate_gbps", p.rate_gbps()}});
    }
    out.push_back({{"name", d.name}, {"fw_version", d.fw_version}, {"ports", ports}});
  }
  return out;
}

int WidthLanes(int code) {
  // IBTA PortInfo:LinkWidthActive: 1x=1, 4x=2, 8x=4, 12x=8, 2x=16.
  switch (code) {
    case 1:
      return 1;
    case 2:
      return 4;
    case 4:
      return 8;
    case 8:
      return 12;
    case 16:
      return 2;
    default:
      return 0;
  }
}

double SpeedGbps(int code) {
  // Effective per-lane data rates (what sysfs `rate` reports): SDR 2.5,
  // DDR 5, QDR 10, FDR10 10, FDR 14, EDR 25, HDR 50, NDR 100, XDR 200.
  switch (code) {
    case 1:
      return 2.5;
    case 2:
      return 5;
    case 4:
      return 10;
    case 8:
      return 10;
    case 16:
      return 14;
    case 32:
      return 25;
    case 64:
      return 50;
    case 128:
      return 100;
    case 256:
      return 200;
    default:
      return 0;
  }
}

std::vector<std::string> CrossCheck(const HostPorts& sysfs, const VerbsReport& verbs) {
  std::vector<std::string> differences;
  std::map<std::string, const VerbsPort*> verbs_ports;
  for (const VerbsDevice& d : verbs.devices) {
    for (const VerbsPort& p : d.ports) verbs_ports[d.name + "/" + std::to_string(p.port)] = &p;
  }
  for (const PortSample& s : sysfs.ports) {
    std::string key = s.device + "/" + std::to_string(s.port);
    auto it = verbs_ports.find(key);
    if (it == verbs_ports.end()) {
      differences.push_back(key + ": in sysfs, not seen by libibverbs");
      continue;
    }
    const VerbsPort& v = *it->second;
    if (s.state && *s.state != v.state) {
      differences.push_back(key + ": state " + *s.state + " in sysfs, " + v.state + " in verbs");
    }
    if (s.link_layer && *s.link_layer != v.link_layer) {
      differences.push_back(key + ": link layer " + *s.link_layer + " in sysfs, " + v.link_layer +
                            " in verbs");
    }
    if (s.rate_gbps && v.rate_gbps() > 0 && std::fabs(*s.rate_gbps - v.rate_gbps()) > 0.5) {
      differences.push_back(key + ": rate " + std::to_string(*s.rate_gbps) + " Gb/s in sysfs, " +
                            std::to_string(v.rate_gbps()) + " in verbs");
    }
    verbs_ports.erase(it);
  }
  for (const auto& [key, port] : verbs_ports) {
    differences.push_back(key + ": seen by libibverbs, not in sysfs");
  }
  return differences;
}

}  // namespace fabtrack
