#include "analyzer/series_regression.h"

#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/series_checks.h"
#include "analyzer/series_finding.h"
#include "analyzer/series_pool.h"
#include "analyzer/series_table.h"

// The parts: series_table (the numbers), series_checks (the robust and the
// change-point checks), series_finding (what a finding says).

namespace fabtrack::analyzer {
namespace series {
namespace {

// What the stored figures of a series depend on: every setting of the
// checks (after the correction for the number of series) and the spec.
std::string SettingsText(const Settings& s, const SeriesRegressionSpec& spec) {
  char text[1024];
  std::snprintf(text, sizeof text,
                "%s band=%d skip_oversubscribed=%d higher=%d band_bytes=%lld baseline=%d "
                "min_history=%d min_magnitude=%.17g z=%.17g confirm_z=%.17g floor=%.17g "
                "noise_runs=%d change_noise_z=%.17g unseen_change_z=%.17g hold_z=%.17g "
                "confirm_runs=%d max_pvalue=%.17g min_segment=%d within_run_noise=%d",
                spec.kind.c_str(), static_cast<int>(spec.band), spec.skip_oversubscribed,
                spec.higher_is_better, static_cast<long long>(s.band_bytes), s.baseline_runs,
                s.min_history, s.min_magnitude, s.z_threshold, s.confirm_z, s.noise_floor,
                s.noise_runs, s.change_noise_z, s.unseen_change_z, s.hold_z, s.confirm_runs,
                s.max_pvalue, s.min_segment, s.within_run_noise);
  // The medium band's upper bound, appended only there: the other bands'
  // stored figures keep their keys.
  if (spec.band == SeriesRegressionSpec::Band::kMedium) {
    return text + (" band_upper_bytes=" + std::to_string(s.band_upper_bytes));
  }
  return text;
}

// The summarised head of a benchmark series: the runs the reader left to
// their stored figures (a prefix: they are the oldest), with their points and
// verdicts, and the reference kept on the series' first run. nullopt when
// nothing is summarised; SummaryMiss when a figure is missing or the runs the
// first recomputed verdicts compare against were not read in full.
std::optional<StoredSeries> StoredHead(const InputIndex& input, const SeriesTable& t,
                                       const Settings& s, const std::string& key,
                                       const std::string& reference_key) {
  const std::vector<const RunView*>& runs = t.runs;
  int cut = 0;
  while (cut < static_cast<int>(runs.size()) && runs[cut]->summarized) ++cut;
  if (cut == 0) return std::nullopt;
  StoredSeries stored;
  stored.cut = cut;
  for (int i = 0; i < cut; ++i) {
    const std::vector<double>* v = input.StoredSummary(*runs[i], key);
    if (!v || v->size() != 3) throw SummaryMiss(t.subject + ": a run has no stored verdict");
    stored.points.push_back((*v)[0]);
    stored.verdicts.push_back(static_cast<int8_t>((*v)[1]));
    stored.within.push_back((*v)[2]);
  }
  const std::vector<double>* ref = input.StoredSummary(*runs[0], reference_key);
  if (!ref || ref->size() % 3 != 0) throw SummaryMiss(t.subject + ": no stored reference");
  for (size_t j = 0; j < ref->size(); j += 3) {
    stored.reference[static_cast<int64_t>((*ref)[j])] = {(*ref)[j + 1],
                                                         static_cast<int>((*ref)[j + 2])};
  }
  // The first recomputed verdict's two-run rule fits the window before the
  // run before it: baseline_runs + 1 runs before the cut in full.
  for (int i = std::max(0, cut - 1 - s.baseline_runs); i < static_cast<int>(runs.size()); ++i) {
    if (!input.HasResults(*runs[i])) throw SummaryMiss(t.subject + ": window not read in full");
  }
  return stored;
}

void JudgeSeries(const InputIndex& input, const SeriesTable& t, const Settings& s,
                 const SeriesRegressionSpec& spec, std::vector<Finding>* findings,
                 std::vector<PoolPoint>* pool = nullptr) {
  const std::vector<const RunView*>& runs = t.runs;
  // Benchmark series keep their points and verdicts per run (schema 015);
  // run series (step mode) read every number anyway.
  const std::string settings = SettingsText(s, spec);
  const std::string key = SummaryKey(spec.kind, settings);
  const std::string reference_key = SummaryKey(spec.kind + ".reference", settings);
  const std::optional<StoredSeries> stored =
      t.sized ? StoredHead(input, t, s, key, reference_key) : std::nullopt;
  const int cut = stored ? stored->cut : 0;
  const ChangeSeries c = BuildChangeSeries(t, s, stored ? &*stored : nullptr);
  if (pool) AddPoolPoints(input, t, c, s, spec, pool);
  stats::EDivisiveOptions options;
  options.max_pvalue = s.max_pvalue;
  options.min_magnitude = s.min_magnitude;
  options.min_segment = s.min_segment;
  stats::PrefixEDivisive search(c.values, options);
  // The robust check's verdict on every run (history too: a change point
  // needs to know whether it was seen, and a verdict holds from one run to
  // the next), oldest first, the same whichever runs are judged. Stored for
  // the summarised head, whose windows are not fitted again.
  std::vector<int8_t> verdicts(runs.size(), 0);
  std::vector<std::optional<RobustResult>> judged(runs.size());
  std::vector<std::optional<Window>> windows(runs.size());
  for (int i = 0; i < cut; ++i) verdicts[i] = stored->verdicts[i];
  if (cut > 0) windows[cut - 1] = FitWindowBefore(t, c, cut - 1, s);
  for (int i = cut; i < static_cast<int>(runs.size()); ++i) {
    windows[i] = FitWindowBefore(t, c, i, s);
    std::optional<RobustResult> r =
        RobustCheck(t, c, i, i > 0 ? verdicts[i - 1] : 0, s, spec, windows);
    verdicts[i] = static_cast<int8_t>(Verdict(r));
    if (input.Judged(*runs[i])) judged[i] = std::move(r);
  }
  if (t.sized && input.keeps_summaries()) {
    for (int i = cut; i < static_cast<int>(runs.size()); ++i) {
      const int p = c.point_of_run[i];
      constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
      input.Produce(*runs[i], key,
                    {p >= 0 ? c.values[p] : kNaN, static_cast<double>(verdicts[i]),
                     p >= 0 ? c.within_of_point[p] : kNaN});
    }
    // Every size the series ever had: the stored ones (sizes only the
    // summarised runs had included) and those of the runs read in full.
    std::map<int64_t, std::pair<double, int>> by_size;
    if (stored) by_size = stored->reference;
    for (size_t k = 0; k < t.sizes.size(); ++k) {
      by_size[t.sizes[k]] = {c.reference[k], c.reference_count[k]};
    }
    std::vector<double> reference;
    for (const auto& [size, ref] : by_size) {
      reference.insert(reference.end(),
                       {static_cast<double>(size), ref.first, static_cast<double>(ref.second)});
    }
    if (!runs.empty()) input.Produce(*runs[0], reference_key, std::move(reference));
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
}  // namespace series

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
      {"noise_runs", 365,
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
      {"within_run_noise", 1,
       "noise model: judge each run with its own within-run variance (per-iteration CV^2 / "
       "iterations) in place of the history's typical one (0: off)"},
      {"max_pvalue", spec.max_pvalue, "change points: largest t-test p-value accepted"},
      {"min_segment", 5, "change points: fewest runs on either side"},
      {"critical_magnitude", 0.25, "a regression at least this large is critical"},
      {"first_night_magnitude", spec.first_night_magnitude,
       "an unconfirmed drop at least this large (and past z_threshold) is a warning on its "
       "first night (0: off)"},
  };
  if (!spec.band_key.empty()) {
    // The pooled verdict over the night's multi-node series (series_pool.h).
    params.insert(
        params.end(),
        {
            {"pooled_z", 4, "pooled: z of the night's multi-node series together on one night"},
            {"pooled_first_night_magnitude", 0.07,
             "pooled: smallest change (all series together) flagged on its first night"},
            {"pooled_confirm_z", 2.5, "pooled: z each of two nights in a row must reach"},
            {"pooled_min_magnitude", 0.02,
             "pooled: smallest change (all series together) flagged over two nights"},
            {"pooled_cusum_arl", spec.pooled_cusum_arl,
             "pooled: average nights between false alarms of the sequential (CUSUM) rule (0: "
             "off)"},
        });
    switch (spec.band) {
      case SeriesRegressionSpec::Band::kLargest:
        params.insert(params.begin(), {spec.band_key, spec.band_bytes,
                                       "band: sizes >= this many bytes (a run with none: its "
                                       "largest 25% of sizes)"});
        break;
      case SeriesRegressionSpec::Band::kSmallest:
        params.insert(params.begin(), {spec.band_key, spec.band_bytes,
                                       "band: sizes <= this many bytes, > 0 (a run with none: its "
                                       "smallest 25%)"});
        break;
      case SeriesRegressionSpec::Band::kMedium:
        params.insert(params.begin(),
                      {{spec.band_key, spec.band_bytes,
                        "band: sizes > this many bytes (latency_regression's max_size_bytes)"},
                       {spec.band_upper_key, spec.band_upper_bytes,
                        "band: sizes < this many bytes (busbw_regression's min_size_bytes); a "
                        "run with no size between the two has no point"}});
        break;
    }
  }
  return params;
}

void DetectSeriesRegressions(const InputIndex& input, const DetectorSettings& settings,
                             const SeriesRegressionSpec& spec, std::vector<Finding>* findings) {
  // Every series of the cluster counts, judged tonight or not: the nightly
  // and the full analysis of the same history then judge alike.
  const series::Settings s = series::ForSeriesFamily(series::ReadSettings(settings, spec),
                                                     static_cast<int>(input.series().size()));
  // The multi-node series' points, pooled per night after every series is
  // judged (series_pool.h).
  std::vector<series::PoolPoint> pool;
  for (const auto& [name, runs] : input.series()) {
    if (runs.empty() || !input.Judged(*runs.back())) continue;  // judged runs are the newest
    if (!spec.skip_oversubscribed) {
      series::JudgeSeries(input, series::BuildTable(input, name, runs, spec, s), s, spec, findings,
                          &pool);
      continue;
    }
    std::vector<const RunView*> kept;
    for (const RunView* run : runs) {
      if (!run->oversubscribed) kept.push_back(run);
    }
    if (!kept.empty() && input.Judged(*kept.back())) {
      series::JudgeSeries(input, series::BuildTable(input, name, kept, spec, s), s, spec, findings,
                          &pool);
    }
  }
  // The pool is judged with the thresholds of one test (not raised for the
  // number of series: it is one test per band and night).
  series::JudgePool(input, pool, series::ReadSettings(settings, spec),
                    series::ReadPoolSettings(settings), spec, findings);
}

void DetectRunSeriesRegressions(const InputIndex& input, const DetectorSettings& settings,
                                const SeriesRegressionSpec& spec, const RunSeries& series,
                                std::vector<Finding>* findings) {
  if (series.runs.empty() || !input.Judged(*series.runs.back())) return;
  series::JudgeSeries(input, series::BuildRunTable(series), series::ReadSettings(settings, spec),
                      spec, findings);
}

}  // namespace fabtrack::analyzer
