// rdma_absent (critical): NCCL could not use RDMA on a multi-node run and
// said why: "NET/IB : No device found." (no HCA visible: driver, container
// device mounts), "Failed to open libibverbs.so" (rdma-core missing in the
// image), or a NET plugin that failed to load before NCCL took NET/Socket.
// socket_fallback says that traffic went over sockets; this says why, per
// host, with the log lines. A cluster whose config declares
// `transport = socket` (or whose fabric is ethernet) gets an info note.
#include <map>
#include <set>

#include "analyzer/detector.h"
#include "analyzer/log_events.h"
#include "analyzer/run_facts.h"

namespace fabtrack::analyzer::rdma_absent_detector {
namespace {

struct Cause {
  std::set<std::string> hosts;
  std::vector<int> lines;
  int count = 0;
};

const char* Explain(LogEventKind kind) {
  switch (kind) {
    case LogEventKind::kIbNoDevice:
      return "NET/IB : No device found (no HCA visible to NCCL)";
    case LogEventKind::kIbverbsMissing:
      return "Failed to open libibverbs (rdma-core not installed in the job's image)";
    default:
      return "the NET plugin failed to load";
  }
}

void Detect(const InputIndex& input, const DetectorSettings& settings,
            std::vector<Finding>* findings) {
  const bool sockets_by_design =
      settings.cluster_transport == "socket" || input.cluster().fabric == "ethernet";
  for (const RunView* run : input.judged()) {
    if (!UsesNccl(*run) || !MultiNode(*run)) continue;
    bool ib_channels = false, socket_channels = false;
    for (const ChannelUse& c : input.Channels(run->id)) {
      ib_channels |= c.family.rfind("NET/IB", 0) == 0;
      socket_channels |= c.family == "NET/Socket";
    }
    const bool on_socket = socket_channels || run->network == "Socket";
    std::map<LogEventKind, Cause> causes;
    for (const LogEventView& e : input.LogEvents(run->id)) {
      const LogEventReading r = ReadLogEvent(e);
      if (r.kind != LogEventKind::kIbNoDevice && r.kind != LogEventKind::kIbverbsMissing &&
          r.kind != LogEventKind::kNetPluginFailed) {
        continue;
      }
      // A plugin that failed to load only matters when NCCL then used
      // sockets: the internal IB transport is the usual fallback.
      if (r.kind == LogEventKind::kNetPluginFailed && !on_socket) continue;
      Cause& c = causes[r.kind];
      ++c.count;
      if (e.host) c.hosts.insert(*e.host);
      if (e.line && c.lines.size() < 20) c.lines.push_back(*e.line);
    }
    if (causes.empty()) continue;
    // NCCL printed "No device found" on some ranks but moved the data over
    // IB anyway (a host without HCAs in a job of hosts with them) only if no
    // rank went through sockets.
    if (ib_channels && !on_socket) continue;
    std::set<std::string> hosts;
    nlohmann::json list = nlohmann::json::array();
    std::string why;
    int first_line = 0;
    for (const auto& [kind, c] : causes) {
      hosts.insert(c.hosts.begin(), c.hosts.end());
      list.push_back({{"cause", Explain(kind)},
                      {"count", c.count},
                      {"hosts", std::vector<std::string>(c.hosts.begin(), c.hosts.end())},
                      {"lines", c.lines}});
      why += (why.empty() ? "" : "; ") + std::string(Explain(kind));
      if (!first_line && !c.lines.empty()) first_line = c.lines.front();
    }
    Finding f = FindingForRun(*run, SeriesName(*run),
                              sockets_by_design ? Severity::kInfo : Severity::kCritical);
    if (hosts.size() == 1) f.host = *hosts.begin();
    f.value = static_cast<double>(hosts.size());
    f.unit = "hosts without RDMA";
    std::string host_list;
    size_t i = 0;
    for (const std::string& h : hosts) {
      if (i == 8) {
        host_list += ", ... (" + std::to_string(hosts.size()) + " hosts)";
        break;
      }
      host_list += (i++ ? ", " : "") + h;
    }
    f.message = std::string(sockets_by_design ? "RDMA not used (the cluster declares sockets): "
                                              : "RDMA unavailable on a multi-node run: ") +
                why + (host_list.empty() ? "" : " on " + host_list) +
                (first_line ? " (line " + std::to_string(first_line) + ")" : "");
    f.evidence = {{"causes", list},
                  {"network", run->network ? nlohmann::json(*run->network) : nlohmann::json()},
                  {"socket_channels", socket_channels}};
    findings->push_back(std::move(f));
  }
}

const DetectorRegistrar kRegistered({
    .name = "rdma_absent",
    .summary = "RDMA unavailable on a multi-node run: no IB device, no libibverbs, NET plugin "
               "load failure before sockets (critical; info when the cluster declares sockets)",
    .params = {},
    .detect = Detect,
});

}  // namespace
}  // namespace fabtrack::analyzer::rdma_absent_detector
