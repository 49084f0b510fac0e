// locate's rounds and top-1 accuracy against simulated two-tier fabrics
// (leaves of 32 under one spine, busbw noise 3%, latency noise 5%), one fault
// placed at random per trial, with symmetric pair probes and with each pair
// measured one way in each direction (as `fabtrack locate` measures). Prints
// a Markdown table for BENCHMARKS.md.
//   build/bench/locate_simulation [trials]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "tests/analyzer/simulated_fabric.h"

using fabtrack::analyzer::testing::RunLocate;
using fabtrack::analyzer::testing::SimulatedFabric;
using fabtrack::analyzer::testing::SimulatedFault;

int main(int argc, char** argv) {
  const int trials = argc > 1 ? std::atoi(argv[1]) : 50;
  std::printf(
      "| probes | nodes | fault | trials | top-1 right | settled | rounds median | rounds max | "
      "budget 2⌈log2 N⌉+2 |\n|---|---|---|---|---|---|---|---|---|\n");
  for (bool one_way : {false, true}) {
    for (int nodes : {64, 256, 1024, 4096}) {
      const int budget = 2 * static_cast<int>(std::ceil(std::log2(nodes))) + 2;
      for (const char* kind :
           {"none", "node link", "node CPU", "uplink", "uplink, leaf to spine"}) {
        if (!one_way && std::string(kind) == "uplink, leaf to spine") continue;
        int right = 0, settled = 0;
        std::vector<int> rounds;
        const int n_trials = nodes >= 4096 ? std::max(trials / 5, 5) : trials;
        for (int t = 0; t < n_trials; ++t) {
          std::mt19937 pick(1000 + t);
          const int node = std::uniform_int_distribution<int>(0, nodes - 1)(pick);
          const std::string leaf =
              "leaf" + std::to_string(std::uniform_int_distribution<int>(1, nodes / 32)(pick));
          std::vector<SimulatedFault> faults;
          std::string expect;
          if (std::string(kind) == "node link") {
            faults.push_back({SimulatedFault::kNodeLink, node, ""});
            expect = "node" + std::to_string(node + 1);
          } else if (std::string(kind) == "node CPU") {
            faults.push_back({SimulatedFault::kNodeCpu, node, ""});
            expect = "node" + std::to_string(node + 1);
          } else if (std::string(kind) == "uplink") {
            faults.push_back({SimulatedFault::kUplink, -1, leaf});
            expect = leaf + "-spine";
          } else if (std::string(kind) == "uplink, leaf to spine") {
            faults.push_back({SimulatedFault::kUplinkOut, -1, leaf});
            expect = leaf + "-spine";
          }
          SimulatedFabric fabric(nodes, 32, faults, 77 + t, one_way);
          auto outcome = RunLocate(fabric);
          const auto& s = outcome.verdict.suspects;
          right += expect.empty() ? s.empty() : (!s.empty() && s.front().name == expect);
          settled += outcome.verdict.settled;
          rounds.push_back(outcome.rounds);
        }
        std::sort(rounds.begin(), rounds.end());
        std::printf("| %s | %d | %s | %d | %.0f%% | %.0f%% | %d | %d | %d |\n",
                    one_way ? "one-way, both directions" : "pair", nodes, kind, n_trials,
                    100.0 * right / n_trials, 100.0 * settled / n_trials, rounds[rounds.size() / 2],
                    rounds.back(), budget);
      }
    }
  }
}
