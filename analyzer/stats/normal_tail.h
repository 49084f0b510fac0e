// The standard normal distribution's upper tail and its inverse, for turning
// a z threshold set for one test into the one for m tests side by side
// (Bonferroni: the tail divided by m). Pure.
#pragma once

#include <cmath>

namespace fabtrack::stats {

// P(Z >= z) for a standard normal Z.
inline double NormalUpperTail(double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); }

// The z with P(Z >= z) = tail, for tail in (0, 0.5]: bisection (the tail
// falls monotonically), to far below any threshold's precision. The
// reference for NormalUpperQuantile.
inline double NormalUpperQuantileByBisection(double tail) {
  double lo = 0, hi = 40;
  for (int i = 0; i < 100; ++i) {
    const double mid = (lo + hi) / 2;
    (NormalUpperTail(mid) > tail ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

// The same z, found in a few Newton steps on log P(Z >= z) from Abramowitz
// & Stegun 26.2.23's approximation (error < 4.5e-4): the analyzer maps every
// run's z through it (t-corrected z, analyzer/stats/baseline_z.h), and the
// bisection's 100 erfc calls per z were a tenth of a full re-analysis.
inline double NormalUpperQuantile(double tail) {
  if (!(tail > 0) || !(tail < 0.5)) return NormalUpperQuantileByBisection(tail);
  const double t = std::sqrt(-2 * std::log(tail));
  double z = t - (2.515517 + 0.802853 * t + 0.010328 * t * t) /
                     (1 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t * t * t);
  const double target = std::log(tail);
  for (int i = 0; i < 6; ++i) {
    const double upper = NormalUpperTail(z);
    if (!(upper > 0) || !(z > 0)) return NormalUpperQuantileByBisection(tail);
    // d/dz log P(Z >= z) = -phi(z) / P(Z >= z)
    const double density = std::exp(-z * z / 2) / std::sqrt(2 * M_PI);
    const double step = (std::log(upper) - target) * upper / density;
    z += step;
    if (std::fabs(step) < 1e-13 * z) break;
  }
  return z;
}

// The z for one of `tests` tests whose family keeps the upper tail of `z`
// for one test; `tests` <= 1 leaves z as it is.
inline double BonferroniZ(double z, double tests) {
  return tests <= 1 ? z : NormalUpperQuantile(NormalUpperTail(z) / tests);
}

}  // namespace fabtrack::stats
