#include "collector/harness/latency_stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/statistics.h"

namespace fabtrack::harness {

Distribution Summarize(std::vector<double> values) {
  Distribution d;
  if (values.empty()) return d;
  std::sort(values.begin(), values.end());
  d.mean = stats::Mean(values);
  d.stddev = stats::PopulationStdDev(values);
  d.cv = d.mean > 0 ? d.stddev / d.mean : 0;
  d.min = values.front();
  d.max = values.back();
  d.p50 = stats::NearestRankPercentile(values, 50);
  d.p90 = stats::NearestRankPercentile(values, 90);
  d.p99 = stats::NearestRankPercentile(values, 99);
  return d;
}

SizeLatency AnalyzeLatencies(const std::vector<std::vector<double>>& d) {
  SizeLatency out;
  const size_t ranks = d.size();
  const size_t iters = ranks ? d[0].size() : 0;
  if (ranks == 0 || iters == 0) return out;
  out.per_iteration_us.resize(iters);
  std::vector<double> lateness_sum(ranks, 0.0);
  for (size_t i = 0; i < iters; ++i) {
    double slowest = 0;
    for (size_t r = 0; r < ranks; ++r) slowest = std::max(slowest, d[r][i]);
    out.per_iteration_us[i] = slowest;
    for (size_t r = 0; r < ranks; ++r) lateness_sum[r] += slowest - d[r][i];
  }
  out.collective = Summarize(out.per_iteration_us);
  double mean_of_means = 0;
  std::vector<double> lateness(ranks);
  for (size_t r = 0; r < ranks; ++r) {
    Distribution rd = Summarize(d[r]);
    lateness[r] = lateness_sum[r] / iters;
    out.ranks.push_back({static_cast<int>(r), rd.mean, rd.p50, rd.p99, rd.max, lateness[r]});
    mean_of_means += rd.mean;
  }
  out.time_us = mean_of_means / ranks;
  if (ranks > 1) {
    size_t worst = std::max_element(lateness.begin(), lateness.end()) - lateness.begin();
    out.straggler_rank = static_cast<int>(worst);
    out.straggler_excess_us = lateness[worst] - *stats::Median(lateness);
  }
  return out;
}

}  // namespace fabtrack::harness
