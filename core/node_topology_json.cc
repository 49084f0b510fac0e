#include "core/node_topology_json.h"

#include <stdexcept>
#include <type_traits>

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

namespace {

// The fields a GPU or a NIC stores beside its name, each named once for the
// writer and the reader (a field added here is written and read alike):
// where the PCIe function sits and how its link trained, then its own.
template <typename Device, typename Visit>
void VisitDeviceFields(Device& d, Visit&& visit) {
  visit("bus_id", d.bus_id);
  visit("numa_node", d.numa_node);
  visit("link_gts", d.link_gts);
  visit("link_width", d.link_width);
  if constexpr (std::is_same_v<std::remove_const_t<Device>, TopoGpu>) {
    visit("nic", d.nic);
    visit("gpu_gdr", d.gdr);
    visit("rank", d.rank);
  } else {
    visit("speed_mbps", d.speed_mbps);
    visit("port", d.port);
    visit("gdr", d.gdr);
  }
}

struct FieldWriter {
  nlohmann::json& object;
  template <typename T>
  void operator()(const char* key, const T& value) const {
    object[key] = OrNull(value);
  }
};

}  // namespace

nlohmann::json TopologyGpusToJson(const NodeTopology& t) {
  nlohmann::json out = nlohmann::json::array();
  for (const TopoGpu& g : t.gpus) {
    nlohmann::json gpu = {{"gpu", g.name},
                          {"path", g.path ? nlohmann::json(TopoPathName(*g.path)) : nullptr},
                          {"gdr", OrNull(PairGdr(t, g))}};
    VisitDeviceFields(g, FieldWriter{gpu});
    out.push_back(std::move(gpu));
  }
  return out;
}

nlohmann::json TopologyNicsToJson(const NodeTopology& t) {
  nlohmann::json out = nlohmann::json::array();
  for (const TopoNic& n : t.nics) {
    nlohmann::json nic = {{"name", n.name}};
    VisitDeviceFields(n, FieldWriter{nic});
    out.push_back(std::move(nic));
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
      VisitDeviceFields(gpu, [&g](const char* key, auto& field) { Read(g, key, field); });
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
      VisitDeviceFields(nic, [&n](const char* key, auto& field) { Read(n, key, field); });
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
