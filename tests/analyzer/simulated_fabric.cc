#include "tests/analyzer/simulated_fabric.h"

namespace fabtrack::analyzer::testing {

SimulatedFabric::SimulatedFabric(int nodes, int leaf_size, std::vector<SimulatedFault> faults,
                                 uint64_t seed, bool one_way, SimulatedNoise noise)
    : faults_(std::move(faults)), random_(seed), one_way_(one_way), noise_(noise) {
  for (int i = 0; i < nodes; ++i) {
    const std::string node = "node" + std::to_string(i + 1);
    const std::string leaf = "leaf" + std::to_string(i / leaf_size + 1);
    topology_.nodes.push_back(node);
    topology_.leaf_of[node] = leaf;
    topology_.spine_of[leaf] = "spine";
  }
}

std::vector<LocateProbe> SimulatedFabric::Run(const LocateRound& round, int round_number) {
  std::vector<LocateProbe> out;
  std::bernoulli_distribution bursts(noise_.burst_rate);
  for (const std::vector<int>& members : round.probes) {
    // One latency measurement per pair, shared by both directions (as
    // fabtrack-pairprobe's ping-pong is), so a burst hits both.
    const bool burst = noise_.burst_rate > 0 && bursts(random_);
    if (one_way_ && members.size() == 2) {
      out.push_back(Measure(members, round_number, true, burst));
      out.push_back(Measure({members[1], members[0]}, round_number, true, burst));
    } else {
      out.push_back(Measure(members, round_number, false, burst));
    }
  }
  return out;
}

LocateProbe SimulatedFabric::Measure(const std::vector<int>& members, int round_number,
                                     bool one_way, bool burst) {
  std::normal_distribution<double> busbw_noise(1.0, 0.03), latency_noise(1.0, 0.05);
  LocateProbe p;
  p.members = members;
  p.round = round_number;
  p.one_way = one_way;
  p.busbw_gbps = 10.0;
  p.small_latency_us = 25.0;
  auto in_leaf = [&](int m, const std::string& leaf) {
    return topology_.leaf_of.at(topology_.nodes[m]) == leaf;
  };
  bool cross_leaf = false;
  for (int m : members)
    cross_leaf |= !in_leaf(m, topology_.leaf_of.at(topology_.nodes[members[0]]));
  if (cross_leaf) {
    p.busbw_gbps *= noise_.cross_leaf_busbw;
    p.small_latency_us *= noise_.cross_leaf_latency;
  }
  if (burst) p.small_latency_us *= noise_.burst_latency;
  for (const SimulatedFault& f : faults_) {
    bool on_path = false;
    if (f.kind == SimulatedFault::kUplink) {
      bool inside = false, outside = false;
      for (int m : members) (in_leaf(m, f.leaf) ? inside : outside) = true;
      on_path = inside && outside;
    } else if (f.kind == SimulatedFault::kUplinkOut) {
      // Data flows from members[0] when one-way; both ways otherwise.
      bool inside = false, outside = false;
      for (int m : members) (in_leaf(m, f.leaf) ? inside : outside) = true;
      on_path =
          one_way ? in_leaf(members[0], f.leaf) && !in_leaf(members[1], f.leaf) : inside && outside;
    } else {
      for (int m : members) on_path |= m == f.node;
    }
    if (!on_path) continue;
    switch (f.kind) {
      case SimulatedFault::kNodeLink:  // a NIC or cable at a fraction of its rate
        p.busbw_gbps *= 0.25;
        p.small_latency_us *= 1.2;
        break;
      case SimulatedFault::kNodeCpu:  // a starved CPU: latency, not bandwidth
        p.busbw_gbps *= 0.95;
        p.small_latency_us *= 3.0;
        break;
      case SimulatedFault::kUplink:
      case SimulatedFault::kUplinkOut:
        p.busbw_gbps *= 0.3;
        break;
    }
  }
  p.busbw_gbps *= busbw_noise(random_);
  p.small_latency_us *= latency_noise(random_);
  return p;
}

LocateOutcome RunLocate(SimulatedFabric& fabric, int max_rounds) {
  LocateOutcome outcome;
  std::vector<LocateProbe> probes;
  for (int r = 1; r <= max_rounds; ++r) {
    LocateRound round = PlanLocateRound(fabric.topology(), probes, outcome.verdict);
    if (round.probes.empty()) break;
    std::vector<LocateProbe> measured = fabric.Run(round, r);
    probes.insert(probes.end(), measured.begin(), measured.end());
    outcome.rounds = r;
    outcome.verdict = JudgeLocate(fabric.topology(), probes);
  }
  return outcome;
}

}  // namespace fabtrack::analyzer::testing
