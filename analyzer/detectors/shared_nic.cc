// shared_nic (warning): GPUs of one node queue on one NIC while the node has
// more. On a rail-optimized server every GPU has its own NIC; NCCL spreads
// ranks over NICs by PCIe locality, so several ranks sending mostly through
// one NIC while others sit idle means a topology or NCCL_IB_HCA problem (or a
// NIC missing from the list). A rank's NIC is the one that carried most of its
// NET channels. Skipped on clusters declared not rail-optimized.
#include <algorithm>
#include <map>
#include <set>

#include "analyzer/detector.h"
#include "analyzer/run_facts.h"

namespace fabtrack::analyzer::shared_nic_detector {
namespace {

std::string NicName(const InputIndex& input, const RunView& run, const std::string& host,
                    const ChannelUse& c) {
  if (c.device) return *c.device;
  for (const NetDeviceView& d : input.NetDevices(run.id)) {
    if (d.host == host && c.nic_index == d.nic_index) return d.device;
  }
  return "NIC " + std::to_string(c.nic_index.value_or(-1));
}

void Detect(const InputIndex& input, const DetectorSettings& settings,
            std::vector<Finding>* findings) {
  if (input.cluster().rail_optimized == false) return;
  const int min_ranks_on_nic = static_cast<int>(settings["min_ranks_on_nic"]);
  for (const RunView* run : input.judged()) {
    if (!UsesNccl(*run)) continue;
    // host -> rank -> nic -> channels
    std::map<std::string, std::map<int, std::map<std::string, int>>> use;
    for (const ChannelUse& c : input.Channels(run->id)) {
      if (c.family.rfind("NET/", 0) != 0 || c.family == "NET/Socket" || !c.nic_index) continue;
      const std::string host = c.host.value_or("?");
      use[host][c.rank][NicName(input, *run, host, c)] += c.channels;
    }
    std::map<std::string, std::set<std::string>> nics_listed;
    for (const NetDeviceView& d : input.NetDevices(run->id)) nics_listed[d.host].insert(d.device);

    for (const auto& [host, ranks] : use) {
      std::map<std::string, std::vector<int>> ranks_by_nic;
      std::set<std::string> nics_seen;
      for (const auto& [rank, nics] : ranks) {
        auto primary = std::max_element(nics.begin(), nics.end(), [](const auto& a, const auto& b) {
          return a.second < b.second;
        });
        ranks_by_nic[primary->first].push_back(rank);
        for (const auto& [nic, n] : nics) nics_seen.insert(nic);
      }
      std::set<std::string> available = nics_listed[host];
      available.insert(nics_seen.begin(), nics_seen.end());
      const int rank_count = static_cast<int>(ranks.size());
      const int nic_count = static_cast<int>(available.size());
      if (rank_count < 2 || nic_count < 2) continue;
      // Ideal spread: ceil(ranks / NICs) ranks per NIC at most.
      const int ideal = (rank_count + nic_count - 1) / nic_count;
      auto busiest = std::max_element(
          ranks_by_nic.begin(), ranks_by_nic.end(),
          [](const auto& a, const auto& b) { return a.second.size() < b.second.size(); });
      const int on_busiest = static_cast<int>(busiest->second.size());
      if (on_busiest <= ideal || on_busiest < min_ranks_on_nic) continue;
      Finding f = FindingForRun(*run, "host " + host, Severity::kWarning);
      f.host = host;
      f.device = busiest->first;
      f.value = on_busiest;
      f.baseline = ideal;
      f.unit = "ranks per NIC";
      f.message = host + ": " + std::to_string(on_busiest) + " of " + std::to_string(rank_count) +
                  " ranks send through " + busiest->first + " while the node has " +
                  std::to_string(nic_count) + " NICs (" + std::to_string(ranks_by_nic.size()) +
                  " used); not rail-optimized";
      nlohmann::json by_nic = nlohmann::json::object();
      for (const auto& [nic, rs] : ranks_by_nic) by_nic[nic] = rs;
      f.evidence = {
          {"ranks_by_nic", by_nic},
          {"nics_available", std::vector<std::string>(available.begin(), available.end())}};
      findings->push_back(std::move(f));
    }
  }
}

const DetectorRegistrar kRegistered({
    .name = "shared_nic",
    .summary = "GPUs of one node sending through one NIC while the node has more (warning)",
    .params = {{"min_ranks_on_nic", 2, "flag only when at least this many ranks share a NIC"}},
    .detect = Detect,
});

}  // namespace
}  // namespace fabtrack::analyzer::shared_nic_detector
