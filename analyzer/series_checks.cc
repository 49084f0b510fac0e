#include "analyzer/series_checks.h"

#include <algorithm>
#include <cmath>

#include "analyzer/stats/baseline_z.h"
#include "analyzer/stats/noise_model.h"

namespace fabtrack::analyzer::series {

namespace {

std::optional<double> RatioOf(const SeriesTable& t, const Window& w, int run) {
  thread_local std::vector<double> ratios;
  ratios.clear();
  for (size_t j = 0; j < w.sizes.size(); ++j) {
    const double v = t.At(run, w.sizes[j]);
    if (std::isfinite(v)) ratios.push_back(v / w.medians[j]);
  }
  return stats::MedianInPlace(ratios);
}

std::optional<Window> FitWindow(const SeriesTable& t, const ChangeSeries& c,
                                const std::vector<int>& band, int begin, int end,
                                const Settings& s) {
  Window w;
  w.begin = begin;
  w.end = end;
  std::vector<double> column;
  for (int k : band) {
    column.clear();
    for (int r = begin; r < end; ++r) {
      if (const double v = t.At(r, k); std::isfinite(v)) column.push_back(v);
    }
    if (static_cast<int>(column.size()) < s.min_history) continue;
    w.sizes.push_back(k);
    w.medians.push_back(*stats::MedianInPlace(column));
  }
  if (w.sizes.empty()) return std::nullopt;
  std::vector<double> history;
  for (int r = begin; r < end; ++r) {
    if (auto v = RatioOf(t, w, r)) history.push_back(*v);
  }
  auto baseline = stats::Baseline(history, s.min_history, s.noise_floor);
  if (!baseline) return std::nullopt;
  w.band = *baseline;
  w.dof = MadDof(w.band.count);
  w.typical_within = c.typical_within_before_run[end];
  w.floor = s.noise_floor;
  if (auto noise = c.noise_before_run[end]) {
    // The scale is at least the noise estimate: as uncertain as that at most.
    w.band.scale = std::max(w.band.scale, *noise * std::fabs(w.band.median));
    w.dof = c.noise_dof_before_run[end];
  }
  return w;
}

}  // namespace

double Worse(const SeriesRegressionSpec& spec, double change) {
  return spec.higher_is_better ? -change : change;
}

const char* RuleName(RobustResult::Rule rule) {
  switch (rule) {
    case RobustResult::Rule::kOneRun:
      return "one_run";
    case RobustResult::Rule::kTwoRuns:
      return "two_runs";
    case RobustResult::Rule::kHeld:
      return "held";
    case RobustResult::Rule::kNone:
      break;
  }
  return "none";
}

int Verdict(const std::optional<RobustResult>& r) {
  if (!r) return 0;
  return r->direction * (r->confirmed ? 2 : 1);
}

// The z of run `run`'s `ratio` against window w, positive when worse: on the
// window's scale with the typical within-run variance replaced by the run's
// own (noise model: a run whose iterations scattered is judged on its own
// spread, a steady one on the fabric's night-to-night noise).
double ZOf(const SeriesRegressionSpec& spec, const ChangeSeries& c, const Window& w, int run,
           double ratio) {
  const double scale = stats::RunScale(w.band.scale, w.band.median, w.typical_within,
                                       c.WithinOf(run, w.end), w.floor);
  return stats::NormalEquivalentZ(Worse(spec, ratio - w.band.median) / scale, w.dof);
}

std::optional<Window> FitWindowBefore(const SeriesTable& t, const ChangeSeries& c, int i,
                                      const Settings& s) {
  return FitWindow(t, c, t.bands[i], std::max(0, i - s.baseline_runs), i, s);
}

std::optional<RobustResult> RobustCheck(const SeriesTable& t, const ChangeSeries& c, int i,
                                        int previous_verdict, const Settings& s,
                                        const SeriesRegressionSpec& spec,
                                        const std::vector<std::optional<Window>>& windows) {
  std::optional<RobustResult> result;
  if (const std::optional<Window>& w = windows[i]) {
    if (auto ratio = RatioOf(t, *w, i)) {
      RobustResult r;
      r.window = *w;
      r.ratio = *ratio;
      r.change = *ratio / r.window.band.median - 1;
      r.z = ZOf(spec, c, r.window, i, *ratio);
      const double worse = Worse(spec, r.change);
      if (worse >= s.min_magnitude && r.z >= s.z_threshold) r.direction = 1;
      if (-worse >= s.min_magnitude && -r.z >= s.z_threshold) r.direction = -1;
      if (r.direction != 0) {
        r.rule = RobustResult::Rule::kOneRun;
        r.confirmed = s.confirm_runs <= 1;
      }
      result = std::move(r);
    }
  }
  if (result && result->direction != 0 && result->confirmed) return result;
  if (i >= 1) {
    // The window before both runs, over tonight's band: the run before's own
    // window when their bands agree (they do unless the sizes changed).
    std::optional<Window> other_band;
    if (t.bands[i] != t.bands[i - 1]) {
      other_band = FitWindow(t, c, t.bands[i], std::max(0, i - 1 - s.baseline_runs), i - 1, s);
    }
    const std::optional<Window>& w = t.bands[i] != t.bands[i - 1] ? other_band : windows[i - 1];
    std::optional<double> previous, tonight;
    if (w) {
      previous = RatioOf(t, *w, i - 1);
      tonight = RatioOf(t, *w, i);
    }
    if (previous && tonight) {
      const double m = w->band.median;
      const double change_prev = *previous / m - 1, change = *tonight / m - 1;
      const double z_prev = ZOf(spec, c, *w, i - 1, *previous);
      const double z = ZOf(spec, c, *w, i, *tonight);
      const double worse = std::min(Worse(spec, change_prev), Worse(spec, change));
      const double better = std::min(-Worse(spec, change_prev), -Worse(spec, change));
      // Both runs against the same median: their z's are correlated, and two
      // of them past confirm_z are likelier than the two tails' product.
      // pair_z <= min(z_prev, z): computed only where it can pass.
      auto pair_z = [&](double a, double b) {
        return std::min(a, b) >= s.confirm_z ? stats::PairZ(a, b, w->band.count) : std::min(a, b);
      };
      int direction = 0;
      double pair = 0;
      if (worse >= s.min_magnitude && (pair = pair_z(z_prev, z)) >= s.confirm_z) direction = 1;
      if (better >= s.min_magnitude && (pair = pair_z(-z_prev, -z)) >= s.confirm_z) {
        direction = -1;
        pair = -pair;
      }
      if (direction != 0) {
        RobustResult r;
        r.direction = direction;
        r.confirmed = true;
        r.rule = RobustResult::Rule::kTwoRuns;
        r.window = *w;
        r.ratio = *tonight;
        r.change = change;
        r.z = z;
        r.previous_change = change_prev;
        r.previous_z = z_prev;
        r.pair_z = pair;
        return r;
      }
    }
  }
  const int previous_direction = (previous_verdict > 0) - (previous_verdict < 0);
  if (result && result->direction != 0) {
    // One run only, unless it continues a confirmed drop.
    if (result->direction == previous_direction && previous_verdict * result->direction == 2) {
      result->confirmed = true;
    }
    return result;
  }
  if (result && previous_direction != 0 && previous_direction * result->z >= s.hold_z) {
    result->direction = previous_direction;
    result->confirmed = std::abs(previous_verdict) == 2;
    result->rule = RobustResult::Rule::kHeld;
  }
  return result;
}

std::optional<ChangeResult> ChangeCheck(const ChangeSeries& c, stats::PrefixEDivisive& search,
                                        int p, const Settings& s, const SeriesRegressionSpec& spec,
                                        const std::vector<int8_t>& verdicts) {
  if (p + 1 < 2 * s.min_segment) return std::nullopt;
  const std::vector<stats::ChangePoint> points = search.ChangePoints(p + 1);
  if (points.empty()) return std::nullopt;
  const std::optional<double> noise = c.noise_before_run[c.run_of_point[p] + 1];
  // Where the series is now: tonight, the newest three runs (a fix shows
  // within two nights) and the segment since the newest change point (a
  // later change point that undid this one shows there).
  const int first = std::max(0, p - 2);
  const double recent =
      *stats::Median(std::vector<double>(c.values.begin() + first, c.values.begin() + p + 1));
  const double segment = points.back().mean_after;
  for (auto it = points.rbegin(); it != points.rend(); ++it) {
    if (it->mean_before == 0) continue;
    const double worse = Worse(spec, it->forward_change);
    if (std::fabs(worse) < s.min_magnitude) continue;
    // The level holds: the newest three runs at least 40% and the segment a
    // third of the way from the level before to the level after, and tonight
    // no better than before.
    auto holds = [&](double level, double fraction) {
      const double level_worse = Worse(spec, level / it->mean_before - 1);
      return worse > 0 ? level_worse >= worse * fraction : level_worse <= worse * fraction;
    };
    if (!holds(recent, 0.4) || !holds(segment, 1.0 / 3)) continue;
    // Recovered: tonight is nearer the level before the drop than the level
    // after it, and inside the night-to-night noise of the level before
    // (kBackNoiseZ sigmas: a partial recovery from a large drop is still a
    // regression). The newest three runs and the segment still carry the
    // drop on the first night back, but a series back where it was is no
    // regression that night (a continuing warning on a recovered series read
    // "busbw fell 1.1%"). The midpoint splits a drop of d sigmas with error
    // P(Z >= d / 2) either way: 0.6% at a 5% drop on 1% noise.
    constexpr double kBackNoiseZ = 3;
    const double tonight_worse = Worse(spec, c.values[p] / it->mean_before - 1);
    const int run = c.run_of_point[p];
    const bool back = worse > 0 && tonight_worse < 0.5 * worse &&
                      (!noise || tonight_worse < kBackNoiseZ * c.RunSigma(run, run + 1, 0));
    if (back || !holds(c.values[p], 0)) continue;
    const int direction = worse > 0 ? 1 : -1;
    // Seen: the robust check flagged it within a week or so of the change
    // point (a drop must have been confirmed: one odd run is no evidence).
    bool seen = false;
    const int seen_until = std::min(p, it->index + s.baseline_runs / 2);
    for (int q = std::max(0, it->index - 2); q <= seen_until && !seen; ++q) {
      const int verdict = verdicts[c.run_of_point[q]];
      seen = direction > 0 ? verdict == 2 : verdict < 0;
    }
    // Or a shift well above the night-to-night noise from a level that had
    // been established (not the end of a short dip).
    const size_t k = static_cast<size_t>(points.rend() - it) - 1;
    const int segment_before = it->index - (k > 0 ? points[k - 1].index : 0);
    if (!seen && noise && segment_before >= s.baseline_runs &&
        std::fabs(it->forward_change) >= s.unseen_change_z * *noise) {
      seen = true;
    }
    // Either way, a shift lost in the noise keeps nothing open.
    if (noise && std::fabs(it->forward_change) < s.change_noise_z * *noise) seen = false;
    if (seen) return ChangeResult{direction, *it, c.run_of_point[it->index], segment};
  }
  return std::nullopt;
}

namespace {

// The best level the points before `end` held: the best median of
// `baseline_runs` consecutive points (of all of them when fewer).
std::optional<double> BestLevel(const ChangeSeries& c, int end, const Settings& s,
                                const SeriesRegressionSpec& spec) {
  const int width = std::min(end, s.baseline_runs);
  std::optional<double> best;
  std::vector<double> window;
  for (int begin = 0; begin + width <= end && width > 0; ++begin) {
    window.assign(c.values.begin() + begin, c.values.begin() + begin + width);
    const double level = *stats::MedianInPlace(window);
    if (!best || Worse(spec, level / *best - 1) < 0) best = level;
  }
  return best;
}

}  // namespace

bool BeatsHistory(const ChangeSeries& c, int p, const std::optional<ChangeResult>& change,
                  const Settings& s, const SeriesRegressionSpec& spec) {
  const bool by_change = change && change->direction < 0;
  const std::optional<double> best =
      BestLevel(c, by_change ? change->cp.index : std::max(0, p - 1), s, spec);
  if (!best || !(*best > 0)) return false;
  const double recent = *stats::Median(
      std::vector<double>(c.values.begin() + std::max(0, p - 2), c.values.begin() + p + 1));
  auto beats = [&](double level) { return -Worse(spec, level / *best - 1) >= s.min_magnitude; };
  if (by_change && !beats(change->segment)) return false;
  return beats(c.values[p]) && beats(recent);
}

}  // namespace fabtrack::analyzer::series
