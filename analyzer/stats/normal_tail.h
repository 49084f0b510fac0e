// The standard normal distribution's upper tail and its inverse, for turning
// a z threshold set for one test into the one for m tests side by side
// (Bonferroni: the tail divided by m). Pure.
#pragma once

#include <cmath>

namespace fabtrack::stats {

// P(Z >= z) for a standard normal Z.
inline double NormalUpperTail(double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); }

// The z with P(Z >= z) = tail, for tail in (0, 0.5]: bisection (the tail
// falls monotonically), to far below any threshold's precision.
inline double NormalUpperQuantile(double tail) {
  double lo = 0, hi = 40;
  for (int i = 0; i < 100; ++i) {
    const double mid = (lo + hi) / 2;
    (NormalUpperTail(mid) > tail ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

// The z for one of `tests` tests whose family keeps the upper tail of `z`
// for one test; `tests` <= 1 leaves z as it is.
inline double BonferroniZ(double z, double tests) {
  return tests <= 1 ? z : NormalUpperQuantile(NormalUpperTail(z) / tests);
}

}  // namespace fabtrack::stats
