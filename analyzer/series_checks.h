// The two tests of a series regression (analyzer/series_regression.h): the
// robust check of a run against its baseline window (a) and the change-point
// check (b), and whether an improvement beats the history. Internal to the
// series-regression detectors.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "analyzer/series_table.h"
#include "analyzer/stats/e_divisive.h"
#include "core/statistics.h"

namespace fabtrack::analyzer::series {

// The baseline window of one judged run: per-size medians over the window's
// runs and the robust location and scale of the window's band values.
struct Window {
  int begin = 0, end = 0;  // runs [begin, end) of the series
  std::vector<int> sizes;
  std::vector<double> medians;  // per entry of sizes
  stats::RobustBaseline band;
  // The degrees of freedom of band.scale as an estimate of one run's noise:
  // the night-to-night noise's when the series has one, else the window
  // MAD's. Few (early in a series) make the z of a deviation smaller
  // (stats/baseline_z.h).
  double dof = 0;
  // The typical within-run variance of the runs behind the scale (noise
  // model, stats/noise_model.h): a run is judged on band.scale with this
  // part replaced by its own within-run variance (stats::RunScale).
  double typical_within = 0;
  double floor = 0;  // noise_floor: no run's scale is under floor x median
};

// How much worse `change` (a relative change of the metric) is: positive when
// worse, negative when better.
double Worse(const SeriesRegressionSpec& spec, double change);

struct RobustResult {
  int direction = 0;  // +1 worse, -1 better, 0 neither
  // A drop seen on confirm_runs runs in a row (improvements need none).
  bool confirmed = false;
  enum class Rule { kNone, kOneRun, kTwoRuns, kHeld } rule = Rule::kNone;
  Window window;
  double ratio = 0;   // tonight's band value relative to the window's sizes
  double change = 0;  // tonight vs the window's median, relative
  // Robust z of tonight, positive when worse: the deviation from the window's
  // median over its scale, mapped from a Student t with the scale's degrees
  // of freedom (Window::dof) to the normal z of the same tail
  // (stats::NormalEquivalentZ), so that it has normal tails on a healthy
  // series however little history the scale rests on.
  double z = 0;
  double previous_z = 0;
  double previous_change = 0;
  // Two runs: the z each of two independent runs would need for the joint
  // tail of these two (stats::PairZ: they share the window's median).
  double pair_z = 0;
};

const char* RuleName(RobustResult::Rule rule);

// A run's robust verdict in one number: direction, doubled when confirmed.
int Verdict(const std::optional<RobustResult>& r);

// (a): tonight alone against the window before it; else tonight and the run
// before it against the window before both; else, when the run before was
// flagged, tonight still worse (better) by hold_z: a flagged drop stays
// flagged through the nights before a change point can be placed.
// `previous_verdict` is Verdict() of the run before.
// The baseline window of run i against the `baseline_runs` runs before it
// (nullopt without enough history). RobustCheck compares tonight with the
// window of tonight and the two-run rule with the window of the run before:
// computed once per run, every window serves two checks.
std::optional<Window> FitWindowBefore(const SeriesTable& t, const ChangeSeries& c, int i,
                                      const Settings& s);

// `windows[j]` is FitWindowBefore(j) for j <= i.
std::optional<RobustResult> RobustCheck(const SeriesTable& t, const ChangeSeries& c, int i,
                                        int previous_verdict, const Settings& s,
                                        const SeriesRegressionSpec& spec,
                                        const std::vector<std::optional<Window>>& windows);

struct ChangeResult {
  int direction = 0;  // +1 worse, -1 better
  stats::ChangePoint cp;
  int run = 0;         // the series run at the change point
  double segment = 0;  // the mean since the newest change point
};

// (b): the newest change point up to point p (E-divisive over the points so
// far, as on the night of p) whose level still holds and that the robust
// check confirmed near it, or that stands unseen_change_z times above the
// night-to-night noise after an established level. The change point keeps
// open what the robust check opened; a small shift it never noticed (noise
// that happens to line up, the end of a short dip) raises nothing.
std::optional<ChangeResult> ChangeCheck(const ChangeSeries& c, stats::PrefixEDivisive& search,
                                        int p, const Settings& s, const SeriesRegressionSpec& spec,
                                        const std::vector<int8_t>& verdicts);

// Tonight, the newest three runs and the level since the change point (when
// one holds the improvement) beat the best level held before it (before
// the change point, or before the runs the robust check compared) by
// min_magnitude: an improvement, not a return to an earlier level after a
// fault.
bool BeatsHistory(const ChangeSeries& c, int p, const std::optional<ChangeResult>& change,
                  const Settings& s, const SeriesRegressionSpec& spec);

}  // namespace fabtrack::analyzer::series
