// gdrdma_disabled (warning): NCCL moved inter-node data over InfiniBand/RoCE
// without GPUDirect RDMA, staging it through host memory. Seen per host in the
// NET/IB channel lines (no "/GDRDMA" suffix), or, without channel lines, in a
// run whose log said "GPU Direct RDMA Disabled" (runs.gdrdma = false).
// Typical causes: nvidia-peermem not loaded, ACS/IOMMU on the PCIe path,
// NCCL_NET_GDR_LEVEL too strict.
// NCCL's own words name the HCA: "NET/IB : GPU Direct RDMA Disabled for HCA 0
// 'mlx5_0'" (issue 16: the classic lost-GDR line was never flagged). Without
// channel lines those lines make a finding per host naming its HCAs and the
// log line; with channel lines (the stronger evidence: a GDRDMA channel means
// GDR worked) they only name the HCAs of the hosts the channels convict.
#include <map>
#include <set>

#include "analyzer/detector.h"
#include "analyzer/log_events.h"
#include "analyzer/run_facts.h"

namespace fabtrack::analyzer::gdrdma_disabled_detector {
namespace {

struct HostChannels {
  int ib_channels = 0;
  int gdr_channels = 0;
};

void Detect(const InputIndex& input, const DetectorSettings&, std::vector<Finding>* findings) {
  for (const RunView* run : input.judged()) {
    if (!UsesNccl(*run)) continue;
    // host -> HCAs NCCL said it lost GDR on, and the first such line.
    std::map<std::string, std::set<std::string>> gdr_off;
    std::map<std::string, int> gdr_off_line;
    for (const LogEventView& e : input.LogEvents(run->id)) {
      const LogEventReading r = ReadLogEvent(e);
      if (r.kind != LogEventKind::kGdrDisabledHca || !r.device) continue;
      const std::string host = e.host.value_or("");
      gdr_off[host].insert(*r.device);
      if (e.line && !gdr_off_line.contains(host)) gdr_off_line[host] = *e.line;
    }
    // NCCL's own "Disabled for HCA" line is a loss on that node whatever
    // the run's size (a rank-0 excerpt of a 16-rank job shows one host; a
    // single-node run today is a multi-node job's node tomorrow); the
    // channel-based evidence below only exists across nodes.
    if (!MultiNode(*run) && gdr_off.empty()) continue;
    auto hcas_of = [&](const std::string& host) {
      auto it = gdr_off.find(host);
      return it == gdr_off.end() ? std::vector<std::string>()
                                 : std::vector<std::string>(it->second.begin(), it->second.end());
    };
    std::map<std::string, HostChannels> hosts;
    for (const ChannelUse& c : input.Channels(run->id)) {
      if (c.family.rfind("NET/IB", 0) != 0) continue;
      HostChannels& h = hosts[c.host.value_or("?")];
      h.ib_channels += c.channels;
      h.gdr_channels += c.gdrdma_channels;
    }
    if (hosts.empty() && !gdr_off.empty()) {
      for (const auto& [host, hcas] : gdr_off) {
        const std::vector<std::string> names(hcas.begin(), hcas.end());
        Finding f = FindingForRun(*run, host.empty() ? SeriesName(*run) : "host " + host,
                                  Severity::kWarning);
        if (!host.empty()) f.host = host;
        f.device = names.front();
        f.value = static_cast<double>(names.size());
        f.baseline = 0;
        f.unit = "HCAs without GDRDMA";
        std::string list;
        for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
        f.message = "NCCL reported GPU Direct RDMA disabled for HCA " + list +
                    (host.empty() ? std::string() : " on " + host) +
                    ": inter-node data is staged through host memory (is nvidia-peermem "
                    "loaded?)";
        if (gdr_off_line.contains(host)) {
          f.message += " (line " + std::to_string(gdr_off_line[host]) + ")";
          f.evidence["line"] = gdr_off_line[host];
        }
        f.evidence["hcas"] = names;
        findings->push_back(std::move(f));
      }
      continue;
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
      if (const auto hcas = hcas_of(host); !hcas.empty()) {
        f.device = hcas.front();
        f.evidence["gdr_disabled_hcas"] = hcas;
        f.message += "; NCCL disabled GDR for HCA " + hcas.front() +
                     (hcas.size() > 1 ? " and " + std::to_string(hcas.size() - 1) + " more" : "");
      }
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
}  // namespace fabtrack::analyzer::gdrdma_disabled_detector
