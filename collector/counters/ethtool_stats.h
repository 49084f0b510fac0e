// NIC statistics through the ethtool ioctl (SIOCETHTOOL: ETHTOOL_GSSET_INFO,
// ETHTOOL_GSTRINGS, ETHTOOL_GSTATS) — no shelling out to `ethtool -S`. For
// RoCE ports this is where the driver exposes PFC pause and per-priority
// counters (mlx5: rx_prio3_pause, tx_pause_ctrl_phy, ...).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "collector/parse/port_dump_parser.h"

namespace fabtrack {

struct EthtoolStats {
  std::map<std::string, uint64_t> values;
  std::string error;  // set when the device has none or cannot be read
};

// Every statistic the driver of `netdev` reports (in this network namespace).
EthtoolStats ReadEthtoolStats(const std::string& netdev);

// The statistics of `netdev` from a saved `ethtool -S NETDEV` output, the
// file DIR/NETDEV: the same values the ioctl gives, for hosts where the
// operator collects dumps, and for tests (a fake source in the real format).
EthtoolStats ReadEthtoolDump(const std::string& dir, const std::string& netdev);

// FlowControlStats (the statistics kept per port) is in
// collector/parse/port_dump_parser.h, with the parser of `ethtool -S`.

}  // namespace fabtrack
