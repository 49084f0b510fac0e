// One test over many series that move together (issue 32): the
// inverse-variance weighted mean of their relative changes and its z. Pure.
//
// Why. A fabric regression moves every multi-node series of a band at once
// (all node counts, all sizes of the band). Judged series by series, each
// must pass a threshold raised for the number of series (Bonferroni), so a
// shift that is 2 sigma on each of four series is lost four times over.
// Pooled, series s with relative change d_s and noise sigma_s (its own
// night-to-night noise) gives
//     D = sum(d_s / sigma_s^2) / sum(1 / sigma_s^2),  SE = 1 / sqrt(sum(1 / sigma_s^2)),
//     Z = D / SE,
// the most powerful test of a common shift d (Z grows as d * sqrt(sum(1 /
// sigma_s^2)): four equally noisy series double a single series' z), and one
// test per band and night instead of one per series. A noisy series counts
// for less. When each series' z has heavy tails (a noise estimated from few
// nights) its z is first mapped to the normal z of the same tail
// (stats/baseline_z.h) and the pooled Z is the weighted Stouffer sum
// sum(z_s / sigma_s) / sqrt(sum(1 / sigma_s^2)), which is the same Z when
// z_s = d_s / sigma_s.
#pragma once

#include <vector>

namespace fabtrack::stats {

struct SeriesShift {
  double change = 0;  // relative change, positive when worse
  double sigma = 0;   // its noise (relative, > 0)
  double z = 0;       // change / sigma, or its normal-equivalent z
};

struct PooledShift {
  int series = 0;
  double change = 0;  // D
  double se = 0;      // SE
  double z = 0;       // Z
};

// Series with sigma <= 0 or a non-finite number are left out; none left:
// series 0 and zeros.
PooledShift PoolShifts(const std::vector<SeriesShift>& shifts);

}  // namespace fabtrack::stats
