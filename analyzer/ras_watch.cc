#include "analyzer/ras_watch.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>

namespace fabtrack::analyzer {
namespace {

using Counts = std::map<std::pair<int, std::string>, int64_t>;  // (rank, op) -> count

const RasCommState* FindComm(const RasSnapshot& s, const std::string& id) {
  for (const RasCommState& c : s.communicators) {
    if (c.id == id) return &c;
  }
  return nullptr;
}

Counts CountsOf(const RasCommState& c) {
  Counts out;
  for (const RasRankState& k : c.ranks) {
    for (const auto& [op, n] : k.op_counts) out[{k.rank, op}] = n;
  }
  return out;
}

// Ranks at different counts of one operation: some wait on the others.
bool Disagree(const Counts& counts) {
  std::map<std::string, std::set<int64_t>> by_op;
  for (const auto& [key, n] : counts) by_op[key.second].insert(n);
  for (const auto& [op, values] : by_op) {
    if (values.size() > 1) return true;
  }
  return false;
}

// A communicator that could be making progress (a finalising or aborted one
// is not expected to; an initialising one has launched nothing).
bool Runs(const RasCommState& c) { return c.state.empty() || c.state == "RUNNING"; }

RasWatchRank WatchRank(const RasRankState& k, std::string detail) {
  return RasWatchRank{k.rank, k.node, k.host, k.gpu, k.pid, std::move(detail)};
}

int Rank(const std::string& severity) {
  return severity == "critical" ? 2 : severity == "warning" ? 1 : 0;
}

// `c`'s ranks by number: a job of 10^5 ranks, most behind, is not scanned
// once per rank behind.
std::unordered_map<int, const RasRankState*> ByRank(const RasCommState& c) {
  std::unordered_map<int, const RasRankState*> out;
  for (const RasRankState& k : c.ranks) out.emplace(k.rank, &k);
  return out;
}

// The ranks below the highest count of an operation in `c`: (rank, op) ->
// (its count, the highest).
std::map<std::pair<int, std::string>, std::pair<int64_t, int64_t>> Behind(const RasCommState& c) {
  std::map<std::string, int64_t> top;
  for (const RasRankState& k : c.ranks) {
    for (const auto& [op, n] : k.op_counts) top[op] = std::max(top[op], n);
  }
  std::map<std::pair<int, std::string>, std::pair<int64_t, int64_t>> out;
  for (const RasRankState& k : c.ranks) {
    for (const auto& [op, n] : k.op_counts) {
      if (n < top[op]) out[{k.rank, op}] = {n, top[op]};
    }
  }
  return out;
}

struct Frozen {
  std::string id;
  size_t since = 0;  // index of the first snapshot of the frozen run
  bool disagree = false;
};

// The processes PEER_DEAD events declared dead, each once (its first event).
std::optional<RasWatchFinding> PeerDead(const std::vector<RasSnapshot>& snapshots,
                                        const std::vector<RasEvent>& events) {
  RasWatchFinding finding;
  finding.kind = "peer_dead";
  finding.severity = "critical";
  std::set<std::string> seen;
  for (const RasEvent& e : events) {
    if (e.event != "PEER_DEAD") continue;
    // RAS names a process it knows by pid; one it does not by its address.
    std::string key = e.node + "/" + (e.pid ? std::to_string(*e.pid) : "<" + e.port + ">");
    if (!seen.insert(key).second) continue;
    RasWatchRank k{-1, e.node, e.host, e.gpus, e.pid, ""};
    // The process's ranks, as the newest snapshot that shows it gives them.
    std::vector<std::string> ranks;
    for (auto s = snapshots.rbegin(); s != snapshots.rend() && ranks.empty() && e.pid; ++s) {
      for (const RasCommState& c : s->communicators) {
        std::string of;
        for (const RasRankState& r : c.ranks) {
          if (r.node != e.node || r.pid != e.pid) continue;
          of += (of.empty() ? "" : ",") + std::to_string(r.rank);
          if (k.host.empty()) k.host = r.host;
          if (k.gpu.empty()) k.gpu = r.gpu;
        }
        if (!of.empty()) ranks.push_back(of + " of " + c.id);
      }
    }
    k.detail = "PEER_DEAD";
    if (!e.event_time.empty()) k.detail += " at " + e.event_time + " (RAS's clock)";
    for (size_t i = 0; i < ranks.size(); ++i) k.detail += (i ? "; " : ", rank ") + ranks[i];
    if (finding.since.empty() || (!e.received_at.empty() && e.received_at < finding.since)) {
      finding.since = e.received_at;
    }
    finding.ranks.push_back(std::move(k));
  }
  if (finding.ranks.empty()) return std::nullopt;
  finding.message = std::to_string(finding.ranks.size()) +
                    (finding.ranks.size() == 1 ? " process" : " processes") +
                    " declared dead by RAS's event stream";
  return finding;
}

}  // namespace

RasWatchVerdict JudgeRasWatch(const std::vector<RasSnapshot>& snapshots,
                              const std::vector<RasEvent>& events) {
  RasWatchVerdict v;
  v.snapshots = static_cast<int>(snapshots.size());
  if (snapshots.empty()) return v;
  v.first_taken_at = snapshots.front().taken_at;
  v.last_taken_at = snapshots.back().taken_at;
  const RasSnapshot& last = snapshots.back();
  const size_t n = snapshots.size();
  if (std::optional<RasWatchFinding> dead = PeerDead(snapshots, events)) {
    v.findings.push_back(std::move(*dead));
  }

  // Stuck: per communicator of the newest snapshot, the run of snapshots
  // ending with it over which its counts stayed the same.
  std::vector<Frozen> frozen;
  int judged = 0;
  for (const RasCommState& c : last.communicators) {
    Counts now = CountsOf(c);
    if (now.empty() || !Runs(c) || n < 2) continue;
    const RasCommState* prev = FindComm(snapshots[n - 2], c.id);
    if (prev == nullptr || !Runs(*prev) || CountsOf(*prev).empty()) continue;
    ++judged;
    size_t since = n - 1;
    while (since > 0) {
      const RasCommState* p = FindComm(snapshots[since - 1], c.id);
      if (p == nullptr || !Runs(*p) || CountsOf(*p) != now) break;
      --since;
    }
    // The text report gives counts only for the ranks that differ: its
    // MISMATCH says the others are elsewhere.
    bool mismatch = c.errors.find("MISMATCH") != std::string::npos;
    if (since < n - 1) frozen.push_back({c.id, since, Disagree(now) || mismatch});
  }
  bool all_frozen = judged > 0 && static_cast<int>(frozen.size()) == judged;
  for (const Frozen& f : frozen) {
    if (!f.disagree && !all_frozen) continue;  // idle beside others that advance
    const RasCommState& c = *FindComm(last, f.id);
    RasWatchFinding finding;
    finding.kind = "stuck";
    finding.severity = "critical";
    finding.communicator = c.id;
    finding.since = snapshots[f.since].taken_at;
    int over = static_cast<int>(n - f.since);
    auto behind = Behind(c);
    auto by_rank = ByRank(c);
    std::set<int> holding;
    for (const auto& [key, counts] : behind) {
      if (!holding.insert(key.first).second) continue;
      if (const RasRankState* k = by_rank.count(key.first) ? by_rank.at(key.first) : nullptr) {
        finding.ranks.push_back(WatchRank(*k, key.second + " " + std::to_string(counts.first) +
                                                  ", others at " + std::to_string(counts.second)));
      }
    }
    finding.message =
        "no collective advanced over " + std::to_string(over) + " snapshots since " + finding.since;
    if (holding.empty() && f.disagree) {
      // Only the outliers' counts are known (text report): name them.
      for (const RasRankState& k : c.ranks) {
        if (k.op_counts.empty()) continue;
        holding.insert(k.rank);
        std::string counts;
        for (const auto& [op, count] : k.op_counts) {
          counts += (counts.empty() ? "" : ", ") + op + " " + std::to_string(count);
        }
        finding.ranks.push_back(WatchRank(k, counts + ", others elsewhere"));
      }
      finding.message +=
          "; RAS names " + std::to_string(holding.size()) + " ranks at other counts than the rest";
    } else if (!holding.empty()) {
      finding.message += "; " + std::to_string(holding.size()) + " of " +
                         std::to_string(c.ranks.size()) + " ranks behind hold it";
    } else {
      finding.message += "; every rank at the same counts (hung inside an operation)";
    }
    v.findings.push_back(std::move(finding));
  }

  // Laggards: behind in the newest snapshot and, where there is one, in the
  // one before (a rank one operation behind for a moment is normal).
  for (const RasCommState& c : last.communicators) {
    auto behind = Behind(c);
    if (behind.empty()) continue;
    const RasCommState* prev = n >= 2 ? FindComm(snapshots[n - 2], c.id) : nullptr;
    std::set<std::pair<int, std::string>> before;
    if (prev != nullptr) {
      for (const auto& [key, counts] : Behind(*prev)) before.insert(key);
    }
    auto by_rank = ByRank(c);
    RasWatchFinding finding;
    finding.kind = "laggard";
    finding.severity = "warning";
    finding.communicator = c.id;
    finding.since = prev != nullptr ? snapshots[n - 2].taken_at : last.taken_at;
    std::map<std::string, int> per_op;
    std::set<int> named;
    for (const auto& [key, counts] : behind) {
      if (prev != nullptr && !before.count(key)) continue;
      ++per_op[key.second];
      if (!named.insert(key.first).second) continue;
      if (const RasRankState* k = by_rank.count(key.first) ? by_rank.at(key.first) : nullptr) {
        finding.ranks.push_back(WatchRank(*k, key.second + " " + std::to_string(counts.first) +
                                                  " of " + std::to_string(counts.second)));
      }
    }
    if (finding.ranks.empty()) continue;
    std::string ops;
    for (const auto& [op, count] : per_op) {
      if (!ops.empty()) ops += "; ";
      ops += op + ": " + std::to_string(count) + " of " + std::to_string(c.ranks.size()) +
             " ranks behind";
    }
    finding.message = ops;
    v.findings.push_back(std::move(finding));
  }

  // Ranks in a bad state in the newest snapshot.
  for (const char* kind : {"dead", "unresponsive", "missing", "error", "aborted"}) {
    for (const RasCommState& c : last.communicators) {
      RasWatchFinding finding;
      finding.kind = kind;
      finding.severity = "critical";
      finding.communicator = c.id;
      size_t since = n - 1;
      for (const RasRankState& k : c.ranks) {
        if (k.state != kind) continue;
        finding.ranks.push_back(WatchRank(k, kind));
        // How long this rank has been so.
        size_t s = n - 1;
        while (s > 0) {
          const RasCommState* p = FindComm(snapshots[s - 1], c.id);
          bool same = false;
          if (p != nullptr) {
            for (const RasRankState& q : p->ranks) same |= q.rank == k.rank && q.state == kind;
          }
          if (!same) break;
          --s;
        }
        since = std::min(since, s);
      }
      if (finding.ranks.empty()) continue;
      finding.since = snapshots[since].taken_at;
      int size = c.size > 0 ? c.size : static_cast<int>(c.ranks.size());
      finding.message = std::to_string(finding.ranks.size()) +
                        (finding.ranks.size() == 1 ? " rank of " : " ranks of ") +
                        std::to_string(size) + " " +
                        (kind == std::string("error") ? "with an error" : kind);
      v.findings.push_back(std::move(finding));
    }
  }
  for (const RasWatchFinding& f : v.findings) {
    if (Rank(f.severity) > Rank(v.health)) v.health = f.severity;
  }
  return v;
}

std::vector<std::string> PortChangesOf(const std::string& host,
                                       const std::vector<HostPortReading>& readings) {
  std::vector<const HostPortReading*> mine;
  for (const HostPortReading& r : readings) {
    if (r.host == host) mine.push_back(&r);
  }
  std::sort(mine.begin(), mine.end(), [](const HostPortReading* a, const HostPortReading* b) {
    return std::tie(a->device, a->port, a->sampled_at_s) <
           std::tie(b->device, b->port, b->sampled_at_s);
  });
  std::vector<std::string> out;
  for (size_t i = 1; i < mine.size(); ++i) {
    const HostPortReading& a = *mine[i - 1];
    const HostPortReading& b = *mine[i];
    if (a.device != b.device || a.port != b.port) continue;
    std::string port = b.device + " port " + std::to_string(b.port);
    if (!a.state.empty() && !b.state.empty() && a.state != b.state) {
      out.push_back(port + " " + a.state + " -> " + b.state + " at " + b.sampled_at);
    }
    if (a.rate_gbps && b.rate_gbps && *a.rate_gbps != *b.rate_gbps) {
      // A link that retrained to another rate (or width) during the watch.
      char rates[64];
      std::snprintf(rates, sizeof rates, "rate %g -> %g Gb/s", *a.rate_gbps, *b.rate_gbps);
      out.push_back(port + " " + rates + " at " + b.sampled_at);
    }
    for (const auto& [name, value] : b.counters) {
      if (!value) continue;
      for (const auto& [prev_name, prev] : a.counters) {
        if (prev_name != name || !prev || *value <= *prev) continue;
        out.push_back(port + " " + name + " +" + std::to_string(*value - *prev) + " at " +
                      b.sampled_at);
      }
    }
  }
  return out;
}

void AttachPortChanges(const std::vector<HostPortReading>& readings, RasWatchVerdict* verdict) {
  for (RasWatchFinding& f : verdict->findings) {
    std::set<std::string> hosts;
    for (const RasWatchRank& k : f.ranks) {
      if (!k.host.empty()) hosts.insert(k.host);
    }
    for (const std::string& host : hosts) {
      for (const std::string& line : PortChangesOf(host, readings)) {
        f.port_changes.push_back(host + ": " + line);
      }
    }
  }
}

}  // namespace fabtrack::analyzer
