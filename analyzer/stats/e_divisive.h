// Change points of a series of nightly numbers: E-divisive means (Matteson &
// James, "A Nonparametric Approach for Multiple Change Point Analysis of
// Multivariate Data") with the deterministic t-test significance check and the
// merge step of Hunter/Apache Otava (Fleming et al., "Hunter: Using Change
// Point Detection to Hunt for Performance Regressions").
//
// One level of the search: for a segment [s, e) find the split tau and the end
// kappa <= e that maximise the energy-distance statistic (alpha = 1)
//
//   q(tau, kappa) = n1 n2 / (n1 + n2) * (2/(n1 n2) sum |x_i - y_j|
//                   - 1/C(n1,2) sum_{i<i'} |x_i - x_i'| - 1/C(n2,2) sum_{j<j'} |y_j - y_j'|)
//
// with X = [s, tau), Y = [tau, kappa), n1 = |X|, n2 = |Y|, both at least
// min_segment. The split is accepted when a two-sample t-test between the
// segment's two sides gives p <= max_pvalue; then both sides are searched
// again. A merge step finally recomputes every change point against its
// neighbours and drops the weakest while one has p > max_pvalue or
// |mean_after / mean_before - 1| < min_magnitude.
//
// Complexity. The three sums are kept per split position for a fixed segment
// start and updated in O(1) each when the segment grows by one point, so
// extending a segment [s, e) to [s, e + 1) costs O(e - s) and the best split
// of every [s, e') with e' <= e is remembered: one level over n points is
// O(n^2) time and O(n) memory (no n x n matrix). PrefixEDivisive keeps these
// per start across calls, so judging every prefix of a series (a full
// re-analysis, one prefix per night) costs O(n^2) per distinct segment start
// (the series start and the change points found), not O(n^3).
#pragma once

#include <memory>
#include <span>
#include <vector>

namespace fabtrack::stats {

enum class TTestKind {
  kStudent,  // pooled variance, as Otava (scipy ttest_ind_from_stats defaults)
  kWelch,    // unequal variances: a noisy short side counts for less
};

struct EDivisiveOptions {
  double max_pvalue = 0.01;
  // Smallest |mean_after / mean_before - 1| kept by the merge step.
  double min_magnitude = 0;
  // Fewest points on either side of a change point (at least 2).
  int min_segment = 5;
  TTestKind test = TTestKind::kWelch;
};

struct ChangePoint {
  int index = 0;                           // the first point of the new level
  double mean_before = 0, mean_after = 0;  // of the segments either side
  double p_value = 1;
  double forward_change = 0;  // mean_after / mean_before - 1 (0 when mean_before is 0)
};

struct TTestResult {
  double t = 0;
  double df = 0;
  double p_value = 1;  // two-sided
};

// Two-sample t-test from summary statistics (sample variances, n - 1).
TTestResult TwoSampleTTest(double mean1, double var1, int n1, double mean2, double var2, int n2,
                           TTestKind kind);
// P(|T| >= |t|) for Student's t with `df` degrees of freedom.
double StudentTwoSidedP(double t, double df);
// The regularised incomplete beta function I_x(a, b).
double RegularizedIncompleteBeta(double a, double b, double x);

// Change points of `series`, oldest first.
std::vector<ChangePoint> EDivisive(std::span<const double> series,
                                   const EDivisiveOptions& options = {});

// Change points of every prefix series[0, end) of one series, as they would
// have been found on the night its newest point arrived. Keeps the search's
// sums between calls (see Complexity above): call with increasing `end` for
// the best speed; any order gives the same answers. `series` must outlive it.
class PrefixEDivisive {
 public:
  PrefixEDivisive(std::span<const double> series, const EDivisiveOptions& options);
  ~PrefixEDivisive();
  PrefixEDivisive(const PrefixEDivisive&) = delete;
  PrefixEDivisive& operator=(const PrefixEDivisive&) = delete;

  std::vector<ChangePoint> ChangePoints(int end);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fabtrack::stats
