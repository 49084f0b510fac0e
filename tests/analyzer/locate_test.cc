// locate's planner and verdict against simulated fabrics (issue 20, item 6):
// the right suspect first, no suspect without a fault, and few rounds.
#include "analyzer/locate/locate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "tests/analyzer/simulated_fabric.h"

namespace fabtrack::analyzer {
namespace {

using testing::NetnsLikeNoise;
using testing::RunLocate;
using testing::SimulatedFabric;
using testing::SimulatedFault;
using testing::SimulatedNoise;

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

// Probes across leaves at half the bandwidth of those inside one are the
// fabric's structure, not a fault: graded against their own kind, a clean
// fabric still settles in one round, or two where round one has too few
// pairs across leaves for a reference (8 nodes in 2 leaves: two pairs).
TEST(Locate, CrossLeafStructureIsNotAFault) {
  for (bool one_way : {false, true}) {
    for (int nodes : {8, 64, 512}) {
      for (uint64_t seed = 1; seed <= 20; ++seed) {
        SimulatedFabric fabric(nodes, nodes == 8 ? 4 : 32, {}, seed, one_way,
                               SimulatedNoise{0.5, 1.3, 0, 2.5});
        auto outcome = RunLocate(fabric);
        const std::string where = std::to_string(nodes) + " nodes, seed " + std::to_string(seed);
        EXPECT_TRUE(outcome.verdict.suspects.empty())
            << where << ": " << outcome.verdict.suspects.front().name;
        EXPECT_EQ(outcome.rounds, nodes == 8 ? 2 : 1) << where;
      }
    }
  }
}

// With bursts of latency on top (3% of pair measurements at 2.5x), a clean
// fabric may take more rounds, to measure the slow pairs again, but names
// no suspect at the end.
TEST(Locate, LatencyBurstsOnACleanFabricConvictNothing) {
  for (bool one_way : {false, true}) {
    for (int nodes : {8, 64, 512, 4096}) {
      for (uint64_t seed = 1; seed <= (nodes >= 4096 ? 5 : 20); ++seed) {
        SimulatedFabric fabric(nodes, nodes == 8 ? 4 : 32, {}, seed, one_way, NetnsLikeNoise());
        auto outcome = RunLocate(fabric);
        const std::string where = std::to_string(nodes) + " nodes, seed " + std::to_string(seed);
        EXPECT_TRUE(outcome.verdict.suspects.empty())
            << where << ": " << outcome.verdict.suspects.front().name;
        EXPECT_TRUE(outcome.verdict.settled) << where;
        EXPECT_LE(outcome.rounds, RoundBudget(nodes)) << where;
      }
    }
  }
}

// Two leaves of four: round one has two pairs across leaves. Both slow in
// latency (a starved CPU on one, a burst on the other) make the reference
// across leaves slow too, so nothing looks slow: that is not a clean fabric
// yet. The verdict stays open and the planner measures pairs across leaves
// that have not met; with them the two slow pairs stand out.
TEST(Locate, AReferenceOfTwoPairsIsNotTrusted) {
  LocateTopology two_leaves;
  for (int i = 1; i <= 8; ++i) {
    const std::string node = "n" + std::to_string(i);
    two_leaves.nodes.push_back(node);
    two_leaves.leaf_of[node] = i <= 4 ? "leaf1" : "leaf2";
  }
  two_leaves.spine_of = {{"leaf1", "spine"}, {"leaf2", "spine"}};
  std::vector<LocateProbe> probes = {{{0, 1}, 1, 10.0, 24.0},
                                     {{4, 5}, 1, 10.1, 24.5},
                                     {{2, 6}, 1, 5.0, 92.0},
                                     {{3, 7}, 1, 5.1, 95.0}};
  LocateVerdict verdict = JudgeLocate(two_leaves, probes);
  EXPECT_TRUE(verdict.suspects.empty());
  EXPECT_FALSE(verdict.settled);
  LocateRound plan = PlanLocateRound(two_leaves, probes, verdict);
  int across = 0;
  for (const auto& members : plan.probes) {
    const bool cross = (members[0] < 4) != (members[1] < 4);
    across += cross;
    if (cross) probes.push_back({members, 2, 5.0, 31.0});
  }
  EXPECT_GE(across, 2);
  verdict = JudgeLocate(two_leaves, probes);
  ASSERT_FALSE(verdict.suspects.empty());
  for (const LocateSuspect& s : verdict.suspects) {
    EXPECT_TRUE(s.name == "n3" || s.name == "n7" || s.name == "n4" || s.name == "n8") << s.name;
  }
}

// One pair's latency doubled once (a burst of other work): not a verdict
// that convicts (settled), and gone once the pair is measured again.
TEST(Locate, ASingleLatencyFlukeDoesNotConvict) {
  LocateTopology flat;
  for (int i = 1; i <= 8; ++i) flat.nodes.push_back("n" + std::to_string(i));
  std::vector<LocateProbe> probes;
  for (int i = 0; i < 4; ++i) {
    probes.push_back({{i, i + 4}, 1, 10.0 + 0.01 * i, i == 2 ? 60.0 : 25.0 + 0.1 * i});
  }
  LocateVerdict verdict = JudgeLocate(flat, probes);
  ASSERT_FALSE(verdict.suspects.empty());
  EXPECT_FALSE(verdict.settled);
  // The planner pairs n3 and n7 with nodes proved healthy; both fast.
  LocateRound plan = PlanLocateRound(flat, probes, verdict);
  ASSERT_EQ(plan.probes.size(), 2u);
  for (const auto& members : plan.probes) probes.push_back({members, 2, 10.0, 25.0});
  verdict = JudgeLocate(flat, probes);
  ASSERT_EQ(verdict.suspects.size(), 1u);
  EXPECT_EQ(verdict.suspects[0].kind, "link");
  EXPECT_FALSE(verdict.settled);
  // Then the pair itself, again: fast, so the first measurement was a fluke.
  plan = PlanLocateRound(flat, probes, verdict);
  ASSERT_EQ(plan.probes.size(), 1u);
  EXPECT_EQ(plan.probes[0], (std::vector<int>{2, 6}));
  probes.push_back({plan.probes[0], 3, 10.0, 25.5});
  verdict = JudgeLocate(flat, probes);
  EXPECT_TRUE(verdict.suspects.empty());
  EXPECT_TRUE(verdict.settled);
}

// A node slow in latency only is convicted by three partners, not by one
// pair measured twice (both may share a burst on the partner).
TEST(Locate, LatencyOnlyNeedsTwoPartners) {
  LocateTopology flat;
  for (int i = 1; i <= 4; ++i) flat.nodes.push_back("n" + std::to_string(i));
  std::vector<LocateProbe> probes = {{{0, 1}, 1, 10.0, 75.0},
                                     {{2, 3}, 1, 10.0, 25.0},
                                     {{0, 1}, 2, 10.0, 75.0},
                                     {{2, 3}, 2, 10.1, 25.2},
                                     {{1, 2}, 3, 10.0, 25.1}};
  LocateVerdict verdict = JudgeLocate(flat, probes);
  ASSERT_EQ(verdict.suspects.size(), 1u);
  EXPECT_EQ(verdict.suspects[0].name, "n1");
  EXPECT_FALSE(verdict.settled);
  probes.push_back({{0, 2}, 4, 10.0, 75.0});
  verdict = JudgeLocate(flat, probes);
  ASSERT_EQ(verdict.suspects.size(), 1u);
  EXPECT_FALSE(verdict.settled);
  probes.push_back({{0, 3}, 5, 10.0, 75.0});
  verdict = JudgeLocate(flat, probes);
  ASSERT_EQ(verdict.suspects.size(), 1u);
  EXPECT_EQ(verdict.suspects[0].name, "n1");
  EXPECT_TRUE(verdict.settled);
}

// One fault of `kind` on a random node, over seeds and sizes: right first,
// within the round budget, and settled.
void ExpectNodeFaultFound(SimulatedFault::Kind kind, const std::string& evidence_word, bool one_way,
                          SimulatedNoise noise = {}) {
  for (int nodes : {8, 64, 512, 4096}) {
    const int tries = nodes >= 4096 ? 5 : 20;
    for (int seed = 1; seed <= tries; ++seed) {
      std::mt19937 pick(seed);
      const int node = std::uniform_int_distribution<int>(0, nodes - 1)(pick);
      SimulatedFabric fabric(nodes, nodes == 8 ? 4 : 32, {{kind, node, ""}}, seed, one_way, noise);
      auto outcome = RunLocate(fabric);
      const std::string where = std::to_string(nodes) + " nodes, seed " + std::to_string(seed) +
                                (one_way ? ", one-way probes" : "") +
                                (noise.burst_rate > 0 ? ", netns-like noise" : "");
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

// Under the netns fabric's noise, 8 nodes, seed 6: a burst on one cross-leaf
// pair of round 1 and the fault on the other make every cross-leaf probe
// slow. The cross-leaf reference then rests on two pairs and is itself slow
// (a CPU fault: nothing looks slow), or both uplinks explain round 1 (a link
// fault); locate measures more pairs across leaves before it settles, and
// clears the uplinks with a probe between healthy nodes across both.
TEST(Locate, NodeFaultsUnderNetnsLikeNoise) {
  ExpectNodeFaultFound(SimulatedFault::kNodeLink, "busbw", true, NetnsLikeNoise());
  ExpectNodeFaultFound(SimulatedFault::kNodeCpu, "latency only", true, NetnsLikeNoise());
}

// Symmetric probes with a fault in both directions; one-way probes with a
// fault in both directions and with one in the leaf -> spine direction only.
TEST(Locate, SlowUplinkIsNamedNotTheNodesBehindIt) {
  struct Mode {
    SimulatedFault::Kind kind;
    bool one_way;
    SimulatedNoise noise;
  };
  for (Mode mode :
       {Mode{SimulatedFault::kUplink, false, {}}, Mode{SimulatedFault::kUplink, true, {}},
        Mode{SimulatedFault::kUplinkOut, true, {}},
        Mode{SimulatedFault::kUplinkOut, true, NetnsLikeNoise()}}) {
    for (int nodes : {96, 512, 4096}) {
      const int leaves = nodes / 32;
      for (int seed = 1; seed <= (nodes >= 4096 ? 5 : 20); ++seed) {
        const std::string leaf = "leaf" + std::to_string(seed % leaves + 1);
        SimulatedFabric fabric(nodes, 32, {{mode.kind, -1, leaf}}, seed, mode.one_way, mode.noise);
        auto outcome = RunLocate(fabric);
        const std::string where = std::to_string(nodes) + " nodes, seed " + std::to_string(seed) +
                                  ", kind " + std::to_string(mode.kind) +
                                  (mode.one_way ? ", one-way probes" : "") +
                                  (mode.noise.burst_rate > 0 ? ", netns-like noise" : "");
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
    for (int seed = 1; seed <= 40; ++seed) {
      const bool noisy = seed > 20;  // the netns fabric's structure and bursts
      SimulatedFabric fabric(8, 4, {{SimulatedFault::kUplinkOut, -1, leaf}}, seed, true,
                             noisy ? NetnsLikeNoise() : SimulatedNoise{});
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

namespace fabtrack::analyzer {
namespace {

// Two leaves of 32 with one uplink slow both ways: no pair test separates
// the two uplinks, so the planner must stop asking (the simulation bench
// once showed 64 rounds, its cap, for every trial).
TEST(Locate, TwoLeavesOfManyStopAskingWhenTheUplinksCannotBeSeparated) {
  for (bool one_way : {false, true}) {
    for (int seed = 1; seed <= 5; ++seed) {
      testing::SimulatedFabric fabric(64, 32, {{testing::SimulatedFault::kUplink, -1, "leaf2"}},
                                      77 + seed, one_way);
      std::vector<LocateProbe> probes;
      LocateVerdict verdict;
      int rounds = 0;
      for (int r = 1; r <= 30; ++r) {
        LocateRound round = PlanLocateRound(fabric.topology(), probes, verdict);
        if (round.probes.empty()) break;
        std::vector<LocateProbe> measured = fabric.Run(round, r);
        probes.insert(probes.end(), measured.begin(), measured.end());
        rounds = r;
        verdict = JudgeLocate(fabric.topology(), probes);
      }
      EXPECT_LE(rounds, 4) << "one_way " << one_way << " seed " << seed;
      ASSERT_EQ(verdict.suspects.size(), 2u);
      EXPECT_EQ(verdict.suspects[0].kind, "uplink");
      EXPECT_FALSE(verdict.settled);
    }
  }
}

}  // namespace
}  // namespace fabtrack::analyzer
