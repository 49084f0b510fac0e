// socket_fallback (critical): NCCL carried inter-node traffic over NET/Socket
// (through the CPU and host memory).
//
// The evidence is the channel lines, not "Using network Socket": a single-node
// job prints that too while every channel is P2P/SHM. A run counts when any
// rank's NET channel went through Socket (a partial fallback: some ranks, some
// hosts). Without channel lines, a multi-node run whose selected network is
// Socket counts. Neither needs history: the first multi-node run of a cluster
// that has always run over sockets is flagged too (issue 16), with whatever
// says RDMA was expected (declared fabric, earlier IB runs, ACTIVE ports) as
// context. A cluster whose analyzer config declares `[cluster] transport =
// socket`, or whose fabric is declared ethernet, gets an info note instead.
// The finding names the hosts.
#include <algorithm>
#include <map>
#include <set>

#include "analyzer/detector.h"
#include "analyzer/run_facts.h"

namespace fabtrack::analyzer::socket_fallback_detector {
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
  // A run that sent over RDMA: its channels say so, or, without channel
  // lines, a multi-node run's selected network. A single-node run selects a
  // network too ("Using network IB") while every channel is P2P/SHM: that
  // proves nothing about the fabric.
  for (const RunView& run : input.runs()) {
    bool net_channels = false;
    for (const std::string& t : run.transports) {
      if (t.rfind("NET/IB", 0) == 0) {
        return "run " + std::to_string(run.id) + " (" + run.started_at_iso + ") used " + t;
      }
      net_channels |= t.rfind("NET/", 0) == 0;
    }
    if (run.network && IsRdmaNetwork(*run.network) && MultiNode(run) && !net_channels) {
      return "run " + std::to_string(run.id) + " (" + run.started_at_iso + ") used NET/" +
             *run.network;
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

// "a, b, c" (the first eight, then how many).
std::string HostList(const std::vector<std::string>& hosts) {
  std::string out;
  for (size_t i = 0; i < hosts.size(); ++i) {
    if (i == 8) return out + ", ... (" + std::to_string(hosts.size()) + " hosts)";
    out += (i ? ", " : "") + hosts[i];
  }
  return out;
}

void Detect(const InputIndex& input, const DetectorSettings& settings,
            std::vector<Finding>* findings) {
  const bool by_design =
      settings.cluster_transport == "socket" || input.cluster().fabric == "ethernet";
  const Severity severity = by_design ? Severity::kInfo : Severity::kCritical;
  const std::string design_note = settings.cluster_transport == "socket"
                                      ? "accepted: the cluster's config declares transport = socket"
                                      : "accepted: the cluster's fabric is declared ethernet";
  const std::string rdma_evidence = by_design ? std::string() : RdmaEvidence(input);
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
      Finding f = FindingForRun(*run, subject, severity);
      if (socket_ranks_by_host.size() == 1) f.host = socket_ranks_by_host.begin()->first;
      std::vector<std::string> host_names;
      for (const auto& [host, ranks] : socket_ranks_by_host) host_names.push_back(host);
      f.value = socket_ranks;
      f.baseline = 0;
      f.unit = "ranks on NET/Socket";
      const bool partial = socket_ranks < net_ranks;
      f.message = std::string(partial ? "partial " : "") +
                  "NCCL fallback to sockets: " + std::to_string(socket_ranks) + " of " +
                  std::to_string(net_ranks) + " ranks sent inter-node traffic over NET/Socket (" +
                  std::to_string(socket_channels) + " channels) on " +
                  std::to_string(socket_ranks_by_host.size()) + " host(s): " + HostList(host_names);
      if (by_design) f.message += "; " + design_note;
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
    if (net_ranks == 0 && run->network == "Socket") {
      Finding f = FindingForRun(*run, subject, severity);
      if (run->hosts.size() == 1) f.host = run->hosts.front();
      f.unit = "network";
      f.message = "multi-node run (" + std::to_string(run->nodes.value_or(0)) +
                  " nodes) used NCCL's Socket network";
      if (!run->hosts.empty()) f.message += " on " + HostList(run->hosts);
      f.message += by_design ? "; " + design_note
                   : rdma_evidence.empty()
                       ? "; nothing says this cluster has RDMA, declare `[cluster] transport = "
                         "socket` in the analyzer config if sockets are by design"
                       : "; RDMA expected: " + rdma_evidence;
      f.message += "; no channel lines to tell which ranks";
      f.evidence = {{"network", "Socket"}, {"hosts", run->hosts}};
      if (!rdma_evidence.empty()) f.evidence["rdma_evidence"] = rdma_evidence;
      findings->push_back(std::move(f));
    }
  }
}

const DetectorRegistrar kRegistered({
    .name = "socket_fallback",
    .summary = "NCCL inter-node traffic over NET/Socket, from the first run (critical; info "
               "when the cluster declares transport = socket)",
    .params = {},
    .detect = Detect,
});

}  // namespace
}  // namespace fabtrack::analyzer::socket_fallback_detector
