// Robust location and scale for small, noisy samples (nightly benchmark
// numbers have outliers: a straggling night must not move the baseline).
#pragma once

#include <optional>
#include <span>
#include <vector>

namespace fabtrack::analyzer::stats {

// Median; nullopt for an empty sample. Takes a copy (partially sorts it).
std::optional<double> Median(std::vector<double> values);
// Linear-interpolated quantile q in [0,1] (numpy's default).
std::optional<double> Quantile(std::vector<double> values, double q);
// Median absolute deviation scaled by 1.4826 (a standard deviation under
// normal noise); nullopt for fewer than 2 values.
std::optional<double> ScaledMad(std::span<const double> values);
double Mean(std::span<const double> values);
// Sample standard deviation (n-1); 0 for fewer than 2 values.
double StdDev(std::span<const double> values);

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

}  // namespace fabtrack::analyzer::stats
