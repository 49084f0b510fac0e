// latency_jitter (warning): small and medium messages took unsteady times.
//
// Harness runs carry the distribution of every size's per-iteration latency
// (lat_cv = stddev / mean, lat_p50/p99). Per judged run, over the band of
// sizes in (0, max_bytes], the band medians of the CV and of p99/p50 are
// flagged when above an absolute threshold, or well above (history_factor x)
// the median of the same series' earlier runs, given min_history of them and
// a floor that keeps a very quiet series from raising a wiggle. The MPI
// backend reduces in host memory over kernel TCP, so the hosts' CPUs are part
// of what it measures (on a shared or oversubscribed host, scheduler ticks
// show as single 4 ms iterations): it has its own, looser thresholds. When
// the harness names the same straggler host (the rank the others wait for) at
// a majority of the band's sizes and its lead is a material share of the
// median latency, the finding names it. Runs with more ranks than CPUs on one
// machine (RunView::oversubscribed) are neither judged nor history.
//
// nccl-tests tables have no per-iteration figures: there the judged runs of
// one series in one night (repeated cycles, at least min_cycles) stand in for
// iterations, and the CV of time_us across them is judged per size with the
// same CV threshold and history.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "analyzer/detector.h"
#include "analyzer/run_facts.h"
#include "core/statistics.h"

namespace fabtrack::analyzer::latency_jitter_detector {
namespace {

struct Settings {
  int64_t max_bytes;
  double max_cv, max_p99_p50, host_max_cv, host_max_p99_p50;
  double history_factor, history_min_cv, history_min_p99_p50;
  int min_history, min_cycles;
  double straggler_min_share;
  bool host_require_both;
};

Settings Read(const DetectorSettings& s) {
  return {.max_bytes = static_cast<int64_t>(s["max_bytes"]),
          .max_cv = s["max_cv"],
          .max_p99_p50 = s["max_p99_p50"],
          .host_max_cv = s["host_max_cv"],
          .host_max_p99_p50 = s["host_max_p99_p50"],
          .history_factor = s["history_factor"],
          .history_min_cv = s["history_min_cv"],
          .history_min_p99_p50 = s["history_min_p99_p50"],
          .min_history = static_cast<int>(s["min_history"]),
          .min_cycles = static_cast<int>(s["min_cycles"]),
          .straggler_min_share = s["straggler_min_share"],
          .host_require_both = s["host_require_both"] != 0};
}

bool InBand(const ResultPoint& r, const Settings& s) {
  return r.size_bytes > 0 && r.size_bytes <= s.max_bytes;
}

// Band medians of one harness run's per-iteration distribution.
struct Jitter {
  std::optional<double> cv, p99_p50;
};

Jitter JitterOf(std::span<const ResultPoint> results, const Settings& s) {
  Jitter j;
  j.cv = BandMedian(results, 1, s.max_bytes, &ResultPoint::lat_cv);
  std::vector<double> ratios;
  for (const ResultPoint& r : results) {
    if (!InBand(r, s) || !r.lat_p50_us || !r.lat_p99_us || !(*r.lat_p50_us > 0)) continue;
    if (std::isfinite(*r.lat_p99_us)) ratios.push_back(*r.lat_p99_us / *r.lat_p50_us);
  }
  j.p99_p50 = stats::Median(std::move(ratios));
  return j;
}

// The host the harness names as straggler at most of the band's sizes, when
// its lead over the median rank is a material share of the latency.
struct Straggler {
  std::string host;
  int sizes = 0, sizes_with_data = 0;
  double share = 0;      // median over its sizes of excess / p50
  double excess_us = 0;  // at `size_bytes`, its largest lead
  int64_t size_bytes = 0;
};

std::optional<Straggler> StragglerOf(std::span<const ResultPoint> results, const Settings& s) {
  std::map<std::string, std::vector<const ResultPoint*>> by_host;
  int with_data = 0;
  for (const ResultPoint& r : results) {
    if (!InBand(r, s) || !r.straggler_host) continue;
    ++with_data;
    by_host[*r.straggler_host].push_back(&r);
  }
  auto top = std::max_element(by_host.begin(), by_host.end(), [](const auto& a, const auto& b) {
    return a.second.size() < b.second.size();
  });
  if (top == by_host.end() || 2 * static_cast<int>(top->second.size()) <= with_data) {
    return std::nullopt;
  }
  Straggler st;
  st.host = top->first;
  st.sizes = static_cast<int>(top->second.size());
  st.sizes_with_data = with_data;
  std::vector<double> shares;
  for (const ResultPoint* r : top->second) {
    if (!r->straggler_excess_us) continue;
    if (r->lat_p50_us && *r->lat_p50_us > 0) {
      shares.push_back(*r->straggler_excess_us / *r->lat_p50_us);
    }
    if (*r->straggler_excess_us > st.excess_us) {
      st.excess_us = *r->straggler_excess_us;
      st.size_bytes = r->size_bytes;
    }
  }
  st.share = stats::Median(std::move(shares)).value_or(0);
  if (st.excess_us <= 0 || st.share < s.straggler_min_share) return std::nullopt;
  return st;
}

// One metric judged against its threshold and the series' history.
struct Verdict {
  bool above_threshold = false, above_history = false;
  std::optional<double> history_median;
  int history_count = 0;
  bool flagged() const { return above_threshold || above_history; }
};

Verdict Judge(double value, double threshold, const stats::SortedValues& history, double floor,
              const Settings& s) {
  Verdict v;
  v.above_threshold = value > threshold;
  v.history_count = static_cast<int>(history.size());
  if (v.history_count >= std::max(s.min_history, 1)) {
    v.history_median = history.Median();
    v.above_history = value >= floor && value > s.history_factor * *v.history_median;
  }
  return v;
}

std::string WhyText(const Verdict& v, double value, double threshold, int digits) {
  std::string why;
  if (v.above_threshold) why = "above " + FormatFixed(threshold, digits);
  if (v.above_history) {
    if (!why.empty()) why += ", ";
    why += FormatFixed(value / *v.history_median, 1) + "x the series' median " +
           FormatFixed(*v.history_median, digits) + " over " + std::to_string(v.history_count) +
           " earlier runs";
  }
  return why;
}

nlohmann::json VerdictJson(const Verdict& v, double value, double threshold) {
  nlohmann::json j = {{"value", value},
                      {"threshold", threshold},
                      {"above_threshold", v.above_threshold},
                      {"above_history", v.above_history},
                      {"history_runs", v.history_count}};
  j["history_median"] = v.history_median ? nlohmann::json(*v.history_median) : nlohmann::json();
  return j;
}

std::string BandText(const Settings& s) { return "sizes up to " + FormatBytes(s.max_bytes); }

// Band medians by run, computed once: a whole year judged at once asks for
// every run's figures as history of every later run.
class JitterCache {
 public:
  JitterCache(const InputIndex& input, const Settings& s)
      : input_(input),
        s_(s),
        key_(SummaryKey("latency_jitter", "max_bytes=" + std::to_string(s.max_bytes))) {}
  // Through the run's stored figures (schema 015) when its rows were left
  // out: a history run's band medians depend on its own rows and max_bytes.
  const Jitter& Of(const RunView& run) {
    auto [it, inserted] = by_run_.try_emplace(run.id);
    if (inserted) {
      const std::vector<double> v = input_.Summary(run, key_, [&] {
        const Jitter j = JitterOf(input_.Results(run.id), s_);
        constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
        return std::vector<double>{j.cv.value_or(kNone), j.p99_p50.value_or(kNone)};
      });
      if (v.size() != 2) throw SummaryMiss("latency_jitter: a stored figure has another shape");
      if (std::isfinite(v[0])) it->second.cv = v[0];
      if (std::isfinite(v[1])) it->second.p99_p50 = v[1];
    }
    return it->second;
  }

 private:
  const InputIndex& input_;
  const Settings& s_;
  const std::string key_;
  std::unordered_map<int64_t, Jitter> by_run_;
};

// A series' history grown as the judged runs advance in time: the runs
// started before the one judged (oversubscribed ones left out), sorted, so
// that judging a whole year is not a copy and a selection of every earlier
// run per run.
struct SeriesHistory {
  size_t next = 0;  // the series' runs [0, next) are in
  stats::SortedValues cv, ratio;
};

void JudgeHarnessRun(const InputIndex& input, const RunView& run, const Jitter& jitter,
                     const Settings& s, JitterCache* cache,
                     std::map<std::string, SeriesHistory>* histories,
                     std::vector<Finding>* findings) {
  static const stats::SortedValues kNone;
  const stats::SortedValues* cv_history = &kNone;
  const stats::SortedValues* ratio_history = &kNone;
  const std::string series = SeriesName(run);
  if (auto it = input.series().find(series); it != input.series().end()) {
    // Judged runs come oldest first (InputIndex::judged), so the runs before
    // this one are a prefix of the series that only grows.
    SeriesHistory& h = (*histories)[series];
    const std::vector<const RunView*>& runs = it->second;
    for (; h.next < runs.size() && runs[h.next]->started_at < run.started_at; ++h.next) {
      const RunView* earlier = runs[h.next];
      if (earlier->id == run.id || earlier->oversubscribed) continue;
      const Jitter& j = cache->Of(*earlier);
      if (j.cv) h.cv.Insert(*j.cv);
      if (j.p99_p50) h.ratio.Insert(*j.p99_p50);
    }
    cv_history = &h.cv;
    ratio_history = &h.ratio;
  }
  // The MPI backend reduces in host memory over kernel TCP: the hosts' CPUs
  // are part of what it measures, so its absolute thresholds are its own.
  const bool host_path = !UsesNccl(run);
  const double max_cv = host_path ? s.host_max_cv : s.max_cv;
  const double max_ratio = host_path ? s.host_max_p99_p50 : s.max_p99_p50;
  Verdict cv, ratio;
  if (jitter.cv) cv = Judge(*jitter.cv, max_cv, *cv_history, s.history_min_cv, s);
  if (jitter.p99_p50) {
    ratio = Judge(*jitter.p99_p50, max_ratio, *ratio_history, s.history_min_p99_p50, s);
  }
  if (!cv.flagged() && !ratio.flagged()) return;
  // On the host path one scheduler hiccup in a short run moves one of the
  // two measures; a loaded CPU moves both.
  if (host_path && s.host_require_both && jitter.cv && jitter.p99_p50 &&
      !(cv.flagged() && ratio.flagged())) {
    return;
  }

  Finding f = FindingForRun(run, SeriesName(run), Severity::kWarning);
  const bool by_cv = cv.flagged();
  const Verdict& primary = by_cv ? cv : ratio;
  f.value = by_cv ? *jitter.cv : *jitter.p99_p50;
  f.baseline = primary.history_median ? *primary.history_median : (by_cv ? max_cv : max_ratio);
  f.unit = by_cv ? "CV (stddev/mean of per-iteration latency)" : "p99/p50 of per-iteration latency";
  std::vector<std::string> parts;
  if (cv.flagged()) {
    parts.push_back("CV " + FormatFixed(*jitter.cv, 2) + " (" + WhyText(cv, *jitter.cv, max_cv, 2) +
                    ")");
  }
  if (ratio.flagged()) {
    parts.push_back("p99/p50 " + FormatFixed(*jitter.p99_p50, 1) + " (" +
                    WhyText(ratio, *jitter.p99_p50, max_ratio, 1) + ")");
  }
  f.message = "jittery latency at " + BandText(s) + ": median ";
  for (size_t i = 0; i < parts.size(); ++i) f.message += (i ? "; " : "") + parts[i];
  if (!cv.flagged() && jitter.cv) f.message += "; CV " + FormatFixed(*jitter.cv, 2);
  if (!ratio.flagged() && jitter.p99_p50)
    f.message += "; p99/p50 " + FormatFixed(*jitter.p99_p50, 1);

  nlohmann::json per_size = nlohmann::json::array();
  std::span<const ResultPoint> results = input.Results(run.id);
  for (const ResultPoint& r : results) {
    if (!InBand(r, s)) continue;
    nlohmann::json row = {{"size_bytes", r.size_bytes}};
    if (r.lat_cv) row["cv"] = *r.lat_cv;
    if (r.lat_p50_us) row["p50_us"] = *r.lat_p50_us;
    if (r.lat_p99_us) row["p99_us"] = *r.lat_p99_us;
    if (r.straggler_host) row["straggler_host"] = *r.straggler_host;
    if (r.straggler_excess_us) row["straggler_excess_us"] = *r.straggler_excess_us;
    per_size.push_back(std::move(row));
  }
  f.evidence = {{"max_bytes", s.max_bytes}, {"sizes", per_size}};
  if (jitter.cv) f.evidence["cv"] = VerdictJson(cv, *jitter.cv, max_cv);
  if (jitter.p99_p50) f.evidence["p99_p50"] = VerdictJson(ratio, *jitter.p99_p50, max_ratio);

  if (std::optional<Straggler> st = StragglerOf(results, s)) {
    f.host = st->host;
    f.size_bytes = st->size_bytes;
    f.message += "; " + st->host + " is the straggler: +" + FormatFixed(st->excess_us, 0) +
                 " \u00b5s over the median rank at " + FormatBytes(st->size_bytes) + " (" +
                 std::to_string(st->sizes) + " of " + std::to_string(st->sizes_with_data) +
                 " sizes, median lead " + FormatFixed(100 * st->share, 0) + "% of p50)";
    f.evidence["straggler"] = {{"host", st->host},
                               {"sizes", st->sizes},
                               {"sizes_with_data", st->sizes_with_data},
                               {"median_share_of_p50", st->share},
                               {"max_excess_us", st->excess_us},
                               {"at_size_bytes", st->size_bytes}};
  }
  findings->push_back(std::move(f));
}

// nccl-tests: CV of time_us across the repeated cycles of one night.
struct Cycles {
  std::vector<const RunView*> runs;
  std::optional<double> cv;  // band median of the per-size CVs
  std::map<int64_t, double> cv_by_size;
};

Cycles CyclesOf(const InputIndex& input, std::vector<const RunView*> runs, const Settings& s) {
  Cycles c;
  c.runs = std::move(runs);
  if (static_cast<int>(c.runs.size()) < std::max(s.min_cycles, 2)) return c;
  std::map<int64_t, std::vector<double>> times;
  for (const RunView* run : c.runs) {
    for (const ResultPoint& r : input.Results(run->id)) {
      if (InBand(r, s) && r.time_us && std::isfinite(*r.time_us) && *r.time_us > 0) {
        times[r.size_bytes].push_back(*r.time_us);
      }
    }
  }
  std::vector<double> cvs;
  for (const auto& [size, t] : times) {
    if (static_cast<int>(t.size()) < std::max(s.min_cycles, 2)) continue;
    const double cv = stats::StdDev(t) / stats::Mean(t);
    c.cv_by_size[size] = cv;
    cvs.push_back(cv);
  }
  c.cv = stats::Median(std::move(cvs));
  return c;
}

void JudgeCycles(const InputIndex& input, const std::vector<const RunView*>& no_distribution,
                 const Settings& s, std::vector<Finding>* findings) {
  // Judged runs without per-iteration figures, by series and night.
  std::map<std::pair<std::string, int64_t>, std::vector<const RunView*>> judged;
  for (const RunView* run : no_distribution) {
    judged[{SeriesName(*run), NightOf(run->started_at)}].push_back(run);
  }
  // Cycle CVs of every night of the series, computed once per series.
  std::map<std::string, std::map<int64_t, std::optional<double>>> nights_by_series;
  for (const auto& [key, runs] : judged) {
    const auto& [series, night] = key;
    Cycles tonight = CyclesOf(input, runs, s);
    if (!tonight.cv) continue;
    auto [cached, inserted] = nights_by_series.try_emplace(series);
    if (inserted) {
      std::map<int64_t, std::vector<const RunView*>> by_night;
      if (auto it = input.series().find(series); it != input.series().end()) {
        for (const RunView* run : it->second) by_night[NightOf(run->started_at)].push_back(run);
      }
      // Each night's figure is kept with its newest run (schema 015): a
      // summarised history reads it instead of the night's rows.
      const std::string summary_key =
          SummaryKey("latency_jitter.cycles", "max_bytes=" + std::to_string(s.max_bytes) +
                                                  " min_cycles=" + std::to_string(s.min_cycles));
      for (auto& [n, night_runs] : by_night) {
        const RunView& newest = *night_runs.back();
        const std::vector<double> cv = input.Summary(newest, summary_key, [&] {
          return std::vector<double>{
              CyclesOf(input, night_runs, s).cv.value_or(std::numeric_limits<double>::quiet_NaN())};
        });
        if (cv.size() != 1) throw SummaryMiss("latency_jitter: a stored figure has another shape");
        cached->second[n] =
            std::isfinite(cv[0]) ? std::optional<double>(cv[0]) : std::optional<double>();
      }
    }
    // History: earlier nights of the series that ran enough cycles.
    stats::SortedValues history;
    for (const auto& [n, cv] : cached->second) {
      if (n < night && cv) history.Insert(*cv);
    }
    Verdict v = Judge(*tonight.cv, s.max_cv, history, s.history_min_cv, s);
    if (!v.flagged()) continue;
    const RunView& newest = *tonight.runs.back();
    Finding f = FindingForRun(newest, series, Severity::kWarning);
    f.value = *tonight.cv;
    f.baseline = v.history_median ? *v.history_median : s.max_cv;
    f.unit = "CV (stddev/mean of time across cycles)";
    f.message = "jittery latency at " + BandText(s) + " across " +
                std::to_string(tonight.runs.size()) + " cycles of the night: median CV " +
                FormatFixed(*tonight.cv, 2) + " (" + WhyText(v, *tonight.cv, s.max_cv, 2) + ")";
    nlohmann::json by_size = nlohmann::json::object();
    for (const auto& [size, cv] : tonight.cv_by_size) by_size[std::to_string(size)] = cv;
    std::vector<int64_t> run_ids;
    for (const RunView* run : tonight.runs) run_ids.push_back(run->id);
    f.evidence = {{"max_bytes", s.max_bytes},
                  {"cycles", run_ids},
                  {"cv_by_size", by_size},
                  {"cv", VerdictJson(v, *tonight.cv, s.max_cv)}};
    findings->push_back(std::move(f));
  }
}

void Detect(const InputIndex& input, const DetectorSettings& settings,
            std::vector<Finding>* findings) {
  const Settings s = Read(settings);
  JitterCache cache(input, s);
  std::map<std::string, SeriesHistory> histories;
  std::vector<const RunView*> no_distribution;
  for (const RunView* run : input.judged()) {
    if (run->status == "failed" || run->ranks == 1) continue;
    // More busy-polling ranks than CPUs: the jitter is the scheduler's.
    if (run->oversubscribed) continue;
    const Jitter& jitter = cache.Of(*run);
    if (jitter.cv || jitter.p99_p50) {
      JudgeHarnessRun(input, *run, jitter, s, &cache, &histories, findings);
    } else {
      no_distribution.push_back(run);
    }
  }
  JudgeCycles(input, no_distribution, s, findings);
}

const DetectorRegistrar kRegistered({
    .name = "latency_jitter",
    .summary = "unsteady small/medium-message latency: per-iteration CV or p99/p50 (harness), "
               "or CV across a night's cycles (nccl-tests) (warning)",
    .params =
        {
            {"max_bytes", 1048576, "band: message sizes above 0 and up to this many bytes"},
            {"max_cv", 0.5,
             "NCCL runs and nccl-tests cycles: flag a band-median CV (stddev/mean) above this"},
            {"max_p99_p50", 5, "NCCL runs: flag a band-median per-iteration p99/p50 above this"},
            {"host_max_cv", 0.8, "MPI backend (host memory, kernel TCP): flag a CV above this"},
            {"host_max_p99_p50", 10, "MPI backend: flag a p99/p50 above this"},
            {"host_require_both", 1,
             "MPI backend: 1 = flag only when CV and p99/p50 are both out of line"},
            {"history_factor", 3, "flag a value above this many times the series' history median"},
            {"min_history", 5, "earlier runs (nights, for cycles) needed to judge against history"},
            {"history_min_cv", 0.3, "against history, flag a CV only when it is at least this"},
            {"history_min_p99_p50", 3,
             "against history, flag a p99/p50 only when it is at least this"},
            {"min_cycles", 3, "nccl-tests: runs of one series in one night needed to judge"},
            {"straggler_min_share", 0.2,
             "name the straggler when its median lead over the median rank is this share of p50"},
        },
    .detect = Detect,
});

}  // namespace
}  // namespace fabtrack::analyzer::latency_jitter_detector
