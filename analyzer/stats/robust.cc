#include "analyzer/stats/robust.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace fabtrack::analyzer::stats {

std::optional<double> Median(std::vector<double> values) {
  return Quantile(std::move(values), 0.5);
}

std::optional<double> Quantile(std::vector<double> values, double q) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(values.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, values.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return values[lo] + (values[hi] - values[lo]) * frac;
}

std::optional<double> ScaledMad(std::span<const double> values) {
  if (values.size() < 2) return std::nullopt;
  double median = *Median(std::vector<double>(values.begin(), values.end()));
  std::vector<double> deviations;
  deviations.reserve(values.size());
  for (double v : values) deviations.push_back(std::fabs(v - median));
  return 1.4826 * *Median(std::move(deviations));
}

double Mean(std::span<const double> values) {
  if (values.empty()) return 0;
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

double StdDev(std::span<const double> values) {
  if (values.size() < 2) return 0;
  double mean = Mean(values);
  double sum = 0;
  for (double v : values) sum += (v - mean) * (v - mean);
  return std::sqrt(sum / static_cast<double>(values.size() - 1));
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

}  // namespace fabtrack::analyzer::stats
