#include "collector/ras/ras_snapshot.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>

namespace fabtrack::ras {
namespace {

std::string GpuOf(int cuda_dev, int nvml_dev) {
  std::string gpu = std::to_string(cuda_dev);
  if (nvml_dev != cuda_dev) gpu += " (NVML " + std::to_string(nvml_dev) + ")";
  return gpu;
}

// Who a rank is, as the JSON names it, present or missing alike: the state
// is what differs.
template <typename JsonRankLike>
RasRankState Identity(const JsonRankLike& k) {
  RasRankState r;
  r.rank = k.rank;
  r.node = k.host;
  r.gpu = GpuOf(k.cuda_dev, k.nvml_dev);
  r.pid = k.pid;
  return r;
}

// A present rank's state from its status flags (0 ncclSuccess, 7
// ncclInProgress).
std::string StateOf(const JsonRank& k) {
  if (k.abort_flag) return "aborted";
  if ((k.init_state != 0 && k.init_state != 7) || (k.async_error != 0 && k.async_error != 7)) {
    return "error";
  }
  if (k.finalize_called || k.destroy_flag) return "finalize";
  if (k.init_state == 7) return "init";
  return "running";
}

RasCommState FromJson(const JsonCommunicator& c) {
  RasCommState comm;
  comm.id = c.hash;
  comm.size = c.size;
  std::set<std::string> states, errors;
  std::map<std::string, std::set<int64_t>> counts;
  for (const JsonRank& k : c.ranks) {
    RasRankState r = Identity(k);
    r.state = StateOf(k);
    r.op_counts = k.collective_counts;
    for (const auto& [op, n] : k.collective_counts) counts[op].insert(n);
    states.insert(r.state);
    if (r.state == "error" || r.state == "aborted") errors.insert("ERROR");
    comm.ranks.push_back(std::move(r));
  }
  for (const JsonMissingRank& m : c.missing_ranks) {
    RasRankState r = Identity(m);
    r.state = m.considered_dead ? "dead" : m.unresponsive ? "unresponsive" : "missing";
    errors.insert(m.considered_dead ? "DEAD" : "INCOMPLETE");
    comm.ranks.push_back(std::move(r));
  }
  std::sort(comm.ranks.begin(), comm.ranks.end(),
            [](const RasRankState& a, const RasRankState& b) { return a.rank < b.rank; });
  for (const auto& [op, values] : counts) {
    if (values.size() > 1) errors.insert("MISMATCH");
  }
  comm.state = states.count("running")    ? "RUNNING"
               : states.count("init")     ? "INIT"
               : states.count("finalize") ? "FINALIZE"
               : states.count("aborted")  ? "ABORT"
                                          : "";
  for (const std::string& e : errors) comm.errors += (comm.errors.empty() ? "" : ",") + e;
  if (comm.errors.empty()) comm.errors = "OK";
  return comm;
}

// "collective operation counts" -> "collective"; "AllReduce operation
// counts" -> "AllReduce".
std::string OpOf(const std::string& aspect) {
  std::string op = aspect.substr(0, aspect.find(' '));
  return op.empty() ? "collective" : op;
}

// `comm`'s rank `ref`, added if new; `at` indexes comm->ranks by rank (a
// verbose report may name half of 10^5 ranks: no scan per rank).
RasRankState* RankIn(RasCommState* comm, std::unordered_map<int, size_t>* at, const RankRef& ref) {
  auto [it, added] = at->emplace(ref.rank, comm->ranks.size());
  if (!added) return &comm->ranks[it->second];
  RasRankState r;
  r.rank = ref.rank;
  r.node = ref.node;
  r.gpu = ref.gpu;
  r.pid = ref.pid;
  comm->ranks.push_back(std::move(r));
  return &comm->ranks.back();
}

// RAS's text lists a mismatch group's ranks only when the group is small
// (verbose: under half the communicator); the other groups are a bare "N
// ranks have launched up to operation X". Without their counts the ranks
// behind are lost: at 1% behind, the named laggards look like the top; at
// 60% behind, only the ranks ahead are named (NVIDIA/nccl#1911). Where the
// unnamed group's ranks are certain (UnnamedGroupRanks: the rest of the
// communicator), they get its count; their node, GPU and pid stay unknown.
void CountTheUnnamed(const Report& report, const Issue& i, RasCommState* comm) {
  // By rank: a group may hold most of 10^5 ranks.
  std::map<int, size_t> at;
  for (size_t n = 0; n < comm->ranks.size(); ++n) at.emplace(comm->ranks[n].rank, n);
  for (const RankGroup& g : i.groups) {
    for (int rank : UnnamedGroupRanks(report, i, g)) {
      auto [it, added] = at.emplace(rank, comm->ranks.size());
      if (added) {
        RasRankState k;
        k.rank = rank;
        k.state = "running";
        comm->ranks.push_back(std::move(k));
      }
      RasRankState& k = comm->ranks[it->second];
      if (k.state.empty()) k.state = "running";
      k.op_counts.emplace_back(OpOf(g.aspect), *g.operation);
    }
  }
}

std::vector<RasCommState> FromText(const Report& report) {
  std::vector<RasCommState> out;
  // The table's row, where the report has one communicator: its state.
  const CommGroupRow* only =
      report.groups.size() == 1 && report.groups[0].comms == 1 ? &report.groups[0] : nullptr;
  // Processes the job-wide DEAD block names: their ranks are dead, not
  // merely missing.
  std::set<std::pair<std::string, int64_t>> dead;
  for (const Issue& i : report.issues) {
    if (i.kind != "DEAD") continue;
    for (const ProcessRef& p : i.processes) dead.insert({p.node, p.pid});
  }
  std::map<std::string, std::unordered_map<int, size_t>> index;  // comm id -> rank -> position
  for (const Issue& i : report.issues) {
    if (i.communicator.empty()) continue;
    std::string id = i.comm_hash.empty() ? i.communicator : i.comm_hash;
    std::unordered_map<int, size_t>* at = &index[id];
    auto it =
        std::find_if(out.begin(), out.end(), [&](const RasCommState& c) { return c.id == id; });
    if (it == out.end()) {
      RasCommState c;
      c.id = id;
      if (only != nullptr) {
        c.size = only->ranks_per_comm;
        c.state = only->status;
      }
      out.push_back(std::move(c));
      it = out.end() - 1;
    }
    RasCommState& comm = *it;
    comm.errors += (comm.errors.empty() ? "" : ",") + i.kind;
    if (i.kind == "INCOMPLETE") {
      for (const RankRef& ref : i.ranks) {
        RasRankState* r = RankIn(&comm, at, ref);
        r->state = ref.pid && dead.count({ref.node, *ref.pid}) ? "dead" : "missing";
      }
    }
    for (const RankGroup& g : i.groups) {
      for (const RankRef& ref : g.ranks) {
        RasRankState* r = RankIn(&comm, at, ref);
        if (i.kind == "ERROR") {
          r->state = "error";
        } else if (r->state.empty()) {
          r->state = "running";
        }
        if (g.operation) r->op_counts.emplace_back(OpOf(g.aspect), *g.operation);
      }
    }
  }
  for (const Issue& i : report.issues) {
    if (i.kind != "MISMATCH" || i.communicator.empty()) continue;
    std::string id = i.comm_hash.empty() ? i.communicator : i.comm_hash;
    for (RasCommState& c : out) {
      if (c.id == id) CountTheUnnamed(report, i, &c);
    }
  }
  for (RasCommState& comm : out) {
    std::sort(comm.ranks.begin(), comm.ranks.end(),
              [](const RasRankState& a, const RasRankState& b) { return a.rank < b.rank; });
  }
  return out;
}

}  // namespace

std::vector<RasCommState> CommunicatorsOf(const Report& report) {
  if (report.format == "json") {
    std::vector<RasCommState> out;
    for (const JsonCommunicator& c : report.communicators) out.push_back(FromJson(c));
    return out;
  }
  return FromText(report);
}

std::vector<std::string> NodesOf(const std::vector<RasCommState>& comms) {
  std::set<std::string> nodes;
  for (const RasCommState& c : comms) {
    for (const RasRankState& r : c.ranks) {
      if (!r.node.empty()) nodes.insert(r.node);
    }
  }
  return {nodes.begin(), nodes.end()};
}

void MapHosts(const std::map<std::string, std::string>& host_of, std::vector<RasCommState>* comms) {
  for (RasCommState& c : *comms) {
    for (RasRankState& r : c.ranks) {
      auto it = host_of.find(r.node);
      if (it != host_of.end()) r.host = it->second;
    }
  }
}

HostsFile ParseHostsFile(std::string_view text, const std::string& path) {
  HostsFile out;
  std::istringstream in{std::string(text)};
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    line = line.substr(0, line.find('#'));
    std::istringstream fields(line);
    std::string address, name;
    if (!(fields >> address)) continue;
    if (!(fields >> name)) {
      out.problems.push_back(path + ":" + std::to_string(number) + ": address " + address +
                             " without a host name");
      continue;
    }
    out.host_of.emplace(address, name);  // the first line of an address wins, as in hosts(5)
  }
  return out;
}

}  // namespace fabtrack::ras
