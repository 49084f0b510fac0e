// core/statistics against values worked out by hand or published with the
// definitions (numpy's documentation, Wikipedia's "Percentile" and "Median
// absolute deviation" and "Standard deviation" examples), not against a second
// implementation.
#include "core/statistics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace fabtrack::stats {
namespace {

TEST(QuantileTest, LinearInterpolationBetweenClosestRanks) {
  // numpy.percentile's documented example: a = [[10, 7, 4], [3, 2, 1]],
  // np.percentile(a, 50) == 3.5 over the flattened array.
  EXPECT_DOUBLE_EQ(*Quantile({10, 7, 4, 3, 2, 1}, 0.5), 3.5);
  // ... and per column (axis=0): [6.5, 4.5, 2.5].
  EXPECT_DOUBLE_EQ(*Quantile({10, 3}, 0.5), 6.5);
  EXPECT_DOUBLE_EQ(*Quantile({7, 2}, 0.5), 4.5);
  EXPECT_DOUBLE_EQ(*Quantile({4, 1}, 0.5), 2.5);
  // Wikipedia, "Percentile", second variant (C = 1, Excel PERCENTILE.INC):
  // the 40th percentile of 15, 20, 35, 40, 50 is 29 (h = 0.4 * 4 = 1.6:
  // 20 + 0.6 * (35 - 20)).
  EXPECT_DOUBLE_EQ(*Quantile({15, 20, 35, 40, 50}, 0.4), 29);
  // By hand: h = q * (n - 1).
  EXPECT_DOUBLE_EQ(*Quantile({1, 2, 3, 4}, 0.25), 1.75);                   // h = 0.75
  EXPECT_DOUBLE_EQ(*Quantile({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0.9), 9.1);  // h = 8.1
  EXPECT_DOUBLE_EQ(*Quantile({5, 1, 3}, 0.0), 1);                          // the minimum
  EXPECT_DOUBLE_EQ(*Quantile({5, 1, 3}, 1.0), 5);                          // the maximum
  EXPECT_DOUBLE_EQ(*Quantile({5, 1, 3}, 7.0), 5);                          // q is clamped
  EXPECT_DOUBLE_EQ(*Quantile({42}, 0.99), 42);
  EXPECT_FALSE(Quantile({}, 0.5).has_value());
  const std::vector<double> sorted = {1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(QuantileOfSorted(sorted, 0.25), 1.75);
}

TEST(MedianTest, MiddleValueOrMeanOfTheTwoMiddleValues) {
  EXPECT_DOUBLE_EQ(*Median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(*Median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(*Median({1, 1, 2, 2, 4, 6, 9}), 2);
  EXPECT_DOUBLE_EQ(*Median({-5, 10}), 2.5);
  EXPECT_FALSE(Median({}).has_value());
  // Selection gives exactly the interpolated quantile at 0.5.
  const std::vector<double> v = {0.1, 0.7, 0.3, 0.9, 0.2, 0.8};
  EXPECT_EQ(*Median(v), *Quantile(v, 0.5));
  std::vector<double> in_place = {9, 8, 7, 6};
  EXPECT_DOUBLE_EQ(*MedianInPlace(in_place), 7.5);
}

TEST(NearestRankPercentileTest, WikipediaExamples) {
  // Wikipedia, "Percentile", the nearest-rank method: for 15, 20, 35, 40, 50
  // the 5th, 30th, 40th, 50th and 100th percentiles are 15, 20, 20, 35, 50.
  const std::vector<double> a = {15, 20, 35, 40, 50};
  EXPECT_EQ(NearestRankPercentile(a, 5), 15);
  EXPECT_EQ(NearestRankPercentile(a, 30), 20);
  EXPECT_EQ(NearestRankPercentile(a, 40), 20);
  EXPECT_EQ(NearestRankPercentile(a, 50), 35);
  EXPECT_EQ(NearestRankPercentile(a, 100), 50);
  // For 3, 6, 7, 8, 8, 10, 13, 15, 16, 20: 25th 7, 50th 8, 75th 15, 100th 20.
  const std::vector<double> b = {3, 6, 7, 8, 8, 10, 13, 15, 16, 20};
  EXPECT_EQ(NearestRankPercentile(b, 25), 7);
  EXPECT_EQ(NearestRankPercentile(b, 50), 8);
  EXPECT_EQ(NearestRankPercentile(b, 75), 15);
  EXPECT_EQ(NearestRankPercentile(b, 100), 20);
  EXPECT_EQ(NearestRankPercentile(b, 0), 3);
  EXPECT_EQ(NearestRankPercentile({}, 50), 0);
}

TEST(ScaledMadTest, WikipediaExample) {
  // Wikipedia, "Median absolute deviation": 1, 1, 2, 2, 4, 6, 9 has median 2,
  // absolute deviations 1, 1, 0, 0, 2, 4, 7 and MAD 1.
  const std::vector<double> v = {1, 1, 2, 2, 4, 6, 9};
  EXPECT_DOUBLE_EQ(*ScaledMad(v), 1.4826);
  EXPECT_FALSE(ScaledMad(std::vector<double>{3}).has_value());
  EXPECT_DOUBLE_EQ(*ScaledMad(std::vector<double>{5, 5, 5}), 0);
}

TEST(MomentsTest, WikipediaStandardDeviationExample) {
  // Wikipedia, "Standard deviation": 2, 4, 4, 4, 5, 5, 7, 9 has mean 5,
  // population standard deviation 2 and sample one sqrt(32 / 7).
  const std::vector<double> v = {2, 4, 4, 4, 5, 5, 7, 9};
  EXPECT_DOUBLE_EQ(Mean(v), 5);
  EXPECT_DOUBLE_EQ(PopulationStdDev(v), 2);
  EXPECT_DOUBLE_EQ(StdDev(v), std::sqrt(32.0 / 7.0));
  EXPECT_EQ(Mean(std::vector<double>{}), 0);
  EXPECT_EQ(StdDev(std::vector<double>{1}), 0);
  EXPECT_EQ(PopulationStdDev(std::vector<double>{}), 0);
}

TEST(BaselineTest, MedianAndFlooredScaledMad) {
  const std::vector<double> v = {1, 1, 2, 2, 4, 6, 9};
  auto b = Baseline(v, 5, 0.01);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->count, 7);
  EXPECT_DOUBLE_EQ(b->median, 2);
  EXPECT_DOUBLE_EQ(b->scale, 1.4826);
  // Identical history: the scale is the relative floor.
  const std::vector<double> flat = {100, 100, 100};
  EXPECT_DOUBLE_EQ(Baseline(flat, 3, 0.02)->scale, 2);
  EXPECT_FALSE(Baseline(flat, 4, 0.02).has_value());
}

}  // namespace
}  // namespace fabtrack::stats
