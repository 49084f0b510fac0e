// The noise model of the series detectors' z (analyzer/stats/baseline_z.h),
// checked against the world it models: simulated healthy series of known
// sigma, judged the way the detectors judge them (a run against the median of
// the 14 before it, in units of a noise estimated from the successive
// differences before it), and against Student t and bivariate normal figures
// from tables.
#include "analyzer/stats/baseline_z.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "analyzer/series_table.h"  // SuccessiveDifferenceDof
#include "analyzer/stats/normal_tail.h"

namespace fabtrack::stats {
namespace {

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

TEST(BaselineZ, StudentTMapsToTheNormalZOfTheSameTail) {
  // Tables: t = 4.144 is the upper 0.1% point of Student's t with 10 degrees
  // of freedom, 2.228 the upper 2.5% point; the normal z's are 3.090, 1.960.
  EXPECT_NEAR(NormalEquivalentZ(4.144, 10), 3.090, 2e-3);
  EXPECT_NEAR(NormalEquivalentZ(2.228, 10), 1.960, 2e-3);
  EXPECT_NEAR(NormalEquivalentZ(-2.228, 10), -1.960, 2e-3);
  // Many degrees of freedom: hardly a change; none known: the t itself.
  EXPECT_NEAR(NormalEquivalentZ(3, 1e6), 3, 1e-4);
  EXPECT_EQ(NormalEquivalentZ(3, 0), 3);
  // Far in the tail the z stays finite and below the t.
  const double far = NormalEquivalentZ(400, 12);
  EXPECT_GT(far, 10);
  EXPECT_LE(far, 400);
}

TEST(BaselineZ, PairTailOfCorrelatedNormals) {
  // Independent: the product of the tails.
  EXPECT_NEAR(PairUpperTail(2, 0), NormalUpperTail(2) * NormalUpperTail(2), 1e-15);
  // rho = 0.5: P(Z1 >= 0, Z2 >= 0) = 1/4 + asin(rho) / (2 pi) = 1/3.
  EXPECT_NEAR(PairUpperTail(0, 0.5), 1.0 / 3, 1e-9);
  // Against a simulation of two runs sharing one median's error.
  std::mt19937_64 rng(7);
  std::normal_distribution<double> n01;
  const double rho = 0.1;
  int both = 0;
  const int trials = 4'000'000;
  for (int i = 0; i < trials; ++i) {
    const double shared = std::sqrt(rho) * n01(rng);
    both +=
        shared + std::sqrt(1 - rho) * n01(rng) >= 2 && shared + std::sqrt(1 - rho) * n01(rng) >= 2;
  }
  const double expected = PairUpperTail(2, rho);
  EXPECT_NEAR(both / double(trials), expected, 5 * std::sqrt(expected / trials));
  EXPECT_GT(expected, 1.2 * NormalUpperTail(2) * NormalUpperTail(2));
  // So two runs at z 2.49 against one median of 14 runs pass as less.
  EXPECT_LT(PairZ(2.49, 2.6, 14), 2.45);
  EXPECT_GT(PairZ(2.49, 2.6, 14), 2.3);
  EXPECT_EQ(PairZ(-1, 3, 14), -1);
}

// The point of it all: on healthy normal series, a run's deviation from the
// median of the 14 runs before it over the scale the robust check uses
// (max(scaled MAD of those 14, night-to-night noise from the successive
// differences before it)), mapped with SuccessiveDifferenceDof, has the
// normal tails the thresholds are set for; unmapped (the old z) it passes
// them far too often early in a series.
TEST(BaselineZ, HealthySeriesHaveNormalTails) {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> noise(0, 1);
  const int window = 14;
  for (int history : {20, 30, 60}) {
    const double dof = analyzer::series::SuccessiveDifferenceDof(history - 1);
    const double z_pass = 3;
    int old_passes = 0, new_passes = 0;
    const int trials = 300'000;
    std::vector<double> runs(history), differences(history - 1), spread(window);
    for (int trial = 0; trial < trials; ++trial) {
      for (double& v : runs) v = noise(rng);
      for (int j = 1; j < history; ++j) differences[j - 1] = std::fabs(runs[j] - runs[j - 1]);
      const double median = Median(std::vector<double>(runs.end() - window, runs.end()));
      for (int j = 0; j < window; ++j) spread[j] = std::fabs(runs[history - window + j] - median);
      const double scale =
          std::max(1.4826 / std::sqrt(2.0) * Median(differences), 1.4826 * Median(spread));
      const double z = (noise(rng) - median) / scale;
      old_passes += z >= z_pass;
      new_passes += NormalEquivalentZ(z, dof) >= z_pass;
    }
    const double expected = NormalUpperTail(z_pass) * trials;  // 405
    EXPECT_NEAR(new_passes, expected, 0.2 * expected) << history << " runs of history";
    EXPECT_GT(old_passes, 1.5 * expected) << history << " runs of history";
  }
}

}  // namespace
}  // namespace fabtrack::stats
