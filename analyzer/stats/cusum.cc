#include "analyzer/stats/cusum.h"

#include <algorithm>
#include <cmath>

namespace fabtrack::stats {

namespace {

// Siegmund's overshoot correction for unit-variance normal increments:
// 2 x 0.583 (the expected overshoot of a normal random walk over a boundary).
constexpr double kOvershoot = 1.166;

}  // namespace

double CusumArl(double k, double h, double mean) {
  const double b = h + kOvershoot;
  const double delta = mean - k;
  if (std::fabs(delta) < 1e-9) return b * b;
  return (std::exp(-2 * delta * b) + 2 * delta * b - 1) / (2 * delta * delta);
}

double CusumThreshold(double k, double arl0) {
  // ARL0 grows with h (about exponentially): bisect on [0, 100].
  double lo = 0, hi = 100;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (CusumArl(k, mid, 0) < arl0 ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

CusumResult RunCusum(const std::vector<double>& x, double k, double h) {
  CusumResult r;
  double s = 0;
  int start = -1;
  for (int t = 0; t < static_cast<int>(x.size()); ++t) {
    if (!std::isfinite(x[t])) continue;  // a night without a number: no step
    const double next = s + x[t] - k;
    if (next <= 0) {
      s = 0;
      start = -1;
      continue;
    }
    if (s == 0) start = t;
    s = next;
    if (s >= h && r.alarm_at < 0) {
      r.alarm_at = t;
      r.run_start = start;
    }
  }
  r.statistic = s;
  if (r.alarm_at < 0) r.run_start = start;
  return r;
}

}  // namespace fabtrack::stats
