// Every switch port of a scan under infiniband_exporter's names: counters by
// (guid, port), data in bytes, absent counters left out, each cabled switch
// port's far end in infiniband_switch_uplink_info.
#include "collector/fabric/switch_exposition.h"

#include <gtest/gtest.h>

#include "tests/subnet/subnet_test_scans.h"

namespace fabtrack {
namespace {

using testing::Guid;
using testing::PortOf;
using testing::SmallFatTree;

bool Has(const std::string& text, const std::string& line) {
  return text.find(line) != std::string::npos;
}

TEST(SwitchExpositionTest, CountersByGuidAndPortWithBothEndsInUplinkInfo) {
  FabricScan scan = SmallFatTree();  // leaf01/3 <-> spine01/1, leaf01/1 <-> node1/1
  PortOf(scan, 0x1001, 3).counters["symbol_error"] = 17;
  PortOf(scan, 0x1001, 3).counters["port_xmit_data"] = 1000;  // 4-octet words
  PortOf(scan, 0x2002, 2).counters.erase("port_xmit_wait");   // not read: left out
  scan.duration_s = 1.5;
  const std::string text = fabric::RenderSwitchExposition(scan);
  const std::string leaf01 = Guid(0x1001), spine01 = Guid(0x2001), spine02 = Guid(0x2002);

  EXPECT_TRUE(Has(text, "# TYPE infiniband_switch_port_symbol_error_total counter\n"));
  EXPECT_TRUE(Has(
      text, "infiniband_switch_port_symbol_error_total{guid=\"" + leaf01 + "\",port=\"3\"} 17\n"));
  EXPECT_TRUE(Has(text, "infiniband_switch_port_transmit_data_bytes_total{guid=\"" + leaf01 +
                            "\",port=\"3\"} 4000\n"));
  EXPECT_TRUE(Has(
      text, "infiniband_switch_port_transmit_wait_total{guid=\"" + spine02 + "\",port=\"1\"} 0\n"));
  EXPECT_FALSE(
      Has(text, "infiniband_switch_port_transmit_wait_total{guid=\"" + spine02 + "\",port=\"2\"}"));
  // HCA ports are not switch ports.
  EXPECT_FALSE(Has(text, "guid=\"" + Guid(0x3001) + "\",port=\"1\"}"));
  EXPECT_TRUE(
      Has(text, "infiniband_switch_info{guid=\"" + leaf01 + "\",switch=\"leaf01\",lid=\"1\"} 1\n"));
  EXPECT_TRUE(Has(text, "infiniband_switch_uplink_info{guid=\"" + leaf01 +
                            "\",port=\"3\",switch=\"leaf01\",uplink=\"spine01\",uplink_guid=\"" +
                            spine01 +
                            "\",uplink_type=\"SW\",uplink_port=\"1\",uplink_lid=\"1\"} 1\n"));
  EXPECT_TRUE(Has(text, "infiniband_switch_uplink_info{guid=\"" + spine01 +
                            "\",port=\"1\",switch=\"spine01\",uplink=\"leaf01\",uplink_guid=\"" +
                            leaf01 + "\",uplink_type=\"SW\",uplink_port=\"3\","));
  EXPECT_TRUE(Has(text, "switch=\"leaf01\",uplink=\"node1\",uplink_guid=\"" + Guid(0x3001) +
                            "\",uplink_type=\"CA\",uplink_port=\"1\","));
  EXPECT_TRUE(Has(text, "fabtrack_fabric_scan_duration_seconds 1.5\n"));
  // Each family's HELP/TYPE once.
  size_t heads = 0;
  for (size_t at = 0;
       (at = text.find("# TYPE infiniband_switch_uplink_info ", at)) != std::string::npos; ++at) {
    ++heads;
  }
  EXPECT_EQ(heads, 1u);
}

TEST(SwitchExpositionTest, LabelValuesAreEscaped) {
  FabricScan scan = SmallFatTree(1, 1, 1);
  for (FabricNode& n : scan.nodes) {
    if (n.type == "switch" && n.description == "leaf01") n.description = "leaf \"01\"\\a";
  }
  const std::string text = fabric::RenderSwitchExposition(scan);
  EXPECT_TRUE(Has(text, "switch=\"leaf \\\"01\\\"\\\\a\"")) << text;
}

}  // namespace
}  // namespace fabtrack
