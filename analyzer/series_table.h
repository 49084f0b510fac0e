// The numbers a series regression judges (analyzer/series_regression.h):
// the detector settings read once, one series as a table of runs by sizes,
// and its band values normalised into one point per run for the change-point
// search. Internal to the series-regression detectors.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/series_regression.h"

namespace fabtrack::analyzer::series {

struct Settings {
  int64_t band_bytes = 0;
  int64_t band_upper_bytes = 0;  // Band::kMedium only
  int baseline_runs = 14;
  int min_history = 5;
  double min_magnitude = 0.05;
  double z_threshold = 4;
  double confirm_z = 2;
  double noise_floor = 0.01;
  int noise_runs = 365;
  double change_noise_z = 1.5;
  double unseen_change_z = 2;
  double hold_z = 1;
  int confirm_runs = 2;
  double max_pvalue = 0.01;
  int min_segment = 5;
  // Judge runs with their own within-run variance (stats/noise_model.h).
  bool within_run_noise = true;
  double critical_magnitude = 0.25;
  double first_night_magnitude = 0.15;
};

Settings ReadSettings(const DetectorSettings& s, const SeriesRegressionSpec& spec);

// The settings for one of `series` series judged side by side (multiple
// testing). z_threshold and confirm_z are set for one series: under the
// noise model (z standard normal on a healthy series) a healthy run passes
// them with probability P1 = P(Z >= z_threshold) (one run) or P2 =
// P(Z >= confirm_z)^2 (two runs in a row). A cluster sweeping many node
// counts makes that many tests a night, and false alarms grew with the node
// count (a healthy 4096-node cluster, 13 series: 1% of runs flagged over
// three years). Bonferroni over the series keeps the chance of a false alarm
// per night what it is for one series: the one-run z is raised until its tail
// is P1 / series, the two-run z until its pair tail is P2 / series. One
// series: unchanged.
Settings ForSeriesFamily(Settings s, int series);

// The effective degrees of freedom of the robust check's scale, for the
// Student t that a run's deviation from the window median over it follows
// (stats/baseline_z.h): the t whose upper 0.6% .. 0.02% points (z 2.5 .. 3.5)
// match those of that ratio on simulated normal series (2 x 10^6 per count),
// the scale computed as the detectors do.
// With a night-to-night noise from `differences` successive differences, the
// scale is max(window MAD of 14, noise): 0.40 per difference + 4 (the
// simulated 9.5 at 14 differences, 16 at 29, 27 at 59, 140-175 at 364; the
// max with the window's MAD makes it a little better than the noise alone,
// and about offsets the window median's own error at a year).
double SuccessiveDifferenceDof(int differences);
// Before the series has a noise: the scaled MAD of the window's `values`
// values around their median, 0.40 per value beyond the first (simulated
// 1.7 at 5, 3.2 at 8, 5.5 at 14).
double MadDof(int values);

// One series' numbers: runs (oldest first) by sizes.
struct SeriesTable {
  std::string subject;
  // Message sizes (a benchmark series), or one column of per-run numbers (a
  // RunSeries) whose "size" means nothing.
  bool sized = true;
  std::vector<const RunView*> runs;
  std::vector<int64_t> sizes;  // ascending
  std::vector<double> values;  // runs x sizes; NaN where the run has no number
  // Per run: the indices of the sizes in its band that it has numbers for.
  std::vector<std::vector<int>> bands;
  // Per run: the within-run variance of its band figure, relative
  // (stats::WithinRunVariance of the band's median per-iteration CV over
  // the run's iterations); NaN where the run has no per-iteration figures.
  std::vector<double> within;

  double At(int run, int size) const { return values[run * sizes.size() + size]; }
};

// Whether a message size is in spec's band with s's bounds (0 < size for the
// small band is the caller's: sizes <= 0 carry no number).
bool InBand(const SeriesRegressionSpec& spec, const Settings& s, int64_t size_bytes);

// The band is s.band_bytes's; each run's within-run variance is known when
// s.within_run_noise and the run has per-iteration figures and iterations.
SeriesTable BuildTable(const InputIndex& input, std::string subject,
                       const std::vector<const RunView*>& runs, const SeriesRegressionSpec& spec,
                       const Settings& s);

// A RunSeries as a table of one column: every run with a number has it in
// its band.
SeriesTable BuildRunTable(const RunSeries& series);

// The series' band values normalised per size by the median of the size's
// first `baseline_runs` numbers: comparable across the whole history, and the
// same whichever nights are judged. Runs without band numbers have no point.
struct ChangeSeries {
  std::vector<double> reference;     // per size; NaN when the size never had a number
  std::vector<int> reference_count;  // per size: the numbers it is the median of
  std::vector<double> values;        // per point
  std::vector<int> run_of_point;
  std::vector<int> point_of_run;  // -1: no point
  // RelativeNoise() of the points before each run (one more entry than runs).
  std::vector<std::optional<double>> noise_before_run;
  // Per entry of noise_before_run: the estimate's degrees of freedom
  // (SuccessiveDifferenceDof of the differences behind it; 0 without one).
  std::vector<double> noise_dof_before_run;
  // The noise model (stats/noise_model.h): per point, its run's within-run
  // variance (NaN: unknown); per entry of noise_before_run, the median
  // within-run variance of the points behind that noise (0 when none is
  // known), the part of it that is not night to night.
  std::vector<double> within_of_point;
  std::vector<double> typical_within_before_run;

  // The within-run variance of run `run` judged with the noise before run
  // `end`: its own, or the typical one when it has none.
  double WithinOf(int run, int end) const {
    const int p = point_of_run[run];
    const double own = p >= 0 ? within_of_point[p] : std::numeric_limits<double>::quiet_NaN();
    return std::isnan(own) ? typical_within_before_run[end] : own;
  }
  // The relative sigma of run `run`'s deviation, judged with the noise
  // before run `end` (which must have one), never under `floor`.
  double RunSigma(int run, int end, double floor) const;
};

// The summarised head of a series (schema 015): runs [0, cut) are stood for
// by their stored points and verdicts, the reference by the stored one
// (size -> reference, numbers it was the median of).
struct StoredSeries {
  int cut = 0;
  std::vector<double> points;    // per run < cut; NaN: no point
  std::vector<int8_t> verdicts;  // per run < cut
  std::vector<double> within;    // per run < cut; NaN: unknown
  std::map<int64_t, std::pair<double, int>> reference;
};

// With `stored`, runs before stored->cut take their stored points; throws
// SummaryMiss when the stored reference of a size is not final yet.
ChangeSeries BuildChangeSeries(const SeriesTable& t, const Settings& s,
                               const StoredSeries* stored = nullptr);

}  // namespace fabtrack::analyzer::series
