#include "core/node_topology.h"

#include <map>
#include <tuple>

namespace fabtrack {

const char* TopoPathName(TopoPath p) {
  switch (p) {
    case TopoPath::kPix:
      return "PIX";
    case TopoPath::kPxb:
      return "PXB";
    case TopoPath::kPhb:
      return "PHB";
    case TopoPath::kNode:
      return "NODE";
    case TopoPath::kSys:
      return "SYS";
  }
  return "SYS";
}

std::optional<TopoPath> TopoPathFromName(std::string_view name) {
  for (TopoPath p :
       {TopoPath::kPix, TopoPath::kPxb, TopoPath::kPhb, TopoPath::kNode, TopoPath::kSys}) {
    if (name == TopoPathName(p)) return p;
  }
  return std::nullopt;
}

TopoPath PathBetween(const PciPlace& a, const PciPlace& b) {
  if (a.cpu != b.cpu) return TopoPath::kSys;
  size_t d = 0;
  while (d < a.chain.size() && d < b.chain.size() && a.chain[d] == b.chain[d]) ++d;
  if (d == 0) return TopoPath::kPhb;
  // Switches on the way: the deepest shared one and those below it on
  // either side, not counting the two endpoints' own functions.
  const size_t below = a.chain.size() + b.chain.size() - 2 * d;
  return below <= 2 ? TopoPath::kPix : TopoPath::kPxb;
}

void AssignNearestNics(NodeTopology& topology,
                       const std::vector<std::vector<std::optional<TopoPath>>>& paths) {
  std::map<size_t, int> taken;
  for (size_t g = 0; g < topology.gpus.size(); ++g) {
    TopoGpu& gpu = topology.gpus[g];
    gpu.nic.clear();
    gpu.path.reset();
    if (g >= paths.size()) continue;
    std::optional<size_t> best;
    // Larger is nearer: shorter path, same NUMA node, fewer GPUs on it.
    std::tuple<int, bool, int> best_key{0, false, 0};
    for (size_t n = 0; n < topology.nics.size() && n < paths[g].size(); ++n) {
      if (!paths[g][n]) continue;
      const TopoNic& nic = topology.nics[n];
      std::tuple<int, bool, int> key{-static_cast<int>(*paths[g][n]),
                                     gpu.numa_node && gpu.numa_node == nic.numa_node, -taken[n]};
      if (!best || key > best_key) {
        best = n;
        best_key = key;
      }
    }
    if (!best) continue;
    gpu.nic = topology.nics[*best].name;
    gpu.path = paths[g][*best];
    ++taken[*best];
  }
}

}  // namespace fabtrack
