#include "collector/harness/link_probe.h"

#include <algorithm>

#include "core/statistics.h"

namespace fabtrack::harness {

int RoundRobinRounds(int n) { return n < 2 ? 0 : (n % 2 ? n : n - 1); }

int RoundRobinPartner(int n, int round, int i) {
  // Circle method on m = n (even) or n+1 (odd, with a phantom m-1): position
  // m-1 stays fixed, the others rotate.
  const int m = n % 2 ? n + 1 : n;
  if (i < 0 || i >= n || round < 0 || round >= m - 1) return -1;
  auto rotated = [&](int slot) { return slot == m - 1 ? m - 1 : (slot + round) % (m - 1); };
  // Slot of node i in this round.
  int slot = -1;
  for (int s = 0; s < m; ++s) {
    if (rotated(s) == i) slot = s;
  }
  int partner = rotated(m - 1 - slot);
  return partner >= n ? -1 : partner;
}

std::vector<PairProbe> BestOfProbes(const std::vector<PairProbe>& first,
                                    const std::vector<PairProbe>& second) {
  std::vector<PairProbe> best = first;
  for (const PairProbe& p : second) {
    auto same = std::find_if(best.begin(), best.end(), [&](const PairProbe& b) {
      return (b.node_a == p.node_a && b.node_b == p.node_b) ||
             (b.node_a == p.node_b && b.node_b == p.node_a);
    });
    if (same == best.end()) {
      best.push_back(p);
    } else if (p.gbps > same->gbps) {
      *same = p;
    }
  }
  return best;
}

LinkVerdict JudgeLinks(int nodes, const std::vector<PairProbe>& probes, double threshold) {
  LinkVerdict v;
  std::vector<std::vector<double>> per_node(nodes);
  for (const PairProbe& p : probes) {
    if (p.node_a < 0 || p.node_a >= nodes || p.node_b < 0 || p.node_b >= nodes) continue;
    per_node[p.node_a].push_back(p.gbps);
    per_node[p.node_b].push_back(p.gbps);
  }
  for (auto& bw : per_node) v.node_median_gbps.push_back(stats::Median(bw).value_or(0));
  if (nodes < 3) return v;
  int worst =
      static_cast<int>(std::min_element(v.node_median_gbps.begin(), v.node_median_gbps.end()) -
                       v.node_median_gbps.begin());
  // Compare with the pairs that do not involve that node: with few nodes,
  // the other nodes' own medians are dragged down by their pair with it.
  std::vector<double> others;
  for (const PairProbe& p : probes) {
    if (p.node_a != worst && p.node_b != worst) others.push_back(p.gbps);
  }
  double reference = stats::Median(others).value_or(0);
  if (reference <= 0) return v;
  v.slow_ratio = v.node_median_gbps[worst] / reference;
  if (v.slow_ratio < threshold) v.slow_node = worst;
  return v;
}

}  // namespace fabtrack::harness
