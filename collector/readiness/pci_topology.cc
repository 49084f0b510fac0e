#include "collector/readiness/pci_topology.h"

#include <limits.h>
#include <stdlib.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <string_view>
#include <tuple>

#include "collector/counters/sysfs_ports.h"

namespace fabtrack {
namespace {

namespace fs = std::filesystem;

std::optional<std::string> RealPath(const std::string& path) {
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf) == nullptr) return std::nullopt;
  return std::string(buf);
}

std::string ReadValue(const std::string& path) {
  std::ifstream in(path);
  std::string v;
  std::getline(in, v);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\r' || v.back() == '\t')) v.pop_back();
  return v;
}

std::vector<std::string> Split(std::string_view s) {
  std::vector<std::string> out;
  while (!s.empty()) {
    size_t slash = s.find('/');
    std::string_view part = s.substr(0, slash);
    if (!part.empty()) out.emplace_back(part);
    if (slash == std::string_view::npos) break;
    s.remove_prefix(slash + 1);
  }
  return out;
}

// Reads the PCI function whose resolved directory is `dir` (below
// `devices_prefix`, which ends with a slash).
std::optional<PciFunction> ReadFunction(const std::string& dir, const std::string& devices_prefix) {
  if (dir.compare(0, devices_prefix.size(), devices_prefix) != 0) return std::nullopt;
  PciFunction f;
  f.chain = Split(std::string_view(dir).substr(devices_prefix.size()));
  if (f.chain.empty()) return std::nullopt;
  f.bdf = f.chain.back();
  f.vendor = ReadValue(dir + "/vendor");
  f.device_class = ReadValue(dir + "/class");
  std::string numa = ReadValue(dir + "/numa_node");
  int n = -1;
  auto [end, ec] = std::from_chars(numa.data(), numa.data() + numa.size(), n);
  // -1: the platform does not say (single-socket hosts, some VMs).
  if (ec == std::errc() && end == numa.data() + numa.size() && n >= 0) f.numa_node = n;
  return f;
}

std::vector<std::string> ListDir(const std::string& path) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  return names;
}

}  // namespace

bool IsNvidiaGpu(const PciFunction& f) {
  if (f.vendor != "0x10de") return false;
  return f.device_class.rfind("0x0302", 0) == 0 || f.device_class.rfind("0x0300", 0) == 0;
}

PciTopology ReadPciTopology(const std::string& sysfs_root) {
  PciTopology out;
  std::optional<std::string> root = RealPath(sysfs_root);
  if (!root) {
    out.problems.push_back(sysfs_root + ": cannot resolve");
    return out;
  }
  const std::string devices_prefix = *root + "/devices/";

  const std::string bus = sysfs_root + "/bus/pci/devices";
  for (const std::string& name : ListDir(bus)) {
    std::optional<std::string> dir = RealPath(bus + "/" + name);
    if (!dir) {
      out.problems.push_back(bus + "/" + name + ": dangling link");
      continue;
    }
    std::optional<PciFunction> f = ReadFunction(*dir, devices_prefix);
    if (!f) {
      out.problems.push_back(bus + "/" + name + ": resolves outside " + *root + "/devices");
      continue;
    }
    if (IsNvidiaGpu(*f)) out.gpus.push_back(std::move(*f));
  }
  std::sort(out.gpus.begin(), out.gpus.end(),
            [](const PciFunction& a, const PciFunction& b) { return a.bdf < b.bdf; });

  const std::string cls = sysfs_root + "/class/infiniband";
  std::vector<std::string> names = ListDir(cls);
  std::sort(names.begin(), names.end(), NaturalLess);
  for (const std::string& name : names) {
    // Software devices (rxe, siw) have no PCI function: not a rail NIC.
    std::optional<std::string> dir = RealPath(cls + "/" + name + "/device");
    if (!dir) {
      out.problems.push_back(cls + "/" + name + "/device: no PCI function");
      continue;
    }
    std::optional<PciFunction> f = ReadFunction(*dir, devices_prefix);
    if (!f) {
      out.problems.push_back(cls + "/" + name + "/device: resolves outside " + *root + "/devices");
      continue;
    }
    out.hcas.push_back({name, std::move(*f)});
  }
  return out;
}

size_t CommonDepth(const PciFunction& a, const PciFunction& b) {
  size_t d = 0;
  while (d < a.chain.size() && d < b.chain.size() && a.chain[d] == b.chain[d]) ++d;
  return d;
}

PciPath ClassifyPath(const PciFunction& a, const PciFunction& b) {
  const size_t d = CommonDepth(a, b);
  if (d == 0) {
    return a.numa_node && a.numa_node == b.numa_node ? PciPath::kNode : PciPath::kSys;
  }
  // Only the root complex (pciDDDD:BB) in common: up through the host bridge.
  if (d == 1) return PciPath::kPhb;
  // Below the deepest shared bridge, a function behind one switch has two
  // components (the switch's downstream port, then itself); more means more
  // switches on the way.
  const size_t below = std::max(a.chain.size() - d, b.chain.size() - d);
  return below <= 2 ? PciPath::kPix : PciPath::kPxb;
}

std::vector<GpuNicPair> PairGpusWithNics(const std::vector<PciFunction>& gpus,
                                         const std::vector<PciHca>& nics) {
  std::vector<GpuNicPair> pairs;
  std::map<std::string, int> taken;
  for (const PciFunction& gpu : gpus) {
    GpuNicPair p;
    p.gpu = gpu.bdf;
    p.gpu_numa = gpu.numa_node;
    const PciHca* best = nullptr;
    // Larger is nearer: depth, same NUMA node, fewer GPUs already on it.
    std::tuple<size_t, bool, int> best_key{0, false, 0};
    for (const PciHca& nic : nics) {
      std::tuple<size_t, bool, int> key{CommonDepth(gpu, nic.pci),
                                        gpu.numa_node && gpu.numa_node == nic.pci.numa_node,
                                        -taken[nic.name]};
      if (best == nullptr || key > best_key) {
        best = &nic;
        best_key = key;
      }
    }
    if (best != nullptr) {
      p.nic = best->name;
      p.path = ClassifyPath(gpu, best->pci);
      ++taken[best->name];
    }
    pairs.push_back(std::move(p));
  }
  return pairs;
}

NodeTopology ToNodeTopology(const PciTopology& topology) {
  NodeTopology t;
  std::vector<GpuNicPair> pairs = PairGpusWithNics(topology.gpus, topology.hcas);
  for (size_t i = 0; i < pairs.size(); ++i) {
    TopoGpu g;
    g.name = "GPU" + std::to_string(i);
    g.bus_id = pairs[i].gpu;
    g.numa_node = pairs[i].gpu_numa;
    g.nic = pairs[i].nic;
    if (!g.nic.empty()) g.path = pairs[i].path;
    t.gpus.push_back(std::move(g));
  }
  for (const PciHca& h : topology.hcas) {
    TopoNic n;
    n.name = h.name;
    n.bus_id = h.pci.bdf;
    n.numa_node = h.pci.numa_node;
    t.nics.push_back(std::move(n));
  }
  return t;
}

}  // namespace fabtrack
