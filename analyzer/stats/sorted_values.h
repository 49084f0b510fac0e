// A multiset of numbers kept sorted: the median (and the scaled MAD) of a
// history that grows one value at a time, or of a sliding window, without
// copying and re-selecting the whole history for every value judged. Judging
// every night of three years against all nights before it was quadratic in
// copies and selections; this keeps it to a memmove per insert. The figures
// are bit for bit those of stats::Median and stats::ScaledMad. Pure.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
#include <vector>

namespace fabtrack::stats {

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
