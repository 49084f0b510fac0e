// What a RAS report says is wrong, the same way for the text and the JSON
// report: which communicators, which ranks (rank, GPU, pid, node IP).
#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include "collector/ras/ras_report.h"

namespace fabtrack::ras {
namespace {

void Add(Verdict* v, Finding f) {
  v->health = std::max(v->health, f.severity);
  v->findings.push_back(std::move(f));
}

std::string CommName(const Issue& i) {
  return i.comm_hash.empty() ? i.communicator : i.communicator + " (" + i.comm_hash + ")";
}

std::string Plural(int n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

void JudgeText(const Report& r, Verdict* v) {
  for (const CommGroupRow& g : r.groups) v->communicators += g.comms;
  if (!r.network_missing.empty()) {
    Add(v, Finding{Health::kWarning,
                   "unreachable",
                   "",
                   "RAS got no data from " +
                       Plural(static_cast<int>(r.network_missing.size()), "process", "processes") +
                       " while gathering the RAS network",
                   {},
                   r.network_missing});
  }
  // Processes the job-wide DEAD block names: a rank of theirs that a
  // communicator misses is missing because it is dead.
  std::set<std::pair<std::string, int64_t>> dead_processes;
  for (const Issue& i : r.issues) {
    if (i.kind != "DEAD") continue;
    for (const ProcessRef& p : i.processes) dead_processes.insert({p.node, p.pid});
  }
  for (const Issue& i : r.issues) {
    Finding f;
    f.communicator = CommName(i);
    f.processes = i.processes;
    f.ranks = i.ranks;
    std::string first_detail = i.details.empty() ? i.kind : i.details.front();
    if (i.kind == "DEAD") {
      f.severity = Health::kCritical;
      f.kind = "dead";
      f.message = first_detail;
    } else if (i.kind == "INCOMPLETE") {
      f.severity = Health::kCritical;
      f.kind = i.communicator.empty() ? "incomplete" : "missing";
      f.message = first_detail;
      for (RankRef& k : f.ranks) {
        if (k.state.empty() && k.pid && dead_processes.count({k.node, *k.pid})) {
          k.state = "considered dead";
        }
      }
    } else if (i.kind == "ERROR") {
      f.severity = Health::kCritical;
      f.kind = "error";
      f.message = first_detail;
      for (const RankGroup& g : i.groups) {
        for (RankRef k : g.ranks) {
          if (k.state.empty()) k.state = g.value;
          f.ranks.push_back(std::move(k));
        }
      }
    } else if (i.kind == "MISMATCH") {
      f.severity = Health::kWarning;
      f.kind = "mismatch";
      // Per aspect (2.26+: per collective), the ranks short of the highest
      // operation count are behind and those at it ahead. RAS names only
      // the smaller groups' ranks, so the ranks behind may be the unnamed
      // majority (NVIDIA/nccl#1911: 30 behind, the 2 ahead named): say so.
      std::map<std::string, int64_t> top, low;
      for (const RankGroup& g : i.groups) {
        if (!g.operation) continue;
        top[g.aspect] = std::max(top[g.aspect], *g.operation);
        low[g.aspect] = low.count(g.aspect) ? std::min(low[g.aspect], *g.operation) : *g.operation;
      }
      std::string text;
      const std::string* aspect = nullptr;
      for (const RankGroup& g : i.groups) {
        bool behind = g.operation && *g.operation < top[g.aspect];
        bool ahead = g.operation && *g.operation == top[g.aspect] && low[g.aspect] < top[g.aspect];
        std::string how = behind ? "behind: " : ahead ? "ahead: " : "";
        if (aspect && *aspect != g.aspect) text += " / " + g.aspect + ": ";
        if (aspect && *aspect == g.aspect) text += "; ";
        aspect = &g.aspect;
        text += std::to_string(g.count) + " " +
                (how.empty() ? "" : how.substr(0, how.size() - 2) + ", ") + g.value;
        std::vector<int> rest;
        if (behind && g.ranks.empty()) rest = UnnamedGroupRanks(r, i, g);
        if (behind && g.ranks.empty()) {
          text += rest.empty() ? " (not named by RAS)" : " (the communicator's other ranks)";
        }
        for (RankRef k : g.ranks) {
          if (k.state.empty()) k.state = how + g.value;
          f.ranks.push_back(std::move(k));
        }
        for (int rank : rest) {
          RankRef k;
          k.rank = rank;
          k.state = how + g.value + " (not named by RAS: the communicator's other ranks)";
          f.ranks.push_back(std::move(k));
        }
      }
      f.message = first_detail + (text.empty() ? "" : ": " + text);
    } else if (i.kind == "TIMEOUT") {
      f.severity = Health::kWarning;
      f.kind = "timeout";
      f.message = first_detail;
    } else {
      f.severity = i.error ? Health::kCritical : Health::kWarning;
      f.kind = i.kind;
      f.message = first_detail;
    }
    Add(v, std::move(f));
  }
}

// A rank of the JSON report, present (JsonRank) or missing (JsonMissingRank):
// both carry the same identity fields.
template <typename JsonRankLike>
RankRef RankRefFromJson(const JsonRankLike& k) {
  RankRef r;
  r.rank = k.rank;
  r.gpu = std::to_string(k.cuda_dev);
  if (k.nvml_dev != k.cuda_dev) r.gpu += " (NVML " + std::to_string(k.nvml_dev) + ")";
  // rasDumpCommsToJSON writes host "unknown" and pid -1 for a rank whose
  // process RAS does not know.
  if (k.pid >= 0) r.pid = k.pid;
  if (k.host != "unknown") r.node = k.host;
  return r;
}

void JudgeJson(const Report& r, Verdict* v) {
  v->communicators = static_cast<int>(r.communicators.size());
  for (const JsonCommunicator& c : r.communicators) {
    Finding dead{Health::kCritical, "dead", c.hash, "", {}, {}};
    Finding missing{Health::kCritical, "missing", c.hash, "", {}, {}};
    for (const JsonMissingRank& m : c.missing_ranks) {
      RankRef k = RankRefFromJson(m);
      k.state = m.considered_dead ? "considered dead" : m.unresponsive ? "unresponsive" : "missing";
      (m.considered_dead ? dead : missing).ranks.push_back(std::move(k));
    }
    if (!dead.ranks.empty()) {
      dead.message = Plural(static_cast<int>(dead.ranks.size()), "rank", "ranks") + " of " +
                     std::to_string(c.size) + " considered dead";
      Add(v, std::move(dead));
    }
    if (!missing.ranks.empty()) {
      missing.message = "missing data from " +
                        Plural(static_cast<int>(missing.ranks.size()), "rank", "ranks") + " of " +
                        std::to_string(c.size);
      Add(v, std::move(missing));
    }
    Finding errors{Health::kCritical, "error", c.hash, "", {}, {}};
    for (const JsonRank& k : c.ranks) {
      // 0 ncclSuccess, 7 ncclInProgress (still initialising): anything else is an error.
      bool init_bad = k.init_state != 0 && k.init_state != 7;
      bool async_bad = k.async_error != 0 && k.async_error != 7;
      if (init_bad || async_bad || k.abort_flag) {
        RankRef ref = RankRefFromJson(k);
        ref.state = init_bad    ? "init_state " + std::to_string(k.init_state)
                    : async_bad ? "async_error " + std::to_string(k.async_error)
                                : "aborted";
        errors.ranks.push_back(std::move(ref));
      }
    }
    if (!errors.ranks.empty()) {
      errors.message = Plural(static_cast<int>(errors.ranks.size()), "rank", "ranks") +
                       " with an error or aborted";
      Add(v, std::move(errors));
    }
    // Per collective, the ranks short of the highest count are behind,
    // however many they are (RAS's text lists them only when few).
    std::map<std::string, int64_t> top;
    for (const JsonRank& k : c.ranks) {
      for (const auto& [op, n] : k.collective_counts) top[op] = std::max(top[op], n);
    }
    Finding behind{Health::kWarning, "behind", c.hash, "", {}, {}};
    std::string ops;
    for (const auto& [op, max] : top) {
      int n = 0;
      for (const JsonRank& k : c.ranks) {
        for (const auto& [kop, count] : k.collective_counts) {
          if (kop != op || count >= max) continue;
          ++n;
          RankRef ref = RankRefFromJson(k);
          ref.state = op + " " + std::to_string(count) + " of " + std::to_string(max);
          behind.ranks.push_back(std::move(ref));
        }
      }
      if (n > 0) {
        if (!ops.empty()) ops += "; ";
        ops += op + ": " + std::to_string(n) + " of " + std::to_string(c.ranks.size()) +
               " ranks behind " + std::to_string(max);
      }
    }
    if (!behind.ranks.empty()) {
      behind.message = ops;
      Add(v, std::move(behind));
    }
  }
  if (r.timeouts && *r.timeouts > 0) {
    Add(v, Finding{Health::kWarning,
                   "timeout",
                   "",
                   "encountered " +
                       Plural(*r.timeouts, "communication timeout", "communication timeouts") +
                       " while gathering communicator data",
                   {},
                   {}});
  }
}

}  // namespace

std::vector<int> UnnamedGroupRanks(const Report& report, const Issue& issue,
                                   const RankGroup& group) {
  if (!group.ranks.empty() || !group.operation || group.count <= 0) return {};
  // "#0-1": group 0 of the table, communicator 1 of it.
  if (issue.communicator.size() < 2 || issue.communicator[0] != '#') return {};
  int row = std::atoi(issue.communicator.c_str() + 1);
  int size = 0;
  for (const CommGroupRow& g : report.groups) {
    if (g.group == row) size = g.ranks_per_comm;
  }
  // The size is the peer's word: past any real job (NCCL's largest run to
  // some 10^5 ranks), a garbled or hostile table would have ranks made up by
  // the billion.
  constexpr int kMostRanks = 1 << 20;
  if (size <= 0 || size > kMostRanks) return {};
  std::set<int> known;
  for (const RankGroup& g : issue.groups) {
    if (g.aspect != group.aspect || !g.operation) continue;
    if (g.ranks.empty() && &g != &group) return {};  // two unnamed groups: which rank is where?
    for (const RankRef& k : g.ranks) known.insert(k.rank);
  }
  // Ranks that gave RAS no data are in no group.
  for (const Issue& other : report.issues) {
    if (other.kind != "INCOMPLETE" || other.communicator != issue.communicator) continue;
    for (const RankRef& k : other.ranks) known.insert(k.rank);
  }
  std::vector<int> rest;
  for (int k = 0; k < size; ++k) {
    if (!known.count(k)) rest.push_back(k);
  }
  if (static_cast<int>(rest.size()) != group.count) return {};
  return rest;
}

Verdict Judge(const Report& report) {
  Verdict v;
  if (report.format == "json") {
    JudgeJson(report, &v);
  } else {
    JudgeText(report, &v);
  }
  if (!report.complete) {
    std::string why =
        report.problems.empty() ? "the report was not read whole" : report.problems.front();
    Add(&v, Finding{Health::kCritical, "unreadable", "", "incomplete RAS reply: " + why, {}, {}});
  }
  return v;
}

const char* HealthLabel(Health h) {
  switch (h) {
    case Health::kHealthy:
      return "healthy";
    case Health::kWarning:
      return "warning";
    case Health::kCritical:
      return "critical";
  }
  return "?";
}

}  // namespace fabtrack::ras
