// stats noise model (analyzer/stats/noise_model.h): the night-to-night and
// within-run components of a series' noise, recovered from generated data
// whose components are known.
#include "analyzer/stats/noise_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace fabtrack::stats {
namespace {

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double StdDev(const std::vector<double>& v) {
  double mean = 0, ss = 0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  for (double x : v) ss += (x - mean) * (x - mean);
  return std::sqrt(ss / static_cast<double>(v.size() - 1));
}

// The detectors' night-to-night noise of a series (series_table.cc): the
// median absolute successive difference scaled to a sigma.
double SuccessiveDifferenceSigma(const std::vector<double>& x) {
  std::vector<double> d;
  for (size_t i = 1; i < x.size(); ++i) d.push_back(std::fabs(x[i] - x[i - 1]));
  return 1.4826 / std::sqrt(2.0) * Median(d);
}

TEST(NoiseModel, WithinRunVarianceIsTheVarianceOfTheMeanOfTheIterations) {
  EXPECT_DOUBLE_EQ(WithinRunVariance(0.3, 20), 0.09 / 20);
  EXPECT_EQ(WithinRunVariance(0.3, 0), 0);
  EXPECT_EQ(WithinRunVariance(NAN, 20), 0);
  EXPECT_EQ(WithinRunVariance(-1, 20), 0);
  // Runs of 20 iterations with a 25% per-iteration CV: their means scatter
  // by 0.25 / sqrt(20) = 5.6% relative.
  std::mt19937_64 rng(7);
  std::normal_distribution<double> iteration(100, 25);
  std::vector<double> means;
  for (int run = 0; run < 20000; ++run) {
    double sum = 0;
    for (int i = 0; i < 20; ++i) sum += iteration(rng);
    means.push_back(sum / 20 / 100);
  }
  const double sd = StdDev(means);
  EXPECT_NEAR(sd * sd, WithinRunVariance(0.25, 20), 0.03 * WithinRunVariance(0.25, 20));
}

// Nights with 1-4 replicate runs (nccl-tests cycles): the analysis of
// variance recovers sigma_b 2% and sigma_w 1% within 15% (800 nights), and
// finds no night-to-night part where there is none.
TEST(NoiseModel, RandomEffectsRecoverKnownComponents) {
  for (const double sigma_b : {0.02, 0.005, 0.0}) {
    for (uint64_t seed = 1; seed <= 5; ++seed) {
      std::mt19937_64 rng(seed);
      std::normal_distribution<double> night(0, sigma_b), run(0, 0.01);
      std::uniform_int_distribution<int> replicates(1, 4);
      std::vector<std::vector<double>> groups(800);
      for (auto& g : groups) {
        const double level = 1 + night(rng);
        for (int r = replicates(rng); r > 0; --r) g.push_back(level + run(rng));
      }
      const auto c = RandomEffectsComponents(groups);
      ASSERT_TRUE(c);
      EXPECT_EQ(c->groups, 800);
      EXPECT_NEAR(std::sqrt(c->within), 0.01, 0.01 * 0.05) << "seed " << seed;
      if (sigma_b > 0) {
        EXPECT_NEAR(std::sqrt(c->between), sigma_b, sigma_b * 0.15)
            << "sigma_b " << sigma_b << " seed " << seed;
      } else {
        EXPECT_LT(std::sqrt(c->between), 0.003) << "seed " << seed;
      }
    }
  }
  // Nothing to separate: no replicates, or one night.
  EXPECT_FALSE(RandomEffectsComponents({{1}, {2}, {3}}));
  EXPECT_FALSE(RandomEffectsComponents({{1, 2, 3}}));
}

// One run a night for three years, each with its own within-run variance
// from its per-iteration spread (CV 1-6% over 20 iterations: 0.2-1.3% of
// within-run sigma), on a fabric with 1% night to night. The detectors'
// successive-difference noise holds both; taking out the typical within-run
// variance leaves the night-to-night part within 15% on every seed and 5% on
// average over 20, and each run's sigma from the
// model makes its deviation a unit normal whether the run was steady or
// noisy, where the total noise alone under-states a noisy run's deviation
// and over-states a steady one's.
TEST(NoiseModel, PerRunWithinVarianceSplitsTheSeriesNoise) {
  constexpr double kSigmaB = 0.01;
  std::vector<double> steady_z, noisy_z, steady_total_z, noisy_total_z;
  double sum_between = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> night(0, kSigmaB), unit(0, 1);
    std::uniform_real_distribution<double> cv(0.01, 0.06);
    std::vector<double> x, w;
    for (int n = 0; n < 1095; ++n) {
      w.push_back(WithinRunVariance(cv(rng), 20));
      x.push_back(1 + night(rng) + std::sqrt(w.back()) * unit(rng));
    }
    const double total = SuccessiveDifferenceSigma(x);
    const double typical = Median(w);
    EXPECT_GT(total, kSigmaB * 1.1) << "the total holds the within-run part too";
    const double between = std::sqrt(BetweenNightVariance(total, typical));
    EXPECT_NEAR(between, kSigmaB, 0.15 * kSigmaB) << "seed " << seed;
    sum_between += between;
    const double low = WithinRunVariance(0.02, 20), high = WithinRunVariance(0.05, 20);
    for (size_t n = 0; n < x.size(); ++n) {
      const double z = (x[n] - 1) / RunSigma(total, typical, w[n], 0);
      const double total_z = (x[n] - 1) / total;
      if (w[n] < low) {
        steady_z.push_back(z);
        steady_total_z.push_back(total_z);
      } else if (w[n] > high) {
        noisy_z.push_back(z);
        noisy_total_z.push_back(total_z);
      }
    }
  }
  EXPECT_NEAR(sum_between / 20, kSigmaB, 0.05 * kSigmaB);
  ASSERT_GT(steady_z.size(), 500u);
  ASSERT_GT(noisy_z.size(), 500u);
  EXPECT_NEAR(StdDev(steady_z), 1, 0.1);
  EXPECT_NEAR(StdDev(noisy_z), 1, 0.1);
  EXPECT_GT(StdDev(noisy_total_z), 1.15) << "the total noise under-states a noisy run's deviation";
  EXPECT_LT(StdDev(steady_total_z), 0.9) << "and over-states a steady run's";
}

// The detectors' use: a series with 2% of total noise, its runs at 3% CV
// over 20 iterations. A run whose iterations scattered by 30% (6.7% of
// within-run sigma) and that reads 10% high is inside its own noise (z
// 1.4); the same 10% on a run as steady as usual is 5 sigmas.
TEST(NoiseModel, ANoisyRunIsJudgedByItsOwnSpreadASteadyOneByTheFabrics) {
  const double typical = WithinRunVariance(0.03, 20);
  const double noisy = RunSigma(0.02, typical, WithinRunVariance(0.30, 20), 0.01);
  const double steady = RunSigma(0.02, typical, typical, 0.01);
  EXPECT_DOUBLE_EQ(steady, 0.02);
  EXPECT_LT(0.10 / noisy, 1.5);
  EXPECT_GE(0.10 / steady, 5);
  // A steadier run than usual is judged against the night-to-night part
  // alone, never under the floor.
  EXPECT_NEAR(RunSigma(0.02, typical, 0, 0), std::sqrt(0.0004 - typical), 1e-12);
  EXPECT_DOUBLE_EQ(RunSigma(0.005, 0.0001, 0, 0.01), 0.01);
  // The window's scale (metric units) moves the same way.
  EXPECT_NEAR(RunScale(2.0, 100, typical, WithinRunVariance(0.30, 20), 0.01), 100 * noisy, 1e-9);
  EXPECT_DOUBLE_EQ(RunScale(2.0, 100, typical, typical, 0.01), 2.0);
}

}  // namespace
}  // namespace fabtrack::stats
