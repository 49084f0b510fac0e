// socket_fallback (critical): NCCL carried inter-node traffic over NET/Socket
// (through the CPU and host memory) on a cluster that has RDMA.
//
// The evidence is the channel lines, not "Using network Socket": a single-node
// job prints that too while every channel is P2P/SHM. A run counts when any
// rank's NET channel went through Socket (a partial fallback: some ranks, some
// hosts). Without channel lines, a multi-node run whose selected network is
// Socket counts when the cluster has RDMA: declared IB/RoCE, IB/RoCE in the
// history of its runs, or active RDMA ports in the inventory. A cluster
// declared Ethernet-only is never flagged.
#include <algorithm>
#include <map>
#include <set>

#include "analyzer/detector.h"
#include "analyzer/run_facts.h"

namespace fabtrack::analyzer {
namespace {

bool IsRdmaNetwork(const std::string& network) {
  return network.rfind("IB", 0) == 0 || network.find("RoCE") != std::string::npos ||
         network.find("Libfabric") != std::string::npos || network.find("UCX") != std::string::npos;
}

// Why we believe the cluster has RDMA, or empty when nothing says so.
std::string RdmaEvidence(const InputIndex& input) {
  const ClusterInfo& cluster = input.cluster();
  if (cluster.fabric && (*cluster.fabric == "infiniband" || *cluster.fabric == "roce" ||
                         *cluster.fabric == "mixed")) {
    return "cluster declared " + *cluster.fabric;
  }
  for (const RunView& run : input.runs()) {
    if (run.network && IsRdmaNetwork(*run.network)) {
      return "run " + std::to_string(run.id) + " (" + run.started_at_iso + ") used NET/" +
             *run.network;
    }
    for (const std::string& t : run.transports) {
      if (t == "NET/IB" || t == "NET/IBext" || t.rfind("NET/IB", 0) == 0) {
        return "run " + std::to_string(run.id) + " (" + run.started_at_iso + ") used " + t;
      }
    }
  }
  for (const PortStateView& port : input.input().port_inventory) {
    if (port.state == "ACTIVE") {
      return "port " + port.host + ":" + port.device + "/" + std::to_string(port.port) +
             " is ACTIVE (" + port.link_layer.value_or("RDMA") + ")";
    }
  }
  return {};
}

void Detect(const InputIndex& input, const DetectorSettings&, std::vector<Finding>* findings) {
  if (input.cluster().fabric == "ethernet") return;
  const std::string rdma_evidence = RdmaEvidence(input);
  for (const RunView* run : input.judged()) {
    if (!UsesNccl(*run) || !MultiNode(*run)) continue;
    std::map<std::string, std::set<int>> socket_ranks_by_host;
    int net_ranks = 0, socket_channels = 0;
    std::set<int> net_rank_ids;
    for (const ChannelUse& c : input.Channels(run->id)) {
      if (c.family.rfind("NET/", 0) != 0) continue;
      net_rank_ids.insert(c.rank);
      if (c.family == "NET/Socket") {
        socket_ranks_by_host[c.host.value_or("?")].insert(c.rank);
        socket_channels += c.channels;
      }
    }
    net_ranks = static_cast<int>(net_rank_ids.size());
    const std::string subject = SeriesName(*run);
    if (!socket_ranks_by_host.empty()) {
      int socket_ranks = 0;
      nlohmann::json hosts = nlohmann::json::object();
      for (const auto& [host, ranks] : socket_ranks_by_host) {
        socket_ranks += static_cast<int>(ranks.size());
        hosts[host] = std::vector<int>(ranks.begin(), ranks.end());
      }
      Finding f = FindingForRun(*run, subject, Severity::kCritical);
      if (socket_ranks_by_host.size() == 1) f.host = socket_ranks_by_host.begin()->first;
      f.value = socket_ranks;
      f.baseline = 0;
      f.unit = "ranks on NET/Socket";
      const bool partial = socket_ranks < net_ranks;
      f.message = std::string(partial ? "partial " : "") +
                  "NCCL fallback to sockets: " + std::to_string(socket_ranks) + " of " +
                  std::to_string(net_ranks) + " ranks sent inter-node traffic over NET/Socket (" +
                  std::to_string(socket_channels) + " channels) on " +
                  std::to_string(socket_ranks_by_host.size()) + " host(s)";
      if (!rdma_evidence.empty()) f.message += "; RDMA expected: " + rdma_evidence;
      f.evidence = {{"socket_ranks_by_host", hosts},
                    {"net_ranks", net_ranks},
                    {"partial", partial},
                    {"network", run->network ? nlohmann::json(*run->network) : nlohmann::json()}};
      if (!rdma_evidence.empty()) f.evidence["rdma_evidence"] = rdma_evidence;
      findings->push_back(std::move(f));
      continue;
    }
    // No NET channel lines at all: judge by the selected network.
    if (net_ranks == 0 && run->network == "Socket" && !rdma_evidence.empty()) {
      Finding f = FindingForRun(*run, subject, Severity::kCritical);
      f.unit = "network";
      f.message = "multi-node run used NCCL's Socket network while the cluster has RDMA (" +
                  rdma_evidence + "); no channel lines to tell which ranks";
      f.evidence = {{"network", "Socket"}, {"rdma_evidence", rdma_evidence}};
      findings->push_back(std::move(f));
    }
  }
}

const DetectorRegistrar kRegistered({
    .name = "socket_fallback",
    .summary = "NCCL inter-node traffic over NET/Socket on a cluster with RDMA (critical)",
    .params = {},
    .detect = Detect,
});

}  // namespace
}  // namespace fabtrack::analyzer
