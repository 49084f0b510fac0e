#include "collector/ingest/node_count.h"

#include <set>
#include <string_view>

namespace fabtrack {
namespace {

// Hosts of the init/destroy lines of the largest communicator, when they name
// every one of its ranks (a per-rank excerpt or a cut log does not).
std::optional<int> HostsOfEveryRank(const NcclLogInfo& log) {
  if (!log.nranks) return std::nullopt;
  std::set<int> ranks;
  std::set<std::string> hosts;
  for (const CommRank& r : log.comm_ranks) {
    if (r.nranks != *log.nranks || r.host.empty()) continue;
    ranks.insert(r.rank);
    hosts.insert(r.host);
  }
  if (static_cast<int>(ranks.size()) != *log.nranks) return std::nullopt;
  return static_cast<int>(hosts.size());
}

bool Disabled(const NcclLogInfo& log, const std::map<std::string, std::string>& env,
              const std::string& name) {
  auto it = env.find(name);
  if (it != env.end()) return it->second == "1";
  auto echoed = log.env_settings.find(name);
  return echoed != log.env_settings.end() && echoed->second == "1";
}

bool HasNetChannel(const NcclLogInfo& log) {
  for (const ChannelObservation& c : log.channels) {
    if (std::string_view(c.family).substr(0, 4) == "NET/") return true;
  }
  return false;
}

}  // namespace

NodeCount DecideNodeCount(const TestTable* table, const NcclLogInfo& log,
                          const std::map<std::string, std::string>& env,
                          std::optional<int> override) {
  NodeCount count;
  count.ranks_per_node = log.local_ranks;
  if (override) {
    count.nodes = override;
    count.source = "--nodes";
    return count;
  }
  if (log.nnodes) {
    count.nodes = log.nnodes;
    count.source = "nccl nNodes";
    return count;
  }
  if (std::optional<int> hosts = HostsOfEveryRank(log)) {
    count.nodes = hosts;
    count.source = "nccl init lines";
    return count;
  }
  int hosts = 0;
  if (table != nullptr && !table->hosts.empty()) {
    count.nodes = static_cast<int>(table->hosts.size());
    count.source = "nccl-tests rank lines";
    hosts = *count.nodes;
  } else if (!log.hosts.empty()) {
    count.nodes = static_cast<int>(log.hosts.size());
    count.source = "hostnames";
    hosts = *count.nodes;
  }
  bool net_between_local_ranks =
      Disabled(log, env, "NCCL_P2P_DISABLE") && Disabled(log, env, "NCCL_SHM_DISABLE");
  if (hosts < 2 && HasNetChannel(log) && !net_between_local_ranks) {
    count.nodes = 2;
    count.source = "channels (at least)";
  }
  return count;
}

}  // namespace fabtrack
