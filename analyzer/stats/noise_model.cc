#include "analyzer/stats/noise_model.h"

#include <algorithm>
#include <cmath>

namespace fabtrack::stats {

double WithinRunVariance(double cv, int iterations) {
  if (!std::isfinite(cv) || !(cv > 0) || iterations <= 0) return 0;
  return cv * cv / iterations;
}

double BetweenNightVariance(double total_sigma, double typical_within) {
  return std::max(0.0, total_sigma * total_sigma - std::max(0.0, typical_within));
}

double RunSigma(double total_sigma, double typical_within, double run_within, double floor) {
  const double variance =
      BetweenNightVariance(total_sigma, typical_within) + std::max(0.0, run_within);
  return std::max(std::sqrt(variance), floor);
}

double RunScale(double scale, double level, double typical_within, double run_within,
                double floor) {
  const double l2 = level * level;
  const double own = std::max(0.0, run_within) * l2;
  const double moved =
      scale * scale + (std::max(0.0, run_within) - std::max(0.0, typical_within)) * l2;
  return std::sqrt(std::max({moved, own, floor * floor * l2}));
}

std::optional<VarianceComponents> RandomEffectsComponents(
    const std::vector<std::vector<double>>& groups) {
  VarianceComponents out;
  double sum = 0, sum_n2 = 0, within_ss = 0;
  bool replicated = false;
  std::vector<double> means;
  std::vector<int> counts;
  for (const std::vector<double>& g : groups) {
    if (g.empty()) continue;
    double mean = 0;
    for (double v : g) mean += v;
    mean /= static_cast<double>(g.size());
    for (double v : g) within_ss += (v - mean) * (v - mean);
    means.push_back(mean);
    counts.push_back(static_cast<int>(g.size()));
    sum += mean * static_cast<double>(g.size());
    sum_n2 += static_cast<double>(g.size()) * static_cast<double>(g.size());
    out.observations += static_cast<int>(g.size());
    replicated = replicated || g.size() >= 2;
  }
  out.groups = static_cast<int>(means.size());
  if (out.groups < 2 || !replicated) return std::nullopt;
  const double n = out.observations;
  const double grand = sum / n;
  double between_ss = 0;
  for (size_t i = 0; i < means.size(); ++i) {
    between_ss += counts[i] * (means[i] - grand) * (means[i] - grand);
  }
  out.within_dof = out.observations - out.groups;
  out.between_dof = out.groups - 1;
  const double msw = within_ss / out.within_dof;
  const double msb = between_ss / out.between_dof;
  const double n0 = (n - sum_n2 / n) / out.between_dof;
  out.within = msw;
  out.between = std::max(0.0, (msb - msw) / n0);
  return out;
}

}  // namespace fabtrack::stats
