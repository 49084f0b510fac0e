// locate's planner and verdict against simulated fabrics (issue 20, item 6):
// the right suspect first, no suspect without a fault, and few rounds.
#include "analyzer/locate/locate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "tests/analyzer/simulated_fabric.h"

namespace fabtrack::analyzer {
namespace {

using testing::RunLocate;
using testing::SimulatedFabric;
using testing::SimulatedFault;

int RoundBudget(int nodes) { return 2 * static_cast<int>(std::ceil(std::log2(nodes))) + 2; }

TEST(Locate, NoFaultNamesNoSuspect) {
  for (int nodes : {2, 8, 64, 512}) {
    for (uint64_t seed = 1; seed <= 20; ++seed) {
      SimulatedFabric fabric(nodes, 32, {}, seed);
      auto outcome = RunLocate(fabric);
      EXPECT_TRUE(outcome.verdict.suspects.empty())
          << nodes << " nodes, seed " << seed << ": " << outcome.verdict.suspects.front().name;
      EXPECT_TRUE(outcome.verdict.settled);
      EXPECT_EQ(outcome.rounds, 1);
      EXPECT_GT(outcome.verdict.busbw_spread, 0);
    }
  }
}

// One fault of `kind` on a random node, over seeds and sizes: right first,
// within the round budget, and settled.
void ExpectNodeFaultFound(SimulatedFault::Kind kind, const std::string& evidence_word,
                          bool one_way) {
  for (int nodes : {8, 64, 512, 4096}) {
    const int tries = nodes >= 4096 ? 5 : 20;
    for (int seed = 1; seed <= tries; ++seed) {
      std::mt19937 pick(seed);
      const int node = std::uniform_int_distribution<int>(0, nodes - 1)(pick);
      SimulatedFabric fabric(nodes, nodes == 8 ? 4 : 32, {{kind, node, ""}}, seed, one_way);
      auto outcome = RunLocate(fabric);
      const std::string where = std::to_string(nodes) + " nodes, seed " + std::to_string(seed) +
                                (one_way ? ", one-way probes" : "");
      ASSERT_FALSE(outcome.verdict.suspects.empty()) << where;
      const LocateSuspect& top = outcome.verdict.suspects.front();
      EXPECT_EQ(top.kind, "node") << where;
      EXPECT_EQ(top.name, "node" + std::to_string(node + 1)) << where;
      EXPECT_EQ(outcome.verdict.suspects.size(), 1u) << where;
      EXPECT_TRUE(outcome.verdict.settled) << where;
      EXPECT_LE(outcome.rounds, RoundBudget(nodes)) << where;
      bool said = false;
      for (const std::string& e : top.evidence) said |= e.find(evidence_word) != std::string::npos;
      EXPECT_TRUE(said) << where << ": evidence does not mention " << evidence_word;
    }
  }
}

TEST(Locate, SlowNodeLinkIsNamedWithinTheRoundBudget) {
  ExpectNodeFaultFound(SimulatedFault::kNodeLink, "busbw", false);
  ExpectNodeFaultFound(SimulatedFault::kNodeLink, "busbw", true);
}

TEST(Locate, StarvedCpuIsNamedAsALatencyFault) {
  ExpectNodeFaultFound(SimulatedFault::kNodeCpu, "latency only", false);
  ExpectNodeFaultFound(SimulatedFault::kNodeCpu, "latency only", true);
}

// Symmetric probes with a fault in both directions; one-way probes with a
// fault in both directions and with one in the leaf -> spine direction only.
TEST(Locate, SlowUplinkIsNamedNotTheNodesBehindIt) {
  struct Mode {
    SimulatedFault::Kind kind;
    bool one_way;
  };
  for (Mode mode : {Mode{SimulatedFault::kUplink, false}, Mode{SimulatedFault::kUplink, true},
                    Mode{SimulatedFault::kUplinkOut, true}}) {
    for (int nodes : {96, 512, 4096}) {
      const int leaves = nodes / 32;
      for (int seed = 1; seed <= (nodes >= 4096 ? 5 : 20); ++seed) {
        const std::string leaf = "leaf" + std::to_string(seed % leaves + 1);
        SimulatedFabric fabric(nodes, 32, {{mode.kind, -1, leaf}}, seed, mode.one_way);
        auto outcome = RunLocate(fabric);
        const std::string where = std::to_string(nodes) + " nodes, seed " + std::to_string(seed) +
                                  ", kind " + std::to_string(mode.kind) +
                                  (mode.one_way ? ", one-way probes" : "");
        ASSERT_FALSE(outcome.verdict.suspects.empty()) << where;
        EXPECT_EQ(outcome.verdict.suspects.front().kind, "uplink") << where;
        EXPECT_EQ(outcome.verdict.suspects.front().name, leaf + "-spine") << where;
        EXPECT_TRUE(outcome.verdict.settled) << where;
        EXPECT_LE(outcome.rounds, RoundBudget(nodes)) << where;
      }
    }
  }
}

// Two leaves: every probe across one uplink crosses the other too, so no
// pair test can tell them apart; the verdict names both, equally, and says
// it is not settled rather than guessing.
TEST(Locate, TwoLeavesCannotSeparateTheirUplinksAndSaySo) {
  SimulatedFabric fabric(8, 4, {{SimulatedFault::kUplink, -1, "leaf2"}}, 7);
  auto outcome = RunLocate(fabric);
  ASSERT_EQ(outcome.verdict.suspects.size(), 2u);
  EXPECT_EQ(outcome.verdict.suspects[0].kind, "uplink");
  EXPECT_EQ(outcome.verdict.suspects[1].kind, "uplink");
  EXPECT_FALSE(outcome.verdict.settled);
}

// One-way probes (each pair measured both ways) do not change that for a
// fault in both directions of an uplink: leaf1 -> leaf2 and leaf2 -> leaf1
// are both slow, which either uplink explains.
TEST(Locate, TwoLeavesStillCannotSeparateASymmetricUplinkFault) {
  for (int seed = 1; seed <= 20; ++seed) {
    SimulatedFabric fabric(8, 4, {{SimulatedFault::kUplink, -1, "leaf2"}}, seed, true);
    auto outcome = RunLocate(fabric);
    ASSERT_EQ(outcome.verdict.suspects.size(), 2u) << "seed " << seed;
    EXPECT_EQ(outcome.verdict.suspects[0].kind, "uplink");
    EXPECT_EQ(outcome.verdict.suspects[1].kind, "uplink");
    EXPECT_FALSE(outcome.verdict.settled);
  }
}

// But a fault in one direction, leaf2 toward the spine, slows only what
// leaf2 sends out: one-way probes name that uplink alone, and say which way.
TEST(Locate, OneWayProbesSettleAOneDirectionUplinkFaultOnTwoLeaves) {
  for (const char* leaf : {"leaf1", "leaf2"}) {
    for (int seed = 1; seed <= 20; ++seed) {
      SimulatedFabric fabric(8, 4, {{SimulatedFault::kUplinkOut, -1, leaf}}, seed, true);
      auto outcome = RunLocate(fabric);
      const std::string where = std::string(leaf) + ", seed " + std::to_string(seed);
      ASSERT_EQ(outcome.verdict.suspects.size(), 1u) << where;
      const LocateSuspect& top = outcome.verdict.suspects.front();
      EXPECT_EQ(top.kind, "uplink") << where;
      EXPECT_EQ(top.name, std::string(leaf) + "-spine") << where;
      EXPECT_TRUE(outcome.verdict.settled) << where;
      EXPECT_LE(outcome.rounds, RoundBudget(8)) << where;
      ASSERT_FALSE(top.evidence.empty());
      EXPECT_NE(top.evidence.front().find("toward spine"), std::string::npos) << where;
      EXPECT_NE(top.evidence.back().find("->"), std::string::npos) << where;
    }
  }
}

// Without one-way probes the same fault looks symmetric: not settled.
TEST(Locate, AOneDirectionUplinkFaultNeedsOneWayProbes) {
  SimulatedFabric fabric(8, 4, {{SimulatedFault::kUplinkOut, -1, "leaf1"}}, 3, false);
  auto outcome = RunLocate(fabric);
  EXPECT_EQ(outcome.verdict.suspects.size(), 2u);
  EXPECT_FALSE(outcome.verdict.settled);
}

TEST(Locate, TwoSlowNodesInDifferentLeavesAreBothNamed) {
  for (int seed = 1; seed <= 10; ++seed) {
    SimulatedFabric fabric(
        256, 32, {{SimulatedFault::kNodeLink, 5, ""}, {SimulatedFault::kNodeLink, 200, ""}}, seed);
    auto outcome = RunLocate(fabric);
    ASSERT_GE(outcome.verdict.suspects.size(), 2u) << "seed " << seed;
    std::set<std::string> top2 = {outcome.verdict.suspects[0].name,
                                  outcome.verdict.suspects[1].name};
    EXPECT_EQ(top2, (std::set<std::string>{"node6", "node201"})) << "seed " << seed;
  }
}

TEST(Locate, WithoutTopologyNodesAreStillNamed) {
  LocateTopology flat;
  for (int i = 1; i <= 16; ++i) flat.nodes.push_back("n" + std::to_string(i));
  // Probes as a fabric with n5 at a quarter of the rate would measure them.
  std::vector<LocateProbe> probes;
  LocateVerdict verdict;
  for (int round = 1; round <= 4; ++round) {
    LocateRound plan = PlanLocateRound(flat, probes, verdict);
    if (plan.probes.empty()) break;
    for (const auto& members : plan.probes) {
      bool slow = std::count(members.begin(), members.end(), 4) > 0;
      probes.push_back({members, round, slow ? 2.5 : 10.0 + 0.01 * members[0], 25.0});
    }
    verdict = JudgeLocate(flat, probes);
  }
  ASSERT_EQ(verdict.suspects.size(), 1u);
  EXPECT_EQ(verdict.suspects[0].name, "n5");
  EXPECT_EQ(verdict.rounds, 2);
}

}  // namespace
}  // namespace fabtrack::analyzer
