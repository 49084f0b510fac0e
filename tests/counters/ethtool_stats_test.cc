#include "collector/counters/ethtool_stats.h"

#include <gtest/gtest.h>

namespace fabtrack {
namespace {

TEST(FlowControlStatsTest, KeepsPauseAndPerPriorityCounters) {
  // Names as mlx5 reports them in `ethtool -S`.
  std::map<std::string, uint64_t> all = {
      {"rx_prio3_pause", 12},        {"tx_prio3_pause", 40},  {"rx_pause_ctrl_phy", 7},
      {"tx_pause_ctrl_phy", 9},      {"rx_prio3_bytes", 1e9}, {"rx_bytes", 5},
      {"rx_vport_unicast_bytes", 3}, {"tx_packets", 2},       {"rx_prio3_pause_duration", 88},
  };
  std::map<std::string, uint64_t> fc = FlowControlStats(all);
  EXPECT_EQ(fc.count("rx_prio3_pause"), 1u);
  EXPECT_EQ(fc.count("tx_pause_ctrl_phy"), 1u);
  EXPECT_EQ(fc.count("rx_prio3_bytes"), 1u);  // per-priority traffic
  EXPECT_EQ(fc.count("rx_prio3_pause_duration"), 1u);
  EXPECT_EQ(fc.count("rx_bytes"), 0u);
  EXPECT_EQ(fc.count("tx_packets"), 0u);
  EXPECT_EQ(fc.size(), 6u);
}

TEST(ReadEthtoolStatsTest, BadNamesAndMissingDevicesAreErrorsNotCrashes) {
  EXPECT_NE(ReadEthtoolStats("").error, "");
  EXPECT_NE(ReadEthtoolStats(std::string(40, 'x')).error, "");
  EthtoolStats missing = ReadEthtoolStats("nosuchdev0");
  EXPECT_NE(missing.error.find("No such device"), std::string::npos) << missing.error;
  EXPECT_TRUE(missing.values.empty());
  // Loopback has no driver statistics.
  EXPECT_NE(ReadEthtoolStats("lo").error, "");
}

}  // namespace
}  // namespace fabtrack
