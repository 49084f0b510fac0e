#include "analyzer/topology/rail_check.h"

#include <algorithm>
#include <functional>
#include <map>
#include <sstream>

#include "core/node_topology_json.h"
#include "core/text.h"

namespace fabtrack {
namespace {

std::string Number(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// The value most peers have (ties to the higher one); none with fewer than
// two values to compare.
template <typename T>
std::optional<T> Majority(const std::vector<T>& values) {
  if (values.size() < 2) return std::nullopt;
  std::map<T, int> count;
  for (const T& v : values) ++count[v];
  std::optional<T> best;
  int best_count = 0;
  for (const auto& [v, c] : count) {
    if (c >= best_count) {
      best = v;
      best_count = c;
    }
  }
  return best;
}

// One finding per device whose value is below the majority's.
template <typename Device, typename T>
void BelowPeers(const std::vector<const Device*>& devices,
                std::function<std::optional<T>(const Device&)> value,
                std::function<TopologyFinding(const Device&, T, T)> make,
                std::vector<TopologyFinding>& out) {
  std::vector<T> values;
  for (const Device* d : devices) {
    if (std::optional<T> v = value(*d)) values.push_back(*v);
  }
  std::optional<T> ref = Majority(values);
  if (!ref) return;
  for (const Device* d : devices) {
    std::optional<T> v = value(*d);
    if (v && *v < *ref) out.push_back(make(*d, *v, *ref));
  }
}

}  // namespace

std::vector<TopologyFinding> CheckRails(const NodeTopology& t) {
  std::vector<TopologyFinding> out;
  if (t.gpus.empty()) return out;
  if (t.nics.empty()) {
    out.push_back({"no_nic", Severity::kCritical, "", "",
                   "no NIC: " + std::to_string(t.gpus.size()) +
                       " GPU(s) reach other nodes only through host sockets"});
    return out;
  }

  std::map<std::string, std::vector<const TopoGpu*>> gpus_of;
  for (const TopoGpu& g : t.gpus) {
    if (g.nic.empty()) {
      out.push_back(
          {"no_nic", Severity::kCritical, g.name, "", g.name + " has no known path to any NIC"});
      continue;
    }
    gpus_of[g.nic].push_back(&g);
  }
  for (const TopoNic& n : t.nics) {
    auto it = gpus_of.find(n.name);
    if (it == gpus_of.end() || it->second.size() < 2) continue;
    std::vector<std::string> names, paths;
    for (const TopoGpu* g : it->second) {
      names.push_back(g->name);
      paths.push_back(g->path ? TopoPathName(*g->path) : "?");
    }
    out.push_back({"shared_nic", Severity::kWarning, Join(names, ","), n.name,
                   Join(names, ", ") + " share " + n.name + " (" + Join(paths, ", ") +
                       "): each gets a fraction of one NIC's bandwidth"});
  }
  for (const TopoGpu& g : t.gpus) {
    if (g.nic.empty() || !g.path || *g.path <= TopoPath::kPxb) continue;
    const bool sys = *g.path == TopoPath::kSys;
    out.push_back({"nic_far", sys ? Severity::kCritical : Severity::kWarning, g.name, g.nic,
                   g.name + " -> " + g.nic + " is " + TopoPathName(*g.path) +
                       (sys ? ": across the CPU interconnect, no GPUDirect RDMA"
                            : ": through the CPU, no GPUDirect RDMA at NCCL's default level")});
  }
  std::map<std::string, const TopoNic*> nic_named;
  for (const TopoNic& n : t.nics) nic_named.emplace(n.name, &n);
  for (const TopoGpu& g : t.gpus) {
    if (PairGdr(t, g) != false) continue;
    std::vector<std::string> who;
    if (g.gdr == false) who.push_back(g.name + " gdr=0");
    if (nic_named[g.nic]->gdr == false) who.push_back(g.nic + " gdr=0");
    out.push_back({"gdr_off", Severity::kWarning, g.name, g.nic,
                   g.name + " -> " + g.nic + ": no GPUDirect RDMA (" + Join(who, ", ") +
                       "): transfers stage through host memory"});
  }

  // Rates: GPUs against GPUs, and the NICs GPUs use against each other (a
  // slower storage or management NIC is not a rail). A PCIe link whose
  // device's maximum is known (sysfs) is judged against that maximum below
  // instead: one finding per fault, and an idle GPU's low link speed is not
  // compared with a busy peer's.
  std::vector<const TopoGpu*> gpus;
  for (const TopoGpu& g : t.gpus) gpus.push_back(&g);
  std::vector<const TopoNic*> rails;
  for (const TopoNic& n : t.nics) {
    if (gpus_of.count(n.name)) rails.push_back(&n);
  }
  auto link = [](const std::string& who, const std::string& nic, const std::string& gpu,
                 const std::string& what) {
    return TopologyFinding{"link_degraded", Severity::kWarning, gpu, nic, who + " " + what};
  };
  BelowPeers<TopoGpu, int>(
      gpus, [](const TopoGpu& g) { return g.max_link_width ? std::nullopt : g.link_width; },
      [&](const TopoGpu& g, int v, int ref) {
        return link(g.name, g.nic, g.name,
                    "PCIe link x" + std::to_string(v) + ", peers x" + std::to_string(ref));
      },
      out);
  BelowPeers<TopoGpu, double>(
      gpus, [](const TopoGpu& g) { return g.max_link_gts ? std::nullopt : g.link_gts; },
      [&](const TopoGpu& g, double v, double ref) {
        return link(g.name, g.nic, g.name,
                    "PCIe link " + Number(v) + " GT/s, peers " + Number(ref) + " GT/s");
      },
      out);
  auto gpus_on = [&](const TopoNic& n) {
    std::vector<std::string> names;
    for (const TopoGpu* g : gpus_of[n.name]) names.push_back(g->name);
    return Join(names, ",");
  };
  BelowPeers<TopoNic, int>(
      rails, [](const TopoNic& n) { return n.max_link_width ? std::nullopt : n.link_width; },
      [&](const TopoNic& n, int v, int ref) {
        return link(n.name, n.name, gpus_on(n),
                    "PCIe link x" + std::to_string(v) + ", peers x" + std::to_string(ref));
      },
      out);
  BelowPeers<TopoNic, double>(
      rails, [](const TopoNic& n) { return n.max_link_gts ? std::nullopt : n.link_gts; },
      [&](const TopoNic& n, double v, double ref) {
        return link(n.name, n.name, gpus_on(n),
                    "PCIe link " + Number(v) + " GT/s, peers " + Number(ref) + " GT/s");
      },
      out);
  // A NIC NCCL lists with no PCI device (a socket net's docker bridge or
  // veth, whose "speed" is a default, not a line rate) is no peer of a
  // physical NIC's port rate.
  std::vector<const TopoNic*> rate_peers;
  for (const TopoNic* n : rails) {
    if (!n->bus_id.empty()) rate_peers.push_back(n);
  }
  if (rate_peers.empty()) rate_peers = rails;
  BelowPeers<TopoNic, int64_t>(
      rate_peers, [](const TopoNic& n) { return n.speed_mbps; },
      [&](const TopoNic& n, int64_t v, int64_t ref) {
        return link(n.name, n.name, gpus_on(n),
                    "port rate " + std::to_string(v / 1000) + " Gb/s, peers " +
                        std::to_string(ref / 1000) + " Gb/s");
      },
      out);

  // Below the device's own maximum (sysfs max_link_*): a GPU or NIC that
  // trained x8 in an x16 slot (a riser, a dirty connector) runs at half its
  // bandwidth whatever its peers do. A GPU's link speed is not judged this
  // way: NVIDIA GPUs drop their PCIe link to 2.5 GT/s when idle and train
  // up under load, so an idle GPU's current_link_speed says nothing; a
  // NIC's does not move.
  for (const TopoGpu& g : t.gpus) {
    if (g.link_width && g.max_link_width && *g.link_width < *g.max_link_width) {
      out.push_back(link(g.name, g.nic, g.name,
                         "PCIe link x" + std::to_string(*g.link_width) + ", the device supports x" +
                             std::to_string(*g.max_link_width)));
    }
  }
  for (const TopoNic& n : t.nics) {
    if (!gpus_of.count(n.name)) continue;  // not a rail
    std::vector<std::string> what;
    if (n.link_width && n.max_link_width && *n.link_width < *n.max_link_width) {
      what.push_back("x" + std::to_string(*n.link_width) + ", the device supports x" +
                     std::to_string(*n.max_link_width));
    }
    if (n.link_gts && n.max_link_gts && *n.link_gts < *n.max_link_gts) {
      what.push_back(Number(*n.link_gts) + " GT/s, the device supports " + Number(*n.max_link_gts) +
                     " GT/s");
    }
    if (what.empty()) continue;
    out.push_back(link(n.name, n.name, gpus_on(n), "PCIe link " + Join(what, ", ")));
  }

  // Uplinks: a switch or bridge whose own link is narrower or slower than
  // the links below it throttles every GPU and NIC there (an x1 bridge, a
  // 2.5 GT/s link over Gen4 devices, a VM's PCI[0.2] over 48 GB/s). Judged
  // when a GPU or a rail NIC is below it. One PCIe generation less (a Gen4
  // root port above a Gen5 switch: 16 GT/s over 32, PCI[24] over PCI[48]) is
  // how boards and cloud images are built (AWS's p5 topology file), not a
  // link that trained down: speed and bandwidth count from half.
  for (const TopoUplink& u : t.uplinks) {
    std::vector<std::string> nics;
    for (const std::string& n : u.nics) {
      if (gpus_of.count(n)) nics.push_back(n);
    }
    if (u.gpus.empty() && nics.empty()) continue;
    std::vector<std::string> what;
    if (u.link_width && u.below_width && *u.link_width < *u.below_width) {
      what.push_back("x" + std::to_string(*u.link_width) + " where the links below are x" +
                     std::to_string(*u.below_width));
    }
    if (u.link_gts && u.below_gts && *u.link_gts * 2 < *u.below_gts) {
      what.push_back(Number(*u.link_gts) + " GT/s where the links below run " +
                     Number(*u.below_gts) + " GT/s");
    }
    if (u.bandwidth_gbs && u.below_bandwidth_gbs && *u.bandwidth_gbs * 2 < *u.below_bandwidth_gbs) {
      what.push_back(Number(*u.bandwidth_gbs) + " GB/s where the links below get " +
                     Number(*u.below_bandwidth_gbs) + " GB/s");
    }
    if (what.empty()) continue;
    std::vector<std::string> below = u.gpus;
    below.insert(below.end(), nics.begin(), nics.end());
    out.push_back({"link_degraded", Severity::kWarning, Join(u.gpus, ","), Join(nics, ","),
                   "PCIe link " + u.upper + " <-> " + u.lower + " is " + Join(what, ", ") +
                       ": it throttles " + Join(below, ", ")});
  }

  std::stable_sort(out.begin(), out.end(), [](const TopologyFinding& a, const TopologyFinding& b) {
    return a.severity > b.severity;
  });
  return out;
}

}  // namespace fabtrack
