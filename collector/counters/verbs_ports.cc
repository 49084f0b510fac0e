#include "collector/counters/verbs_ports.h"

#include <infiniband/verbs.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <map>

namespace fabtrack {
namespace {

std::string StateName(ibv_port_state s) {
  switch (s) {
    case IBV_PORT_DOWN:
      return "DOWN";
    case IBV_PORT_INIT:
      return "INIT";
    case IBV_PORT_ARMED:
      return "ARMED";
    case IBV_PORT_ACTIVE:
      return "ACTIVE";
    case IBV_PORT_ACTIVE_DEFER:
      return "ACTIVE_DEFER";
    default:
      return "NOP";
  }
}

}  // namespace

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

VerbsReport QueryVerbsPorts() {
  VerbsReport report;
  int count = 0;
  ibv_device** list = ibv_get_device_list(&count);
  if (list == nullptr) {
    // ENOSYS: no kernel support; that too means "no devices" for us.
    if (errno != ENOSYS) report.error = std::string("ibv_get_device_list: ") + strerror(errno);
    return report;
  }
  for (int i = 0; i < count; ++i) {
    VerbsDevice device;
    device.name = ibv_get_device_name(list[i]);
    ibv_context* context = ibv_open_device(list[i]);
    if (context == nullptr) {
      report.error += device.name + ": cannot open device: " + strerror(errno) + "; ";
      continue;
    }
    ibv_device_attr attr{};
    if (ibv_query_device(context, &attr) == 0) {
      device.fw_version = attr.fw_ver;
      for (int p = 1; p <= attr.phys_port_cnt; ++p) {
        ibv_port_attr port{};
        if (ibv_query_port(context, static_cast<uint8_t>(p), &port) != 0) continue;
        VerbsPort vp;
        vp.port = p;
        vp.state = StateName(port.state);
        vp.link_layer = port.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "InfiniBand";
        vp.active_width = WidthLanes(port.active_width);
        vp.lane_gbps = SpeedGbps(port.active_speed);
        device.ports.push_back(vp);
      }
    }
    ibv_close_device(context);
    report.devices.push_back(std::move(device));
  }
  ibv_free_device_list(list);
  return report;
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
