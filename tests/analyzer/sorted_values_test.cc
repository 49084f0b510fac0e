// stats::SortedValues (core/statistics.h) against the copy-and-select it
// replaced, and the normal-tail helpers of the multiple-testing correction.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "analyzer/stats/normal_tail.h"
#include "core/statistics.h"

namespace fabtrack::stats {
namespace {

// The incremental history must judge exactly as the copy-and-select it
// replaced: bit for bit the same median and scaled MAD, odd and even sizes,
// ties, while values come and go.
TEST(SortedValues, MatchesMedianAndScaledMadBitForBit) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> noise(1.0, 0.02);
  SortedValues sorted;
  std::vector<double> plain;
  for (int i = 0; i < 400; ++i) {
    // Every fifth value repeats one already in, so that ties occur.
    const double v = i % 5 == 4 ? plain[rng() % plain.size()] : noise(rng);
    sorted.Insert(v);
    plain.push_back(v);
    if (i % 7 == 6) {  // and some leave, as in a sliding window
      const double out = plain[rng() % plain.size()];
      sorted.Erase(out);
      plain.erase(std::find(plain.begin(), plain.end(), out));
    }
    ASSERT_EQ(sorted.size(), plain.size());
    EXPECT_EQ(sorted.Median(), Median(plain)) << i;
    EXPECT_EQ(sorted.ScaledMad(), ScaledMad(plain)) << i;
  }
}

TEST(SortedValues, EmptyAndSingle) {
  SortedValues s;
  EXPECT_FALSE(s.Median());
  EXPECT_FALSE(s.ScaledMad());
  s.Insert(3);
  EXPECT_EQ(s.Median(), 3);
  EXPECT_FALSE(s.ScaledMad());
}

TEST(NormalTail, NewtonQuantileEqualsTheBisection) {
  for (double exponent = -300; exponent <= std::log10(0.4999); exponent += 0.37) {
    const double tail = std::pow(10.0, exponent);
    const double z = NormalUpperQuantile(tail);
    EXPECT_NEAR(z, NormalUpperQuantileByBisection(tail), 1e-10 * std::max(1.0, z)) << tail;
    EXPECT_NEAR(NormalUpperTail(z) / tail, 1, 1e-9) << tail;
  }
  EXPECT_EQ(NormalUpperQuantile(0.5), NormalUpperQuantileByBisection(0.5));
}

TEST(NormalTail, BonferroniKeepsTheFamilysTail) {
  EXPECT_NEAR(NormalUpperTail(2), 0.02275, 1e-5);
  EXPECT_NEAR(NormalUpperQuantile(0.02275), 2, 1e-4);
  EXPECT_EQ(BonferroniZ(3.5, 1), 3.5);
  // 13 series: each run's tail is a 13th of one series'.
  EXPECT_NEAR(NormalUpperTail(BonferroniZ(3.5, 13)) * 13, NormalUpperTail(3.5), 1e-12);
  EXPECT_GT(BonferroniZ(2, 13), 2);
}

}  // namespace
}  // namespace fabtrack::stats
