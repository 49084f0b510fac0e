// Port dumps in the formats operators collect, into the PortSample that live
// sysfs reads give: whole structs compared.
#include "collector/parse/port_dump_parser.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "collector/counters/sysfs_ports.h"

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
  // PortXmitWait is PortCounters' 32-bit one, stuck at 2^32-1: saturated, as
  // the live reader says of its sysfs file; the extended data are 64-bit.
  EXPECT_EQ(p.saturated, std::vector<std::string>{"port_xmit_wait"});
}

// Plain perfquery prints PortCounters only: 32-bit data counters at their
// maximum are saturated too (no extended set beside them).
TEST(PortDumpParser, PlainPerfqueryLegacyCountersSaturate) {
  std::string why;
  std::optional<ParsedPortDump> d = ParsePortDump(
      "# Port counters: Lid 12 port 1 (CapMask: 0x5A00)\n"
      "PortSelect:......................1\n"
      "SymbolErrorCounter:..............65535\n"
      "LinkDownedCounter:...............3\n"
      "PortXmitData:....................4294967295\n"
      "PortRcvData:.....................1200\n"
      "PortXmitWait:....................17\n",
      PortDumpContext{.device = std::string("mlx4_0")}, &why);
  ASSERT_TRUE(d) << why;
  ASSERT_EQ(d->ports.size(), 1u);
  EXPECT_EQ(d->ports[0].saturated, (std::vector<std::string>{"port_xmit_data", "symbol_error"}));
  EXPECT_EQ(d->ports[0].rcv_bytes, 4800u);
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
  EXPECT_NE(why.find("ibstat, ibstatus, perfquery, ibv_devinfo, ethtool -S or sysfs"),
            std::string::npos);
  std::optional<ParsedPortDump> d = ParsePortDump(
      "# Port extended counters: Lid 3 port 1\nPortXmitData:....lots\nPortRcvData:.....5\n",
      std::nullopt, &why);
  ASSERT_TRUE(d);
  ASSERT_EQ(d->errors.size(), 1u);
  EXPECT_EQ(d->errors[0].line, 2);
  EXPECT_EQ(d->ports[0].device, "lid3");
  EXPECT_EQ(d->ports[0].counters.at("port_rcv_data"), 5u);
}

ParsedPortDump ParseWith(const std::string& name, const PortDumpContext& context) {
  std::string why;
  std::optional<ParsedPortDump> d = ParsePortDump(Read(name), context, &why);
  EXPECT_TRUE(d) << name << ": " << why;
  return d.value_or(ParsedPortDump{});
}

// The statistics of roce-a3.ens1f0np0.ethtool.txt that a port keeps: PFC,
// pauses, drops and link errors; not the traffic totals.
std::map<std::string, uint64_t> KeptEthtool() {
  return {{"link_down_events_phy", 2},
          {"rx_crc_errors_phy", 3},
          {"rx_discards_phy", 4821},
          {"rx_out_of_buffer", 17},
          {"rx_pause_ctrl_phy", 0},
          {"rx_prio0_bytes", 81927344},
          {"rx_prio0_discards", 0},
          {"rx_prio0_packets", 10021},
          {"rx_prio0_pause", 0},
          {"rx_prio0_pause_duration", 0},
          {"rx_prio0_pause_transition", 0},
          {"rx_prio3_bytes", 4101020099812},
          {"rx_prio3_discards", 0},
          {"rx_prio3_packets", 918200011},
          {"rx_prio3_pause", 2987},
          {"rx_prio3_pause_duration", 95521},
          {"rx_prio3_pause_transition", 1494},
          {"tx_discards_phy", 0},
          {"tx_pause_ctrl_phy", 0},
          {"tx_prio0_bytes", 70012344},
          {"tx_prio0_packets", 9921},
          {"tx_prio0_pause", 0},
          {"tx_prio0_pause_duration", 0},
          {"tx_prio3_bytes", 4100122820108},
          {"tx_prio3_packets", 902103534},
          {"tx_prio3_pause", 311},
          {"tx_prio3_pause_duration", 10402}};
}

TEST(PortDumpParser, Ibdev2netdevPlainAndVerbose) {
  std::vector<PortDumpError> errors;
  EXPECT_EQ(
      ParseIbdev2netdev(Read("roce-a3.ibdev2netdev.txt"), &errors),
      (std::vector<NetdevPort>{
          {"mlx5_0", 1, "ens1f0np0"}, {"mlx5_1", 1, "ens1f1np1"}, {"mlx5_bond_0", 1, "bond0"}}));
  EXPECT_EQ(ParseIbdev2netdev(Read("roce-a3.ibdev2netdev-v.txt"), &errors),
            (std::vector<NetdevPort>{{"mlx5_0", 1, "ens1f0np0"}, {"mlx5_1", 1, "ens1f1np1"}}));
  EXPECT_TRUE(errors.empty());
  EXPECT_TRUE(ParseIbdev2netdev("mlx5_0 port 1 ==> ib0 (Up)\nhello world\n", &errors).size() == 1);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].line, 2);
}

TEST(PortDumpParser, EthtoolThroughTheNetdevMap) {
  std::vector<PortDumpError> errors;
  PortDumpContext c;
  c.netdev = "ens1f0np0";
  c.netdev_map = ParseIbdev2netdev(Read("roce-a3.ibdev2netdev.txt"), &errors);
  ParsedPortDump d = ParseWith("roce-a3.ens1f0np0.ethtool.txt", c);
  EXPECT_EQ(d.format, PortDumpFormat::kEthtool);
  EXPECT_TRUE(d.errors.empty());
  EXPECT_TRUE(d.notes.empty());
  PortSample want;
  want.device = "mlx5_0";
  want.port = 1;
  want.netdev = "ens1f0np0";
  want.ethtool = KeptEthtool();
  ASSERT_EQ(d.ports.size(), 1u);
  EXPECT_EQ(d.ports[0], want);
}

TEST(PortDumpParser, EthtoolDeviceAndPortGivenOrTheInterfaceAlone) {
  PortDumpContext c;
  c.device = "mlx5_3";
  c.port = 2;
  ParsedPortDump d = ParseWith("roce-a3.ens1f0np0.ethtool.txt", c);
  ASSERT_EQ(d.ports.size(), 1u);
  EXPECT_EQ(d.ports[0].device, "mlx5_3");
  EXPECT_EQ(d.ports[0].port, 2);

  PortDumpContext alone;
  alone.netdev = "eth7";
  d = ParseWith("roce-a3.ens1f0np0.ethtool.txt", alone);
  ASSERT_EQ(d.ports.size(), 1u);
  EXPECT_EQ(d.ports[0].device, "eth7");
  EXPECT_EQ(d.ports[0].port, 1);
  ASSERT_EQ(d.notes.size(), 1u);
  EXPECT_NE(d.notes[0].find("eth7 is tied to no HCA port"), std::string::npos) << d.notes[0];

  std::string why;
  EXPECT_FALSE(ParsePortDump(Read("roce-a3.ens1f0np0.ethtool.txt"), PortDumpContext{}, &why));
  EXPECT_NE(why.find("names no interface"), std::string::npos) << why;
}

TEST(PortDumpParser, SysfsGrepDumpReadsAsTheLiveReaderReadsTheFiles) {
  const std::string text = Read("gpu-c11.sysfs.txt");
  ParsedPortDump d = ParseWith("gpu-c11.sysfs.txt", {});
  EXPECT_EQ(d.format, PortDumpFormat::kSysfs);
  EXPECT_TRUE(d.errors.empty());
  ASSERT_EQ(d.ports.size(), 2u);
  EXPECT_EQ(d.ports[0].state, "ACTIVE");
  EXPECT_EQ(d.ports[0].state_code, 4);
  EXPECT_EQ(d.ports[0].rate_gbps, 400);
  EXPECT_EQ(d.ports[0].xmit_bytes, 87232017739ull * 4);
  EXPECT_EQ(d.ports[0].saturated, std::vector<std::string>{"port_xmit_wait"});
  EXPECT_EQ(d.ports[0].hw_counters.count("lifespan"), 0u);
  EXPECT_EQ(d.ports[0].hw_counters.at("local_ack_timeout_err"), 3u);
  EXPECT_EQ(d.ports[1].saturated, (std::vector<std::string>{"link_downed", "symbol_error"}));

  // The same files as a tree: ReadSysfsPorts gives the very same samples.
  const std::string root =
      std::filesystem::temp_directory_path() / ("sysfs_dump_" + std::to_string(getpid()));
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const size_t colon = line.find(':');
    const std::filesystem::path file = root + line.substr(4, colon - 4);
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file) << line.substr(colon + 1) << "\n";
  }
  HostPorts live = ReadSysfsPorts(root);
  std::filesystem::remove_all(root);
  EXPECT_TRUE(live.problems.empty());
  EXPECT_EQ(live.ports, d.ports);
}

TEST(PortDumpParser, SysfsEchoDumpOldKernelCountersExtAndNoPma) {
  ParsedPortDump d = ParseWith("gpu-c12.sysfs.txt", {});
  EXPECT_TRUE(d.errors.empty());
  PortSample want;
  want.device = "mlx4_0";
  want.port = 1;
  want.link_layer = "InfiniBand";
  want.state = "ACTIVE";
  want.state_code = 4;
  want.phys_state = "LinkUp";
  want.phys_state_code = 5;
  want.rate_gbps = 56;
  want.rate_text = "56 Gb/sec (4X FDR)";
  want.lid = "0x1c";
  want.node_guid = "0002:c903:00a1:b2c0";
  want.fw_version = "2.42.5000";
  want.board_id = "MT_1090120019";
  // 64-bit counters_ext/ values replace the stuck 32-bit ones; port_xmit_wait
  // read "N/A (no PMA)": absent.
  want.counters = {{"port_xmit_data", 90283746512},
                   {"port_rcv_data", 88172635410},
                   {"port_xmit_packets", 120938475},
                   {"port_rcv_packets", 2281736},
                   {"unicast_xmit_packets", 120938001},
                   {"symbol_error", 0},
                   {"link_downed", 0},
                   {"port_rcv_errors", 0},
                   {"port_xmit_discards", 7}};
  want.xmit_bytes = 90283746512ull * 4;
  want.rcv_bytes = 88172635410ull * 4;
  ASSERT_EQ(d.ports.size(), 1u);
  EXPECT_EQ(d.ports[0], want);
}

TEST(PortDumpParser, SysfsStuckDataCountersWithoutA64BitSource) {
  std::string why;
  std::optional<ParsedPortDump> d = ParsePortDump(
      "/sys/class/infiniband/mlx4_0/ports/1/counters/port_xmit_data:4294967295\n"
      "/sys/class/infiniband/mlx4_0/ports/1/counters/port_rcv_data:4294967295\n"
      "/sys/class/infiniband/mlx4_0/ports/1/counters_ext/port_rcv_data_64:991\n",
      PortDumpContext{}, &why);
  ASSERT_TRUE(d) << why;
  ASSERT_EQ(d->ports.size(), 1u);
  EXPECT_EQ(d->ports[0].saturated, std::vector<std::string>{"port_xmit_data"});
  EXPECT_EQ(d->ports[0].counters.at("port_rcv_data"), 991u);
}

TEST(PortDumpParser, SysfsLinesThatAreNotFilesAreErrorsWithTheirLine) {
  std::string why;
  std::optional<ParsedPortDump> d = ParsePortDump(
      "/sys/class/infiniband/mlx5_0/ports/1/state:4: ACTIVE\n"
      "grep: /sys/class/infiniband/mlx5_0/ports/1/counters/x: Permission denied\n"
      "/sys/class/infiniband/mlx5_0/ports/one/state:4: ACTIVE\n",
      PortDumpContext{}, &why);
  ASSERT_TRUE(d) << why;
  ASSERT_EQ(d->errors.size(), 2u);
  EXPECT_EQ(d->errors[0].line, 2);
  EXPECT_EQ(d->errors[1].line, 3);
}

}  // namespace
}  // namespace fabtrack
