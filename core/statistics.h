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

}  // namespace fabtrack::stats
