// Port dumps in the formats operators collect, into the PortSample that live
// sysfs reads give: whole structs compared.
#include "collector/parse/port_dump_parser.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace fabtrack {
namespace {

std::string Read(const std::string& name) {
  std::ifstream in(std::string(FABTRACK_FIXTURE_DIR) + "/port_dumps/" + name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

ParsedPortDump Parse(const std::string& name, std::optional<std::string> device = std::nullopt) {
  std::string why;
  std::optional<ParsedPortDump> d = ParsePortDump(Read(name), device, &why);
  EXPECT_TRUE(d) << name << ": " << why;
  return d.value_or(ParsedPortDump{});
}

TEST(PortDumpParser, IbstatGivesStateRateAndDeviceFacts) {
  ParsedPortDump d = Parse("gpu-b07.ibstat.txt");
  EXPECT_EQ(d.format, PortDumpFormat::kIbstat);
  ASSERT_EQ(d.ports.size(), 2u);
  PortSample want;
  want.device = "mlx5_0";
  want.port = 1;
  want.link_layer = "InfiniBand";
  want.state = "ACTIVE";
  want.state_code = 4;
  want.phys_state = "LinkUp";
  want.phys_state_code = 5;
  want.rate_gbps = 400;
  want.rate_text = "400";
  want.lid = "417";
  want.node_guid = "0xa088c2030030aa10";
  want.fw_version = "28.39.2048";
  EXPECT_EQ(d.ports[0], want);
  EXPECT_EQ(d.ports[1].state, "DOWN");
  EXPECT_EQ(d.ports[1].state_code, 1);
  EXPECT_EQ(d.ports[1].phys_state, "Polling");
  EXPECT_EQ(d.ports[1].phys_state_code, 2);
  EXPECT_TRUE(d.errors.empty());
}

TEST(PortDumpParser, PerfqueryExtendedCountersUnderSysfsNames) {
  ParsedPortDump d = Parse("gpu-b07.perfquery.txt");
  EXPECT_EQ(d.format, PortDumpFormat::kPerfquery);
  ASSERT_EQ(d.ports.size(), 1u);
  const PortSample& p = d.ports[0];
  EXPECT_EQ(p.device, "mlx5_0");  // from the "-C mlx5_0" command line
  EXPECT_EQ(p.port, 1);
  EXPECT_EQ(p.lid, "417");
  EXPECT_EQ(p.counters.at("port_xmit_data"), 87232017739652u);
  EXPECT_EQ(p.xmit_bytes, 87232017739652u * 4);  // 4-octet words
  EXPECT_EQ(p.rcv_bytes, 87231904123008u * 4);
  EXPECT_EQ(p.counters.at("unicast_xmit_packets"), 21453378804u);
  EXPECT_EQ(p.counters.at("link_downed"), 2u);
  EXPECT_EQ(p.counters.at("port_xmit_discards"), 17u);
  EXPECT_EQ(p.counters.at("port_xmit_wait"), 4294967295u);
  EXPECT_EQ(p.counters.at("VL15_dropped"), 0u);
  EXPECT_EQ(p.counters.count("PortSelect"), 0u);
  EXPECT_EQ(p.counters.size(), 21u);  // every counter perfquery -x printed but QP1Dropped
}

TEST(PortDumpParser, PerfqueryDeviceFromTheCallerWins) {
  ParsedPortDump d = Parse("gpu-b07.perfquery.txt", "mlx5_9");
  EXPECT_EQ(d.ports.at(0).device, "mlx5_9");
}

TEST(PortDumpParser, IbstatusCodedStatesAndRateText) {
  ParsedPortDump d = Parse("roce-a3.ibstatus.txt");
  EXPECT_EQ(d.format, PortDumpFormat::kIbstatus);
  ASSERT_EQ(d.ports.size(), 2u);
  EXPECT_EQ(d.ports[0].device, "mlx5_0");
  EXPECT_EQ(d.ports[0].state, "ACTIVE");
  EXPECT_EQ(d.ports[0].state_code, 4);
  EXPECT_EQ(d.ports[0].rate_gbps, 200);
  EXPECT_EQ(d.ports[0].rate_text, "200 Gb/sec (4X HDR)");
  EXPECT_EQ(d.ports[0].link_layer, "Ethernet");
  EXPECT_EQ(d.ports[1].phys_state, "Disabled");
  EXPECT_EQ(d.ports[1].phys_state_code, 3);
}

TEST(PortDumpParser, IbvDevinfoRateFromWidthAndLaneSpeed) {
  ParsedPortDump d = Parse("roce-a3.ibv_devinfo.txt");
  EXPECT_EQ(d.format, PortDumpFormat::kIbvDevinfo);
  ASSERT_EQ(d.ports.size(), 2u);
  EXPECT_EQ(d.ports[0].device, "mlx5_0");
  EXPECT_EQ(d.ports[0].rate_gbps, 200);  // 4X x 50 Gb/s
  EXPECT_EQ(d.ports[0].state_code, 4);
  EXPECT_EQ(d.ports[0].phys_state, "LinkUp");
  EXPECT_EQ(d.ports[0].fw_version, "22.38.1900");
  EXPECT_EQ(d.ports[0].board_id, "MT_0000000436");
  EXPECT_EQ(d.ports[1].rate_gbps, 40);
  EXPECT_EQ(d.ports[1].state, "DOWN");
  EXPECT_EQ(d.ports[1].phys_state_code, 3);
}

TEST(PortDumpParser, UnknownTextAndBadValuesAreErrors) {
  std::string why;
  EXPECT_FALSE(ParsePortDump("hello\nworld\n", std::nullopt, &why));
  EXPECT_NE(why.find("ibstat, ibstatus, perfquery or ibv_devinfo"), std::string::npos);
  std::optional<ParsedPortDump> d = ParsePortDump(
      "# Port extended counters: Lid 3 port 1\nPortXmitData:....lots\nPortRcvData:.....5\n",
      std::nullopt, &why);
  ASSERT_TRUE(d);
  ASSERT_EQ(d->errors.size(), 1u);
  EXPECT_EQ(d->errors[0].line, 2);
  EXPECT_EQ(d->ports[0].device, "lid3");
  EXPECT_EQ(d->ports[0].counters.at("port_rcv_data"), 5u);
}

}  // namespace
}  // namespace fabtrack
