#include "collector/counters/port_sample_json.h"

#include "core/json_optional.h"

namespace fabtrack {

nlohmann::json HostPortsToJson(const HostPorts& host) {
  using nlohmann::json;
  json ports = json::array();
  for (const PortSample& p : host.ports) {
    json port = {{"device", p.device},
                 {"port", p.port},
                 {"link_layer", OptionalJson(p.link_layer)},
                 {"state", OptionalJson(p.state)},
                 {"phys_state", OptionalJson(p.phys_state)},
                 {"rate_gbps", OptionalJson(p.rate_gbps)},
                 {"counters", p.counters},
                 {"xmit_bytes", OptionalJson(p.xmit_bytes)},
                 {"rcv_bytes", OptionalJson(p.rcv_bytes)},
                 {"saturated", p.saturated},
                 {"hw_counters", p.hw_counters}};
    if (p.netdev) port["netdev"] = *p.netdev;
    if (!p.ethtool.empty()) port["ethtool"] = p.ethtool;
    if (p.fw_version) port["fw_version"] = *p.fw_version;
    if (p.board_id) port["board_id"] = *p.board_id;
    ports.push_back(std::move(port));
  }
  json problems = json::array();
  for (const PortProblem& problem : host.problems) {
    problems.push_back({{"path", problem.path}, {"message", problem.message}});
  }
  return {{"host", host.host}, {"ports", ports}, {"problems", problems}};
}

}  // namespace fabtrack
