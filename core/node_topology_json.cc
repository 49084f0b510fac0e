#include "core/node_topology_json.h"

namespace fabtrack {
namespace {

template <typename T>
nlohmann::json OrNull(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json OrNull(const std::string& s) {
  return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s);
}

}  // namespace

std::optional<bool> PairGdr(const NodeTopology& topology, const TopoGpu& gpu) {
  if (gpu.nic.empty()) return std::nullopt;
  std::optional<bool> nic_gdr;
  for (const TopoNic& n : topology.nics) {
    if (n.name == gpu.nic) {
      nic_gdr = n.gdr;
      break;
    }
  }
  if (gpu.gdr == false || nic_gdr == false) return false;
  if (gpu.gdr && nic_gdr) return true;
  return std::nullopt;
}

nlohmann::json TopologyGpusToJson(const NodeTopology& t) {
  nlohmann::json out = nlohmann::json::array();
  for (const TopoGpu& g : t.gpus) {
    out.push_back({{"gpu", g.name},
                   {"bus_id", OrNull(g.bus_id)},
                   {"nic", OrNull(g.nic)},
                   {"path", g.path ? nlohmann::json(TopoPathName(*g.path)) : nullptr},
                   {"gdr", OrNull(PairGdr(t, g))},
                   {"numa_node", OrNull(g.numa_node)},
                   {"link_gts", OrNull(g.link_gts)},
                   {"link_width", OrNull(g.link_width)}});
  }
  return out;
}

nlohmann::json TopologyNicsToJson(const NodeTopology& t) {
  nlohmann::json out = nlohmann::json::array();
  for (const TopoNic& n : t.nics) {
    out.push_back({{"name", n.name},
                   {"speed_mbps", OrNull(n.speed_mbps)},
                   {"port", OrNull(n.port)},
                   {"gdr", OrNull(n.gdr)},
                   {"bus_id", OrNull(n.bus_id)},
                   {"numa_node", OrNull(n.numa_node)},
                   {"link_gts", OrNull(n.link_gts)},
                   {"link_width", OrNull(n.link_width)}});
  }
  return out;
}

nlohmann::json TopologyFindingsToJson(const std::vector<TopologyFinding>& findings) {
  nlohmann::json out = nlohmann::json::array();
  for (const TopologyFinding& f : findings) {
    out.push_back({{"kind", f.kind},
                   {"severity", SeverityName(f.severity)},
                   {"gpu", OrNull(f.gpu)},
                   {"nic", OrNull(f.nic)},
                   {"message", f.message}});
  }
  return out;
}

}  // namespace fabtrack
