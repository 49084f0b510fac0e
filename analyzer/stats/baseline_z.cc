#include "analyzer/stats/baseline_z.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "analyzer/stats/e_divisive.h"
#include "analyzer/stats/normal_tail.h"

namespace fabtrack::stats {

double MedianVarianceFactor(int n) { return n > 0 ? std::numbers::pi / (2.0 * n) : 0; }

double NormalEquivalentZ(double t, double dof) {
  if (!(dof > 0) || std::isinf(dof) || !std::isfinite(t) || t == 0) return t;
  const double tail = StudentTwoSidedP(t, dof) / 2;
  // Beyond what a double's tail can hold the t itself bounds the answer.
  if (!(tail > 0)) return t;
  const double z = tail >= 0.5 ? 0 : NormalUpperQuantile(tail);
  return t > 0 ? std::min(z, t) : -std::min(z, -t);
}

double PairUpperTail(double z, double rho) {
  if (!(rho > 0)) return NormalUpperTail(z) * NormalUpperTail(z);
  // Given the shared part sqrt(rho) U, the two runs are independent:
  // integrate phi(u) P(Z >= (z - sqrt(rho) u) / sqrt(1 - rho))^2 over u
  // (Simpson, u in [-10, 10]: the rest is below 1e-22).
  const double a = std::sqrt(rho), b = std::sqrt(1 - rho);
  constexpr int kSteps = 2000;
  constexpr double kLo = -10, kHi = 10, kH = (kHi - kLo) / kSteps;
  double sum = 0;
  for (int i = 0; i <= kSteps; ++i) {
    const double u = kLo + i * kH;
    const double tail = NormalUpperTail((z - a * u) / b);
    const double f = std::exp(-u * u / 2) * tail * tail;
    sum += f * (i == 0 || i == kSteps ? 1 : (i % 2 == 1 ? 4 : 2));
  }
  return sum * kH / 3 / std::sqrt(2 * std::numbers::pi);
}

double PairZ(double z1, double z2, int baseline_runs) {
  const double m = std::min(z1, z2);
  if (!(m > 0)) return m;
  const double v = MedianVarianceFactor(baseline_runs);
  const double joint = PairUpperTail(m, v / (1 + v));
  if (!(joint > 0)) return m;
  return std::min(m, NormalUpperQuantile(std::sqrt(joint)));
}

}  // namespace fabtrack::stats
