#include "analyzer/series_regression.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>

#include "analyzer/run_facts.h"
#include "analyzer/stats/e_divisive.h"
#include "core/statistics.h"

namespace fabtrack::analyzer {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Settings {
  int64_t band_bytes = 0;
  int baseline_runs = 14;
  int min_history = 5;
  double min_magnitude = 0.05;
  double z_threshold = 4;
  double confirm_z = 2;
  double noise_floor = 0.01;
  int noise_runs = 60;
  double change_noise_z = 1.5;
  double unseen_change_z = 2;
  double hold_z = 1;
  int confirm_runs = 2;
  double max_pvalue = 0.01;
  int min_segment = 5;
  double critical_magnitude = 0.25;
  double first_night_magnitude = 0.15;
};

Settings ReadSettings(const DetectorSettings& s, const SeriesRegressionSpec& spec) {
  Settings r;
  if (!spec.band_key.empty()) r.band_bytes = static_cast<int64_t>(s[spec.band_key]);
  r.baseline_runs = std::max(1, static_cast<int>(s["baseline_runs"]));
  r.min_history = std::max(2, static_cast<int>(s["min_history"]));
  r.min_magnitude = s["min_magnitude"];
  r.z_threshold = s["z_threshold"];
  r.confirm_z = s["confirm_z"];
  r.noise_floor = s["noise_floor"];
  r.noise_runs = static_cast<int>(s["noise_runs"]);
  r.change_noise_z = s["change_noise_z"];
  r.unseen_change_z = s["unseen_change_z"];
  r.hold_z = s["hold_z"];
  r.confirm_runs = static_cast<int>(s["confirm_runs"]);
  r.max_pvalue = s["max_pvalue"];
  r.min_segment = std::max(2, static_cast<int>(s["min_segment"]));
  r.critical_magnitude = s["critical_magnitude"];
  r.first_night_magnitude = s["first_night_magnitude"];
  return r;
}

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

  double At(int run, int size) const { return values[run * sizes.size() + size]; }
};

SeriesTable BuildTable(const InputIndex& input, std::string subject,
                       const std::vector<const RunView*>& runs, const SeriesRegressionSpec& spec,
                       int64_t band_bytes) {
  SeriesTable t;
  t.subject = std::move(subject);
  t.runs = runs;
  std::set<int64_t> sizes;
  for (const RunView* run : runs) {
    for (const ResultPoint& r : input.Results(run->id)) sizes.insert(r.size_bytes);
  }
  t.sizes.assign(sizes.begin(), sizes.end());
  t.values.assign(runs.size() * t.sizes.size(), kNaN);
  t.bands.resize(runs.size());
  std::vector<int> have;
  for (size_t i = 0; i < runs.size(); ++i) {
    have.clear();
    for (const ResultPoint& r : input.Results(runs[i]->id)) {
      const auto& v = r.*spec.metric;
      if (!v || !std::isfinite(*v) || *v <= 0 || r.size_bytes <= 0) continue;
      const int k = static_cast<int>(
          std::lower_bound(t.sizes.begin(), t.sizes.end(), r.size_bytes) - t.sizes.begin());
      if (std::isnan(t.values[i * t.sizes.size() + k])) have.push_back(k);
      t.values[i * t.sizes.size() + k] = *v;
    }
    std::sort(have.begin(), have.end());
    std::vector<int>& band = t.bands[i];
    for (int k : have) {
      const bool in = spec.band == SeriesRegressionSpec::Band::kLargest ? t.sizes[k] >= band_bytes
                                                                        : t.sizes[k] <= band_bytes;
      if (in) band.push_back(k);
    }
    if (band.empty() && !have.empty()) {
      // No size in the band: the run's largest (smallest) quarter of sizes.
      const size_t quarter = std::max<size_t>(1, (have.size() + 3) / 4);
      if (spec.band == SeriesRegressionSpec::Band::kLargest) {
        band.assign(have.end() - static_cast<std::ptrdiff_t>(quarter), have.end());
      } else {
        band.assign(have.begin(), have.begin() + static_cast<std::ptrdiff_t>(quarter));
      }
    }
  }
  return t;
}

// A RunSeries as a table of one column: every run with a number has it in
// its band.
SeriesTable BuildRunTable(const RunSeries& series) {
  SeriesTable t;
  t.subject = series.subject;
  t.sized = false;
  t.runs = series.runs;
  t.sizes = {0};
  t.values.assign(series.runs.size(), kNaN);
  t.bands.resize(series.runs.size());
  for (size_t i = 0; i < series.runs.size() && i < series.values.size(); ++i) {
    const double v = series.values[i];
    if (!std::isfinite(v) || v <= 0) continue;
    t.values[i] = v;
    t.bands[i] = {0};
  }
  return t;
}

// The series' band values normalised per size by the median of the size's
// first `baseline_runs` numbers: comparable across the whole history, and the
// same whichever nights are judged. Runs without band numbers have no point.
struct ChangeSeries {
  std::vector<double> reference;  // per size; NaN when the size never had a number
  std::vector<double> values;     // per point
  std::vector<int> run_of_point;
  std::vector<int> point_of_run;  // -1: no point
  // RelativeNoise() of the points before each run (one more entry than runs).
  std::vector<std::optional<double>> noise_before_run;
};

// The night-to-night noise of the points before `end`, relative to their level:
// the scaled median absolute difference of successive points among the last
// `noise_runs`, which a level shift among them barely moves (unlike the MAD of
// a short window). nullopt with too few points.
std::optional<double> RelativeNoise(const std::vector<double>& values, int end, const Settings& s) {
  const int begin = std::max(0, end - s.noise_runs);
  if (end - begin - 1 < s.min_history) return std::nullopt;
  std::vector<double> differences;
  for (int j = begin + 1; j < end; ++j) {
    differences.push_back(std::fabs(values[j] - values[j - 1]));
  }
  std::vector<double> window(values.begin() + begin, values.begin() + end);
  auto level = stats::MedianInPlace(window);
  if (!level || !(*level > 0)) return std::nullopt;
  return 1.4826 / std::sqrt(2.0) * *stats::MedianInPlace(differences) / *level;
}

ChangeSeries BuildChangeSeries(const SeriesTable& t, const Settings& s) {
  ChangeSeries c;
  c.reference.assign(t.sizes.size(), kNaN);
  std::vector<double> first;
  for (size_t k = 0; k < t.sizes.size(); ++k) {
    first.clear();
    for (size_t r = 0; r < t.runs.size() && static_cast<int>(first.size()) < s.baseline_runs; ++r) {
      if (const double v = t.At(static_cast<int>(r), static_cast<int>(k)); std::isfinite(v)) {
        first.push_back(v);
      }
    }
    if (auto m = stats::Median(first)) c.reference[k] = *m;
  }
  c.point_of_run.assign(t.runs.size(), -1);
  std::vector<double> ratios;
  for (size_t r = 0; r < t.runs.size(); ++r) {
    ratios.clear();
    for (int k : t.bands[r]) ratios.push_back(t.At(static_cast<int>(r), k) / c.reference[k]);
    if (auto m = stats::Median(ratios)) {
      c.point_of_run[r] = static_cast<int>(c.values.size());
      c.run_of_point.push_back(static_cast<int>(r));
      c.values.push_back(*m);
    }
  }
  c.noise_before_run.resize(t.runs.size() + 1);
  int points = 0;
  for (size_t r = 0; r <= t.runs.size(); ++r) {
    c.noise_before_run[r] = RelativeNoise(c.values, points, s);
    if (r < t.runs.size() && c.point_of_run[r] >= 0) ++points;
  }
  return c;
}

// The baseline window of one judged run: per-size medians over the window's
// runs and the robust location and scale of the window's band values.
struct Window {
  int begin = 0, end = 0;  // runs [begin, end) of the series
  std::vector<int> sizes;
  std::vector<double> medians;  // per entry of sizes
  stats::RobustBaseline band;
};

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
  if (auto noise = c.noise_before_run[end]) {
    w.band.scale = std::max(w.band.scale, *noise * std::fabs(w.band.median));
  }
  return w;
}

// How much worse `change` (a relative change of the metric) is: positive when
// worse, negative when better.
double Worse(const SeriesRegressionSpec& spec, double change) {
  return spec.higher_is_better ? -change : change;
}

struct RobustResult {
  int direction = 0;  // +1 worse, -1 better, 0 neither
  // A drop seen on confirm_runs runs in a row (improvements need none).
  bool confirmed = false;
  enum class Rule { kNone, kOneRun, kTwoRuns, kHeld } rule = Rule::kNone;
  Window window;
  double ratio = 0;   // tonight's band value relative to the window's sizes
  double change = 0;  // tonight vs the window's median, relative
  double z = 0;       // robust z of tonight, positive when worse
  double previous_z = 0;
  double previous_change = 0;
};

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

// A run's robust verdict in one number: direction, doubled when confirmed.
int Verdict(const std::optional<RobustResult>& r) {
  if (!r) return 0;
  return r->direction * (r->confirmed ? 2 : 1);
}

// (a): tonight alone against the window before it; else tonight and the run
// before it against the window before both; else, when the run before was
// flagged, tonight still worse (better) by hold_z: a flagged drop stays
// flagged through the nights before a change point can be placed.
// `previous_verdict` is Verdict() of the run before.
std::optional<RobustResult> RobustCheck(const SeriesTable& t, const ChangeSeries& c, int i,
                                        int previous_verdict, const Settings& s,
                                        const SeriesRegressionSpec& spec) {
  const std::vector<int>& band = t.bands[i];
  std::optional<RobustResult> result;
  if (auto w = FitWindow(t, c, band, std::max(0, i - s.baseline_runs), i, s)) {
    if (auto ratio = RatioOf(t, *w, i)) {
      RobustResult r;
      r.window = std::move(*w);
      r.ratio = *ratio;
      r.change = *ratio / r.window.band.median - 1;
      r.z = Worse(spec, *ratio - r.window.band.median) / r.window.band.scale;
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
    auto w = FitWindow(t, c, band, std::max(0, i - 1 - s.baseline_runs), i - 1, s);
    std::optional<double> previous, tonight;
    if (w) {
      previous = RatioOf(t, *w, i - 1);
      tonight = RatioOf(t, *w, i);
    }
    if (previous && tonight) {
      const double m = w->band.median, scale = w->band.scale;
      const double change_prev = *previous / m - 1, change = *tonight / m - 1;
      const double z_prev = Worse(spec, *previous - m) / scale;
      const double z = Worse(spec, *tonight - m) / scale;
      const double worse = std::min(Worse(spec, change_prev), Worse(spec, change));
      const double better = std::min(-Worse(spec, change_prev), -Worse(spec, change));
      int direction = 0;
      if (worse >= s.min_magnitude && std::min(z_prev, z) >= s.confirm_z) direction = 1;
      if (better >= s.min_magnitude && std::max(z_prev, z) <= -s.confirm_z) direction = -1;
      if (direction != 0) {
        RobustResult r;
        r.direction = direction;
        r.confirmed = true;
        r.rule = RobustResult::Rule::kTwoRuns;
        r.window = std::move(*w);
        r.ratio = *tonight;
        r.change = change;
        r.z = z;
        r.previous_change = change_prev;
        r.previous_z = z_prev;
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
    if (!holds(recent, 0.4) || !holds(segment, 1.0 / 3) || !holds(c.values[p], 0)) continue;
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

// Tonight, the newest three runs and the level since the change point (when
// one holds the improvement) beat the best level held before it (before
// the change point, or before the runs the robust check compared) by
// min_magnitude: an improvement, not a return to an earlier level after a
// fault.
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

std::string Join(const std::vector<std::string>& items, const char* separator) {
  std::string out;
  for (const std::string& item : items) {
    if (!out.empty()) out += separator;
    out += item;
  }
  return out;
}

std::string HostList(const std::vector<std::string>& hosts) {
  constexpr size_t kShown = 4;
  std::vector<std::string> shown(hosts.begin(), hosts.begin() + std::min(hosts.size(), kShown));
  std::string out = Join(shown, ",");
  if (hosts.size() > kShown) out += " and " + std::to_string(hosts.size() - kShown) + " more";
  return out;
}

nlohmann::json OptionalJson(const std::optional<std::string>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}

// What differs between the run before a change point and the run at it.
nlohmann::json WhatChanged(const RunView& before, const RunView& after, std::string* summary) {
  nlohmann::json out = nlohmann::json::object();
  std::vector<std::string> parts;
  if (before.nccl_version != after.nccl_version) {
    out["nccl_version"] = {{"before", OptionalJson(before.nccl_version)},
                           {"after", OptionalJson(after.nccl_version)}};
    parts.push_back("NCCL " + before.nccl_version.value_or("?") + " → " +
                    after.nccl_version.value_or("?"));
  }
  const std::set<std::string> hosts_before(before.hosts.begin(), before.hosts.end());
  const std::set<std::string> hosts_after(after.hosts.begin(), after.hosts.end());
  std::vector<std::string> added, removed;
  std::set_difference(hosts_after.begin(), hosts_after.end(), hosts_before.begin(),
                      hosts_before.end(), std::back_inserter(added));
  std::set_difference(hosts_before.begin(), hosts_before.end(), hosts_after.begin(),
                      hosts_after.end(), std::back_inserter(removed));
  if (!added.empty() || !removed.empty()) {
    out["hosts_added"] = added;
    out["hosts_removed"] = removed;
    std::string hosts = "hosts";
    if (!added.empty()) hosts += " +" + HostList(added);
    if (!removed.empty()) hosts += " -" + HostList(removed);
    parts.push_back(hosts);
  }
  if (before.network != after.network) {
    out["network"] = {{"before", OptionalJson(before.network)},
                      {"after", OptionalJson(after.network)}};
    parts.push_back("network " + before.network.value_or("?") + " → " +
                    after.network.value_or("?"));
  }
  const std::set<std::string> transports_before(before.transports.begin(), before.transports.end());
  const std::set<std::string> transports_after(after.transports.begin(), after.transports.end());
  if (transports_before != transports_after) {
    out["transports"] = {{"before", before.transports}, {"after", after.transports}};
    parts.push_back(
        "transports " +
        Join(std::vector<std::string>(transports_before.begin(), transports_before.end()), ",") +
        " → " +
        Join(std::vector<std::string>(transports_after.begin(), transports_after.end()), ","));
  }
  if (before.gdrdma != after.gdrdma) {
    auto text = [](const std::optional<bool>& g) {
      return g ? std::string(*g ? "on" : "off") : std::string("?");
    };
    out["gdrdma"] = {{"before", before.gdrdma ? nlohmann::json(*before.gdrdma) : nlohmann::json()},
                     {"after", after.gdrdma ? nlohmann::json(*after.gdrdma) : nlohmann::json()}};
    parts.push_back("GDRDMA " + text(before.gdrdma) + " → " + text(after.gdrdma));
  }
  *summary = parts.empty() ? "no NCCL, host, network or GDRDMA change recorded" : Join(parts, ", ");
  return out;
}

std::string Percent(double fraction) {
  char buf[32];
  const double pct = std::fabs(fraction) * 100;
  std::snprintf(buf, sizeof buf, pct < 10 ? "%.1f%%" : "%.0f%%", pct);
  return buf;
}

std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, std::fabs(v) < 10 ? "%.2f" : "%.1f", v);
  return buf;
}

std::string BandLabel(const SeriesRegressionSpec& spec, const SeriesTable& t,
                      const std::vector<int>& band, int64_t band_bytes) {
  if (!t.sized) return spec.metric_label;
  const bool largest = spec.band == SeriesRegressionSpec::Band::kLargest;
  const bool in_band =
      largest ? t.sizes[band.front()] >= band_bytes : t.sizes[band.back()] <= band_bytes;
  if (in_band) return spec.metric_label + (largest ? " at ≥" : " at ≤") + FormatBytes(band_bytes);
  return spec.metric_label + " at its " + (largest ? "largest" : "smallest") + " sizes (" +
         FormatBytes(t.sizes[band.front()]) + "–" + FormatBytes(t.sizes[band.back()]) + ")";
}

Finding MakeFinding(const SeriesTable& t, const ChangeSeries& c, int i, int direction,
                    const std::optional<RobustResult>& robust,
                    const std::optional<ChangeResult>& change, const Settings& s,
                    const SeriesRegressionSpec& spec) {
  const RunView& run = *t.runs[i];
  const std::vector<int>& band = t.bands[i];
  const bool robust_fired = robust && robust->direction == direction;
  // Tonight's band value in the metric's unit, and the per-size evidence
  // against the robust window (or the change series' reference).
  std::vector<double> tonight_values;
  for (int k : band) tonight_values.push_back(t.At(i, k));
  const double value = *stats::Median(tonight_values);
  std::vector<double> reference_levels;
  for (int k : band) reference_levels.push_back(c.reference[k]);
  const double reference_level = *stats::Median(reference_levels);

  double baseline = 0, shown_change = 0;
  if (robust_fired) {
    baseline = *stats::Median(robust->window.medians);
    shown_change = robust->change;
  } else {
    baseline = change->cp.mean_before * reference_level;
    shown_change = c.values[c.point_of_run[i]] / change->cp.mean_before - 1;
  }

  nlohmann::json sizes = nlohmann::json::array();
  std::optional<int64_t> extreme_size;
  double extreme = -std::numeric_limits<double>::infinity();
  for (int k : band) {
    double size_baseline = c.reference[k];
    if (robust) {
      auto at = std::find(robust->window.sizes.begin(), robust->window.sizes.end(), k);
      if (at != robust->window.sizes.end()) {
        size_baseline = robust->window.medians[at - robust->window.sizes.begin()];
      }
    }
    const double ratio = t.At(i, k) / size_baseline;
    sizes.push_back({{"size_bytes", t.sizes[k]},
                     {"value", t.At(i, k)},
                     {"baseline", size_baseline},
                     {"ratio", ratio}});
    const double how_far = direction * Worse(spec, ratio - 1);
    if (t.sized && how_far > extreme) {
      extreme = how_far;
      extreme_size = t.sizes[k];
    }
  }

  const double worse = Worse(spec, shown_change);
  const bool unconfirmed = direction > 0 && !change && !robust->confirmed;
  // A large drop beyond the noise is worth a look the morning it appears,
  // not two nights later: a warning on its first night, which the next runs
  // confirm (it stays, and may turn critical) or withdraw (it resolves).
  const bool first_night = unconfirmed && robust_fired && s.first_night_magnitude > 0 &&
                           worse >= s.first_night_magnitude;
  Severity severity = Severity::kInfo;
  if (first_night) {
    severity = Severity::kWarning;
  } else if (direction > 0 && !unconfirmed) {
    severity = worse >= s.critical_magnitude ? Severity::kCritical : Severity::kWarning;
  }
  Finding f = FindingForRun(run, t.subject, severity);
  f.kind = spec.kind;
  f.size_bytes = extreme_size;
  f.value = value;
  f.baseline = baseline;
  f.unit = spec.unit;

  std::string verb = "improved";
  if (direction > 0) verb = spec.higher_is_better ? "fell" : "rose";
  f.message = BandLabel(spec, t, band, s.band_bytes) + " " + verb + " " + Percent(shown_change) +
              " (" + Number(baseline) + " → " + Number(value) + " " + spec.unit + ") on " +
              f.subject;
  nlohmann::json evidence = {
      {"metric", spec.metric_field},
      {"direction", direction > 0 ? "regression" : "improvement"},
      {"confirmed", direction > 0 && !unconfirmed},
      {"first_night", first_night},
      {"change", shown_change},
  };
  if (t.sized) {
    evidence["band"] = {
        {"min_bytes", t.sizes[band.front()]},
        {"max_bytes", t.sizes[band.back()]},
        {"rule", spec.band == SeriesRegressionSpec::Band::kLargest
                     ? "sizes >= " + FormatBytes(s.band_bytes) + ", else the largest 25%"
                     : "sizes <= " + FormatBytes(s.band_bytes) + ", else the smallest 25%"}};
    evidence["sizes"] = std::move(sizes);
  }
  if (robust) {
    const Window& w = robust->window;
    nlohmann::json r = {{"baseline_runs", w.end - w.begin},
                        {"baseline_from_run_id", t.runs[w.begin]->id},
                        {"median_ratio", w.band.median},
                        {"scale", w.band.scale},
                        {"tonight_ratio", robust->ratio},
                        {"change", robust->change},
                        {"z", robust->z},
                        {"flagged", robust_fired},
                        {"rule", RuleName(robust->rule)}};
    if (robust->rule == RobustResult::Rule::kTwoRuns) {
      r["previous_run_id"] = t.runs[i - 1]->id;
      r["previous_change"] = robust->previous_change;
      r["previous_z"] = robust->previous_z;
    }
    evidence["robust"] = r;
  }
  if (robust_fired) {
    char z[64];
    if (robust->rule == RobustResult::Rule::kTwoRuns) {
      std::snprintf(z, sizeof z, ", two runs in a row (z %.1f, %.1f)", robust->previous_z,
                    robust->z);
    } else {
      std::snprintf(z, sizeof z, " (z %.1f)", robust->z);
    }
    f.message += z;
    f.message += " against the previous " +
                 std::to_string(robust->window.end - robust->window.begin) + " runs";
    if (first_night) {
      f.message += "; first night of a drop of " + Percent(s.first_night_magnitude) +
                   " or more: confirmed or withdrawn by the next runs";
    } else if (unconfirmed) {
      f.message += "; one run so far: a warning if the next run confirms it";
    }
  }
  if (change) {
    const stats::ChangePoint& cp = change->cp;
    const RunView& at = *t.runs[change->run];
    const int point = c.point_of_run[change->run];
    const RunView& before = *t.runs[c.run_of_point[point - 1]];
    std::string what;
    evidence["change_point"] = {{"run_id", at.id},
                                {"started_at", at.started_at_iso},
                                {"mean_before", cp.mean_before * reference_level},
                                {"mean_after", cp.mean_after * reference_level},
                                {"forward_change", cp.forward_change},
                                {"p_value", cp.p_value},
                                {"previous_run_id", before.id}};
    evidence["what_changed"] = WhatChanged(before, at, &what);
    f.message += "; change point " + at.started_at_iso.substr(0, 10) + " (" + what + ")";
  }
  f.evidence = std::move(evidence);
  return f;
}

void JudgeSeries(const InputIndex& input, const SeriesTable& t, const Settings& s,
                 const SeriesRegressionSpec& spec, std::vector<Finding>* findings) {
  const std::vector<const RunView*>& runs = t.runs;
  const ChangeSeries c = BuildChangeSeries(t, s);
  stats::EDivisiveOptions options;
  options.max_pvalue = s.max_pvalue;
  options.min_magnitude = s.min_magnitude;
  options.min_segment = s.min_segment;
  stats::PrefixEDivisive search(c.values, options);
  // The robust check's verdict on every run (history too: a change point
  // needs to know whether it was seen, and a verdict holds from one run to
  // the next), oldest first, the same whichever runs are judged.
  std::vector<int8_t> verdicts(runs.size(), 0);
  std::vector<std::optional<RobustResult>> judged(runs.size());
  for (int i = 0; i < static_cast<int>(runs.size()); ++i) {
    std::optional<RobustResult> r = RobustCheck(t, c, i, i > 0 ? verdicts[i - 1] : 0, s, spec);
    verdicts[i] = static_cast<int8_t>(Verdict(r));
    if (input.Judged(*runs[i])) judged[i] = std::move(r);
  }
  for (int i = 0; i < static_cast<int>(runs.size()); ++i) {
    if (!input.Judged(*runs[i])) continue;
    const int p = c.point_of_run[i];
    if (p < 0) continue;  // no number in the band tonight
    const std::optional<RobustResult>& robust = judged[i];
    std::optional<ChangeResult> change = ChangeCheck(c, search, p, s, spec, verdicts);
    // A confirmed drop (or one a change point holds) is a regression; a drop
    // on one run only is reported, as info, until the next run confirms it.
    int direction = 0;
    if ((robust && robust->direction > 0) || (change && change->direction > 0)) {
      direction = 1;
    } else if (((robust && robust->direction < 0) || (change && change->direction < 0)) &&
               BeatsHistory(c, p, change, s, spec)) {
      direction = -1;
    }
    if (direction == 0) continue;
    if (change && change->direction != direction) change.reset();
    findings->push_back(MakeFinding(t, c, i, direction, robust, change, s, spec));
  }
}

}  // namespace

std::vector<Param> SeriesRegressionParams(const SeriesRegressionSpec& spec) {
  std::vector<Param> params = {
      {"baseline_runs", 14, "runs of the series before the judged one that form its baseline"},
      {"min_history", 5, "fewest baseline runs (per size and in all) for the robust check"},
      {"min_magnitude", spec.min_magnitude,
       "smallest relative change flagged on one run, and of a change point"},
      {"z_threshold", spec.z_threshold, "robust z (median/MAD) a single run must reach"},
      {"confirm_z", spec.confirm_z, "robust z each of two runs in a row must reach"},
      {"noise_floor", spec.noise_floor,
       "the baseline's scale is at least this fraction of its median"},
      {"noise_runs", 60,
       "the baseline's scale is at least the night-to-night noise of this many runs before "
       "(0: off)"},
      {"confirm_runs", 2,
       "1: a drop on one run is a warning; 2: it is info until the next run confirms it "
       "(one-night outliers raise no alarm)"},
      {"hold_z", 1,
       "a flagged series stays flagged while each next run is still this robust z worse"},
      {"change_noise_z", 1.5,
       "change points: a shift below this many times the night-to-night noise keeps nothing "
       "open"},
      {"unseen_change_z", 2,
       "change points the robust check did not confirm count from this many times the noise "
       "(after a level held for baseline_runs)"},
      {"max_pvalue", 0.01, "change points: largest t-test p-value accepted"},
      {"min_segment", 5, "change points: fewest runs on either side"},
      {"critical_magnitude", 0.25, "a regression at least this large is critical"},
      {"first_night_magnitude", spec.first_night_magnitude,
       "an unconfirmed drop at least this large (and past z_threshold) is a warning on its "
       "first night (0: off)"},
  };
  if (!spec.band_key.empty()) {
    const bool largest = spec.band == SeriesRegressionSpec::Band::kLargest;
    params.insert(
        params.begin(),
        {spec.band_key, spec.band_bytes,
         largest ? "band: sizes >= this many bytes (a run with none: its largest 25% of sizes)"
                 : "band: sizes <= this many bytes, > 0 (a run with none: its smallest 25%)"});
  }
  return params;
}

void DetectSeriesRegressions(const InputIndex& input, const DetectorSettings& settings,
                             const SeriesRegressionSpec& spec, std::vector<Finding>* findings) {
  const Settings s = ReadSettings(settings, spec);
  for (const auto& [name, runs] : input.series()) {
    if (runs.empty() || !input.Judged(*runs.back())) continue;  // judged runs are the newest
    if (!spec.skip_oversubscribed) {
      JudgeSeries(input, BuildTable(input, name, runs, spec, s.band_bytes), s, spec, findings);
      continue;
    }
    std::vector<const RunView*> kept;
    for (const RunView* run : runs) {
      if (!run->oversubscribed) kept.push_back(run);
    }
    if (!kept.empty() && input.Judged(*kept.back())) {
      JudgeSeries(input, BuildTable(input, name, kept, spec, s.band_bytes), s, spec, findings);
    }
  }
}

void DetectRunSeriesRegressions(const InputIndex& input, const DetectorSettings& settings,
                                const SeriesRegressionSpec& spec, const RunSeries& series,
                                std::vector<Finding>* findings) {
  if (series.runs.empty() || !input.Judged(*series.runs.back())) return;
  JudgeSeries(input, BuildRunTable(series), ReadSettings(settings, spec), spec, findings);
}

}  // namespace fabtrack::analyzer
