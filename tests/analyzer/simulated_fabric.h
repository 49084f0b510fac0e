// A simulated two-tier fabric for locate's planner and verdict: nodes in
// leaves of `leaf_size` under one spine, probes measured with multiplicative
// noise of the spread seen on real fabrics (busbw 3%, small-message latency
// 5%), and faults that slow exactly the probes on their path.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "analyzer/locate/locate.h"

namespace fabtrack::analyzer::testing {

struct SimulatedFault {
  enum Kind { kNodeLink, kNodeCpu, kUplink } kind;
  int node = -1;     // kNodeLink, kNodeCpu
  std::string leaf;  // kUplink
};

class SimulatedFabric {
 public:
  SimulatedFabric(int nodes, int leaf_size, std::vector<SimulatedFault> faults, uint64_t seed);
  const LocateTopology& topology() const { return topology_; }
  std::vector<LocateProbe> Run(const LocateRound& round, int round_number);

 private:
  LocateTopology topology_;
  std::vector<SimulatedFault> faults_;
  std::mt19937_64 random_;
};

struct LocateOutcome {
  LocateVerdict verdict;
  int rounds = 0;
};

// Plans, runs and judges rounds until the planner has nothing left to ask.
LocateOutcome RunLocate(SimulatedFabric& fabric, int max_rounds = 64);

}  // namespace fabtrack::analyzer::testing
