// fabtrack's one home for order statistics, location and scale: every
// median, percentile, MAD, mean and standard deviation in the tree comes from
// here, so that a "p90" means the same thing in the harness, the analyzer, the
// reports and the benchmarks. Pure.
//
// Percentiles use ONE definition, Hyndman & Fan (1996) type 7: linear
// interpolation between the closest ranks. With the n values sorted
// x[0] <= ... <= x[n-1], quantile q (0..1) is at position h = q * (n - 1) and
// is x[floor(h)] + (h - floor(h)) * (x[floor(h) + 1] - x[floor(h)]). It is
// numpy.quantile's default (method="linear"), R's quantile() default and
// Excel's PERCENTILE.INC; the median is its q = 0.5 (the middle value, or the
// mean of the two middle values).
//
// One exception, kept deliberately: NearestRankPercentile (type 1, a value
// that occurred), for the harness's per-iteration latency percentiles; see
// there why.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
#include <span>
#include <vector>

namespace fabtrack::stats {

// Quantile q in [0,1] (clamped) of `values` (any order), type 7 above;
// nullopt for an empty sample.
std::optional<double> Quantile(std::vector<double> values, double q);
// The same over values already sorted ascending (not empty).
double QuantileOfSorted(std::span<const double> sorted, double q);

// Quantile(values, 0.5) by selection instead of a full sort; nullopt for an
// empty sample.
std::optional<double> Median(std::vector<double> values);
// Median without a copy: reorders `values`.
std::optional<double> MedianInPlace(std::span<double> values);

// Nearest-rank percentile p in [0,100] (Hyndman & Fan type 1, the inverse of
// the empirical distribution): the ceil(p/100 * n)-th smallest value (the
// smallest for p = 0), always a value of the sample; 0 for an empty one.
// `sorted` ascending. Used only for the harness's latency distributions: those
// p50/p90/p99 are stored with every run and compared with months of stored
// history (latency_jitter's p99/p50), and they follow the convention of
// latency tools (fio, HdrHistogram) of reporting a latency that was observed;
// switching them to type 7 would move every stored series by a step.
double NearestRankPercentile(std::span<const double> sorted, double p);

// Median absolute deviation from the median, scaled by 1.4826 (a standard
// deviation under normal noise); nullopt for fewer than 2 values.
std::optional<double> ScaledMad(std::span<const double> values);

// Arithmetic mean; 0 for an empty sample.
double Mean(std::span<const double> values);
// Sample standard deviation (divides by n-1); 0 for fewer than 2 values.
double StdDev(std::span<const double> values);
// Population standard deviation (divides by n); 0 for an empty sample.
double PopulationStdDev(std::span<const double> values);

struct RobustBaseline {
  double median = 0;
  double scale = 0;  // scaled MAD, floored by the caller's relative noise floor
  int count = 0;
};

// Median and scaled MAD of `history`, the scale floored at
// `relative_floor * |median|` so that an unnaturally quiet history (identical
// numbers) does not turn every wiggle into a huge z-score. nullopt when
// history has fewer than `min_count` values.
std::optional<RobustBaseline> Baseline(std::span<const double> history, int min_count,
                                       double relative_floor);

// A multiset of numbers kept sorted: the median and scaled MAD of a history
// that grows one value at a time, or of a sliding window, without copying and
// re-selecting the whole history for every value judged (judging every night
// of three years against all nights before it was quadratic in both). The
// figures are bit for bit those of Median and ScaledMad above.
class SortedValues {
 public:
  void Insert(double v) { values_.insert(std::upper_bound(values_.begin(), values_.end(), v), v); }
  // Removes one value equal to `v`, which must be present.
  void Erase(double v) { values_.erase(std::lower_bound(values_.begin(), values_.end(), v)); }
  size_t size() const { return values_.size(); }
  bool empty() const { return values_.empty(); }

  // As stats::Median (type 7 at q = 0.5, the same rounding); nullopt when empty.
  std::optional<double> Median() const {
    if (values_.empty()) return std::nullopt;
    const size_t mid = values_.size() / 2;
    const double upper = values_[mid];
    if (values_.size() % 2 == 1) return upper;
    const double lower = values_[mid - 1];
    return lower + (upper - lower) * 0.5;
  }

  // As stats::ScaledMad: 1.4826 x the median absolute deviation from the
  // median; nullopt for fewer than two values. The deviations of a sorted
  // list are two sorted runs (below and above the median), merged up to the
  // middle: O(n), no copy.
  std::optional<double> ScaledMad() const {
    const size_t n = values_.size();
    if (n < 2) return std::nullopt;
    const double median = *Median();
    const auto split = std::lower_bound(values_.begin(), values_.end(), median);
    // Below: values_[0, split) walked downwards; above: [split, n) upwards.
    ptrdiff_t down = split - values_.begin() - 1;
    size_t up = static_cast<size_t>(split - values_.begin());
    auto next = [&] {
      const bool take_down =
          up >= n || (down >= 0 && std::fabs(values_[static_cast<size_t>(down)] - median) <=
                                       std::fabs(values_[up] - median));
      return take_down ? std::fabs(values_[static_cast<size_t>(down--)] - median)
                       : std::fabs(values_[up++] - median);
    };
    const size_t mid = n / 2;
    double lower = 0, upper = 0;
    for (size_t k = 0; k <= mid; ++k) {
      lower = upper;
      upper = next();
    }
    const double mad = n % 2 == 1 ? upper : lower + (upper - lower) * 0.5;
    return 1.4826 * mad;
  }

 private:
  std::vector<double> values_;
};

}  // namespace fabtrack::stats
