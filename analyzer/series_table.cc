#include "analyzer/series_table.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "analyzer/run_facts.h"
#include "analyzer/stats/noise_model.h"
#include "analyzer/stats/normal_tail.h"
#include "core/statistics.h"

namespace fabtrack::analyzer::series {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

Settings ReadSettings(const DetectorSettings& s, const SeriesRegressionSpec& spec) {
  Settings r;
  if (!spec.band_key.empty()) r.band_bytes = static_cast<int64_t>(s[spec.band_key]);
  if (!spec.band_upper_key.empty()) {
    r.band_upper_bytes = static_cast<int64_t>(s[spec.band_upper_key]);
  }
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
  r.within_run_noise = s["within_run_noise"] != 0;
  r.critical_magnitude = s["critical_magnitude"];
  r.first_night_magnitude = s["first_night_magnitude"];
  return r;
}

double SuccessiveDifferenceDof(int differences) {
  return differences > 0 ? 0.40 * differences + 4 : 0;
}

double MadDof(int values) { return values > 1 ? 0.40 * (values - 1) + 0.1 : 0; }

Settings ForSeriesFamily(Settings s, int series) {
  if (series <= 1) return s;
  const double m = series;
  if (s.z_threshold > 0) s.z_threshold = stats::BonferroniZ(s.z_threshold, m);
  // Two runs in a row: P(Z >= z)^2 / m, so each run's tail shrinks by sqrt(m).
  if (s.confirm_z > 0) s.confirm_z = stats::BonferroniZ(s.confirm_z, std::sqrt(m));
  return s;
}

bool InBand(const SeriesRegressionSpec& spec, const Settings& s, int64_t size_bytes) {
  switch (spec.band) {
    case SeriesRegressionSpec::Band::kLargest:
      return size_bytes >= s.band_bytes;
    case SeriesRegressionSpec::Band::kSmallest:
      return size_bytes <= s.band_bytes;
    case SeriesRegressionSpec::Band::kMedium:
      return size_bytes > s.band_bytes && size_bytes < s.band_upper_bytes;
  }
  return false;
}

SeriesTable BuildTable(const InputIndex& input, std::string subject,
                       const std::vector<const RunView*>& runs, const SeriesRegressionSpec& spec,
                       const Settings& s) {
  SeriesTable t;
  t.subject = std::move(subject);
  t.runs = runs;
  // Runs whose rows the reader left out (a summarised history) have no
  // numbers here: their points and verdicts come from the store.
  std::set<int64_t> sizes;
  for (const RunView* run : runs) {
    if (!input.HasResults(*run)) continue;
    for (const ResultPoint& r : input.Results(run->id)) sizes.insert(r.size_bytes);
  }
  t.sizes.assign(sizes.begin(), sizes.end());
  t.values.assign(runs.size() * t.sizes.size(), kNaN);
  t.bands.resize(runs.size());
  t.within.assign(runs.size(), kNaN);
  std::vector<int> have;
  std::vector<double> cvs;
  for (size_t i = 0; i < runs.size(); ++i) {
    have.clear();
    if (!input.HasResults(*runs[i])) continue;
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
      if (InBand(spec, s, t.sizes[k])) band.push_back(k);
    }
    // No size in the band: the run's largest (smallest) quarter of sizes; the
    // medium band has no such stand-in (its neighbours judge those sizes).
    if (band.empty() && !have.empty() && spec.band != SeriesRegressionSpec::Band::kMedium) {
      const size_t quarter = std::max<size_t>(1, (have.size() + 3) / 4);
      if (spec.band == SeriesRegressionSpec::Band::kLargest) {
        band.assign(have.end() - static_cast<std::ptrdiff_t>(quarter), have.end());
      } else {
        band.assign(have.begin(), have.begin() + static_cast<std::ptrdiff_t>(quarter));
      }
    }
    // The band's within-run variance from its sizes' per-iteration spread
    // (harness runs; stats/noise_model.h).
    if (s.within_run_noise && runs[i]->iters && *runs[i]->iters > 0 && !band.empty()) {
      cvs.clear();
      for (const ResultPoint& r : input.Results(runs[i]->id)) {
        if (!r.lat_cv || !std::isfinite(*r.lat_cv) || *r.lat_cv < 0) continue;
        const int k = static_cast<int>(
            std::lower_bound(t.sizes.begin(), t.sizes.end(), r.size_bytes) - t.sizes.begin());
        if (std::binary_search(band.begin(), band.end(), k)) cvs.push_back(*r.lat_cv);
      }
      if (auto cv = stats::MedianInPlace(cvs)) {
        t.within[i] = stats::WithinRunVariance(*cv, *runs[i]->iters);
      }
    }
  }
  return t;
}

SeriesTable BuildRunTable(const RunSeries& series) {
  SeriesTable t;
  t.subject = series.subject;
  t.sized = false;
  t.runs = series.runs;
  t.sizes = {0};
  t.values.assign(series.runs.size(), kNaN);
  t.bands.resize(series.runs.size());
  t.within.assign(series.runs.size(), kNaN);
  for (size_t i = 0; i < series.runs.size() && i < series.values.size(); ++i) {
    const double v = series.values[i];
    if (!std::isfinite(v) || v <= 0) continue;
    t.values[i] = v;
    t.bands[i] = {0};
  }
  return t;
}

namespace {

// The night-to-night noise of the points before each end = 0..values.size(),
// relative to their level: the scaled median absolute difference of
// successive points among the last `noise_runs`, which a level shift among
// them barely moves (unlike the MAD of a short window). nullopt with too few
// points. Windows slide: a year of noise_runs costs no more than a month.
// `differences[end]`: how many successive differences the noise at `end` is
// the median of.
// `typical_within_by_end[end]`: the median known within-run variance of the
// same points (0 when none is known).
std::vector<std::optional<double>> RelativeNoiseByEnd(const std::vector<double>& values,
                                                      const std::vector<double>& within,
                                                      const Settings& s,
                                                      std::vector<int>* differences_by_end,
                                                      std::vector<double>* typical_within_by_end) {
  const int n = static_cast<int>(values.size());
  std::vector<std::optional<double>> out(n + 1);
  differences_by_end->assign(n + 1, 0);
  typical_within_by_end->assign(n + 1, 0);
  stats::SortedValues window,
      differences;                   // values[begin, end), |v[j] - v[j-1]| for begin < j < end
  stats::SortedValues known_within;  // the known within[begin, end)
  int begin = 0;
  for (int end = 0; end <= n; ++end) {
    if (end > 0) {
      window.Insert(values[end - 1]);
      if (!std::isnan(within[end - 1])) known_within.Insert(within[end - 1]);
      if (end - 1 > begin) differences.Insert(std::fabs(values[end - 1] - values[end - 2]));
    }
    while (end - begin > s.noise_runs) {
      window.Erase(values[begin]);
      if (!std::isnan(within[begin])) known_within.Erase(within[begin]);
      if (begin + 1 < end) differences.Erase(std::fabs(values[begin + 1] - values[begin]));
      ++begin;
    }
    (*typical_within_by_end)[end] = known_within.Median().value_or(0);
    if (end - begin - 1 < s.min_history || differences.size() == 0) continue;
    const double level = *window.Median();
    if (!(level > 0)) continue;
    out[end] = 1.4826 / std::sqrt(2.0) * *differences.Median() / level;
    (*differences_by_end)[end] = static_cast<int>(differences.size());
  }
  return out;
}

}  // namespace

ChangeSeries BuildChangeSeries(const SeriesTable& t, const Settings& s,
                               const StoredSeries* stored) {
  ChangeSeries c;
  c.reference.assign(t.sizes.size(), kNaN);
  c.reference_count.assign(t.sizes.size(), 0);
  std::vector<double> first;
  for (size_t k = 0; k < t.sizes.size(); ++k) {
    if (stored) {
      // The stored reference saw every size of the summarised runs: final
      // once it had baseline_runs numbers; a size it never saw has all its
      // numbers in the runs read in full.
      if (auto at = stored->reference.find(t.sizes[k]); at != stored->reference.end()) {
        // Not final: the runs after the cut would add numbers to it (a size
        // that never has a number keeps its stored NaN).
        for (size_t r = stored->cut; at->second.second < s.baseline_runs && r < t.runs.size();
             ++r) {
          if (std::isfinite(t.At(static_cast<int>(r), static_cast<int>(k)))) {
            throw SummaryMiss("the reference of " + t.subject + " is not final");
          }
        }
        c.reference[k] = at->second.first;
        c.reference_count[k] = at->second.second;
        continue;
      }
    }
    first.clear();
    for (size_t r = 0; r < t.runs.size() && static_cast<int>(first.size()) < s.baseline_runs; ++r) {
      if (const double v = t.At(static_cast<int>(r), static_cast<int>(k)); std::isfinite(v)) {
        first.push_back(v);
      }
    }
    c.reference_count[k] = static_cast<int>(first.size());
    if (auto m = stats::Median(first)) c.reference[k] = *m;
  }
  c.point_of_run.assign(t.runs.size(), -1);
  std::vector<double> ratios;
  for (size_t r = 0; r < t.runs.size(); ++r) {
    std::optional<double> point;
    if (stored && static_cast<int>(r) < stored->cut) {
      if (std::isfinite(stored->points[r])) point = stored->points[r];
    } else {
      ratios.clear();
      for (int k : t.bands[r]) ratios.push_back(t.At(static_cast<int>(r), k) / c.reference[k]);
      point = stats::Median(ratios);
    }
    if (point) {
      c.point_of_run[r] = static_cast<int>(c.values.size());
      c.run_of_point.push_back(static_cast<int>(r));
      c.values.push_back(*point);
      c.within_of_point.push_back(stored && static_cast<int>(r) < stored->cut ? stored->within[r]
                                                                              : t.within[r]);
    }
  }
  std::vector<int> differences;
  std::vector<double> typical_within;
  const std::vector<std::optional<double>> noise =
      RelativeNoiseByEnd(c.values, c.within_of_point, s, &differences, &typical_within);
  c.noise_before_run.resize(t.runs.size() + 1);
  c.noise_dof_before_run.assign(t.runs.size() + 1, 0);
  c.typical_within_before_run.assign(t.runs.size() + 1, 0);
  int points = 0;
  for (size_t r = 0; r <= t.runs.size(); ++r) {
    c.noise_before_run[r] = noise[points];
    c.typical_within_before_run[r] = typical_within[points];
    if (noise[points]) c.noise_dof_before_run[r] = SuccessiveDifferenceDof(differences[points]);
    if (r < t.runs.size() && c.point_of_run[r] >= 0) ++points;
  }
  return c;
}

double ChangeSeries::RunSigma(int run, int end, double floor) const {
  return stats::RunSigma(noise_before_run[end].value_or(0), typical_within_before_run[end],
                         WithinOf(run, end), floor);
}

}  // namespace fabtrack::analyzer::series
