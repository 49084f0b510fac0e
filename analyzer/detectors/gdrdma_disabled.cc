// gdrdma_disabled (warning): NCCL moved inter-node data over InfiniBand/RoCE
// without GPUDirect RDMA, staging it through host memory. Seen per host in the
// NET/IB channel lines (no "/GDRDMA" suffix), or, without channel lines, in a
// run whose log said "GPU Direct RDMA Disabled" (runs.gdrdma = false).
// Typical causes: nvidia-peermem not loaded, ACS/IOMMU on the PCIe path,
// NCCL_NET_GDR_LEVEL too strict.
#include <map>

#include "analyzer/detector.h"
#include "analyzer/run_facts.h"

namespace fabtrack::analyzer {
namespace {

struct HostChannels {
  int ib_channels = 0;
  int gdr_channels = 0;
};

void Detect(const InputIndex& input, const DetectorSettings&, std::vector<Finding>* findings) {
  for (const RunView* run : input.judged()) {
    if (!UsesNccl(*run) || !MultiNode(*run)) continue;
    std::map<std::string, HostChannels> hosts;
    for (const ChannelUse& c : input.Channels(run->id)) {
      if (c.family.rfind("NET/IB", 0) != 0) continue;
      HostChannels& h = hosts[c.host.value_or("?")];
      h.ib_channels += c.channels;
      h.gdr_channels += c.gdrdma_channels;
    }
    if (hosts.empty()) {
      if (run->gdrdma == false && run->network && run->network->rfind("IB", 0) == 0) {
        Finding f = FindingForRun(*run, SeriesName(*run), Severity::kWarning);
        f.unit = "hosts without GDRDMA";
        f.message = "NCCL reported GPU Direct RDMA disabled on NET/" + *run->network +
                    " (no channel lines to tell which hosts): inter-node data is staged through "
                    "host memory";
        f.evidence = {{"network", *run->network}, {"gdrdma", false}};
        findings->push_back(std::move(f));
      }
      continue;
    }
    std::vector<std::string> without;
    nlohmann::json per_host = nlohmann::json::object();
    for (const auto& [host, h] : hosts) {
      per_host[host] = {{"ib_channels", h.ib_channels}, {"gdrdma_channels", h.gdr_channels}};
      if (h.gdr_channels < h.ib_channels) without.push_back(host);
    }
    if (without.empty()) continue;
    const bool all_hosts = without.size() == hosts.size();
    // A host that lost GDRDMA is its own problem (a module not loaded there);
    // a whole run without it is the series' problem.
    if (all_hosts) {
      Finding f = FindingForRun(*run, SeriesName(*run), Severity::kWarning);
      f.value = static_cast<double>(without.size());
      f.baseline = 0;
      f.unit = "hosts without GDRDMA";
      f.message = "no host used GPUDirect RDMA on its NET/IB channels (" +
                  std::to_string(without.size()) +
                  " hosts): inter-node data is staged through host memory";
      f.evidence = {{"hosts", per_host}};
      findings->push_back(std::move(f));
      continue;
    }
    for (const std::string& host : without) {
      const HostChannels& h = hosts[host];
      Finding f = FindingForRun(*run, "host " + host, Severity::kWarning);
      f.host = host;
      f.value = h.ib_channels - h.gdr_channels;
      f.baseline = 0;
      f.unit = "NET/IB channels without GDRDMA";
      f.message = host + " sent " + std::to_string(h.ib_channels - h.gdr_channels) + " of " +
                  std::to_string(h.ib_channels) + " NET/IB channels without GPUDirect RDMA while " +
                  std::to_string(hosts.size() - without.size()) +
                  " other hosts used it (is nvidia-peermem loaded there?)";
      f.evidence = {{"host", per_host[host]}, {"run_hosts", per_host}};
      findings->push_back(std::move(f));
    }
  }
}

const DetectorRegistrar kRegistered({
    .name = "gdrdma_disabled",
    .summary = "NET/IB channels without GPUDirect RDMA, per host (warning)",
    .params = {},
    .detect = Detect,
});

}  // namespace
}  // namespace fabtrack::analyzer
