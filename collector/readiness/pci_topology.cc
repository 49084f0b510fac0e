#include "collector/readiness/pci_topology.h"

#include <limits.h>
#include <stdlib.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
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

// "16.0 GT/s PCIe" (kernels since 5.x), "8 GT/s" or "2.5 GT/s" (older):
// the number before "GT/s"; "Unknown", empty or no file: nothing.
std::optional<double> LinkGts(const std::string& text) {
  const size_t unit = text.find("GT/s");
  if (unit == std::string::npos) return std::nullopt;
  std::string number = text.substr(0, unit);
  while (!number.empty() && number.back() == ' ') number.pop_back();
  double v = 0;
  auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), v);
  if (ec != std::errc() || end != number.data() + number.size() || v <= 0) return std::nullopt;
  return v;
}

// "16"; "0" (a link that is down) or anything else: nothing.
std::optional<int> LinkWidth(const std::string& text) {
  int v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v <= 0) return std::nullopt;
  return v;
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
  f.link_gts = LinkGts(ReadValue(dir + "/current_link_speed"));
  f.max_link_gts = LinkGts(ReadValue(dir + "/max_link_speed"));
  f.link_width = LinkWidth(ReadValue(dir + "/current_link_width"));
  f.max_link_width = LinkWidth(ReadValue(dir + "/max_link_width"));
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

  // The ports above them: every component of their chains between the root
  // complex and the function itself.
  std::map<std::string, PciFunction> bridges;
  auto add_bridges = [&](const PciFunction& f) {
    std::string dir = *root + "/devices/" + f.chain.front();
    for (size_t i = 1; i + 1 < f.chain.size(); ++i) {
      dir += "/" + f.chain[i];
      if (bridges.count(f.chain[i])) continue;
      if (std::optional<PciFunction> b = ReadFunction(dir, devices_prefix)) {
        bridges.emplace(f.chain[i], std::move(*b));
      }
    }
  };
  for (const PciFunction& g : out.gpus) add_bridges(g);
  for (const PciHca& h : out.hcas) add_bridges(h.pci);
  for (auto& [bdf, b] : bridges) out.bridges.push_back(std::move(b));
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

namespace {

// A chain runs root complex, root port, then per switch its upstream and a
// downstream port, then the device: [pci0000:15, rp, usp, dsp, (usp, dsp,)
// device]. The links join chain[2k-1] and chain[2k]; the function at an
// even index k >= 2 reports the link above it. A switch's uplink is the
// link above its upstream port (an even index with functions below it),
// compared with the best link just below the switch: those above the
// functions two steps further down.
std::vector<TopoUplink> SwitchUplinks(const PciTopology& topology, const NodeTopology& node) {
  std::map<std::string, const PciFunction*> by_bdf;
  for (const PciFunction& b : topology.bridges) by_bdf[b.bdf] = &b;
  for (const PciFunction& g : topology.gpus) by_bdf[g.bdf] = &g;
  for (const PciHca& h : topology.hcas) by_bdf[h.pci.bdf] = &h.pci;
  std::map<std::string, std::string> name_of;
  for (const TopoGpu& g : node.gpus) name_of[g.bus_id] = g.name;
  for (const TopoNic& n : node.nics) name_of[n.bus_id] = n.name;

  struct Below {
    std::string upper;
    std::set<std::string> next;  // the functions two steps down
    std::vector<std::string> gpus, nics;
  };
  std::map<std::string, Below> switches;  // by the upstream port's BDF
  auto walk = [&](const PciFunction& f, bool gpu) {
    for (size_t i = 2; i + 2 < f.chain.size(); i += 2) {
      Below& b = switches[f.chain[i]];
      b.upper = f.chain[i - 1];
      b.next.insert(f.chain[i + 2]);
      (gpu ? b.gpus : b.nics).push_back(name_of[f.bdf]);
    }
  };
  for (const PciFunction& g : topology.gpus) walk(g, true);
  for (const PciHca& h : topology.hcas) walk(h.pci, false);

  std::vector<TopoUplink> out;
  for (const auto& [bdf, b] : switches) {
    auto it = by_bdf.find(bdf);
    if (it == by_bdf.end()) continue;
    TopoUplink u;
    u.upper = b.upper;
    u.lower = bdf;
    u.link_gts = it->second->link_gts;
    u.link_width = it->second->link_width;
    for (const std::string& next : b.next) {
      auto n = by_bdf.find(next);
      if (n == by_bdf.end()) continue;
      if (n->second->link_gts)
        u.below_gts = std::max(u.below_gts.value_or(0), *n->second->link_gts);
      if (n->second->link_width) {
        u.below_width = std::max(u.below_width.value_or(0), *n->second->link_width);
      }
    }
    u.gpus = b.gpus;
    u.nics = b.nics;
    out.push_back(std::move(u));
  }
  return out;
}

// The PCIe link a GPU's or NIC's function reports and the most it supports.
template <typename GpuOrNic>
void CopyLinks(const PciFunction& f, GpuOrNic* to) {
  to->link_gts = f.link_gts;
  to->link_width = f.link_width;
  to->max_link_gts = f.max_link_gts;
  to->max_link_width = f.max_link_width;
}

}  // namespace

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
    CopyLinks(topology.gpus[i], &g);
    t.gpus.push_back(std::move(g));
  }
  for (const PciHca& h : topology.hcas) {
    TopoNic n;
    n.name = h.name;
    n.bus_id = h.pci.bdf;
    n.numa_node = h.pci.numa_node;
    CopyLinks(h.pci, &n);
    t.nics.push_back(std::move(n));
  }
  t.uplinks = SwitchUplinks(topology, t);
  return t;
}

}  // namespace fabtrack
