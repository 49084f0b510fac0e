#include "collector/harness/link_probe.h"

#include <gtest/gtest.h>

#include <set>

namespace fabtrack::harness {
namespace {

// Every node meets every other exactly once, and no node is in two pairs of
// one round.
TEST(RoundRobinTest, EveryPairOnceAndRoundsAreDisjoint) {
  for (int n = 2; n <= 9; ++n) {
    std::set<std::pair<int, int>> pairs;
    for (int round = 0; round < RoundRobinRounds(n); ++round) {
      std::set<int> busy;
      for (int i = 0; i < n; ++i) {
        int p = RoundRobinPartner(n, round, i);
        if (p < 0) continue;
        EXPECT_NE(p, i);
        EXPECT_EQ(RoundRobinPartner(n, round, p), i) << "n=" << n << " round=" << round;
        EXPECT_TRUE(busy.insert(i).second);
        if (i < p) {
          EXPECT_TRUE(pairs.insert({i, p}).second) << "pair met twice";
        }
      }
    }
    EXPECT_EQ(pairs.size(), static_cast<size_t>(n * (n - 1) / 2)) << "n=" << n;
  }
  EXPECT_EQ(RoundRobinRounds(1), 0);
  EXPECT_EQ(RoundRobinPartner(4, 5, 0), -1);
}

std::vector<PairProbe> AllPairs(int n, int slow, double fast_gbps, double slow_gbps) {
  std::vector<PairProbe> probes;
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) {
      double g = (a == slow || b == slow) ? slow_gbps : fast_gbps;
      probes.push_back({a, b, 1.0 / g, g});
    }
  }
  return probes;
}

TEST(JudgeLinksTest, FlagsTheNodeWhosePairsAreAllSlow) {
  LinkVerdict v = JudgeLinks(4, AllPairs(4, 2, 10.0, 0.5));
  ASSERT_TRUE(v.slow_node.has_value());
  EXPECT_EQ(*v.slow_node, 2);
  EXPECT_NEAR(v.slow_ratio, 0.05, 1e-9);
  LinkVerdict three = JudgeLinks(3, AllPairs(3, 0, 10.0, 4.0));
  ASSERT_TRUE(three.slow_node.has_value());
  EXPECT_EQ(*three.slow_node, 0);
}

TEST(JudgeLinksTest, QuietOnNoiseAndOnTwoNodes) {
  std::vector<PairProbe> noisy = AllPairs(4, -1, 10.0, 10.0);
  noisy[0].gbps = 7.0;  // one noisy pair is not a slow node
  EXPECT_FALSE(JudgeLinks(4, noisy).slow_node.has_value());
  // With two nodes the slow end of the one link cannot be told.
  EXPECT_FALSE(JudgeLinks(2, AllPairs(2, 1, 10.0, 0.1)).slow_node.has_value());
}

// A pair slowed once by a busy host recovers on the second probe; a slow
// link stays slow in both.
TEST(LinkProbeTest, BestOfTwoProbesClearsANoisyPairButNotASlowLink) {
  std::vector<PairProbe> first = AllPairs(3, -1, 10, 10);
  first[0].gbps = 4;  // pairs (0, 1) and (0, 2) unlucky once: node 0 looks slow
  first[1].gbps = 4;
  EXPECT_TRUE(JudgeLinks(3, first).slow_node.has_value())
      << "one noisy pass looks like a slow node";
  std::vector<PairProbe> second = AllPairs(3, -1, 10, 10);
  std::swap(second[0].node_a, second[0].node_b);  // the same pair, named the other way round
  second[2].gbps = 6;                             // and another pair unlucky this time
  std::vector<PairProbe> best = BestOfProbes(first, second);
  ASSERT_EQ(best.size(), 3u);
  EXPECT_FALSE(JudgeLinks(3, best).slow_node.has_value());

  std::vector<PairProbe> slow = BestOfProbes(AllPairs(3, 2, 10, 0.3), AllPairs(3, 2, 9, 0.4));
  LinkVerdict verdict = JudgeLinks(3, slow);
  ASSERT_TRUE(verdict.slow_node.has_value());
  EXPECT_EQ(*verdict.slow_node, 2);
  EXPECT_NEAR(verdict.slow_ratio, 0.04, 1e-9);
}

}  // namespace
}  // namespace fabtrack::harness
