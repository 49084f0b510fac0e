// A short point-to-point probe between one leader rank per node, to find a
// node whose link is slow. A collective cannot tell: in a ring every rank
// waits for the slowest link equally, so per-rank timings look alike. Pairs
// are scheduled round-robin (every node meets every other once, n-1 rounds of
// disjoint pairs), each pair exchanging `bytes` both ways; a node whose median
// pair bandwidth is well below the others' is the link straggler.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace fabtrack::harness {

struct PairProbe {
  int node_a = 0, node_b = 0;  // indexes into the node list
  double seconds = 0;          // best of the repetitions
  double gbps = 0;             // bytes moved both ways / seconds / 1e9
};

// Round r's partner of node i among n nodes (circle method); -1 = sits out
// (odd n). Pure.
int RoundRobinPartner(int n, int round, int i);
int RoundRobinRounds(int n);

struct LinkVerdict {
  std::vector<double> node_median_gbps;  // per node
  std::optional<int> slow_node;          // set when one node stands out
  double slow_ratio = 1.0;               // its median / median of the pairs without it
};

// Per pair, the faster of its two probes (`first` and `second` cover the
// same pairs; pairs only in one are kept as they are). Pure.
std::vector<PairProbe> BestOfProbes(const std::vector<PairProbe>& first,
                                    const std::vector<PairProbe>& second);

// Needs at least 3 nodes to say which end of a slow link is slow.
// A node is slow when its median pair bandwidth is below `threshold` times
// the median of the pairs it is not part of.
LinkVerdict JudgeLinks(int nodes, const std::vector<PairProbe>& probes, double threshold = 0.5);

}  // namespace fabtrack::harness
