#include "analyzer/topology/host_diff.h"

#include <map>
#include <optional>
#include <set>
#include <sstream>

namespace fabtrack {
namespace {

std::string Show(const std::optional<int>& v, const std::string& prefix = "") {
  return v ? prefix + std::to_string(*v) : "unknown";
}
std::string Show(const std::optional<int64_t>& v) {
  return v ? std::to_string(*v / 1000) + " Gb/s" : "unknown";
}
std::string Show(const std::optional<double>& v) {
  if (!v) return "unknown";
  std::ostringstream s;
  s << *v << " GT/s";
  return s.str();
}
std::string Show(const std::optional<bool>& v) { return v ? (*v ? "on" : "off") : "unknown"; }
std::string Show(const std::optional<TopoPath>& v) { return v ? TopoPathName(*v) : "unknown"; }
std::string Show(const std::string& v) { return v.empty() ? "none" : v; }

class Differ {
 public:
  explicit Differ(const std::vector<std::pair<std::string, const NodeTopology*>>& hosts)
      : hosts_(hosts), out_(hosts.size()) {}

  // One value per host (nullopt: the host has no such device); the hosts off
  // the reference value get a finding, naming `nics[h]` (its own NIC), if any.
  void Compare(const std::vector<std::optional<std::string>>& values, const std::string& what,
               const std::string& gpu, const std::vector<std::string>& nics = {}) {
    std::map<std::string, int> count;
    int present = 0;
    for (const auto& v : values) {
      if (v) {
        ++count[*v];
        ++present;
      }
    }
    if (count.size() < 2) return;
    // The majority's value, else the first host's.
    std::optional<std::string> ref;
    for (const auto& [v, c] : count) {
      if (2 * c > present) ref = v;
    }
    size_t ref_host = 0;
    if (!ref) {
      while (ref_host < values.size() && !values[ref_host]) ++ref_host;
      ref = values[ref_host];
    } else {
      while (values[ref_host] != ref) ++ref_host;
    }
    for (size_t h = 0; h < values.size(); ++h) {
      if (!values[h] || *values[h] == *ref) continue;
      const std::string others =
          count[*ref] > 1 ? std::to_string(count[*ref]) + " other hosts" : hosts_[ref_host].first;
      out_[h].push_back(
          {"host_differs", Severity::kWarning, gpu, h < nics.size() ? nics[h] : "",
           hosts_[h].first + ": " + what + " " + *values[h] + ", " + others + " " + *ref,
           hosts_[h].first});
    }
  }

  std::vector<std::vector<TopologyFinding>> Take() { return std::move(out_); }

 private:
  const std::vector<std::pair<std::string, const NodeTopology*>>& hosts_;
  std::vector<std::vector<TopologyFinding>> out_;
};

// The NIC of each host that is "the same" as NIC k of the first host that
// has one at position k: by bus id when the host's NICs have them.
std::vector<const TopoNic*> SameNic(
    const std::vector<std::pair<std::string, const NodeTopology*>>& hosts, size_t k,
    std::string* label) {
  const TopoNic* first = nullptr;
  for (const auto& [name, t] : hosts) {
    if (k < t->nics.size()) {
      first = &t->nics[k];
      break;
    }
  }
  std::vector<const TopoNic*> out;
  if (!first) return out;
  *label = first->bus_id.empty() ? "NIC #" + std::to_string(k) : "NIC at " + first->bus_id;
  for (const auto& [name, t] : hosts) {
    const TopoNic* match = nullptr;
    if (!first->bus_id.empty()) {
      // The ports of a dual-port NIC share its bus id: the same port.
      for (const TopoNic& n : t->nics) {
        if (n.bus_id == first->bus_id && (!match || n.port == first->port)) match = &n;
      }
    }
    if (!match && k < t->nics.size() && (first->bus_id.empty() || t->nics[k].bus_id.empty())) {
      match = &t->nics[k];
    }
    out.push_back(match);
  }
  return out;
}

}  // namespace

std::vector<std::vector<TopologyFinding>> DiffHosts(
    const std::vector<std::pair<std::string, const NodeTopology*>>& hosts) {
  Differ d(hosts);
  if (hosts.size() < 2) return d.Take();
  using Values = std::vector<std::optional<std::string>>;
  Values gpus, nics;
  for (const auto& [name, t] : hosts) {
    gpus.push_back(std::to_string(t->gpus.size()));
    nics.push_back(std::to_string(t->nics.size()));
  }
  d.Compare(gpus, "GPU count", "");
  d.Compare(nics, "NIC count", "");

  std::map<std::string, bool> gpu_names;
  for (const auto& [name, t] : hosts) {
    for (const TopoGpu& g : t->gpus) gpu_names[g.name] = true;
  }
  for (const auto& [gpu, unused] : gpu_names) {
    std::vector<const TopoGpu*> same;
    for (const auto& [name, t] : hosts) {
      const TopoGpu* match = nullptr;
      for (const TopoGpu& g : t->gpus) {
        if (g.name == gpu) match = &g;
      }
      same.push_back(match);
    }
    auto each = [&](auto value) {
      Values v;
      for (const TopoGpu* g : same)
        v.push_back(g ? std::optional<std::string>(value(*g)) : std::nullopt);
      return v;
    };
    d.Compare(each([](const TopoGpu& g) { return Show(g.nic) + " " + Show(g.path); }), gpu + " ->",
              gpu);
    d.Compare(each([](const TopoGpu& g) { return Show(g.link_width, "x"); }), gpu + " PCIe width",
              gpu);
    d.Compare(each([](const TopoGpu& g) { return Show(g.link_gts); }), gpu + " PCIe speed", gpu);
    d.Compare(each([](const TopoGpu& g) { return Show(g.numa_node); }), gpu + " NUMA node", gpu);
    d.Compare(each([](const TopoGpu& g) { return Show(g.gdr); }), gpu + " GPUDirect RDMA", gpu);
  }

  size_t most = 0;
  for (const auto& [name, t] : hosts) most = std::max(most, t->nics.size());
  std::set<std::string> links_compared;  // bus ids: a dual-port NIC has one PCIe link
  for (size_t k = 0; k < most; ++k) {
    std::string label;
    std::vector<const TopoNic*> same = SameNic(hosts, k, &label);
    std::vector<std::string> nic_names;
    for (const TopoNic* n : same) nic_names.push_back(n ? n->name : "");
    auto each = [&](auto value) {
      Values v;
      for (const TopoNic* n : same)
        v.push_back(n ? std::optional<std::string>(value(*n)) : std::nullopt);
      return v;
    };
    d.Compare(each([](const TopoNic& n) { return n.name; }), label + " is", "", nic_names);
    const TopoNic* first = nullptr;
    for (const TopoNic* n : same) first = first ? first : n;
    if (!first || first->bus_id.empty() || links_compared.insert(first->bus_id).second) {
      d.Compare(each([](const TopoNic& n) { return Show(n.link_width, "x"); }),
                label + " PCIe width", "", nic_names);
      d.Compare(each([](const TopoNic& n) { return Show(n.link_gts); }), label + " PCIe speed", "",
                nic_names);
    }
    d.Compare(each([](const TopoNic& n) { return Show(n.speed_mbps); }), label + " port rate", "",
              nic_names);
    d.Compare(each([](const TopoNic& n) { return Show(n.numa_node); }), label + " NUMA node", "",
              nic_names);
    d.Compare(each([](const TopoNic& n) { return Show(n.gdr); }), label + " GPUDirect RDMA", "",
              nic_names);
  }
  return d.Take();
}

}  // namespace fabtrack
