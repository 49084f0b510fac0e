#include "tests/analyzer/simulated_fabric.h"

namespace fabtrack::analyzer::testing {

SimulatedFabric::SimulatedFabric(int nodes, int leaf_size, std::vector<SimulatedFault> faults,
                                 uint64_t seed)
    : faults_(std::move(faults)), random_(seed) {
  for (int i = 0; i < nodes; ++i) {
    const std::string node = "node" + std::to_string(i + 1);
    const std::string leaf = "leaf" + std::to_string(i / leaf_size + 1);
    topology_.nodes.push_back(node);
    topology_.leaf_of[node] = leaf;
    topology_.spine_of[leaf] = "spine";
  }
}

std::vector<LocateProbe> SimulatedFabric::Run(const LocateRound& round, int round_number) {
  std::normal_distribution<double> busbw_noise(1.0, 0.03), latency_noise(1.0, 0.05);
  std::vector<LocateProbe> out;
  for (const std::vector<int>& members : round.probes) {
    LocateProbe p;
    p.members = members;
    p.round = round_number;
    p.busbw_gbps = 10.0;
    p.small_latency_us = 25.0;
    for (const SimulatedFault& f : faults_) {
      bool on_path = false;
      if (f.kind == SimulatedFault::kUplink) {
        bool inside = false, outside = false;
        for (int m : members)
          (topology_.leaf_of.at(topology_.nodes[m]) == f.leaf ? inside : outside) = true;
        on_path = inside && outside;
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
          p.busbw_gbps *= 0.3;
          break;
      }
    }
    p.busbw_gbps *= busbw_noise(random_);
    p.small_latency_us *= latency_noise(random_);
    out.push_back(p);
  }
  return out;
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
