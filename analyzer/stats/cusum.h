// A one-sided CUSUM (Page 1954) for small persistent shifts of a standardized
// series, with its threshold chosen for a stated average run length (ARL)
// between false alarms. Pure.
//
// The rule. Observations x_1, x_2, ... are N(0, 1) while nothing is wrong
// and N(delta, 1) after a shift of delta standard deviations. With reference
// value k (the allowance; k = delta / 2 is optimal for a shift delta):
//     S_0 = 0,  S_t = max(0, S_{t-1} + x_t - k),  alarm when S_t >= h.
// S climbs by delta - k per observation on average after the shift and
// drifts back to 0 by k per observation before it, so a shift too small for
// any one night's test adds up over nights, while the noise does not.
//
// The threshold. Siegmund's (1985) corrected diffusion approximation gives
// the ARL of this rule for observations of mean mu (Delta = mu - k, with
// b = h + 1.166 correcting for the overshoot of a discrete walk):
//     ARL(Delta) = (exp(-2 Delta b) + 2 Delta b - 1) / (2 Delta^2),  Delta != 0
//     ARL(0)     = b^2.
// In control mu = 0, Delta = -k: ARL0 = (exp(2 k b) - 2 k b - 1) / (2 k^2),
// increasing in h, so the h for a stated ARL0 is found by bisection. After a
// shift delta, Delta = delta - k > 0: the mean detection delay ARL1. Both
// agree with the Markov-chain values (Brook & Evans 1972) within a few
// percent for k in [0.25, 1] and h in [2, 8] (e.g. k = 0.5, h = 5: ARL0 938,
// twice the 465 tabled for the two-sided scheme, and ARL1 10.4 at delta = 1);
// tests/analyzer/cusum_test.cc checks them against simulated normal noise.
#pragma once

#include <vector>

namespace fabtrack::stats {

// Siegmund's ARL of the one-sided CUSUM (reference k, threshold h) for
// observations of mean `mean` and unit variance.
double CusumArl(double k, double h, double mean);

// The threshold h with CusumArl(k, h, 0) = arl0 (arl0 > 1, k > 0).
double CusumThreshold(double k, double arl0);

struct CusumResult {
  double statistic = 0;  // S after the last observation
  int alarm_at = -1;     // index of the first observation with S >= h; -1: none
  int run_start = -1;    // where the excursion that alarmed (or is open) began
};

// Runs the rule over `x` (standardized observations, oldest first) from S = 0;
// it does not stop at an alarm (statistic is S after the last observation).
CusumResult RunCusum(const std::vector<double>& x, double k, double h);

}  // namespace fabtrack::stats
