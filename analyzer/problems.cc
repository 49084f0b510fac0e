#include "analyzer/problems.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "core/clock.h"

namespace fabtrack::analyzer {
namespace {

// How far a finding's value is from its baseline, relative: a tie-break
// between findings of one severity (the worst night of a regression).
double Deviation(const Finding& f) {
  if (!f.value || !f.baseline || *f.baseline == 0) return 0;
  return std::fabs(*f.value - *f.baseline) / std::fabs(*f.baseline);
}

bool Worse(const Finding& a, const Finding& b) {
  if (a.severity != b.severity) return a.severity > b.severity;
  return Deviation(a) > Deviation(b);
}

int StateRank(ProblemState s) {
  switch (s) {
    case ProblemState::kNew:
    case ProblemState::kOngoing:
      return 0;
    case ProblemState::kRecovered:
      return 1;
    case ProblemState::kAcknowledged:
      return 2;
  }
  return 3;
}

// The finding that explains `f` (a finding of a cause of f's kind on f's run,
// and subject where the link wants it; warning or critical unless `notes`)
// and the link, when one is among `findings`.
struct Explanation {
  const Finding* cause = nullptr;
  const SharedCause* link = nullptr;
};
Explanation CauseOf(const Finding& f, const std::vector<Finding>& findings, bool notes) {
  if (!f.run_id) return {};
  for (const SharedCause& link : SharedCauses()) {
    if (link.effect != f.kind) continue;
    for (const Finding& other : findings) {
      if (other.kind == link.cause && other.run_id == f.run_id &&
          (!link.same_subject || other.subject == f.subject) &&
          (notes ? other.severity == Severity::kInfo : other.severity != Severity::kInfo)) {
        return {&other, &link};
      }
    }
  }
  return {};
}

// A pooled band verdict (analyzer/series_pool.h): the night's series behind
// it are in its evidence, each with its own z.
bool IsBandVerdict(const Finding& f) {
  return f.evidence.is_object() && f.evidence.contains("pooled") && f.evidence.contains("series") &&
         f.evidence["series"].is_array();
}

// The series that carry a band verdict: those that show the shift on their
// own (z >= 2: the pooled rules ask the rest of the night's series for 1.5
// together), else the one that shows it most.
std::vector<std::string> BandCarriers(const Finding& band) {
  constexpr double kCarrierZ = 2;
  std::vector<std::string> carriers;
  std::string top;
  double top_z = -1e300;
  for (const nlohmann::json& s : band.evidence["series"]) {
    if (!s.is_object() || !s.contains("subject") || !s["subject"].is_string()) continue;
    const double z = s.value("z", 0.0);
    if (z >= kCarrierZ) carriers.push_back(s["subject"].get<std::string>());
    if (z > top_z) {
      top_z = z;
      top = s["subject"].get<std::string>();
    }
  }
  if (carriers.empty() && !top.empty()) carriers.push_back(top);
  return carriers;
}

}  // namespace

const std::vector<SharedCause>& SharedCauses() {
  static const std::vector<SharedCause> links = [] {
    std::vector<SharedCause> l = {{"rdma_absent", "socket_fallback"}};
    for (const char* effect : {"latency_regression", "busbw_regression", "midsize_busbw_regression",
                               "scaling_drop", "latency_jitter"}) {
      l.push_back({"cpu_bound", effect, /*same_subject=*/false,
                   /*effect_severity_counts=*/false});
    }
    return l;
  }();
  return links;
}

void LinkSharedCauses(std::vector<Finding>* findings) {
  // Which finding explains which, before any is changed.
  std::vector<std::optional<size_t>> causes(findings->size());
  std::vector<const SharedCause*> links(findings->size(), nullptr);
  for (size_t i = 0; i < findings->size(); ++i) {
    const Finding& f = (*findings)[i];
    Explanation e = CauseOf(f, *findings, f.severity == Severity::kInfo);
    // A cause that is itself explained is not one (no chains).
    if (e.cause && !CauseOf(*e.cause, *findings, e.cause->severity == Severity::kInfo).cause) {
      causes[i] = static_cast<size_t>(e.cause - findings->data());
      links[i] = e.link;
    }
  }
  for (size_t i = 0; i < findings->size(); ++i) {
    if (!causes[i]) continue;
    Finding& f = (*findings)[i];
    Finding& c = (*findings)[*causes[i]];
    if (f.severity == Severity::kInfo) {
      c.evidence["explains_notes"].push_back(
          {{"kind", f.kind}, {"message", f.message}, {"evidence", f.evidence}});
    } else {
      c.evidence["explains"].push_back(f.kind);
      f.evidence["explained_by"] = c.kind;
      if (!links[i]->effect_severity_counts && f.severity > c.severity) {
        f.evidence["severity_before_cause"] = SeverityLabel(f.severity);
        f.severity = c.severity;
      }
    }
  }
  // One note per cause: the explained notes live in their cause's evidence.
  std::vector<Finding> kept;
  kept.reserve(findings->size());
  for (size_t i = 0; i < findings->size(); ++i) {
    if (causes[i] && (*findings)[i].severity == Severity::kInfo) continue;
    kept.push_back(std::move((*findings)[i]));
  }
  *findings = std::move(kept);
}

std::vector<Problem> FoldProblems(const AnalysisResult& result, const std::vector<ProblemAck>& acks,
                                  const std::string& now_iso,
                                  const std::vector<ProblemHistory>& history) {
  const double now = ParseIsoSeconds(now_iso).value_or(0);
  // A finding without a run time (a job's) belongs to the analysis itself.
  auto seen_at = [&](const Finding& f) { return f.run_started_at.value_or(now_iso); };
  const std::optional<int64_t> newest_night =
      result.newest_judged_at ? std::optional<int64_t>(NightOf(*result.newest_judged_at))
                              : std::nullopt;
  struct Fold {
    Problem problem;
    std::set<int64_t> nights;
  };
  std::map<std::pair<std::string, std::string>, Fold> folds;
  // Findings explained by another of their run (SharedCauses): folded into
  // the cause's problem after the others made it.
  std::vector<std::pair<const Finding*, const Finding*>> explained;
  // A finding into the problem of its kind and subject.
  auto fold_in = [&](const Finding& f) {
    auto [it, inserted] = folds.try_emplace({f.kind, f.subject});
    Problem& p = it->second.problem;
    const std::string seen = seen_at(f);
    if (inserted) {
      p.id = FindingFingerprint(result.cluster, f.kind, f.subject);
      p.kind = f.kind;
      p.subject = f.subject;
      p.worst = f;
      p.latest = f;
      p.first_seen = p.last_seen = seen;
    } else {
      if (Worse(f, p.worst)) p.worst = f;
      if (seen >= p.last_seen) {
        p.latest = f;
        p.last_seen = seen;
      }
      p.first_seen = std::min(p.first_seen, seen);
    }
    ++p.findings;
    it->second.nights.insert(NightOf(ParseIsoSeconds(seen).value_or(now)));
  };
  // Band verdicts, folded after every series' own finding made its problem.
  std::vector<const Finding*> bands;
  for (const Finding& f : result.findings) {
    // An info finding is a note (a one-off wobble within noise), not a
    // thing to fix: it stays among the findings only.
    if (f.severity == Severity::kInfo) continue;
    if (IsBandVerdict(f) && !CauseOf(f, result.findings, /*notes=*/false).cause) {
      bands.push_back(&f);
      continue;
    }
    if (Explanation e = CauseOf(f, result.findings, /*notes=*/false); e.cause) {
      explained.push_back({&f, e.cause});
      continue;
    }
    fold_in(f);
  }
  // A band verdict whose carrying series each have a problem of their own
  // that night (a regression, jitter) is their evidence, not a fault of its
  // own: it goes into those problems. Otherwise it is a problem.
  for (const Finding* band : bands) {
    const int64_t night = NightOf(ParseIsoSeconds(seen_at(*band)).value_or(now));
    std::vector<Fold*> carriers;
    for (const std::string& subject : BandCarriers(*band)) {
      Fold* best = nullptr;
      for (auto& [key, fold] : folds) {
        if (key.second != subject || !fold.nights.count(night)) continue;
        if (!best || Worse(fold.problem.worst, best->problem.worst)) best = &fold;
      }
      if (!best) {
        carriers.clear();
        break;
      }
      carriers.push_back(best);
    }
    if (!carriers.empty()) {
      for (Fold* fold : carriers) {
        fold->problem.related.push_back(*band);
        ++fold->problem.findings;
      }
      continue;
    }
    fold_in(*band);
  }
  for (const auto& [f, cause] : explained) {
    auto it = folds.find({cause->kind, cause->subject});
    if (it == folds.end()) continue;  // cannot happen: the cause is a problem
    Problem& p = it->second.problem;
    ++p.findings;
    auto same_kind = std::find_if(p.related.begin(), p.related.end(),
                                  [&](const Finding& r) { return r.kind == f->kind; });
    if (same_kind == p.related.end()) {
      p.related.push_back(*f);
    } else if (seen_at(*f) >= seen_at(*same_kind)) {
      *same_kind = *f;
    }
  }
  std::vector<Problem> problems;
  for (auto& [key, fold] : folds) {
    Problem& p = fold.problem;
    p.severity = p.worst.severity;
    for (const Finding& r : p.related) p.severity = std::max(p.severity, r.severity);
    p.nights = static_cast<int>(fold.nights.size());
    int64_t first_night = *fold.nights.begin();
    const int64_t last_night = *fold.nights.rbegin();
    for (const ProblemHistory& stored : history) {
      if (stored.kind != p.kind || stored.subject != p.subject) continue;
      p.nights = NightsWithHistory(stored, fold.nights);
      if (std::optional<double> first = ParseIsoSeconds(stored.first_seen);
          first && NightOf(*first) < first_night) {
        first_night = NightOf(*first);
        p.first_seen = stored.first_seen;
      }
    }
    if (newest_night && last_night < *newest_night) {
      p.state = ProblemState::kRecovered;
    } else {
      p.state =
          newest_night && first_night < *newest_night ? ProblemState::kOngoing : ProblemState::kNew;
    }
    for (const ProblemAck& ack : acks) {
      if (ack.id != p.id) continue;
      std::optional<double> until = ParseIsoSeconds(ack.until);
      if (until && *until > now) {
        p.state = ProblemState::kAcknowledged;
        p.ack = ack;
      }
    }
    problems.push_back(std::move(p));
  }
  std::stable_sort(problems.begin(), problems.end(), [](const Problem& a, const Problem& b) {
    if (StateRank(a.state) != StateRank(b.state)) return StateRank(a.state) < StateRank(b.state);
    if (a.severity != b.severity) return a.severity > b.severity;
    if (a.kind != b.kind) return a.kind < b.kind;
    return a.subject < b.subject;
  });
  return problems;
}

std::string VerdictLine(const std::vector<Problem>& problems) {
  const Problem* top = nullptr;
  int counted = 0, acknowledged = 0;
  for (const Problem& p : problems) {
    if (p.state == ProblemState::kAcknowledged) {
      ++acknowledged;
      continue;
    }
    ++counted;
    // Problems are ordered open first, then by severity: the first one is the
    // top, unless a recovered one is worse.
    if (!top || p.severity > top->severity) top = &p;
  }
  if (!top) {
    return acknowledged == 0 ? "OK: no problem"
                             : "OK: no problem (" + std::to_string(acknowledged) + " acknowledged)";
  }
  std::string line = std::string(SeverityLabel(top->severity)) + ": " + top->kind + " " +
                     top->subject + " (" + ProblemStateName(top->state) + ", since " +
                     top->first_seen.substr(0, 10) + ", " + std::to_string(top->nights) + " night" +
                     (top->nights == 1 ? "" : "s") + ")";
  if (counted > 1) {
    line += " and " + std::to_string(counted - 1) + " more problem" + (counted == 2 ? "" : "s");
  }
  return line;
}

}  // namespace fabtrack::analyzer
