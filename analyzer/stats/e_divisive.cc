#include "analyzer/stats/e_divisive.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>
#include <utility>

namespace fabtrack::stats {
namespace {

// Continued fraction of the incomplete beta function (modified Lentz).
double BetaContinuedFraction(double a, double b, double x) {
  constexpr int kMaxIterations = 500;
  constexpr double kEpsilon = 1e-15;
  constexpr double kTiny = 1e-300;
  auto guard = [](double v) { return std::fabs(v) < kTiny ? kTiny : v; };
  double c = 1;
  double d = 1 / guard(1 - (a + b) * x / (a + 1));
  double h = d;
  for (int m = 1; m <= kMaxIterations; ++m) {
    const double m2 = 2.0 * m;
    // Even step.
    double numerator = m * (b - m) * x / ((a - 1 + m2) * (a + m2));
    d = 1 / guard(1 + numerator * d);
    c = guard(1 + numerator / c);
    h *= d * c;
    // Odd step.
    numerator = -(a + m) * (a + b + m) * x / ((a + m2) * (a + 1 + m2));
    d = 1 / guard(1 + numerator * d);
    c = guard(1 + numerator / c);
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1) < kEpsilon) break;
  }
  return h;
}

struct Candidate {
  double q = 0;
  int tau = -1;  // -1: no admissible split
};

// The E-divisive sums of the segments that start at `start`, for every split
// position, over the points [start, end) seen so far.
struct StartState {
  int start = 0;
  int end = 0;
  // Indexed by tau - start.
  std::vector<double> within_left;  // sum |x_i - x_j|, start <= i < j < tau
  std::vector<double> between;      // sum |x_i - x_j|, start <= i < tau <= j < end
  // Indexed by e - start: the best split of [start, e) over all kappa <= e.
  std::vector<Candidate> best_by_end;
};

struct Side {
  double mean = 0;
  double variance = 0;  // sample variance (n - 1); 0 for one point
  int count = 0;
};

}  // namespace

double RegularizedIncompleteBeta(double a, double b, double x) {
  if (!(x > 0)) return 0;
  if (x >= 1) return 1;
  const double log_front =
      std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  const double front = std::exp(log_front);
  if (x < (a + 1) / (a + b + 2)) return front * BetaContinuedFraction(a, b, x) / a;
  return 1 - front * BetaContinuedFraction(b, a, 1 - x) / b;
}

double StudentTwoSidedP(double t, double df) {
  if (std::isnan(t) || !(df > 0)) return 1;
  if (std::isinf(t)) return 0;
  return std::clamp(RegularizedIncompleteBeta(df / 2, 0.5, df / (df + t * t)), 0.0, 1.0);
}

TTestResult TwoSampleTTest(double mean1, double var1, int n1, double mean2, double var2, int n2,
                           TTestKind kind) {
  TTestResult r;
  if (n1 < 1 || n2 < 1) return r;
  // Differences and spreads below the rounding error of the means are none.
  const double epsilon =
      1e-12 * std::max({std::fabs(mean1), std::fabs(mean2), std::numeric_limits<double>::min()});
  const double diff = mean2 - mean1;
  if (var1 < epsilon * epsilon) var1 = 0;
  if (var2 < epsilon * epsilon) var2 = 0;
  double se2 = 0;
  if (kind == TTestKind::kStudent) {
    r.df = n1 + n2 - 2;
    if (r.df < 1) return r;
    const double pooled = ((n1 - 1) * var1 + (n2 - 1) * var2) / r.df;
    se2 = pooled * (1.0 / n1 + 1.0 / n2);
  } else {
    if (n1 < 2 || n2 < 2) return r;
    const double a = var1 / n1, b = var2 / n2;
    se2 = a + b;
    const double denominator = a * a / (n1 - 1) + b * b / (n2 - 1);
    r.df = denominator > 0 ? se2 * se2 / denominator : n1 + n2 - 2;
  }
  if (std::fabs(diff) <= epsilon) return r;
  if (se2 <= 0) {
    r.t = diff > 0 ? std::numeric_limits<double>::infinity()
                   : -std::numeric_limits<double>::infinity();
    r.p_value = 0;
    return r;
  }
  r.t = diff / std::sqrt(se2);
  r.p_value = StudentTwoSidedP(r.t, r.df);
  return r;
}

struct PrefixEDivisive::Impl {
  std::span<const double> x;
  EDivisiveOptions options;
  int min_segment = 2;
  double shift = 0;                 // x[0]: sums of squares without cancellation
  std::vector<double> sum, sum_sq;  // prefix sums of x - shift and its square
  std::unordered_map<int, StartState> starts;
  std::vector<double> inverse;  // 1 / k for k = 0 .. x.size() (0 at 0: unused)
  std::vector<double> prefix_;  // Extend's running distances (scratch)

  Impl(std::span<const double> series, const EDivisiveOptions& opts)
      : x(series), options(opts), min_segment(std::max(opts.min_segment, 2)) {
    shift = x.empty() ? 0 : x[0];
    sum.assign(x.size() + 1, 0);
    sum_sq.assign(x.size() + 1, 0);
    inverse.assign(x.size() + 1, 0);
    for (size_t k = 1; k < inverse.size(); ++k) inverse[k] = 1.0 / static_cast<double>(k);
    for (size_t i = 0; i < x.size(); ++i) {
      const double v = x[i] - shift;
      sum[i + 1] = sum[i] + v;
      sum_sq[i + 1] = sum_sq[i] + v * v;
    }
  }

  Side SideOf(int begin, int end) const {
    Side side;
    side.count = end - begin;
    if (side.count <= 0) return side;
    const double n = side.count;
    const double s = sum[end] - sum[begin];
    side.mean = shift + s / n;
    if (side.count > 1) {
      side.variance = std::max(0.0, (sum_sq[end] - sum_sq[begin] - s * s / n) / (n - 1));
    }
    return side;
  }

  ChangePoint Compare(int begin, int index, int end) const {
    const Side before = SideOf(begin, index), after = SideOf(index, end);
    ChangePoint cp;
    cp.index = index;
    cp.mean_before = before.mean;
    cp.mean_after = after.mean;
    cp.p_value = TwoSampleTTest(before.mean, before.variance, before.count, after.mean,
                                after.variance, after.count, options.test)
                     .p_value;
    cp.forward_change = before.mean != 0 ? after.mean / before.mean - 1 : 0;
    return cp;
  }

  // Adds the point state.end to the segment that starts at state.start.
  // The nightly analysis extends every series from its start (O(n^2) per
  // series): the split loop below is the analyzer's hottest, so it divides
  // by table look-ups, keeps no third sum (the pairs right of tau are all
  // pairs less those left of it and across it), and walks the distances to
  // the new point once: their running sum is one chain of dependent
  // additions, kept in `prefix_` so that the split loop after it has none
  // (it was summed twice, once for the total and once along the splits: the
  // same additions in the same order, so the same numbers).
  void Extend(StartState& state) {
    const int s = state.start, p = state.end;
    const int n = p - s;  // points before p
    const double xp = x[p];
    const double* xs = x.data() + s;
    // prefix[t] = sum |x_i - x_p| over s <= i < s + t.
    prefix_.resize(static_cast<size_t>(n) + 1);
    double* prefix = prefix_.data();
    double left = 0;
    prefix[0] = 0;
    for (int k = 0; k < n; ++k) {
      left += std::fabs(xs[k] - xp);
      prefix[k + 1] = left;
    }
    const double total = left;
    state.within_left.push_back(state.within_left.back() + total);  // tau = p + 1
    state.between.push_back(0);                                     // tau = p + 1
    double* between = state.between.data();
    const double* within_left = state.within_left.data();
    const double all_pairs = within_left[n + 1];  // s <= i < j <= p
    // Every split of [s, p + 1) with kappa = p + 1: tau - s = t in
    // [min_segment, size - min_segment], n1 = t, n2 = size - t.
    const int size = n + 1;  // n1 + n2
    const int first = std::min(min_segment, n + 1), last = size - min_segment;
    int t = 1;
    for (; t < first; ++t) between[t] += prefix[t];
    Candidate best = state.best_by_end.back();
    const double* inv = inverse.data();  // inv[k] = 1 / k
    const double scale = 2.0 / size;
    // n1 = t and n2 = size - t as doubles, counted (exact: small integers).
    double n1 = t, n2 = size - t;
    for (; t <= last; ++t, n1 += 1, n2 -= 1) {
      const double b = between[t] + prefix[t];
      between[t] = b;
      const double within_right = all_pairs - within_left[t] - b;
      const double q =
          scale * (b - n2 * within_left[t] * inv[t - 1] - n1 * within_right * inv[size - t - 1]);
      if (q > best.q) best = {q, s + t};
    }
    for (; t <= n; ++t) between[t] += prefix[t];
    state.best_by_end.push_back(best);
    ++state.end;
  }

  Candidate Best(int begin, int end) {
    auto [it, inserted] = starts.try_emplace(begin);
    StartState& state = it->second;
    if (inserted) {
      state.start = state.end = begin;
      state.within_left = {0};
      state.between = {0};
      state.best_by_end = {Candidate{}};
    }
    while (state.end < end) Extend(state);
    return state.best_by_end[end - begin];
  }

  std::vector<ChangePoint> ChangePoints(int end) {
    end = std::clamp(end, 0, static_cast<int>(x.size()));
    // Split: accept the best split of a segment on its p-value, search both
    // sides again.
    std::vector<int> indices;
    std::vector<std::pair<int, int>> segments = {{0, end}};
    while (!segments.empty()) {
      auto [begin, stop] = segments.back();
      segments.pop_back();
      if (stop - begin < 2 * min_segment) continue;
      const Candidate c = Best(begin, stop);
      if (c.tau < 0 || !(c.q > 0)) continue;
      if (Compare(begin, c.tau, stop).p_value > options.max_pvalue) continue;
      indices.push_back(c.tau);
      segments.push_back({begin, c.tau});
      segments.push_back({c.tau, stop});
    }
    std::sort(indices.begin(), indices.end());
    // Merge: recompute against the neighbours, drop the weakest while any
    // fails the p-value or the magnitude.
    auto stats_at = [&](size_t k) {
      const int begin = k == 0 ? 0 : indices[k - 1];
      const int stop = k + 1 < indices.size() ? indices[k + 1] : end;
      return Compare(begin, indices[k], stop);
    };
    std::vector<ChangePoint> points;
    for (size_t k = 0; k < indices.size(); ++k) points.push_back(stats_at(k));
    while (!points.empty()) {
      auto weakest = std::max_element(
          points.begin(), points.end(),
          [](const ChangePoint& a, const ChangePoint& b) { return a.p_value < b.p_value; });
      if (weakest->p_value <= options.max_pvalue) {
        weakest = std::min_element(
            points.begin(), points.end(), [](const ChangePoint& a, const ChangePoint& b) {
              return std::fabs(a.forward_change) < std::fabs(b.forward_change);
            });
        if (std::fabs(weakest->forward_change) >= options.min_magnitude) break;
      }
      const size_t k = weakest - points.begin();
      points.erase(weakest);
      indices.erase(indices.begin() + static_cast<std::ptrdiff_t>(k));
      if (k > 0) points[k - 1] = stats_at(k - 1);
      if (k < points.size()) points[k] = stats_at(k);
    }
    return points;
  }
};

PrefixEDivisive::PrefixEDivisive(std::span<const double> series, const EDivisiveOptions& options)
    : impl_(std::make_unique<Impl>(series, options)) {}

PrefixEDivisive::~PrefixEDivisive() = default;

std::vector<ChangePoint> PrefixEDivisive::ChangePoints(int end) { return impl_->ChangePoints(end); }

std::vector<ChangePoint> EDivisive(std::span<const double> series,
                                   const EDivisiveOptions& options) {
  return PrefixEDivisive(series, options).ChangePoints(static_cast<int>(series.size()));
}

}  // namespace fabtrack::stats
