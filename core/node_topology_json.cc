#include "core/node_topology_json.h"

#include <stdexcept>

#include "core/content_hash.h"

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
                   {"link_width", OrNull(g.link_width)},
                   {"gpu_gdr", OrNull(g.gdr)},
                   {"rank", OrNull(g.rank)}});
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
    if (!f.host.empty()) out.back()["host"] = f.host;
  }
  return out;
}

nlohmann::json NodeTopologyToJson(const NodeTopology& t) {
  return {{"gpus", TopologyGpusToJson(t)}, {"nics", TopologyNicsToJson(t)}};
}

namespace {

template <typename T>
void Read(const nlohmann::json& o, const char* key, std::optional<T>& v) {
  auto it = o.find(key);
  if (it == o.end() || it->is_null()) return;
  v = it->get<T>();
}

void Read(const nlohmann::json& o, const char* key, std::string& v) {
  auto it = o.find(key);
  if (it != o.end() && !it->is_null()) v = it->get<std::string>();
}

}  // namespace

std::optional<NodeTopology> NodeTopologyFromJson(const nlohmann::json& j, std::string* why) {
  try {
    NodeTopology t;
    for (const nlohmann::json& g : j.at("gpus")) {
      TopoGpu gpu;
      Read(g, "gpu", gpu.name);
      Read(g, "bus_id", gpu.bus_id);
      Read(g, "numa_node", gpu.numa_node);
      Read(g, "rank", gpu.rank);
      Read(g, "gpu_gdr", gpu.gdr);
      Read(g, "link_gts", gpu.link_gts);
      Read(g, "link_width", gpu.link_width);
      Read(g, "nic", gpu.nic);
      std::string path;
      Read(g, "path", path);
      if (!path.empty()) {
        gpu.path = TopoPathFromName(path);
        if (!gpu.path) throw std::runtime_error("unknown path " + path);
      }
      t.gpus.push_back(std::move(gpu));
    }
    for (const nlohmann::json& n : j.at("nics")) {
      TopoNic nic;
      Read(n, "name", nic.name);
      Read(n, "bus_id", nic.bus_id);
      Read(n, "numa_node", nic.numa_node);
      Read(n, "speed_mbps", nic.speed_mbps);
      Read(n, "port", nic.port);
      Read(n, "gdr", nic.gdr);
      Read(n, "link_gts", nic.link_gts);
      Read(n, "link_width", nic.link_width);
      t.nics.push_back(std::move(nic));
    }
    return t;
  } catch (const std::exception& e) {
    if (why) *why = e.what();
    return std::nullopt;
  }
}

std::string TopologyFingerprint(const NodeTopology& topology) {
  return Sha256Hex(NodeTopologyToJson(topology).dump());
}

}  // namespace fabtrack
