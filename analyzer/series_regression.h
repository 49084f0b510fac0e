// What busbw_regression and latency_regression share: each judges every
// benchmark series (InputIndex::series()) over one band of message sizes, so
// that one run is one test rather than thirty.
//
// Band metric. For one run, the median over the band's sizes of (value / that
// size's baseline median): sizes of different magnitudes combine, a size the
// run lacks is skipped, and one odd size does not move it. busbw uses the
// large-message band (sizes >= min_size_bytes; a run with none uses its
// largest 25% of sizes), latency the small one (0 < size <= max_size_bytes;
// else the smallest 25%), midsize_busbw_regression the medium one between
// them (above_size_bytes < size < below_size_bytes; a run with none has no
// point there: its sizes are the other bands').
//
// Every run of a judged series gets a robust verdict, oldest first (history
// runs too, so that nightly and full analyses agree):
//  (a) against the last `baseline_runs` runs before it (at least
//      `min_history`): per-size medians of that window; the window's band
//      values give a median and a scale, the scaled MAD floored at
//      `noise_floor` of the median and at the night-to-night noise of the
//      last `noise_runs` runs (median absolute successive difference: a short
//      window's MAD is too noisy a scale and makes z heavy-tailed). The
//      noise model (stats/noise_model.h) splits that noise: each run is
//      judged on the scale with the typical within-run variance of the
//      runs behind it replaced by its own (a harness run's per-iteration
//      CV^2 over its iterations; within_run_noise = 0: off), so a night
//      whose runs scattered within themselves does not alarm and a steady
//      night is judged on the fabric's night-to-night noise.
//      - one run: worse by >= min_magnitude with robust z >= z_threshold;
//      - two runs: tonight and the run before both worse by >= min_magnitude
//        with z >= confirm_z against the window before both;
//      - held: the run before was flagged and tonight is still z >= hold_z.
//      The z is the deviation over the scale read as Student's t with the
//      degrees of freedom of the noise estimate behind the scale, mapped to
//      the normal z of the same tail (stats/baseline_z.h: early in a series
//      the plain ratio is heavy-tailed); the two-run rule compares the z two
//      independent runs would each need for the joint tail of these two,
//      which share the window's median (pair_z).
//      A drop seen on one run only is reported as info until the next run
//      confirms it (confirm_runs = 2): a one-night outlier raises no alarm,
//      a lasting drop is a warning on its second night.
//  (b) change points: E-divisive (stats/e_divisive.h) over the series' band
//      values up to and including the judged run, each run normalised by the
//      median of that size's first `baseline_runs` numbers (the same reference
//      for the whole history). A change point with p <= max_pvalue and
//      magnitude >= min_magnitude that made things worse keeps the finding
//      open while the level holds (the median of the newest three runs at
//      least 40% and the mean since the newest change point a third of the
//      way from the level before it to the level after it, tonight no better
//      than before: a fix releases it within two nights; the first night
//      back inside the noise of the level before -- nearer it than the level
//      after, within 3 noise sigmas -- releases it that night: recovered, the
//      problem store resolves the open finding), provided the
//      robust check confirmed the drop near it, or the shift is
//      unseen_change_z times the night-to-night noise after an established
//      level; a shift under change_noise_z times the noise keeps nothing open.
//      "What changed" compares the run at the change point with the one
//      before: NCCL version, hosts, network, transports, GDRDMA.
// Many series at once: z_threshold and confirm_z hold for a cluster with one
// series; with m series (node counts, collectives, ...) they are raised so
// that the chance of a false alarm on a healthy night stays that of one
// series (Bonferroni over the series: series_table.h ForSeriesFamily).
// Improvements pass the same tests in the other direction and are info, never
// regressions; coming back to an earlier level (a fault fixed) is no
// improvement: tonight, the newest three runs and the level since the change
// point must also beat by min_magnitude the best level (median of
// baseline_runs runs) the series held before.
//
// Series of one number per run (RunSeries: the step mode's step time or
// exposed communication per step family and node count) go through the same
// tests with a single "size": the band is that number, the finding names no
// size and its subject is the series' own.
//
// Cost: per series O(runs x band sizes x baseline_runs) for the robust
// verdicts and O(runs^2) per distinct change point start for E-divisive over
// every judged prefix (stats::PrefixEDivisive), whether one night or the whole
// history is judged.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/config.h"
#include "analyzer/detector.h"
#include "analyzer/input_index.h"
#include "core/finding.h"

namespace fabtrack::analyzer {

struct SeriesRegressionSpec {
  enum class Band {
    kLargest,   // sizes >= the band bound (busbw)
    kSmallest,  // 0 < sizes <= the band bound (latency)
    // The band bound < sizes < band_upper_bytes (mid-size busbw); a run with
    // no size there has no point (the other bands judge its sizes).
    kMedium,
  };
  std::string kind;          // "busbw_regression"
  std::string metric_label;  // "busbw", used in messages
  std::string metric_field;  // "busbw_gbps", named in evidence
  std::string unit;          // "GB/s"
  std::optional<double> ResultPoint::*metric = nullptr;
  bool higher_is_better = true;
  Band band = Band::kLargest;
  // The setting holding the band bound: "min_size_bytes". Empty for run
  // series, which have no sizes (and then no such setting). kMedium: the
  // lower bound, sizes above it.
  std::string band_key;
  // kMedium only: the setting holding the upper bound, sizes below it.
  std::string band_upper_key;
  // Leave out runs with more ranks than CPUs on a machine (RunView::oversubscribed):
  // their small-message latency is the scheduler's.
  bool skip_oversubscribed = false;

  // Defaults of the settings that differ by metric (SeriesRegressionParams).
  double band_bytes = 0;
  double band_upper_bytes = 0;  // kMedium only
  double min_magnitude = 0.05;
  double z_threshold = 3.5;
  double confirm_z = 2;
  double noise_floor = 0.01;
  double max_pvalue = 0.01;
  // The pooled verdict's sequential rule (series_pool.h); 0: off.
  double pooled_cusum_arl = 2000;
  // An unconfirmed drop at least this large is a warning on its first night
  // (busbw and latency: issue 16); 0 keeps one-night drops info until
  // confirmed (step mode, whose exposed time swings widely by nature).
  double first_night_magnitude = 0.15;
};

// The settings a series regression detector declares, with `spec`'s defaults.
std::vector<Param> SeriesRegressionParams(const SeriesRegressionSpec& spec);

// Judges every judged run of every series; at most one finding per run.
void DetectSeriesRegressions(const InputIndex& input, const DetectorSettings& settings,
                             const SeriesRegressionSpec& spec, std::vector<Finding>* findings);

// The registration of a detector judging every series with the spec that
// `spec` returns: its name is the spec's kind, its settings the spec's.
template <const SeriesRegressionSpec& (*spec)()>
DetectorInfo SeriesRegressionDetector(std::string summary) {
  return {
      .name = spec().kind,
      .summary = std::move(summary),
      .params = SeriesRegressionParams(spec()),
      .detect =
          [](const InputIndex& input, const DetectorSettings& settings,
             std::vector<Finding>* findings) {
            DetectSeriesRegressions(input, settings, spec(), findings);
          },
  };
}

// A series of one number per run, grouped by the caller.
struct RunSeries {
  std::string subject;               // the findings' subject
  std::vector<const RunView*> runs;  // oldest first
  std::vector<double> values;        // per run; not finite or <= 0: no number
};

// Judges the judged runs of `series` with spec's kind, labels and direction
// (spec.metric and the band fields are not used); at most one finding per
// run, subject series.subject, no size.
void DetectRunSeriesRegressions(const InputIndex& input, const DetectorSettings& settings,
                                const SeriesRegressionSpec& spec, const RunSeries& series,
                                std::vector<Finding>* findings);

}  // namespace fabtrack::analyzer
