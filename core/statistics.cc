#include "core/statistics.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace fabtrack::stats {

double QuantileOfSorted(std::span<const double> sorted, double q) {
  const double h = std::clamp(q, 0.0, 1.0) * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(h));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = h - static_cast<double>(lo);
  if (frac == 0) return sorted[lo];
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

std::optional<double> Quantile(std::vector<double> values, double q) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  return QuantileOfSorted(values, q);
}

std::optional<double> MedianInPlace(std::span<double> values) {
  if (values.empty()) return std::nullopt;
  const size_t mid = values.size() / 2;
  const auto at = values.begin() + static_cast<std::ptrdiff_t>(mid);
  std::nth_element(values.begin(), at, values.end());
  const double upper = *at;
  if (values.size() % 2 == 1) return upper;
  // Type 7 at q = 0.5 between the two middle values, as QuantileOfSorted.
  const double lower = *std::max_element(values.begin(), at);
  return lower + (upper - lower) * 0.5;
}

std::optional<double> Median(std::vector<double> values) { return MedianInPlace(values); }

double NearestRankPercentile(std::span<const double> sorted, double p) {
  if (sorted.empty()) return 0;
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

std::optional<double> ScaledMad(std::span<const double> values) {
  if (values.size() < 2) return std::nullopt;
  const double median = *Median(std::vector<double>(values.begin(), values.end()));
  std::vector<double> deviations;
  deviations.reserve(values.size());
  for (double v : values) deviations.push_back(std::fabs(v - median));
  return 1.4826 * *MedianInPlace(deviations);
}

double Mean(std::span<const double> values) {
  if (values.empty()) return 0;
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

namespace {

double SumOfSquaredDeviations(std::span<const double> values) {
  const double mean = Mean(values);
  double sum = 0;
  for (double v : values) sum += (v - mean) * (v - mean);
  return sum;
}

}  // namespace

double StdDev(std::span<const double> values) {
  if (values.size() < 2) return 0;
  return std::sqrt(SumOfSquaredDeviations(values) / static_cast<double>(values.size() - 1));
}

double PopulationStdDev(std::span<const double> values) {
  if (values.empty()) return 0;
  return std::sqrt(SumOfSquaredDeviations(values) / static_cast<double>(values.size()));
}

std::optional<RobustBaseline> Baseline(std::span<const double> history, int min_count,
                                       double relative_floor) {
  if (static_cast<int>(history.size()) < std::max(min_count, 1)) return std::nullopt;
  RobustBaseline b;
  b.count = static_cast<int>(history.size());
  b.median = *Median(std::vector<double>(history.begin(), history.end()));
  b.scale = std::max(ScaledMad(history).value_or(0), relative_floor * std::fabs(b.median));
  return b;
}

}  // namespace fabtrack::stats
