// stats::PoolShifts (analyzer/stats/pooled_shift.h): the inverse-variance
// pooled change of several series and its z, against simulated series.
#include "analyzer/stats/pooled_shift.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace fabtrack::stats {
namespace {

TEST(PooledShift, FourEquallyNoisySeriesDoubleOnesZ) {
  std::vector<SeriesShift> shifts(4, {.change = 0.04, .sigma = 0.02, .z = 2});
  const PooledShift p = PoolShifts(shifts);
  EXPECT_EQ(p.series, 4);
  EXPECT_DOUBLE_EQ(p.change, 0.04);
  EXPECT_DOUBLE_EQ(p.se, 0.01);
  EXPECT_DOUBLE_EQ(p.z, 4);
}

TEST(PooledShift, ANoisySeriesCountsForLessAndBadOnesAreLeftOut) {
  const PooledShift p = PoolShifts({{.change = 0.05, .sigma = 0.01, .z = 5},
                                    {.change = -0.10, .sigma = 0.03, .z = -10.0 / 3},
                                    {.change = 1, .sigma = 0, .z = 1},
                                    {.change = NAN, .sigma = 0.01, .z = 1}});
  EXPECT_EQ(p.series, 2);
  // Weights 10000 and 1111.1: (500 - 111.1) / 11111.1.
  EXPECT_NEAR(p.change, 0.035, 1e-12);
  EXPECT_NEAR(p.z, p.change / p.se, 1e-12);
  EXPECT_EQ(PoolShifts({}).series, 0);
}

// On healthy series of unequal noise the pooled z is standard normal: its
// upper 1% point is 2.33; with a common shift of d it is d / SE on average.
TEST(PooledShift, PooledZIsStandardNormalOnNoiseAndGrowsWithACommonShift) {
  std::mt19937_64 rng(5);
  const std::vector<double> sigmas = {0.01, 0.02, 0.02, 0.04};
  std::normal_distribution<double> unit(0, 1);
  constexpr int kTrials = 200000;
  int above = 0;
  double shifted_sum = 0;
  for (int t = 0; t < kTrials; ++t) {
    std::vector<SeriesShift> healthy, shifted;
    for (double sigma : sigmas) {
      const double noise = sigma * unit(rng);
      healthy.push_back({noise, sigma, noise / sigma});
      shifted.push_back({noise + 0.02, sigma, (noise + 0.02) / sigma});
    }
    above += PoolShifts(healthy).z >= 2.326;
    shifted_sum += PoolShifts(shifted).z;
  }
  EXPECT_NEAR(above / static_cast<double>(kTrials), 0.01, 0.001);
  double weight = 0;
  for (double sigma : sigmas) weight += 1 / (sigma * sigma);
  EXPECT_NEAR(shifted_sum / kTrials, 0.02 * std::sqrt(weight), 0.01);
}

}  // namespace
}  // namespace fabtrack::stats
