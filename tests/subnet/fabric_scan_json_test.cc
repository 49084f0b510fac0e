// The scan's JSON reads back as the same scan (every field filled), and a
// document that is not a scan is refused naming the element.
#include "core/fabric_scan_json.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "collector/fabric/scan_plan.h"
#include "tests/subnet/subnet_test_scans.h"

namespace fabtrack {
namespace {

FabricScan Filled() {
  FabricScan s = testing::SmallFatTree();
  s.duration_s = 1.5;
  s.discovery_s = 0.5;
  s.mads_sent = 120;
  s.mads_retried = 3;
  s.ports[0].counters_64bit = true;
  s.ports[1].counters_missing = "PortCountersExtended: no answer";
  s.ports[2].state = "Down";
  s.ports[2].width.reset();
  s.ports[2].speed.reset();
  s.ports[2].rate_gbps.reset();
  // A port on no cable (it went down) stays in the scan.
  std::erase_if(s.links,
                [](const FabricLink& l) { return LinkName(l) == "leaf02/4 <-> spine02/2"; });
  s.unanswered.push_back({testing::Guid(0x2002), "spine02", 4, "PortCounters", "no answer"});
  s.unanswered.push_back({"", "", std::nullopt, "ClassPortInfo", "status 0x000c"});
  return s;
}

TEST(FabricScanJson, RoundTripKeepsEveryField) {
  FabricScan s = Filled();
  std::string why;
  std::optional<FabricScan> back = FabricScanFromJson(FabricScanToJson(s), &why);
  ASSERT_TRUE(back) << why;
  EXPECT_EQ(*back, s);
}

TEST(FabricScanJson, LinksCarryBothEndsAndTheirCounters) {
  nlohmann::json j = FabricScanToJson(Filled());
  const nlohmann::json& link = j["links"][0];
  EXPECT_EQ(link["a"]["description"], "leaf01");
  EXPECT_TRUE(link["a"]["counters"].contains("symbol_error"));
  EXPECT_TRUE(link["b"]["counters"].contains("symbol_error"));
  EXPECT_EQ(link["width"], 4);
  EXPECT_EQ(link["speed"], "EDR");
  EXPECT_FALSE(j["ports_without_link"].empty());
}

TEST(FabricScanJson, NotAScanIsRefusedNamingTheElement) {
  nlohmann::json j = FabricScanToJson(Filled());
  std::string why;
  j["links"][3]["b"]["port"] = "seven";
  EXPECT_FALSE(FabricScanFromJson(j, &why));
  EXPECT_EQ(why, "links[3].b.port: not an integer");
  j = FabricScanToJson(Filled());
  j["links"][1]["a"]["counters"]["symbol_error"] = -1;
  EXPECT_FALSE(FabricScanFromJson(j, &why));
  EXPECT_EQ(why, "links[1].a.counters.symbol_error: not a count");
  j = FabricScanToJson(Filled());
  j["ports_without_link"].push_back(j["links"][0]["a"]);
  EXPECT_FALSE(FabricScanFromJson(j, &why));
  EXPECT_NE(why.find("listed twice"), std::string::npos) << why;
  EXPECT_FALSE(FabricScanFromJson(nlohmann::json::array(), &why));
  j = FabricScanToJson(Filled());
  j.erase("scanned_at");
  EXPECT_FALSE(FabricScanFromJson(j, &why));
  EXPECT_EQ(why, "scan.scanned_at: missing");
}

TEST(FabricScanJson, SwitchPortsBecomePortSamples) {
  FabricScan s = testing::SmallFatTree();
  testing::PortOf(s, 0x2001, 1).counters["port_xmit_data"] = 10;
  std::vector<HostPorts> hosts = FabricSwitchPorts(s);
  ASSERT_EQ(hosts.size(), 4u);  // 2 leaves, 2 spines; no CA
  const HostPorts& spine1 = hosts[2];
  EXPECT_EQ(spine1.host, testing::Guid(0x2001));
  ASSERT_EQ(spine1.ports.size(), 2u);
  EXPECT_EQ(spine1.ports[0].device, "switch");
  EXPECT_EQ(spine1.ports[0].port, 1);
  EXPECT_EQ(spine1.ports[0].state, "ACTIVE");
  EXPECT_EQ(spine1.ports[0].state_code, 4);
  EXPECT_EQ(spine1.ports[0].rate_text, "100 Gb/sec (4X EDR)");
  EXPECT_EQ(spine1.ports[0].xmit_bytes, 40u);
}

TEST(ScanPlan, ClassPortInfoPerNodeThenCountersWhereCapMaskSays) {
  FabricScan s = testing::SmallFatTree(1, 1, 1);
  std::vector<fabric::PmaQuery> caps = fabric::PlanCapabilityReads(s);
  ASSERT_EQ(caps.size(), 3u);
  std::map<std::string, fabric::PmaCapabilities> known;
  known[testing::Guid(0x1001)].cap_mask = fabric::kCapExtendedWidth;  // leaf: extended
  known[testing::Guid(0x3001)].cap_mask = 0;                          // host: legacy only
  // spine01 did not answer ClassPortInfo: nothing more is asked of it.
  std::vector<fabric::PmaQuery> reads = fabric::PlanCounterReads(s, known);
  std::vector<fabric::PmaQuery> expected = {
      {testing::Guid(0x1001), 1, 1, fabric::kPortCounters},
      {testing::Guid(0x1001), 1, 1, fabric::kPortCountersExtended},
      {testing::Guid(0x1001), 2, 1, fabric::kPortCounters},
      {testing::Guid(0x1001), 2, 1, fabric::kPortCountersExtended},
      {testing::Guid(0x3001), 1, 1, fabric::kPortCounters},
  };
  EXPECT_EQ(reads, expected);
  EXPECT_EQ(fabric::NoAnswerText({300, 2, 64}), "no answer after 3 tries (300 ms each)");
}

// One MAD per port where PortCountersExtended holds every counter: the
// PMA's CapabilityMask2 says so, or its switch's AllPortSelect sum showed
// no error (then only the data counters are left to read per port).
TEST(ScanPlan, OneMadPerPortWhereExtendedSaysAll) {
  FabricScan s = testing::SmallFatTree(2, 1, 1);  // leaf01, leaf02, spine01, host
  const std::string leaf1 = testing::Guid(0x1001), leaf2 = testing::Guid(0x1002),
                    spine = testing::Guid(0x2001), host = testing::Guid(0x3001);
  std::map<std::string, fabric::PmaCapabilities> known;
  const uint16_t ext_sum_wait =
      fabric::kCapExtendedWidth | fabric::kCapAllPortSelect | fabric::kCapXmitWait;
  known[leaf1].cap_mask = ext_sum_wait;
  known[leaf2].cap_mask = ext_sum_wait;
  known[spine] = {ext_sum_wait, fabric::kCap2AdditionalExtended};
  known[host] = {fabric::kCapExtendedWidth | fabric::kCapXmitWait, fabric::kCap2AdditionalExtended};
  // A sum per switch that would otherwise be asked two MADs per port: not
  // the spine (its Extended says all already).
  std::vector<fabric::PmaQuery> sums = fabric::PlanAggregateReads(s, known);
  ASSERT_EQ(sums.size(), 2u);
  EXPECT_EQ(sums[0], (fabric::PmaQuery{leaf1, fabric::kAllPorts, 1, fabric::kPortCounters}));
  EXPECT_EQ(sums[1].guid, leaf2);

  std::vector<fabric::PmaQuery> reads = fabric::PlanCounterReads(s, known, {leaf2});
  std::map<std::pair<std::string, uint16_t>, int> asked;
  for (const fabric::PmaQuery& q : reads) ++asked[{q.guid, q.attribute}];
  const FabricNode* leaf1_node = FindFabricNode(s, leaf1);
  const int leaf_ports = leaf1_node->ports;
  // leaf01's sum showed errors (not in the set): both per port.
  EXPECT_EQ((asked[{leaf1, fabric::kPortCounters}]), leaf_ports);
  EXPECT_EQ((asked[{leaf1, fabric::kPortCountersExtended}]), leaf_ports);
  // leaf02's was clean; spine and host have the CapabilityMask2 bit.
  EXPECT_EQ((asked[{leaf2, fabric::kPortCounters}]), 0);
  EXPECT_EQ((asked[{leaf2, fabric::kPortCountersExtended}]), leaf_ports);
  EXPECT_EQ((asked[{spine, fabric::kPortCounters}]), 0);
  EXPECT_EQ((asked[{spine, fabric::kPortCountersExtended}]), FindFabricNode(s, spine)->ports);
  EXPECT_EQ((asked[{host, fabric::kPortCounters}]), 0);
  EXPECT_EQ((asked[{host, fabric::kPortCountersExtended}]), 1);

  // Without PortCountersExtended a clean sum cannot stand in for PortCounters.
  known[leaf2].cap_mask = fabric::kCapAllPortSelect;
  EXPECT_EQ(fabric::PlanAggregateReads(s, known).size(), 1u);
  reads = fabric::PlanCounterReads(s, known, {leaf2});
  EXPECT_EQ(
      std::count(reads.begin(), reads.end(), fabric::PmaQuery{leaf2, 1, 2, fabric::kPortCounters}),
      1);
}

TEST(ScanPlan, ReceiveErrorDetailsOnlyWherePortRcvErrorsCounted) {
  FabricScan s = testing::SmallFatTree(1, 1, 1);
  EXPECT_TRUE(fabric::PlanRcvErrorDetailReads(s).empty()) << "a clean fabric: no MAD";
  testing::PortOf(s, 0x1001, 2).counters["port_rcv_errors"] = 3;
  testing::PortOf(s, 0x3001, 1).counters["port_rcv_errors"] = 1;
  std::vector<fabric::PmaQuery> expected = {
      {testing::Guid(0x1001), 2, 1, fabric::kPortRcvErrorDetails},  // at the switch's LID
      {testing::Guid(0x3001), 1, 1, fabric::kPortRcvErrorDetails},
  };
  EXPECT_EQ(fabric::PlanRcvErrorDetailReads(s), expected);
}

TEST(ScanPlan, ASumIsCleanOnlyWhenEveryErrorCounterIsZero) {
  std::map<std::string, uint64_t> sum;
  for (const std::string& name : fabric::ErrorCounterNames(true)) sum[name] = 0;
  sum["port_xmit_data"] = 123456;  // traffic is not an error
  EXPECT_TRUE(fabric::ErrorsKnownZero(sum, true));
  sum["port_xmit_wait"] = 1;
  EXPECT_FALSE(fabric::ErrorsKnownZero(sum, true));
  EXPECT_TRUE(fabric::ErrorsKnownZero(sum, false)) << "XmitWait not read where the PMA lacks it";
  sum["port_xmit_wait"] = 0;
  sum["VL15_dropped"] = 2;
  EXPECT_FALSE(fabric::ErrorsKnownZero(sum, true));
  sum.erase("VL15_dropped");
  EXPECT_FALSE(fabric::ErrorsKnownZero(sum, true)) << "a counter missing is not zero";
}

}  // namespace
}  // namespace fabtrack
