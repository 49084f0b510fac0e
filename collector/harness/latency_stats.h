// Statistics over per-iteration, per-rank latencies of one message size. Pure.
//
// Every rank times each of its calls (enter to return). In a blocking
// collective the ranks that arrive early wait for the last one, so the rank
// that holds everyone up is the one with the *shortest* calls: its lateness in
// iteration i is max_q(d[q][i]) - d[r][i], the time the others spent waiting
// for it. The straggler is the rank with the largest mean lateness.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace fabtrack::harness {

struct Distribution {
  double mean = 0, p50 = 0, p90 = 0, p99 = 0, min = 0, max = 0, stddev = 0;
  double cv = 0;  // stddev / mean
};

// Nearest-rank percentiles (stats::NearestRankPercentile: a latency that
// occurred) of `values` (need not be sorted); population standard deviation.
Distribution Summarize(std::vector<double> values);

struct RankSummary {
  int rank = 0;
  double mean_us = 0, p50_us = 0, p99_us = 0, max_us = 0;  // call durations
  double mean_lateness_us = 0;
};

struct SizeLatency {
  // nccl-tests' "time": the mean call duration, averaged over ranks.
  double time_us = 0;
  // Distribution of the collective's per-iteration latency (max over ranks).
  Distribution collective;
  std::vector<double> per_iteration_us;  // max over ranks, one per iteration
  std::vector<RankSummary> ranks;
  std::optional<int> straggler_rank;
  double straggler_excess_us = 0;  // straggler's mean lateness minus the median rank's
};

// durations_us[r][i]: rank r's duration of timed iteration i (all rows the
// same length, at least one rank and one iteration).
SizeLatency AnalyzeLatencies(const std::vector<std::vector<double>>& durations_us);

}  // namespace fabtrack::harness
