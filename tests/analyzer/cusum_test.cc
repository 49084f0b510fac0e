// The one-sided CUSUM of analyzer/stats/cusum.h against known distributions:
// published ARL values, and simulated normal noise (false alarms at the
// stated ARL) and known shifts (detection delay).
#include "analyzer/stats/cusum.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace fabtrack::stats {
namespace {

// Mean run length to the first alarm over `runs` simulated series of N(mean, 1).
double SimulatedArl(double k, double h, double mean, int runs, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> x(mean, 1);
  double total = 0;
  for (int r = 0; r < runs; ++r) {
    double s = 0;
    int t = 0;
    do {
      ++t;
      s = std::max(0.0, s + x(rng) - k);
    } while (s < h && t < 1000000);
    total += t;
  }
  return total / runs;
}

TEST(Cusum, SiegmundMatchesPublishedAverageRunLengths) {
  // Tabular CUSUM values for k = 0.5 (Montgomery, Introduction to SQC,
  // the ARLs of the two-sided scheme): h = 4: ARL0 168, ARL1(1 sigma) 8.38;
  // h = 5: 465 and 10.4. One side alone raises half the false alarms (1/ARL
  // adds over the sides): 336 and 930; after a shift the other side hardly
  // ever alarms, so ARL1 is the same.
  EXPECT_NEAR(CusumArl(0.5, 4, 0), 336, 336 * 0.05);
  EXPECT_NEAR(CusumArl(0.5, 4, 1), 8.38, 8.38 * 0.05);
  EXPECT_NEAR(CusumArl(0.5, 5, 0), 930, 930 * 0.05);
  EXPECT_NEAR(CusumArl(0.5, 5, 1), 10.4, 10.4 * 0.05);
  // The threshold inverts it.
  EXPECT_NEAR(CusumArl(0.5, CusumThreshold(0.5, 1000), 0), 1000, 1e-6 * 1000);
  EXPECT_NEAR(CusumThreshold(0.5, CusumArl(0.5, 5, 0)), 5, 1e-9);
}

TEST(Cusum, FalseAlarmsOnNormalNoiseComeAtTheStatedAverageRunLength) {
  for (const double arl0 : {100.0, 500.0}) {
    const double h = CusumThreshold(0.5, arl0);
    const double simulated = SimulatedArl(0.5, h, 0, 4000, 11);
    // 4000 run lengths (roughly exponential): standard error ~1.6%.
    EXPECT_NEAR(simulated / arl0, 1, 0.08) << "ARL0 " << arl0 << " h " << h;
  }
}

TEST(Cusum, AKnownShiftIsFoundAfterTheStatedDelay) {
  const double h = CusumThreshold(0.5, 500);
  for (const double shift : {1.0, 2.0}) {
    const double simulated = SimulatedArl(0.5, h, shift, 20000, 12);
    EXPECT_NEAR(simulated / CusumArl(0.5, h, shift), 1, 0.08) << "shift " << shift;
  }
  // A one-sigma shift takes about ten observations at ARL0 500, a quarter
  // of what a 3-sigma one-observation rule with the same false-alarm rate
  // (P(Z >= 2.88) = 1/500) needs (1 / P(Z >= 1.88) = 33).
  EXPECT_LT(CusumArl(0.5, h, 1), 12);
}

TEST(Cusum, RunCusumAlarmsWhereTheExcursionCrossesAndSaysWhereItBegan) {
  // Noise-free: 0 for five observations, then a shift of 1.5 (k 0.5: S
  // grows 1 per observation) crossing h = 3.5 on the fourth shifted one.
  std::vector<double> x = {0, 0, 0, 0, 0, 1.5, 1.5, 1.5, 1.5, 1.5};
  CusumResult r = RunCusum(x, 0.5, 3.5);
  EXPECT_EQ(r.alarm_at, 8);
  EXPECT_EQ(r.run_start, 5);
  EXPECT_DOUBLE_EQ(r.statistic, 5);
  // Back to 0 afterwards: S falls by k each observation and the rule says so.
  x.insert(x.end(), 12, 0.0);
  r = RunCusum(x, 0.5, 3.5);
  EXPECT_EQ(r.alarm_at, 8);
  EXPECT_DOUBLE_EQ(r.statistic, 0);
  // Missing observations are skipped, not zeros.
  EXPECT_EQ(RunCusum({1.5, NAN, 1.5, 1.5, 1.5}, 0.5, 3.5).alarm_at, 4);
  EXPECT_EQ(RunCusum({0.4, 0.4, 0.4}, 0.5, 3.5).alarm_at, -1);
}

}  // namespace
}  // namespace fabtrack::stats
