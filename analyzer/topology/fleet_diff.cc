#include "analyzer/topology/fleet_diff.h"

#include <algorithm>
#include <optional>
#include <set>

namespace fabtrack {
namespace {

struct Rail {
  std::string nic;  // empty: no NIC
  std::string path;

  auto operator<=>(const Rail&) const = default;
};

// The value more than half of `values` hold, with its count.
template <typename T>
std::optional<std::pair<T, int>> StrictMajority(const std::map<std::string, T>& values) {
  std::map<T, int> count;
  for (const auto& [host, v] : values) ++count[v];
  for (const auto& [v, c] : count) {
    if (2 * c > static_cast<int>(values.size())) return std::make_pair(v, c);
  }
  return std::nullopt;
}

std::string Others(int n) {
  return std::to_string(n) + (n == 1 ? " other node " : " other nodes ");
}

}  // namespace

std::vector<TopologyFinding> DiffFleet(const std::map<std::string, NodeTopology>& by_host) {
  std::vector<TopologyFinding> out;
  if (by_host.size() < 3) return out;

  // Counts first: a node with a GPU or NIC missing differs in everything
  // below, and that one finding says why.
  std::map<std::string, size_t> gpus, nics;
  for (const auto& [host, t] : by_host) {
    gpus[host] = t.gpus.size();
    nics[host] = t.nics.size();
  }
  std::set<std::string> odd_count;
  for (const auto& [what, counts] : {std::pair{"GPU(s)", &gpus}, std::pair{"NIC(s)", &nics}}) {
    auto majority = StrictMajority(*counts);
    if (!majority) continue;
    for (const auto& [host, n] : *counts) {
      if (n == majority->first) continue;
      odd_count.insert(host);
      TopologyFinding f;
      f.kind = "topology_odd_node";
      f.severity = Severity::kWarning;
      f.host = host;
      f.message = host + ": " + std::to_string(n) + " " + what + ", " + Others(majority->second) +
                  std::to_string(majority->first);
      out.push_back(std::move(f));
    }
  }

  // Then every GPU's rail.
  std::map<std::string, std::map<std::string, Rail>> rails;  // gpu -> host -> rail
  for (const auto& [host, t] : by_host) {
    if (odd_count.count(host)) continue;
    for (const TopoGpu& g : t.gpus) {
      rails[g.name][host] = {g.nic, g.path ? TopoPathName(*g.path) : ""};
    }
  }
  for (const auto& [gpu, of_host] : rails) {
    auto majority = StrictMajority(of_host);
    if (!majority) continue;
    const Rail& usual = majority->first;
    for (const auto& [host, rail] : of_host) {
      if (rail == usual) continue;
      TopologyFinding f;
      f.kind = "topology_odd_node";
      f.host = host;
      f.gpu = gpu;
      f.nic = rail.nic;
      const std::string mine = rail.nic.empty() ? "no NIC" : rail.path;
      const std::string theirs = usual.nic.empty() ? "no NIC" : usual.path;
      f.severity =
          (rail.path == "SYS" && usual.path != "SYS") || (rail.nic.empty() && !usual.nic.empty())
              ? Severity::kCritical
              : Severity::kWarning;
      if (rail.nic.empty()) {
        f.message = host + ": " + gpu + " has no NIC, " + Others(majority->second) + gpu + " -> " +
                    usual.nic + " " + theirs;
      } else if (rail.nic == usual.nic) {
        f.message = host + ": " + gpu + " -> " + rail.nic + " is " + mine + ", " +
                    Others(majority->second) + theirs;
      } else {
        f.message = host + ": " + gpu + " -> " + rail.nic + " is " + mine + ", " +
                    Others(majority->second) + gpu + " -> " +
                    (usual.nic.empty() ? "no NIC" : usual.nic + " " + theirs);
      }
      out.push_back(std::move(f));
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const TopologyFinding& a, const TopologyFinding& b) {
    return a.severity > b.severity;
  });
  return out;
}

}  // namespace fabtrack
