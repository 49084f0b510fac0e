// QueryVerbsPorts through libibverbs (rdma-core): the one file that needs
// it; builds without it compile verbs_query_unavailable.cc instead.
#include <infiniband/verbs.h>

#include <cerrno>
#include <cstring>

#include "collector/counters/verbs_ports.h"

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

}  // namespace fabtrack
