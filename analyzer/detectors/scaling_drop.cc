// scaling_drop (warning; critical below critical_efficiency): one sweep's
// scaling curve stops being linear.
//
// A sweep is the runs of one scaling family (ScalingFamilyName) sharing a
// sweep_id, or without one, started in the same night. Its reference is the
// smallest multi-node run N_ref (a single node says nothing about the fabric).
// All-reduce bus bandwidth is normalised to stay flat as nodes are added, so
// the large-message efficiency E(N) = busbw(N) / busbw(N_ref) should stay near
// 1; busbw(N) is the median over the large sizes (>= large_min_bytes, else the
// largest quarter of the reference's sizes) that both runs measured. E(N) is
// flagged below min_efficiency, or below the median E(N) of the family's
// earlier sweeps (same N and N_ref, at least min_history of them) by more
// than history_margin, or history_mad_factor scaled MADs of those sweeps when
// the family's scaling wanders more than that. With such a history, and its
// median at or above min_efficiency, a sweep below min_efficiency is flagged
// only outside that noise band (history_mad_factor scaled MADs below the
// median, widened for the number of node counts one sweep tests: Bonferroni):
// the threshold is about the fabric's level, and one sweep's noise around a
// healthy level near it is no break. That noise band and the history's
// allowed drop judge a sweep with its own within-run noise (issue 32,
// stats/noise_model.h): E(N) is a ratio of two runs' figures, so its
// relative within-run variance is the sum of theirs (each the band's median
// per-iteration CV^2 over the run's iterations), and the history's spread
// (its scaled MAD, which holds the typical sweep's within-run part) is moved
// from the typical sweep's to this one's (stats::RunScale). A sweep whose
// runs scattered within themselves must then fall further before its drop
// is a break; a sweep as steady as usual is judged as before
// (within_run_noise = 0: off). Small-message latency (the
// per-iteration median where the harness measured it, else the mean time)
// should grow no faster than the node count: t(N) / t(N_ref) above
// (1 + latency_tolerance) * N / N_ref is flagged. Each of the two curves gives
// at most one finding per sweep, at the smallest node count where it breaks,
// with the whole curve as evidence; the harness's link probe, when it named a
// slow node in that run, names the host. Sweeps with fewer than two distinct
// multi-node counts say nothing.
//
// The MPI backend reduces in host memory over kernel TCP, so the hosts' CPUs
// are in the measured path: ranks that outnumber the cores (or share them with
// other work) cut busbw and multiply small-message latency as nodes are added
// without any fault in the fabric. Its families get their own thresholds
// (host_min_efficiency, host_latency_tolerance) that only a collapse crosses,
// such as a link throttled to a hundredth; history still applies.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "analyzer/detector.h"
#include "analyzer/run_facts.h"
#include "analyzer/stats/noise_model.h"
#include "analyzer/stats/normal_tail.h"
#include "core/statistics.h"

namespace fabtrack::analyzer::scaling_drop_detector {
namespace {

struct Settings {
  double min_efficiency, host_min_efficiency, critical_efficiency;
  double history_margin, history_mad_factor;
  int min_history;
  int64_t large_min_bytes, small_max_bytes;
  double latency_tolerance, host_latency_tolerance;
  bool within_run_noise;
};

Settings Read(const DetectorSettings& s) {
  return {.min_efficiency = s["min_efficiency"],
          .host_min_efficiency = s["host_min_efficiency"],
          .critical_efficiency = s["critical_efficiency"],
          .history_margin = s["history_margin"],
          .history_mad_factor = s["history_mad_factor"],
          .min_history = static_cast<int>(s["min_history"]),
          .large_min_bytes = static_cast<int64_t>(s["large_min_bytes"]),
          .small_max_bytes = static_cast<int64_t>(s["small_max_bytes"]),
          .latency_tolerance = s["latency_tolerance"],
          .host_latency_tolerance = s["host_latency_tolerance"],
          .within_run_noise = s["within_run_noise"] != 0};
}

struct Sweep {
  std::string family;
  bool host_path = false;  // MPI backend: host memory and kernel TCP
  std::string label;       // sweep_id, or "night of <first run's start>"
  double started_at = 0;
  bool judged = false;
  std::map<int, const RunView*> by_nodes;  // newest run per node count
};

// Large sizes of the reference run: those >= large_min_bytes, else the
// largest quarter of its sizes with a busbw.
std::set<int64_t> LargeBand(std::span<const ResultPoint> ref, const Settings& s) {
  std::set<int64_t> sizes;
  for (const ResultPoint& r : ref) {
    if (r.size_bytes > 0 && r.busbw_gbps && std::isfinite(*r.busbw_gbps) && *r.busbw_gbps > 0) {
      sizes.insert(r.size_bytes);
    }
  }
  std::set<int64_t> large(sizes.lower_bound(s.large_min_bytes), sizes.end());
  if (!large.empty() || sizes.empty()) return large;
  const size_t quarter = (sizes.size() + 3) / 4;
  return std::set<int64_t>(std::prev(sizes.end(), static_cast<std::ptrdiff_t>(quarter)),
                           sizes.end());
}

// Medians of a metric over the band's sizes that both runs measured.
struct Pair {
  double ref = 0, other = 0;
  std::vector<int64_t> sizes;
};

// A run's values of `metric` by size (the first row of a repeated size);
// zero is kept when `zero_ok` (a collapsed busbw is a finding, not a gap).
std::map<int64_t, double> Values(std::span<const ResultPoint> results,
                                 std::optional<double> ResultPoint::*metric, bool zero_ok = false) {
  std::map<int64_t, double> v;
  for (const ResultPoint& r : results) {
    const std::optional<double>& x = r.*metric;
    if (x && std::isfinite(*x) && (*x > 0 || (zero_ok && *x == 0))) v.emplace(r.size_bytes, *x);
  }
  return v;
}

std::optional<Pair> Compare(std::span<const ResultPoint> ref, std::span<const ResultPoint> other,
                            const std::set<int64_t>& band,
                            std::optional<double> ResultPoint::*metric, bool other_zero_ok) {
  std::map<int64_t, double> a = Values(ref, metric), b = Values(other, metric, other_zero_ok);
  std::vector<double> av, bv;
  Pair p;
  for (int64_t size : band) {
    auto ia = a.find(size), ib = b.find(size);
    if (ia == a.end() || ib == b.end()) continue;
    av.push_back(ia->second);
    bv.push_back(ib->second);
    p.sizes.push_back(size);
  }
  if (p.sizes.empty()) return std::nullopt;
  p.ref = *stats::Median(std::move(av));
  p.other = *stats::Median(std::move(bv));
  return p;
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The relative within-run variance of a run's band figure (the median over
// `sizes`): stats::WithinRunVariance of the median per-iteration CV over those
// sizes (the sizes of one run share its conditions: their errors are taken as
// correlated, stats/noise_model.h). NaN without iterations or CVs (nccl-tests).
double BandWithin(const RunView& run, std::span<const ResultPoint> results,
                  const std::vector<int64_t>& sizes) {
  if (!run.iters || *run.iters <= 0) return kNaN;
  std::vector<double> cvs;
  for (const ResultPoint& r : results) {
    if (r.lat_cv && std::isfinite(*r.lat_cv) && *r.lat_cv >= 0 &&
        std::binary_search(sizes.begin(), sizes.end(), r.size_bytes)) {
      cvs.push_back(*r.lat_cv);
    }
  }
  const std::optional<double> cv = stats::MedianInPlace(cvs);
  return cv ? stats::WithinRunVariance(*cv, *run.iters) : kNaN;
}

// The within-run variance of E(N) = busbw(N) / busbw(N_ref) over `sizes`:
// the sum of the two runs' (a ratio's relative errors add); NaN when either
// is unknown.
double PairWithin(const RunView& ref_run, std::span<const ResultPoint> ref, const RunView& run,
                  std::span<const ResultPoint> other, const std::vector<int64_t>& sizes) {
  return BandWithin(ref_run, ref, sizes) + BandWithin(run, other, sizes);
}

// The sweep's curves against its reference.
struct Curve {
  int ref_nodes = 0;
  std::map<int, double> efficiency;     // N -> E(N), N_ref included (1)
  std::map<int, double> within;         // N -> E(N)'s within-run variance (NaN: unknown)
  std::map<int, double> busbw_gbps;     // N -> busbw(N) on the sizes shared with N_ref
  std::map<int, double> latency_ratio;  // N -> t(N) / t(N_ref)
  std::map<int, double> latency_us;     // N -> t(N) on the sizes shared with N_ref
  std::string latency_metric;           // "p50" | "time"
  std::vector<int64_t> large_sizes, small_sizes;
};

// The sweep's node counts of two nodes or more, ascending: the first is the
// reference N_ref of the efficiency curve.
std::vector<int> MultiNodeCounts(const Sweep& sweep) {
  std::vector<int> multi;
  for (const auto& [n, run] : sweep.by_nodes) {
    if (n >= 2) multi.push_back(n);
  }
  return multi;
}

std::optional<Curve> CurveOf(const InputIndex& input, const Sweep& sweep, const Settings& s) {
  const std::vector<int> multi = MultiNodeCounts(sweep);
  if (multi.size() < 2) return std::nullopt;
  Curve c;
  c.ref_nodes = multi.front();
  std::span<const ResultPoint> ref = input.Results(sweep.by_nodes.at(c.ref_nodes)->id);
  const std::set<int64_t> large = LargeBand(ref, s);
  std::set<int64_t> small;
  for (const ResultPoint& r : ref) {
    if (r.size_bytes > 0 && r.size_bytes <= s.small_max_bytes) small.insert(r.size_bytes);
  }
  c.large_sizes.assign(large.begin(), large.end());
  c.small_sizes.assign(small.begin(), small.end());
  // Per-iteration medians where every run has them (harness), else the mean time.
  bool all_p50 = true;
  for (int n : multi) {
    if (Values(input.Results(sweep.by_nodes.at(n)->id), &ResultPoint::lat_p50_us).empty()) {
      all_p50 = false;
    }
  }
  c.latency_metric = all_p50 ? "p50" : "time";
  auto latency = all_p50 ? &ResultPoint::lat_p50_us : &ResultPoint::time_us;
  for (int n : multi) {
    std::span<const ResultPoint> other = input.Results(sweep.by_nodes.at(n)->id);
    if (auto p = Compare(ref, other, large, &ResultPoint::busbw_gbps, true)) {
      c.efficiency[n] = p->other / p->ref;
      c.busbw_gbps[n] = p->other;
      c.within[n] =
          PairWithin(*sweep.by_nodes.at(c.ref_nodes), ref, *sweep.by_nodes.at(n), other, p->sizes);
    }
    // Oversubscribed runs (more ranks than CPUs on a machine) time the
    // scheduler at small sizes; their busbw at large sizes still counts.
    const bool latency_judgeable =
        !sweep.by_nodes.at(n)->oversubscribed && !sweep.by_nodes.at(c.ref_nodes)->oversubscribed;
    if (auto p = Compare(ref, other, small, latency, false); p && latency_judgeable) {
      c.latency_ratio[n] = p->other / p->ref;
      c.latency_us[n] = p->other;
    }
  }
  return c;
}

// The efficiency curve of a sweep that is only history (what AddToPast
// reads): each node count's E(N) is kept with its run (schema 015) under the
// id of the reference run it was measured against, with its within-run
// variance ({reference id, E(N), within}; NaN: none), so that a summarised
// history needs no result rows; a sweep whose reference changed (a run
// joined it) reads its rows again. A figure kept before the within-run
// variance was ({reference id, E(N)}) is read again where the rows are at
// hand, else used with the variance unknown (judged as typical).
std::optional<Curve> PastCurveOf(const InputIndex& input, const Sweep& sweep, const Settings& s) {
  const std::vector<int> multi = MultiNodeCounts(sweep);
  if (multi.size() < 2) return std::nullopt;
  Curve c;
  c.ref_nodes = multi.front();
  const RunView& ref_run = *sweep.by_nodes.at(c.ref_nodes);
  const std::string key =
      SummaryKey("scaling_drop.efficiency", "large_min_bytes=" + std::to_string(s.large_min_bytes));
  std::optional<std::set<int64_t>> large;
  for (int n : multi) {
    const RunView& run = *sweep.by_nodes.at(n);
    const std::vector<double>* v = input.StoredSummary(run, key);
    const bool stored = v && (v->size() == 2 || v->size() == 3) &&
                        (*v)[0] == static_cast<double>(ref_run.id) &&
                        (v->size() == 3 || !input.HasResults(run) || !input.HasResults(ref_run));
    if (!stored) {
      std::span<const ResultPoint> ref = input.Results(ref_run.id);
      std::span<const ResultPoint> other = input.Results(run.id);
      if (!large) large = LargeBand(ref, s);
      std::optional<Pair> p = Compare(ref, other, *large, &ResultPoint::busbw_gbps, true);
      const double within = p ? PairWithin(ref_run, ref, run, other, p->sizes) : kNaN;
      input.Produce(run, key,
                    {static_cast<double>(ref_run.id), p ? p->other / p->ref : kNaN, within});
      if (p) {
        c.efficiency[n] = p->other / p->ref;
        c.within[n] = within;
      }
    } else if (std::isfinite((*v)[1])) {
      c.efficiency[n] = (*v)[1];
      c.within[n] = v->size() == 3 ? (*v)[2] : kNaN;
    }
  }
  return c;
}

nlohmann::json CurveJson(const std::map<int, double>& curve) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [n, v] : curve) j[std::to_string(n)] = v;
  return j;
}

std::string CurveText(const std::map<int, double>& curve, int digits) {
  std::string text;
  for (const auto& [n, v] : curve) {
    if (!text.empty()) text += ", ";
    text += std::to_string(n) + ": " + FormatFixed(v, digits);
  }
  return text;
}

std::string SizesText(const std::vector<int64_t>& sizes) {
  if (sizes.empty()) return "no sizes";
  if (sizes.size() == 1) return FormatBytes(sizes.front());
  return FormatBytes(sizes.front()) + ".." + FormatBytes(sizes.back());
}

nlohmann::json RunIds(const Sweep& sweep) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [n, run] : sweep.by_nodes) j[std::to_string(n)] = run->id;
  return j;
}

void AddLinkProbe(const RunView& run, Finding* f) {
  if (!run.link_straggler_host) return;
  f->host = *run.link_straggler_host;
  f->message += "; the link probe names " + *run.link_straggler_host + " as slow";
  f->evidence["link_straggler_host"] = *run.link_straggler_host;
}

// E(N) of the family's earlier sweeps with the same reference: the median
// and how far below it a sweep must fall to stand out (the margin, widened to
// history_mad_factor scaled MADs for a family whose scaling wanders).
struct History {
  int count = 0;
  std::optional<double> median;
  double allowed_drop = 0;
  // history_mad_factor scaled MADs of the earlier sweeps' E(N), moved to this
  // sweep's within-run noise: how far it wanders from the median by noise
  // alone.
  double noise_band = 0;
  // The earlier sweeps' typical (median) within-run variance of E(N) and this
  // sweep's (the typical one when unknown): the noise model's two inputs.
  double typical_within = 0, run_within = 0;
};

// E(N) of a family's earlier sweeps, by reference and node count, grown one
// sweep at a time as the family's sweeps are judged oldest first: judging
// three years of sweeps against all sweeps before each is then one insert
// per value, not a copy and a selection of the whole past per sweep. With
// them, the within-run variances of those E(N) that have one.
struct PastSweeps {
  stats::SortedValues efficiency, within;
};
using PastEfficiency = std::map<std::pair<int, int>, PastSweeps>;

void AddToPast(const Curve& curve, PastEfficiency* past) {
  for (const auto& [n, e] : curve.efficiency) {
    PastSweeps& p = (*past)[{curve.ref_nodes, n}];
    p.efficiency.Insert(e);
    auto w = curve.within.find(n);
    if (w != curve.within.end() && std::isfinite(w->second)) p.within.Insert(w->second);
  }
}

std::map<int, History> HistoryOf(const Curve& curve, const PastEfficiency& earlier,
                                 const Settings& s) {
  std::map<int, History> by_nodes;
  // One sweep tests every node count but the reference against its noise
  // band: history_mad_factor holds for one of them, the band widens so that
  // the sweep as a whole keeps that chance of a false alarm (Bonferroni).
  const double tests = static_cast<double>(curve.efficiency.size()) - 1;
  const double band_z = stats::BonferroniZ(s.history_mad_factor, tests);
  for (const auto& [n, e] : curve.efficiency) {
    History& h = by_nodes[n];
    auto it = earlier.find({curve.ref_nodes, n});
    if (it == earlier.end()) continue;
    const stats::SortedValues& past = it->second.efficiency;
    h.count = static_cast<int>(past.size());
    // stats::Baseline(past, min_history, 0), from the sorted values.
    if (h.count >= std::max(s.min_history, 1)) {
      h.median = *past.Median();
      double scale = past.ScaledMad().value_or(0);
      if (s.within_run_noise) {
        h.typical_within = it->second.within.Median().value_or(0);
        auto w = curve.within.find(n);
        h.run_within =
            w != curve.within.end() && std::isfinite(w->second) ? w->second : h.typical_within;
        scale = stats::RunScale(scale, *h.median, h.typical_within, h.run_within, 0);
      }
      h.noise_band = band_z * scale;
      h.allowed_drop = std::max(s.history_margin, h.noise_band);
    }
  }
  return by_nodes;
}

void JudgeBusbw(const Sweep& sweep, const Curve& curve, const PastEfficiency& earlier,
                const Settings& s, std::vector<Finding>* findings) {
  const double min_efficiency = sweep.host_path ? s.host_min_efficiency : s.min_efficiency;
  const std::map<int, History> history = HistoryOf(curve, earlier, s);
  for (const auto& [n, e] : curve.efficiency) {
    if (n == curve.ref_nodes) continue;
    const History& h = history.at(n);
    // The threshold judges the level of E(N), not one sweep's noise: where
    // the family's earlier sweeps at N sat at or above min_efficiency, a sweep
    // dipping below it within the family's own noise band is that noise (a
    // healthy 4096-node fabric at 0.83 +- 0.02 crossed 0.80 a few nights a
    // year). A family whose level is below the threshold, or a sweep that
    // falls out of the band, is flagged as before; without enough history,
    // the threshold alone decides.
    const bool within_noise =
        h.median && *h.median >= min_efficiency && e >= *h.median - h.noise_band;
    const bool below_threshold = e < min_efficiency && !within_noise;
    const bool below_history = h.median && e < *h.median - h.allowed_drop;
    if (!below_threshold && !below_history) continue;
    const RunView& run = *sweep.by_nodes.at(n);
    Finding f = FindingForRun(run, sweep.family + "/busbw",
                              e < s.critical_efficiency ? Severity::kCritical : Severity::kWarning);
    f.value = e;
    f.baseline = below_history ? *h.median : min_efficiency;
    f.unit = "busbw efficiency vs " + std::to_string(curve.ref_nodes) + " nodes";
    std::string why;
    if (below_threshold) why = "below " + FormatFixed(min_efficiency, 2);
    if (below_history) {
      why += std::string(why.empty() ? "" : ", ") + "below the median " +
             FormatFixed(*h.median, 2) + " of " + std::to_string(h.count) +
             " earlier sweeps by more than " + FormatFixed(h.allowed_drop, 2);
    }
    f.message = "scaling breaks at " + std::to_string(n) + " nodes: large-message busbw " +
                FormatFixed(curve.busbw_gbps.at(n), 3) + " GB/s is " + FormatFixed(100 * e, 0) +
                "% of " + FormatFixed(curve.busbw_gbps.at(curve.ref_nodes), 3) + " GB/s at " +
                std::to_string(curve.ref_nodes) + " nodes (" + why + "; " +
                SizesText(curve.large_sizes) + "); efficiency by nodes {" +
                CurveText(curve.efficiency, 2) + "}";
    nlohmann::json past = nlohmann::json::object();
    for (const auto& [m, hm] : history) {
      nlohmann::json j = {{"sweeps", hm.count}};
      if (hm.median) {
        j["median"] = *hm.median;
        j["allowed_drop"] = hm.allowed_drop;
        j["typical_within_sigma"] = std::sqrt(hm.typical_within);
        j["within_sigma"] = std::sqrt(hm.run_within);
      }
      past[std::to_string(m)] = j;
    }
    f.evidence = {{"sweep", sweep.label},
                  {"reference_nodes", curve.ref_nodes},
                  {"efficiency", CurveJson(curve.efficiency)},
                  {"busbw_gbps", CurveJson(curve.busbw_gbps)},
                  {"large_sizes", curve.large_sizes},
                  {"latency_ratio", CurveJson(curve.latency_ratio)},
                  {"min_efficiency", min_efficiency},
                  {"history", past},
                  {"runs", RunIds(sweep)}};
    AddLinkProbe(run, &f);
    findings->push_back(std::move(f));
    return;
  }
}

void JudgeLatency(const Sweep& sweep, const Curve& curve, const Settings& s,
                  std::vector<Finding>* findings) {
  std::map<int, double> bound;
  for (const auto& [n, ratio] : curve.latency_ratio) {
    bound[n] = (1 + (sweep.host_path ? s.host_latency_tolerance : s.latency_tolerance)) * n /
               curve.ref_nodes;
  }
  for (const auto& [n, ratio] : curve.latency_ratio) {
    if (n == curve.ref_nodes || ratio <= bound[n]) continue;
    const RunView& run = *sweep.by_nodes.at(n);
    Finding f = FindingForRun(run, sweep.family + "/latency", Severity::kWarning);
    f.value = ratio;
    f.baseline = bound[n];
    f.unit = "small-message latency vs " + std::to_string(curve.ref_nodes) + " nodes";
    f.message = "latency grows faster than the node count at " + std::to_string(n) +
                " nodes: small-message " + curve.latency_metric + " " +
                FormatFixed(curve.latency_us.at(n), 1) + " \u00b5s is " + FormatFixed(ratio, 1) +
                "x the " + FormatFixed(curve.latency_us.at(curve.ref_nodes), 1) + " \u00b5s at " +
                std::to_string(curve.ref_nodes) + " nodes for " +
                FormatFixed(1.0 * n / curve.ref_nodes, 1) + "x the nodes (allowed " +
                FormatFixed(bound[n], 1) + "x; " + SizesText(curve.small_sizes) +
                "); ratio by nodes {" + CurveText(curve.latency_ratio, 1) + "}";
    f.evidence = {{"sweep", sweep.label},
                  {"reference_nodes", curve.ref_nodes},
                  {"latency_metric", curve.latency_metric},
                  {"latency_ratio", CurveJson(curve.latency_ratio)},
                  {"latency_us", CurveJson(curve.latency_us)},
                  {"allowed_ratio", CurveJson(bound)},
                  {"small_sizes", curve.small_sizes},
                  {"efficiency", CurveJson(curve.efficiency)},
                  {"runs", RunIds(sweep)}};
    AddLinkProbe(run, &f);
    findings->push_back(std::move(f));
    return;
  }
}

void Detect(const InputIndex& input, const DetectorSettings& settings,
            std::vector<Finding>* findings) {
  const Settings s = Read(settings);
  // Sweeps by family, keyed by sweep id or night.
  std::map<std::pair<std::string, std::string>, Sweep> sweeps;
  for (const RunView& run : input.runs()) {
    if (run.status == "failed") continue;
    const std::string family = ScalingFamilyName(run);
    const std::string key =
        run.sweep_id ? "id:" + *run.sweep_id : "night:" + std::to_string(NightOf(run.started_at));
    auto [it, inserted] = sweeps.try_emplace({family, key});
    Sweep& sweep = it->second;
    if (inserted) {
      sweep.family = family;
      sweep.host_path = !UsesNccl(run);
      sweep.label = run.sweep_id ? *run.sweep_id : "night of " + run.started_at_iso;
      sweep.started_at = run.started_at;
    }
    sweep.started_at = std::min(sweep.started_at, run.started_at);
    sweep.judged = sweep.judged || input.Judged(run);
    const int nodes = run.nodes.value_or(static_cast<int>(run.hosts.size()));
    if (nodes < 1) continue;
    const RunView*& slot = sweep.by_nodes[nodes];
    if (!slot || slot->started_at <= run.started_at) slot = &run;
  }
  // Curves by family, oldest sweep first.
  std::map<std::string, std::vector<std::pair<const Sweep*, Curve>>> curves;
  for (const auto& [key, sweep] : sweeps) {
    // A judged sweep is history tomorrow: its E(N) are kept now.
    if (sweep.judged) PastCurveOf(input, sweep, s);
    if (std::optional<Curve> c =
            sweep.judged ? CurveOf(input, sweep, s) : PastCurveOf(input, sweep, s)) {
      curves[sweep.family].emplace_back(&sweep, std::move(*c));
    }
  }
  for (auto& [family, list] : curves) {
    std::stable_sort(list.begin(), list.end(), [](const auto& a, const auto& b) {
      return a.first->started_at < b.first->started_at;
    });
    PastEfficiency past;
    for (const auto& [sweep, curve] : list) {
      if (sweep->judged) {
        JudgeBusbw(*sweep, curve, past, s, findings);
        JudgeLatency(*sweep, curve, s, findings);
      }
      AddToPast(curve, &past);
    }
  }
}

const DetectorRegistrar kRegistered({
    .name = "scaling_drop",
    .summary = "one sweep's large-message busbw efficiency or small-message latency stops "
               "scaling with the node count (warning, critical below critical_efficiency)",
    .params =
        {
            {"min_efficiency", 0.8, "NCCL: flag E(N) = busbw(N)/busbw(N_ref) below this"},
            {"host_min_efficiency", 0.1,
             "MPI backend (host memory, kernel TCP; CPUs in the path): flag E(N) below this"},
            {"critical_efficiency", 0.5, "critical when E(N) is below this"},
            {"history_margin", 0.1,
             "flag E(N) this far below the median E(N) of the family's earlier sweeps"},
            {"history_mad_factor", 3,
             "... or this many scaled MADs of those sweeps' E(N) below it, when that is more"},
            {"min_history", 3, "earlier sweeps (same N and N_ref) needed to judge against history"},
            {"large_min_bytes", 67108864,
             "large messages: at least this many bytes (else the largest quarter of the sizes)"},
            {"small_max_bytes", 65536, "small messages: above 0 and up to this many bytes"},
            {"within_run_noise", 1,
             "noise model: widen the history's band by the sweep's own within-run variance "
             "(per-iteration CV^2 / iterations of both runs) in place of the typical sweep's "
             "(0: off)"},
            {"latency_tolerance", 1,
             "NCCL: flag small-message t(N)/t(N_ref) above (1 + this) x N/N_ref"},
            {"host_latency_tolerance", 24, "MPI backend: the same tolerance"},
        },
    .detect = Detect,
});

}  // namespace
}  // namespace fabtrack::analyzer::scaling_drop_detector
