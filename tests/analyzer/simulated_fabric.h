// A simulated two-tier fabric for locate's planner and verdict: nodes in
// leaves of `leaf_size` under one spine, probes measured with multiplicative
// noise of the spread seen on real fabrics (busbw 3%, small-message latency
// 5%), and faults that slow exactly the probes on their path. With
// `one_way`, each planned pair is measured both ways, as `fabtrack locate`
// does: two one-way probes, a -> b and b -> a. `SimulatedNoise` adds what
// the 8-node netns fabric on a shared 2-core machine shows: probes across
// leaves slower by structure (an extra veth and bridge hop), and bursts of
// small-message latency from other work on the CPUs.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "analyzer/locate/locate.h"

namespace fabtrack::analyzer::testing {

struct SimulatedFault {
  // kUplink: both directions of a leaf's uplink; kUplinkOut: only from the
  // leaf toward the spine (what scripts/netns-fabric.sh throttle-uplink
  // shapes), which only one-way probes can see as such.
  enum Kind { kNodeLink, kNodeCpu, kUplink, kUplinkOut } kind;
  int node = -1;     // kNodeLink, kNodeCpu
  std::string leaf;  // kUplink, kUplinkOut
};

struct SimulatedNoise {
  double cross_leaf_busbw = 1.0;    // factor on every probe across leaves
  double cross_leaf_latency = 1.0;  // likewise on its latency
  double burst_rate = 0;            // chance that a pair's measurement hits a burst
  double burst_latency = 2.5;       // the burst's factor on small-message latency
};

// What the netns fabric measured: cross-leaf at ~0.4-0.7x, latency doubled
// now and then.
inline SimulatedNoise NetnsLikeNoise() { return {0.5, 1.3, 0.02, 2.5}; }

class SimulatedFabric {
 public:
  SimulatedFabric(int nodes, int leaf_size, std::vector<SimulatedFault> faults, uint64_t seed,
                  bool one_way = false, SimulatedNoise noise = {});
  const LocateTopology& topology() const { return topology_; }
  std::vector<LocateProbe> Run(const LocateRound& round, int round_number);

 private:
  LocateTopology topology_;
  std::vector<SimulatedFault> faults_;
  std::mt19937_64 random_;
  bool one_way_ = false;
  SimulatedNoise noise_;
  LocateProbe Measure(const std::vector<int>& members, int round_number, bool one_way, bool burst);
};

struct LocateOutcome {
  LocateVerdict verdict;
  int rounds = 0;
};

// Plans, runs and judges rounds until the planner has nothing left to ask.
LocateOutcome RunLocate(SimulatedFabric& fabric, int max_rounds = 64);

}  // namespace fabtrack::analyzer::testing
