// Synthetic runs for the benchmarks: a latency summary in proportion to a
// row's time, with the spread each benchmark wants.
#pragma once

#include "core/run_record.h"

namespace fabtrack::bench {

// Each statistic as a multiple of the row's time t (cv as is).
struct LatencySpread {
  double p50, p90, p99, min, max, stddev, cv;
};

inline LatencySummary ScaledLatency(double t, const LatencySpread& s) {
  LatencySummary l;
  l.mean_us = t;
  l.p50_us = t * s.p50;
  l.p90_us = t * s.p90;
  l.p99_us = t * s.p99;
  l.min_us = t * s.min;
  l.max_us = t * s.max;
  l.stddev_us = t * s.stddev;
  l.cv = s.cv;
  return l;
}

}  // namespace fabtrack::bench
