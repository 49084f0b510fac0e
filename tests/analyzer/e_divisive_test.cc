#include "analyzer/stats/e_divisive.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>
#include <vector>

namespace fabtrack::stats {
namespace {

// `n` points around `level` with relative gaussian noise `sigma`.
std::vector<double> Noisy(std::mt19937_64& rng, int n, double level, double sigma) {
  std::normal_distribution<double> noise(1.0, sigma);
  std::vector<double> out;
  for (int i = 0; i < n; ++i) out.push_back(level * noise(rng));
  return out;
}

std::vector<double> Concat(std::vector<double> a, const std::vector<double>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(StudentT, KnownTailProbabilities) {
  EXPECT_NEAR(StudentTwoSidedP(1.0, 1), 0.5, 1e-12);                     // Cauchy
  EXPECT_NEAR(StudentTwoSidedP(2.0, 2), 1 - 2 / std::sqrt(6.0), 1e-12);  // closed form, df 2
  EXPECT_NEAR(StudentTwoSidedP(2.228139, 10), 0.05, 1e-6);               // tables
  EXPECT_NEAR(StudentTwoSidedP(4.604095, 4), 0.01, 1e-6);
  EXPECT_NEAR(StudentTwoSidedP(-4.604095, 4), 0.01, 1e-6);
  EXPECT_NEAR(StudentTwoSidedP(2.575829, 1e9), 0.01, 1e-6);  // the normal limit
  EXPECT_EQ(StudentTwoSidedP(0, 7), 1);
  EXPECT_EQ(StudentTwoSidedP(INFINITY, 7), 0);
  EXPECT_NEAR(RegularizedIncompleteBeta(2, 3, 0.5), 11.0 / 16, 1e-12);
}

TEST(TwoSampleTTest, StudentAndWelchAgreeOnEqualSamples) {
  // Equal sizes and variances: the same t, Welch's df = 2(n - 1).
  TTestResult student = TwoSampleTTest(10, 4, 8, 13, 4, 8, TTestKind::kStudent);
  TTestResult welch = TwoSampleTTest(10, 4, 8, 13, 4, 8, TTestKind::kWelch);
  EXPECT_NEAR(student.t, 3.0, 1e-12);
  EXPECT_NEAR(welch.t, 3.0, 1e-12);
  EXPECT_NEAR(student.df, 14, 1e-12);
  EXPECT_NEAR(welch.df, 14, 1e-12);
  EXPECT_NEAR(student.p_value, welch.p_value, 1e-12);
  // A noisy short side counts for less under Welch.
  EXPECT_GT(TwoSampleTTest(10, 1, 30, 13, 16, 5, TTestKind::kWelch).p_value,
            TwoSampleTTest(10, 1, 30, 13, 16, 5, TTestKind::kStudent).p_value);
}

TEST(TwoSampleTTest, ZeroVariance) {
  EXPECT_EQ(TwoSampleTTest(1, 0, 5, 1, 0, 5, TTestKind::kWelch).p_value, 1);
  EXPECT_EQ(TwoSampleTTest(1, 0, 5, 2, 0, 5, TTestKind::kWelch).p_value, 0);
  // Welch needs two points a side.
  EXPECT_EQ(TwoSampleTTest(1, 0, 1, 2, 0.1, 5, TTestKind::kWelch).p_value, 1);
}

TEST(EDivisive, FindsAStep) {
  std::mt19937_64 rng(1);
  auto series = Concat(Noisy(rng, 40, 300, 0.01), Noisy(rng, 25, 270, 0.01));
  EDivisiveOptions options;
  options.min_magnitude = 0.02;
  auto points = EDivisive(series, options);
  ASSERT_EQ(points.size(), 1u);
  EXPECT_NEAR(points[0].index, 40, 1);
  EXPECT_NEAR(points[0].mean_before, 300, 3);
  EXPECT_NEAR(points[0].mean_after, 270, 3);
  EXPECT_NEAR(points[0].forward_change, -0.1, 0.01);
  EXPECT_LE(points[0].p_value, 0.01);
}

TEST(EDivisive, FindsAStepUpAtTheEndOnceMinSegmentPointsFollow) {
  std::mt19937_64 rng(2);
  auto series = Concat(Noisy(rng, 60, 1.0, 0.015), Noisy(rng, 5, 1.1, 0.015));
  auto points = EDivisive(series);
  ASSERT_EQ(points.size(), 1u);
  EXPECT_EQ(points[0].index, 60);
  EXPECT_GT(points[0].forward_change, 0.08);
  // One point short of min_segment on the new level: nothing yet.
  series.pop_back();
  EXPECT_TRUE(EDivisive(series).empty());
}

TEST(EDivisive, TwoSteps) {
  std::mt19937_64 rng(3);
  auto series = Concat(Concat(Noisy(rng, 40, 1.0, 0.01), Noisy(rng, 40, 0.9, 0.01)),
                       Noisy(rng, 40, 1.05, 0.01));
  auto points = EDivisive(series);
  ASSERT_EQ(points.size(), 2u);
  EXPECT_NEAR(points[0].index, 40, 1);
  EXPECT_NEAR(points[1].index, 80, 1);
  EXPECT_LT(points[0].forward_change, -0.08);
  EXPECT_GT(points[1].forward_change, 0.1);
  // Each against its neighbours, not the whole series.
  EXPECT_NEAR(points[1].mean_before, 0.9, 0.01);
}

TEST(EDivisive, NoiseAloneGivesNoChangePointOfAnyMagnitude) {
  // Over many seeded noise-only series (sigma 1.5%): the split that
  // maximises the energy statistic is picked before the t-test, so its
  // p-value is optimistic and p <= 0.01 alone is met by some series (about
  // one in ten of 100-365 points); a minimum magnitude of 2 sigma removes
  // all of them.
  int with_any = 0, with_magnitude = 0, series_count = 0;
  for (int n : {30, 100, 365}) {
    for (int seed = 0; seed < 100; ++seed) {
      std::mt19937_64 rng(1000 * n + seed);
      auto series = Noisy(rng, n, 1.0, 0.015);
      ++series_count;
      with_any += !EDivisive(series).empty();
      EDivisiveOptions options;
      options.min_magnitude = 0.03;
      with_magnitude += !EDivisive(series, options).empty();
    }
  }
  EXPECT_LE(with_any, series_count * 15 / 100) << with_any << " of " << series_count;
  EXPECT_EQ(with_magnitude, 0) << with_magnitude << " of " << series_count;
}

TEST(EDivisive, IsolatedOutliersAreNoChangePoints) {
  std::mt19937_64 rng(4);
  auto series = Noisy(rng, 120, 1.0, 0.015);
  series[30] *= 0.6;
  series[70] *= 1.5;
  series[117] *= 0.7;  // near the end, inside the last min_segment points
  EDivisiveOptions options;
  options.min_magnitude = 0.03;
  EXPECT_TRUE(EDivisive(series, options).empty());
}

TEST(EDivisive, StepSurvivesOutliers) {
  std::mt19937_64 rng(5);
  auto series = Concat(Noisy(rng, 50, 1.0, 0.015), Noisy(rng, 30, 0.9, 0.015));
  series[20] *= 0.6;
  series[65] *= 1.4;
  auto points = EDivisive(series);
  ASSERT_EQ(points.size(), 1u);
  EXPECT_NEAR(points[0].index, 50, 1);
}

TEST(EDivisive, ShortAndConstantSeries) {
  EXPECT_TRUE(EDivisive(std::vector<double>{}).empty());
  EXPECT_TRUE(EDivisive(std::vector<double>{1.0}).empty());
  EXPECT_TRUE(EDivisive(std::vector<double>(9, 2.0)).empty());
  // Fewer than 2 x min_segment points: too short to split.
  EXPECT_TRUE(EDivisive(std::vector<double>{1, 1, 1, 1, 5, 5, 5, 5, 5}).empty());
  EXPECT_TRUE(EDivisive(std::vector<double>(365, 312.5)).empty());
  // A noiseless step is certain.
  std::vector<double> step(20, 1.0);
  step.insert(step.end(), 10, 2.0);
  auto points = EDivisive(step);
  ASSERT_EQ(points.size(), 1u);
  EXPECT_EQ(points[0].index, 20);
  EXPECT_EQ(points[0].p_value, 0);
  EXPECT_DOUBLE_EQ(points[0].forward_change, 1.0);
}

TEST(EDivisive, MinimumMagnitudeDropsSmallSteps) {
  std::mt19937_64 rng(6);
  auto series = Concat(Noisy(rng, 60, 1.0, 0.002), Noisy(rng, 60, 0.98, 0.002));
  ASSERT_EQ(EDivisive(series).size(), 1u);
  EDivisiveOptions options;
  options.min_magnitude = 0.05;
  EXPECT_TRUE(EDivisive(series, options).empty());
}

// E-divisive from its definition (e_divisive.h): the split statistic of
// every (tau, kappa) by its three sums taken pair by pair, O(n^4) per
// segment, the same t-test and merge step; against the incremental search's
// sums kept per start and extended point by point.
std::vector<int> ChangePointsByDefinition(const std::vector<double>& x,
                                          const EDivisiveOptions& options) {
  const int m = std::max(options.min_segment, 2);
  auto mean_var = [&](int b, int e) {
    double mean = 0, var = 0;
    for (int i = b; i < e; ++i) mean += x[i];
    mean /= e - b;
    for (int i = b; i < e; ++i) var += (x[i] - mean) * (x[i] - mean);
    return std::pair{mean, e - b > 1 ? var / (e - b - 1) : 0.0};
  };
  auto compare = [&](int b, int at, int e) {
    auto [m1, v1] = mean_var(b, at);
    auto [m2, v2] = mean_var(at, e);
    ChangePoint cp;
    cp.index = at;
    cp.p_value = TwoSampleTTest(m1, v1, at - b, m2, v2, e - at, options.test).p_value;
    cp.forward_change = m1 != 0 ? m2 / m1 - 1 : 0;
    return cp;
  };
  std::vector<int> found;
  std::vector<std::pair<int, int>> segments = {{0, static_cast<int>(x.size())}};
  while (!segments.empty()) {
    auto [s, e] = segments.back();
    segments.pop_back();
    if (e - s < 2 * m) continue;
    double best_q = 0;
    int best_tau = -1;
    for (int kappa = s + 2 * m; kappa <= e; ++kappa) {
      for (int tau = s + m; tau <= kappa - m; ++tau) {
        double between = 0, left = 0, right = 0;
        for (int i = s; i < tau; ++i)
          for (int j = tau; j < kappa; ++j) between += std::fabs(x[i] - x[j]);
        for (int i = s; i < tau; ++i)
          for (int j = i + 1; j < tau; ++j) left += std::fabs(x[i] - x[j]);
        for (int i = tau; i < kappa; ++i)
          for (int j = i + 1; j < kappa; ++j) right += std::fabs(x[i] - x[j]);
        const double n1 = tau - s, n2 = kappa - tau;
        const double q =
            n1 * n2 / (n1 + n2) *
            (2 / (n1 * n2) * between - left / (n1 * (n1 - 1) / 2) - right / (n2 * (n2 - 1) / 2));
        if (q > best_q) best_q = q, best_tau = tau;
      }
    }
    if (best_tau < 0 || compare(s, best_tau, e).p_value > options.max_pvalue) continue;
    found.push_back(best_tau);
    segments.push_back({s, best_tau});
    segments.push_back({best_tau, e});
  }
  std::sort(found.begin(), found.end());
  auto stats_at = [&](size_t k) {
    return compare(k == 0 ? 0 : found[k - 1], found[k],
                   k + 1 < found.size() ? found[k + 1] : static_cast<int>(x.size()));
  };
  std::vector<ChangePoint> points;
  for (size_t k = 0; k < found.size(); ++k) points.push_back(stats_at(k));
  while (!points.empty()) {
    auto weakest = std::max_element(points.begin(), points.end(),
                                    [](auto& a, auto& b) { return a.p_value < b.p_value; });
    if (weakest->p_value <= options.max_pvalue) {
      weakest = std::min_element(points.begin(), points.end(), [](auto& a, auto& b) {
        return std::fabs(a.forward_change) < std::fabs(b.forward_change);
      });
      if (std::fabs(weakest->forward_change) >= options.min_magnitude) break;
    }
    const size_t k = weakest - points.begin();
    points.erase(weakest);
    found.erase(found.begin() + static_cast<std::ptrdiff_t>(k));
    if (k > 0) points[k - 1] = stats_at(k - 1);
    if (k < points.size()) points[k] = stats_at(k);
  }
  return found;
}

TEST(EDivisive, SameChangePointsAsTheDefinitionOnRandomSeries) {
  std::mt19937_64 rng(32);
  std::uniform_int_distribution<int> length(10, 40), steps(0, 2);
  std::uniform_real_distribution<double> level(0.8, 1.2), sigma(0.005, 0.05);
  int with_points = 0;
  for (int round = 0; round < 60; ++round) {
    std::vector<double> series;
    for (int k = 0, n = steps(rng); k <= n; ++k) {
      series = Concat(series, Noisy(rng, length(rng), level(rng), sigma(rng)));
    }
    EDivisiveOptions options;
    options.min_magnitude = round % 2 ? 0.02 : 0;
    std::vector<int> incremental;
    for (const ChangePoint& cp : EDivisive(series, options)) incremental.push_back(cp.index);
    EXPECT_EQ(incremental, ChangePointsByDefinition(series, options)) << "round " << round;
    with_points += !incremental.empty();
  }
  EXPECT_GE(with_points, 20);  // the comparison is not only of empty lists
}

TEST(PrefixEDivisive, EveryPrefixAsIfAlone) {
  std::mt19937_64 rng(7);
  auto series = Concat(Concat(Noisy(rng, 50, 1.0, 0.02), Noisy(rng, 30, 0.9, 0.02)),
                       Noisy(rng, 40, 1.0, 0.02));
  series[100] *= 0.7;
  EDivisiveOptions options;
  options.min_magnitude = 0.03;
  PrefixEDivisive prefixes(series, options);
  auto same = [](const std::vector<ChangePoint>& a, const std::vector<ChangePoint>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i].index != b[i].index || std::fabs(a[i].p_value - b[i].p_value) > 1e-12 ||
          std::fabs(a[i].mean_before - b[i].mean_before) > 1e-12) {
        return false;
      }
    }
    return true;
  };
  for (int end = 0; end <= static_cast<int>(series.size()); ++end) {
    std::vector<double> prefix(series.begin(), series.begin() + end);
    EXPECT_TRUE(same(prefixes.ChangePoints(end), EDivisive(prefix, options))) << "end " << end;
  }
  // Out of order answers are the same.
  std::vector<double> first_60(series.begin(), series.begin() + 60);
  EXPECT_TRUE(same(prefixes.ChangePoints(60), EDivisive(first_60, options)));
  EXPECT_EQ(prefixes.ChangePoints(static_cast<int>(series.size())).size(), 2u);
}

}  // namespace
}  // namespace fabtrack::stats
