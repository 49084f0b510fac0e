#include "analyzer/ab_verdict.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "analyzer/run_facts.h"
#include "core/statistics.h"

namespace fabtrack::analyzer {
namespace {

double RelativeSpread(const std::vector<double>& v) {
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  const double median = stats::Median(v).value_or(0);
  return median > 0 ? (*hi - *lo) / median : 0;
}

bool Usable(double v) { return std::isfinite(v) && v > 0; }

// A run's out-of-place figures by size.
struct Figures {
  std::map<int64_t, double> busbw, time;
};

Figures FiguresOf(const RunRecord& run) {
  Figures f;
  for (const ResultRow& r : run.results) {
    if (!r.row.oop) continue;
    if (r.row.oop->busbw_gbps && Usable(*r.row.oop->busbw_gbps)) {
      f.busbw[r.row.size_bytes] = *r.row.oop->busbw_gbps;
    }
    if (r.row.oop->time_us && Usable(*r.row.oop->time_us)) {
      f.time[r.row.size_bytes] = *r.row.oop->time_us;
    }
  }
  return f;
}

// Median of `by_size` over the sizes in `sizes` within [lo, hi].
std::optional<double> Band(const std::map<int64_t, double>& by_size, const std::set<int64_t>& sizes,
                           int64_t lo, int64_t hi) {
  std::vector<double> values;
  for (int64_t s : sizes) {
    if (s >= lo && s <= hi) values.push_back(by_size.at(s));
  }
  return stats::Median(std::move(values));
}

std::set<int64_t> CommonSizes(const std::vector<const Figures*>& runs,
                              std::map<int64_t, double> Figures::*metric) {
  std::set<int64_t> common;
  bool first = true;
  for (const Figures* f : runs) {
    std::set<int64_t> sizes;
    for (const auto& [size, v] : f->*metric) {
      if (first || common.count(size)) sizes.insert(size);
    }
    common = std::move(sizes);
    first = false;
  }
  return common;
}

std::string Percent(double fraction) { return FormatFixed(fraction * 100, 1) + "%"; }

}  // namespace

AbJudgement JudgeFigure(const std::vector<double>& a, const std::vector<double>& b,
                        bool higher_is_better, double min_effect) {
  AbJudgement j;
  j.metric = higher_is_better ? "busbw" : "time";
  j.a = a;
  j.b = b;
  j.outcome = AbOutcome::kInconclusive;
  if (a.empty() || b.empty()) return j;
  const double ma = *stats::Median(a), mb = *stats::Median(b);
  j.ratio = ma > 0 ? mb / ma : 0;
  j.ratio_low = j.ratio_high = j.ratio;
  bool paired = false;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    if (a[i] <= 0) continue;
    const double q = b[i] / a[i];
    j.ratio_low = paired ? std::min(j.ratio_low, q) : q;
    j.ratio_high = paired ? std::max(j.ratio_high, q) : q;
    paired = true;
  }
  j.noise = std::max(RelativeSpread(a), RelativeSpread(b));
  if (a.size() < 2 || b.size() < 2 || ma <= 0) return j;
  const bool separated =
      *std::min_element(b.begin(), b.end()) > *std::max_element(a.begin(), a.end()) ||
      *std::max_element(b.begin(), b.end()) < *std::min_element(a.begin(), a.end());
  const bool beyond = separated && std::abs(j.ratio - 1) > std::max(2 * j.noise, min_effect);
  if (!beyond) {
    j.outcome = AbOutcome::kNoDifference;
  } else {
    j.outcome = (j.ratio > 1) == higher_is_better ? AbOutcome::kBFaster : AbOutcome::kBSlower;
  }
  return j;
}

void JudgeAbRuns(const std::vector<AbRun>& runs, AbRecord* record, double min_effect) {
  // (collective, nodes) -> round -> side -> figures
  using Key = std::pair<std::string, int>;
  std::map<Key, std::map<int, std::map<char, Figures>>> series;
  for (const AbRun& r : runs) {
    if (!r.run) continue;
    const Key key{r.run->collective.value_or("all_reduce"), r.run->nodes.value_or(1)};
    series[key][r.round][r.side] = FiguresOf(*r.run);
  }
  record->headlines.clear();
  record->sizes.clear();
  for (const auto& [key, rounds] : series) {
    // Rounds with both sides: the pairs.
    std::vector<const Figures*> a_runs, b_runs, all;
    for (const auto& [round, sides] : rounds) {
      if (!sides.count('A') || !sides.count('B')) continue;
      a_runs.push_back(&sides.at('A'));
      b_runs.push_back(&sides.at('B'));
    }
    all = a_runs;
    all.insert(all.end(), b_runs.begin(), b_runs.end());
    if (all.empty()) continue;
    auto label = [&](AbJudgement j, std::optional<int64_t> size) {
      j.collective = key.first;
      j.nodes = key.second;
      j.size_bytes = size;
      return j;
    };
    for (auto [metric, higher_is_better] :
         {std::pair{&Figures::busbw, true}, std::pair{&Figures::time, false}}) {
      const std::set<int64_t> sizes = CommonSizes(all, metric);
      if (sizes.empty()) continue;
      const int64_t lo = higher_is_better ? std::min(kBusbwHeadlineMinBytes, *sizes.rbegin()) : 1;
      const int64_t hi = higher_is_better ? INT64_MAX : kLatencyHeadlineMaxBytes;
      std::vector<double> a, b;
      for (size_t i = 0; i < a_runs.size(); ++i) {
        auto va = Band(a_runs[i]->*metric, sizes, lo, hi);
        auto vb = Band(b_runs[i]->*metric, sizes, lo, hi);
        if (va && vb) {
          a.push_back(*va);
          b.push_back(*vb);
        }
      }
      if (!a.empty()) {
        record->headlines.push_back(
            label(JudgeFigure(a, b, higher_is_better, min_effect), std::nullopt));
      }
      for (int64_t size : sizes) {
        std::vector<double> sa, sb;
        for (size_t i = 0; i < a_runs.size(); ++i) {
          sa.push_back((a_runs[i]->*metric).at(size));
          sb.push_back((b_runs[i]->*metric).at(size));
        }
        record->sizes.push_back(label(JudgeFigure(sa, sb, higher_is_better, min_effect), size));
      }
    }
  }
  std::set<AbOutcome> seen;
  for (const AbJudgement& j : record->headlines) seen.insert(j.outcome);
  if (seen.empty() || seen == std::set<AbOutcome>{AbOutcome::kInconclusive}) {
    record->outcome = AbOutcome::kInconclusive;
  } else if (seen.count(AbOutcome::kBFaster) && seen.count(AbOutcome::kBSlower)) {
    record->outcome = AbOutcome::kMixed;
  } else if (seen.count(AbOutcome::kBFaster)) {
    record->outcome = AbOutcome::kBFaster;
  } else if (seen.count(AbOutcome::kBSlower)) {
    record->outcome = AbOutcome::kBSlower;
  } else {
    record->outcome = AbOutcome::kNoDifference;
  }
}

std::string DescribeJudgement(const AbJudgement& j) {
  const std::string noise = Percent(j.noise);
  switch (j.outcome) {
    case AbOutcome::kBFaster:
    case AbOutcome::kBSlower:
      return std::string(j.outcome == AbOutcome::kBFaster ? "B faster" : "B slower") + " by " +
             Percent(std::abs(j.ratio - 1)) + " (beyond noise " + noise + ")";
    case AbOutcome::kNoDifference:
      return "no difference beyond noise (" + noise + " noise)";
    case AbOutcome::kMixed:
    case AbOutcome::kInconclusive:
      break;
  }
  return "inconclusive (fewer than 2 repeats a side)";
}

std::string AbVerdictText(const AbRecord& r) {
  std::ostringstream out;
  out << "A/B " << r.ab_id << ": B with " << r.setting << ", A without; " << r.rounds
      << " round(s), order " << r.order << "\n";
  for (const AbJudgement& j : r.headlines) {
    out << "  " << j.collective << ", " << j.nodes << (j.nodes == 1 ? " node" : " nodes") << ", "
        << (j.metric == "busbw" ? "busbw (large sizes)" : "time (small sizes)") << ": B/A "
        << FormatFixed(j.ratio, 3) << " (rounds " << FormatFixed(j.ratio_low, 3) << ".."
        << FormatFixed(j.ratio_high, 3) << "): " << DescribeJudgement(j) << "\n";
  }
  int beyond = 0;
  for (const AbJudgement& j : r.sizes) {
    if (j.outcome == AbOutcome::kBFaster || j.outcome == AbOutcome::kBSlower) ++beyond;
  }
  out << "  sizes beyond noise: " << beyond << " of " << r.sizes.size() << "\n";
  for (const AbJudgement& j : r.sizes) {
    if (j.outcome != AbOutcome::kBFaster && j.outcome != AbOutcome::kBSlower) continue;
    out << "    " << j.collective << ", " << j.nodes << " node(s), " << j.metric << " at "
        << FormatBytes(j.size_bytes.value_or(0)) << ": " << DescribeJudgement(j) << "\n";
  }
  out << "verdict: ";
  switch (r.outcome) {
    case AbOutcome::kNoDifference:
      out << "no difference beyond noise";
      break;
    case AbOutcome::kBFaster:
      out << "B (" << r.setting << ") faster beyond noise";
      break;
    case AbOutcome::kBSlower:
      out << "B (" << r.setting << ") slower beyond noise";
      break;
    case AbOutcome::kMixed:
      out << "mixed: B faster on some figures, slower on others";
      break;
    case AbOutcome::kInconclusive:
      out << "inconclusive (fewer than 2 repeats a side)";
      break;
  }
  out << "\n";
  return out.str();
}

}  // namespace fabtrack::analyzer
