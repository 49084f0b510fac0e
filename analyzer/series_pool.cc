#include "analyzer/series_pool.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "analyzer/run_facts.h"
#include "analyzer/series_checks.h"
#include "analyzer/stats/baseline_z.h"
#include "analyzer/stats/cusum.h"
#include "analyzer/stats/pooled_shift.h"
#include "core/clock.h"
#include "core/statistics.h"

namespace fabtrack::analyzer::series {

namespace {

// The CUSUM's allowance: optimal for a pooled shift of one standard error a
// night (the smallest that the two-night rule misses most of the time).
constexpr double kCusumK = 0.5;

std::string PercentText(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", std::fabs(fraction) * 100);
  return buf;
}

}  // namespace

PoolSettings ReadPoolSettings(const DetectorSettings& s) {
  PoolSettings p;
  p.z = s["pooled_z"];
  p.confirm_z = s["pooled_confirm_z"];
  p.min_magnitude = s["pooled_min_magnitude"];
  p.first_night_magnitude = s["pooled_first_night_magnitude"];
  p.cusum_arl = s["pooled_cusum_arl"];
  return p;
}

void AddPoolPoints(const InputIndex& input, const SeriesTable& t, const ChangeSeries& c,
                   const Settings& s, const SeriesRegressionSpec& spec,
                   std::vector<PoolPoint>* pool) {
  if (!t.sized || t.runs.empty() || t.runs.back()->nodes.value_or(1) <= 1) return;
  std::vector<double> before;
  for (size_t p = static_cast<size_t>(s.min_history); p < c.values.size(); ++p) {
    const int run = c.run_of_point[p];
    const std::optional<double> noise = c.noise_before_run[run];
    if (!noise) continue;
    const size_t begin = p > static_cast<size_t>(s.baseline_runs) ? p - s.baseline_runs : 0;
    before.assign(c.values.begin() + static_cast<std::ptrdiff_t>(begin),
                  c.values.begin() + static_cast<std::ptrdiff_t>(p));
    const std::optional<double> level = stats::MedianInPlace(before);
    if (!level || !(*level > 0)) continue;
    PoolPoint point;
    point.run = t.runs[run];
    point.night = NightOf(point.run->started_at);
    point.subject = t.subject;
    point.change = Worse(spec, c.values[p] / *level - 1);
    // The noise model: the series' noise with the typical within-run part
    // replaced by this run's own (a run whose iterations scattered weighs
    // less and needs more to count).
    point.sigma = c.RunSigma(run, run, s.noise_floor);
    point.t = point.change / point.sigma;
    point.dof = c.noise_dof_before_run[run];
    if (input.Judged(*point.run)) {
      for (int k : t.bands[run]) {
        if (!(c.reference[k] > 0)) continue;
        point.sizes.emplace_back(t.sizes[k],
                                 Worse(spec, t.At(run, k) / c.reference[k] / *level - 1));
      }
    }
    pool->push_back(std::move(point));
  }
}

void JudgePool(const InputIndex& input, std::vector<PoolPoint>& pool, const Settings& s,
               const PoolSettings& ps, const SeriesRegressionSpec& spec,
               std::vector<Finding>* findings) {
  // Per night, each series' newest point of that night.
  std::map<int64_t, std::map<std::string, PoolPoint*>> nights;
  for (PoolPoint& p : pool) {
    PoolPoint*& slot = nights[p.night][p.subject];
    if (!slot || p.run->started_at >= slot->run->started_at) slot = &p;
  }
  // The nights a judged night's rules read: itself, the night before and
  // the CUSUM's window (below). Only their pooled shifts are computed; the
  // others stay empty and unread.
  std::vector<char> needed(nights.size(), 0);
  {
    size_t n = 0;
    for (const auto& [night, series] : nights) {
      bool judged = false;
      for (const auto& [name, p] : series) judged = judged || input.Judged(*p->run);
      if (judged) {
        const size_t from =
            std::min(n > 0 ? n - 1 : 0,
                     n + 1 > static_cast<size_t>(s.baseline_runs) ? n + 1 - s.baseline_runs : 0);
        std::fill(needed.begin() + static_cast<std::ptrdiff_t>(from),
                  needed.begin() + static_cast<std::ptrdiff_t>(n) + 1, 1);
      }
      ++n;
    }
  }
  std::vector<int64_t> keys;
  // Per night: all series, and all but the one with the highest z (a
  // verdict about the band must not be one series' drop: that one is judged
  // on its own).
  std::vector<stats::PooledShift> pooled, but_one;
  for (const auto& [night, series] : nights) {
    keys.push_back(night);
    if (!needed[keys.size() - 1]) {
      pooled.emplace_back();
      but_one.emplace_back();
      continue;
    }
    std::vector<stats::SeriesShift> shifts;
    for (const auto& [subject, p] : series) {
      p->z = stats::NormalEquivalentZ(p->t, p->dof);
      shifts.push_back({p->change, p->sigma, p->z});
    }
    pooled.push_back(stats::PoolShifts(shifts));
    auto highest = std::max_element(shifts.begin(), shifts.end(),
                                    [](const auto& a, const auto& b) { return a.z < b.z; });
    if (highest != shifts.end()) shifts.erase(highest);
    but_one.push_back(stats::PoolShifts(shifts));
  }
  const double h = ps.cusum_arl > 1 ? stats::CusumThreshold(kCusumK, ps.cusum_arl) : 0;
  const char* band_name = spec.band == SeriesRegressionSpec::Band::kLargest    ? " at large sizes"
                          : spec.band == SeriesRegressionSpec::Band::kSmallest ? " at small sizes"
                                                                               : " at medium sizes";
  const std::string subject = spec.metric_label + band_name + ", all multi-node series";
  for (size_t n = 0; n < keys.size(); ++n) {
    const std::map<std::string, PoolPoint*>& series = nights[keys[n]];
    bool judged = false;
    const PoolPoint* newest = nullptr;
    for (const auto& [name, p] : series) {
      judged = judged || input.Judged(*p->run);
      if (!newest || p->run->nodes.value_or(0) > newest->run->nodes.value_or(0)) newest = p;
    }
    const stats::PooledShift& tonight = pooled[n];
    if (!judged || tonight.series < 2) continue;
    // The rest of the series must show the shift too (kRestZ: one healthy
    // night in 15 passes it, so one series' own drop is rarely taken for the
    // band's; a coherent 5% latency rise on four series, 99 nights in 100;
    // at 2 the 5% row lost two of its 28 scenarios found within 2 nights).
    constexpr double kRestZ = 1.5;
    if (but_one[n].z < kRestZ) continue;
    // And they must carry at least half the change a rule asks of the pool
    // (kRestShare): a coherent shift moves every series alike, while one
    // series' large drop next to a few small wiggles reaches a rule's
    // magnitude only through its own weight. This matters once the noise
    // model (stats/noise_model.h) gives a series whose runs scattered
    // within themselves (a jitter fault) almost no weight: it no longer
    // dilutes the pooled change, so one series' 30% rise and the others'
    // +2% would pool past the one-night rule's 7%.
    constexpr double kRestShare = 0.5;
    auto carried = [&](double magnitude, size_t night) {
      return but_one[night].z >= kRestZ && but_one[night].change >= kRestShare * magnitude;
    };
    std::string rule;
    if (tonight.z >= ps.z && tonight.change >= ps.first_night_magnitude &&
        carried(ps.first_night_magnitude, n)) {
      rule = "one_night";
    }
    const bool have_previous = n > 0 && pooled[n - 1].series >= 2;
    if (rule.empty() && have_previous && std::min(tonight.z, pooled[n - 1].z) >= ps.confirm_z &&
        std::min(tonight.change, pooled[n - 1].change) >= ps.min_magnitude &&
        carried(ps.min_magnitude, n) && carried(ps.min_magnitude, n - 1)) {
      rule = "two_nights";
    }
    stats::CusumResult cusum;
    if (h > 0) {
      std::vector<double> x;
      for (size_t m = n + 1 > static_cast<size_t>(s.baseline_runs) ? n + 1 - s.baseline_runs : 0;
           m <= n; ++m) {
        x.push_back(pooled[m].series >= 2 ? std::min(pooled[m].z, h / 2) : NAN);
      }
      cusum = stats::RunCusum(x, kCusumK, h);
      if (rule.empty() && cusum.statistic >= h && tonight.z >= 1 &&
          tonight.change >= ps.min_magnitude / 2 && carried(ps.min_magnitude / 2, n)) {
        rule = "sequential";
      }
    }
    if (rule.empty()) continue;
    const Severity severity =
        tonight.change >= s.critical_magnitude ? Severity::kCritical : Severity::kWarning;
    Finding f = FindingForRun(*newest->run, subject, severity);
    f.kind = spec.kind;
    char head[256];
    std::snprintf(head, sizeof head, " on %d multi-node series together (pooled z %.1f",
                  tonight.series, tonight.z);
    f.message = spec.metric_label + band_name + (spec.higher_is_better ? " fell " : " rose ") +
                PercentText(tonight.change) + head;
    if (rule == "two_nights") {
      char two[64];
      std::snprintf(two, sizeof two, "; two nights in a row: z %.1f, %.1f", pooled[n - 1].z,
                    tonight.z);
      f.message += two;
    } else if (rule == "sequential") {
      char seq[96];
      std::snprintf(seq, sizeof seq, "; adding up over nights: CUSUM %.1f >= %.1f", cusum.statistic,
                    h);
      f.message += seq;
    }
    f.message += "):";
    // Each series' own move, by node count, signed as the metric moved
    // (`change` is positive in the regression's direction: busbw down,
    // latency up).
    std::vector<std::pair<int, std::string>> parts;
    nlohmann::json per_series = nlohmann::json::array();
    for (const auto& [name, p] : series) {
      const bool metric_rose = (p->change >= 0) != spec.higher_is_better;
      char part[64];
      std::snprintf(part, sizeof part, " %d nodes %s%s (z %.1f);", p->run->nodes.value_or(0),
                    metric_rose ? "+" : "-", PercentText(p->change).c_str(), p->z);
      parts.emplace_back(p->run->nodes.value_or(0), part);
      nlohmann::json sizes = nlohmann::json::array();
      for (const auto& [size, change] : p->sizes) {
        sizes.push_back({{"size_bytes", size}, {"change", change}});
      }
      per_series.push_back({{"subject", name},
                            {"run_id", p->run->id},
                            {"change", p->change},
                            {"noise", p->sigma},
                            {"z", p->z},
                            {"sizes", std::move(sizes)}});
    }
    std::stable_sort(parts.begin(), parts.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [nodes, part] : parts) f.message += part;
    f.message.pop_back();
    nlohmann::json evidence = {
        {"metric", spec.metric_field},
        {"direction", "regression"},
        {"confirmed", true},
        {"pooled",
         {{"rule", rule},
          {"series", tonight.series},
          {"change", tonight.change},
          {"standard_error", tonight.se},
          {"z", tonight.z}}},
        {"series", std::move(per_series)},
    };
    if (have_previous) {
      evidence["pooled"]["previous_night"] = {{"change", pooled[n - 1].change},
                                              {"z", pooled[n - 1].z}};
    }
    if (h > 0) {
      evidence["pooled"]["cusum"] = {{"statistic", cusum.statistic},
                                     {"threshold", h},
                                     {"k", kCusumK},
                                     {"arl_nights", ps.cusum_arl}};
    }
    f.evidence = std::move(evidence);
    findings->push_back(std::move(f));
  }
}

}  // namespace fabtrack::analyzer::series
