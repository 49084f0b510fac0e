#include "core/model.h"

#include <algorithm>
#include <string_view>

namespace fabtrack {

std::vector<std::string> ParsedFile::Transports() const {
  std::vector<std::string> families;
  for (const ChannelObservation& channel : log.channels) {
    if (channel.family.empty()) continue;
    if (std::find(families.begin(), families.end(), channel.family) == families.end()) {
      families.push_back(channel.family);
    }
  }
  return families;
}

std::optional<bool> ParsedFile::Gdrdma() const {
  bool net_channels = false;
  for (const ChannelObservation& channel : log.channels) {
    if (std::string_view(channel.family).substr(0, 4) != "NET/") continue;
    // A GDRDMA channel wins over "GPU Direct RDMA Disabled for HCA" lines:
    // NCCL decides GDR per HCA, so an unused HCA (storage port, a NIC outside
    // NCCL_IB_HCA) can lack it while the NICs that carried traffic used it.
    // The channel line shows what the traffic did.
    if (channel.gdrdma) return true;
    net_channels = true;
  }
  if (net_channels || !log.gdr_disabled_hcas.empty()) return false;
  return std::nullopt;
}

std::vector<LogMessage> KeptLogLines(const NcclLogInfo& log) {
  std::vector<LogMessage> lines = log.warnings;
  lines.insert(lines.end(), log.notices.begin(), log.notices.end());
  std::stable_sort(lines.begin(), lines.end(),
                   [](const LogMessage& a, const LogMessage& b) { return a.line < b.line; });
  return lines;
}

bool ParsedFile::Usable() const { return !tests.empty() || log.info_lines > 0; }

}  // namespace fabtrack
