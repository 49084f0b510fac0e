// The libibverbs edge: what rdma-core's user-space stack reports for each
// device and port (ibv_query_device / ibv_query_port), to cross-check sysfs
// and to prove the stack is usable. No devices is a normal answer.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/json_instances.h"
#include "core/port_sample.h"

namespace fabtrack {

struct VerbsPort {
  int port = 0;
  std::string state;       // "ACTIVE", "DOWN", ...
  std::string link_layer;  // "InfiniBand" | "Ethernet"
  int active_width = 0;    // lanes: 1, 2, 4, 8, 12
  double lane_gbps = 0;    // per-lane data rate from active_speed
  double rate_gbps() const { return active_width * lane_gbps; }
};

struct VerbsDevice {
  std::string name;
  std::string fw_version;
  std::vector<VerbsPort> ports;
};

struct VerbsReport {
  std::vector<VerbsDevice> devices;
  std::string error;  // set when libibverbs itself failed (not: "no devices")
};

VerbsReport QueryVerbsPorts();

// Differences between sysfs and libibverbs for the same ports (pure), e.g.
// "mlx5_0/1: state ACTIVE in sysfs, DOWN in verbs". Ports only one side
// knows are reported too.
std::vector<std::string> CrossCheck(const HostPorts& sysfs, const VerbsReport& verbs);

// The devices as JSON: [{"name", "fw_version", "ports": [{"port", "state",
// "link_layer", "rate_gbps"}]}] (`counters verbs`, `check node`).
nlohmann::json VerbsDevicesJson(const std::vector<VerbsDevice>& devices);

// Lanes and per-lane Gb/s from ibv_port_attr active_width/active_speed codes.
int WidthLanes(int active_width_code);
double SpeedGbps(int active_speed_code);

}  // namespace fabtrack
