#include "collector/harness/latency_stats.h"

#include <gtest/gtest.h>

namespace fabtrack::harness {
namespace {

TEST(SummarizeTest, NearestRankPercentilesAndCv) {
  std::vector<double> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);  // unsorted input
  Distribution d = Summarize(v);
  EXPECT_DOUBLE_EQ(d.mean, 50.5);
  EXPECT_DOUBLE_EQ(d.p50, 50);
  EXPECT_DOUBLE_EQ(d.p90, 90);
  EXPECT_DOUBLE_EQ(d.p99, 99);
  EXPECT_DOUBLE_EQ(d.min, 1);
  EXPECT_DOUBLE_EQ(d.max, 100);
  EXPECT_NEAR(d.stddev, 28.866, 1e-3);
  EXPECT_NEAR(d.cv, 28.866 / 50.5, 1e-4);
  Distribution flat = Summarize({5, 5, 5});
  EXPECT_DOUBLE_EQ(flat.cv, 0);
}

TEST(AnalyzeLatenciesTest, LateArrivingRankIsTheStraggler) {
  // Rank 2 arrives 40 us late every iteration: the others wait for it, so
  // their calls last 40 us longer and rank 2's are the shortest.
  std::vector<std::vector<double>> d = {
      {100, 102, 98, 101}, {101, 99, 100, 102}, {60, 61, 59, 60}, {100, 100, 101, 99}};
  SizeLatency l = AnalyzeLatencies(d);
  ASSERT_TRUE(l.straggler_rank.has_value());
  EXPECT_EQ(*l.straggler_rank, 2);
  EXPECT_GT(l.straggler_excess_us, 35);
  EXPECT_EQ(l.per_iteration_us, (std::vector<double>{101, 102, 101, 102}));
  EXPECT_DOUBLE_EQ(l.collective.max, 102);
  // nccl-tests "time": mean call duration averaged over ranks.
  EXPECT_NEAR(l.time_us, (100.25 + 100.5 + 60 + 100) / 4, 1e-9);
  ASSERT_EQ(l.ranks.size(), 4u);
  EXPECT_NEAR(l.ranks[2].mean_lateness_us, 41.5, 1e-9);
}

TEST(AnalyzeLatenciesTest, BalancedRanksHaveSmallExcessAndOneRankNone) {
  std::vector<std::vector<double>> d = {{10, 10}, {10, 10}, {10, 10}};
  SizeLatency l = AnalyzeLatencies(d);
  EXPECT_NEAR(l.straggler_excess_us, 0, 1e-12);
  SizeLatency single = AnalyzeLatencies({{5, 7, 6}});
  EXPECT_FALSE(single.straggler_rank.has_value());
  EXPECT_DOUBLE_EQ(single.time_us, 6);
  EXPECT_TRUE(AnalyzeLatencies({}).ranks.empty());
}

}  // namespace
}  // namespace fabtrack::harness
