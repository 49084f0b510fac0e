// The noise of a benchmark series split into what moves from night to night
// and what one run's own measurement adds (issue 32 item 2). Pure.
//
// The model. A run r on night n reads, relative to the series' level,
//     x_r = mu + b_n + e_r,
//     b_n ~ (0, sigma_b^2)  the fabric's level that night (night-to-night),
//     e_r ~ (0, w_r)        the error of the run's own figure (within-run),
// independent. A regression is a shift of mu; neither b_n nor e_r is one,
// but they call for different answers: sigma_b is a property of the fabric,
// estimated from history, while w_r is known for each run from its own
// per-iteration spread. A run whose iterations scattered widely (a busy
// neighbour, a noisy night) has a large w_r, and a deviation within it is
// no evidence of a shift; a run as steady as usual is judged against the
// fabric's night-to-night noise.
//
// Within-run variance from the per-iteration spread (the harness records
// each size's latency CV = stddev / mean over `iters` timed iterations).
// The run's figure is a mean over the iterations: with independent
// iterations its relative variance is CV^2 / iters. A band's figure is the
// median over its sizes; the sizes of one run share the run's conditions
// (the same neighbour slows all of them), so their errors are taken as
// fully correlated and the band's within-run variance is that of the band's
// median CV, without the 1/sizes a median of independent errors would have
// (conservative: it never makes a noisy run look steadier than it was).
//
// Night-to-night variance. The series' noise the detectors estimate from
// history (the median absolute difference of successive runs, scaled to a
// sigma) measures the variance of x_r - x_{r-1} over two, which is
// sigma_b^2 + (w_r + w_{r-1}) / 2: the within-run part of the runs behind
// it is inside. With the typical within-run variance w~ of those runs (their
// median), sigma_b^2 = max(0, total^2 - w~). The variance of run r's
// deviation is then sigma_b^2 + w_r: the total for a run as steady as the
// history's, more for a run noisier than usual, less for a steadier one.
//
// Replicates. Where a series has several runs in one night (nccl-tests
// cycles, `-N`), the runs of a night differ by e_r alone and the nights'
// means by b_n too: the one-way random-effects analysis of variance
// separates them without any per-iteration figure (method of moments for
// unbalanced groups, Searle 1971: E[MSW] = sigma_w^2, E[MSB] = sigma_w^2 +
// n0 sigma_b^2 with n0 = (N - sum n_i^2 / N) / (g - 1)).
//
// tests/analyzer/noise_model_test.cc generates series with known
// components and checks that both estimators recover them.
#pragma once

#include <optional>
#include <vector>

namespace fabtrack::stats {

// The relative variance of a run's mean over `iterations` timed iterations
// whose coefficient of variation is `cv`: cv^2 / iterations. 0 when either
// is unknown or not positive (no within-run figure: the run counts as
// steady as the history).
double WithinRunVariance(double cv, int iterations);

// The night-to-night variance left of `total_sigma` (the history's noise,
// within-run part included) once the typical within-run variance of the
// runs behind it is taken out: max(0, total_sigma^2 - typical_within).
double BetweenNightVariance(double total_sigma, double typical_within);

// The sigma of one run's deviation from its series' level: the history's
// total noise with the typical within-run variance replaced by the run's
// own, sqrt(BetweenNightVariance + run_within), never under `floor`. A run
// whose within-run variance is the typical one gets max(total_sigma, floor).
double RunSigma(double total_sigma, double typical_within, double run_within, double floor);

// The scale of the robust check's window (in the metric's units, `scale`
// >= total_sigma x `level`), moved from the typical run to run `run_within`
// the same way: sqrt(scale^2 + (run_within - typical_within) x level^2),
// never under floor x level nor under the run's own within-run sigma.
double RunScale(double scale, double level, double typical_within, double run_within, double floor);

// The one-way random-effects components of replicate groups (one group per
// night, its runs' figures): within = MSW, between = max(0, (MSB - MSW) /
// n0). nullopt with fewer than two groups or no group of two or more.
struct VarianceComponents {
  double between = 0;  // sigma_b^2
  double within = 0;   // sigma_w^2
  int groups = 0;
  int observations = 0;
  // Degrees of freedom of `within` (N - g) and of the between mean square
  // (g - 1).
  int within_dof = 0;
  int between_dof = 0;
};
std::optional<VarianceComponents> RandomEffectsComponents(
    const std::vector<std::vector<double>>& groups);

}  // namespace fabtrack::stats
