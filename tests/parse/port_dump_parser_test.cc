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
      "PortXmitPkts:....................40\n"
      "PortRcvPkts:.....................30\n"
      "PortXmitWait:....................17\n",
      PortDumpContext{.device = std::string("mlx4_0")}, &why);
  ASSERT_TRUE(d) << why;
  EXPECT_TRUE(d->errors.empty());
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
      "# Port extended counters: Lid 3 port 1\nPortXmitData:....lots\nPortRcvData:.....5\n"
      "PortXmitPkts:....1\nPortRcvPkts:....1\nPortUnicastXmitPkts:....1\n"
      "PortUnicastRcvPkts:....1\nPortMulticastXmitPkts:....0\nPortMulticastRcvPkts:....0\n",
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

// --- Dumps as operators save and paste them (issue 30) ---

// The errors of a dump that must not be stored, or a failure naming why.
std::vector<PortDumpError> ErrorsOfText(const std::string& text,
                                        const PortDumpContext& context = {}) {
  std::string why;
  std::optional<std::vector<ParsedPortDump>> d = ParsePortDumpDocument(text, context, &why);
  if (!d) return {{0, why}};
  std::vector<PortDumpError> errors;
  for (const ParsedPortDump& h : *d) errors.insert(errors.end(), h.errors.begin(), h.errors.end());
  return errors;
}

std::vector<PortDumpError> ErrorsOf(const std::string& name, const PortDumpContext& context = {}) {
  return ErrorsOfText(Read(name), context);
}

int LineCount(const std::string& name) {
  const std::string text = Read(name);
  return 1 + static_cast<int>(std::count(text.begin(), text.end(), '\n')) -
         (text.ends_with('\n') ? 1 : 0);
}

// Each tool's dump cut inside its last line or block: an error on the line
// where it ends, whatever the tool.
TEST(PortDumpCutOff, EveryToolsCutDumpIsAnErrorOnItsLastLine) {
  for (const auto& [name, context] : std::vector<std::pair<std::string, PortDumpContext>>{
           {"gpu-e21.ibstat.cut.txt", {}},
           {"roce-b02.ibstatus.cut.txt", {}},
           {"gpu-d04.perfquery.cut.txt", {}},
           {"gpu-d04.perfquery.cut-at-line.txt", {}},
           {"roce-a3.ibv_devinfo.cut.txt", {}},
           {"roce-a3.ens1f0np0.ethtool.cut.txt", {.netdev = std::string("ens1f0np0")}},
           {"gpu-c11.sysfs.cut.txt", {}}}) {
    std::vector<PortDumpError> errors = ErrorsOf(name, context);
    ASSERT_FALSE(errors.empty()) << name;
    EXPECT_TRUE(std::any_of(errors.begin(), errors.end(),
                            [&](const PortDumpError& e) { return e.line == LineCount(name); }))
        << name << ": " << errors.back().line << ": " << errors.back().message;
  }
  // The whole dumps they were cut from read clean.
  for (const char* whole :
       {"gpu-b07.ibstat.txt", "roce-a3.ibstatus.txt", "gpu-d04.perfquery.0205.txt",
        "roce-a3.ibv_devinfo.txt", "gpu-c11.sysfs.txt"}) {
    EXPECT_TRUE(ErrorsOf(whole).empty()) << whole << ": " << ErrorsOf(whole).front().message;
  }
}

TEST(PortDumpCutOff, IbstatCutInsideACaSaysSo) {
  std::vector<PortDumpError> errors = ErrorsOf("gpu-e21.ibstat.cut.txt");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].message.find("CA 'mlx5_6'"), std::string::npos) << errors[0].message;
  EXPECT_NE(errors[0].message.find("cut off"), std::string::npos) << errors[0].message;
}

// The ibstatus block cut after its gid: never a port with no state, rate
// or link layer.
TEST(PortDumpCutOff, IbstatusCutInsideAPortBlockStoresNoEmptyPort) {
  std::string why;
  std::optional<ParsedPortDump> d =
      ParsePortDump(Read("roce-b02.ibstatus.cut.txt"), PortDumpContext{}, &why);
  ASSERT_TRUE(d) << why;
  ASSERT_FALSE(d->errors.empty());
  EXPECT_NE(d->errors.front().message.find("mlx5_2 port 1"), std::string::npos)
      << d->errors.front().message;
  EXPECT_NE(d->errors.front().message.find("cut off"), std::string::npos);
  EXPECT_EQ(d->ports.size(), 2u);
  for (const PortSample& p : d->ports) {
    EXPECT_TRUE(p.state && p.rate_gbps && p.link_layer) << p.device;
  }
  // A block with a header only, in the middle: an error on its line, no port.
  d = ParsePortDump(
      "Infiniband device 'mlx5_0' port 1 status:\n\n"
      "Infiniband device 'mlx5_1' port 1 status:\n"
      "        state:           4: ACTIVE\n        phys state:      5: LinkUp\n"
      "        rate:            100 Gb/sec (4X EDR)\n        link_layer:      Ethernet\n",
      PortDumpContext{}, &why);
  ASSERT_TRUE(d) << why;
  ASSERT_EQ(d->ports.size(), 1u);
  EXPECT_EQ(d->ports[0].device, "mlx5_1");
  ASSERT_FALSE(d->errors.empty());
  EXPECT_EQ(d->errors[0].line, 1);
}

// An empty value is absent: ibstat's second port with nothing after "Base
// lid:" has no lid, not "".
TEST(PortDumpParser, EmptyValuesAreAbsentNotEmptyText) {
  std::string why;
  std::optional<ParsedPortDump> d = ParsePortDump(
      "CA 'mlx5_0'\n\tCA type: MT4125\n\tNumber of ports: 2\n\tFirmware version: 22.38.1900\n"
      "\tPort 1:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tRate: 100\n"
      "\t\tBase lid: 0\n\t\tPort GUID: 0x5c2573fffe410a10\n\t\tLink layer: Ethernet\n"
      "\tPort 2:\n\t\tState: Down\n\t\tPhysical state: Disabled\n\t\tRate: 40\n"
      "\t\tBase lid: \n\t\tPort GUID: 0x5c2573fffe410a11\n\t\tLink layer: Ethernet\n",
      PortDumpContext{}, &why);
  ASSERT_TRUE(d) << why;
  EXPECT_TRUE(d->errors.empty()) << d->errors[0].message;
  ASSERT_EQ(d->ports.size(), 2u);
  EXPECT_EQ(d->ports[0].lid, "0");
  EXPECT_EQ(d->ports[1].lid, std::nullopt);
}

// A node-check file: ibstat says the port is Down; mlxlink's "State :
// Active" after it (or before it) is mlxlink's, not ibstat's.
TEST(PortDumpSections, MlxlinkAfterIbstatKeepsToItsOwnLines) {
  for (const char* name :
       {"gpu-f03.node-check.txt", "gpu-f03.node-check-noprompt.txt", "gpu-f03.mlxlink-first.txt"}) {
    ParsedPortDump d = Parse(name);
    EXPECT_TRUE(d.errors.empty()) << name << ": " << d.errors.front().message;
    ASSERT_EQ(d.ports.size(), 1u) << name;
    EXPECT_EQ(d.ports[0].state, "DOWN") << name;
    EXPECT_EQ(d.ports[0].phys_state, "Polling") << name;
    EXPECT_EQ(d.ports[0].rate_gbps, 10) << name;
  }
}

// Two hosts' ibstat in one document, in the ways people paste them: one
// dump per host, named, not merged.
TEST(PortDumpSections, TwoHostsOfOneDocumentAreTwoDumps) {
  for (const char* name :
       {"pair-g01-g02.tail.txt", "pair-g01-g02.markdown.txt", "pair-g01-g02.prompts.txt",
        "pair-g01-g02.headers.txt", "pair-g01-g02.pdsh.txt"}) {
    std::string why;
    std::optional<std::vector<ParsedPortDump>> d =
        ParsePortDumpDocument(Read(name), PortDumpContext{}, &why);
    ASSERT_TRUE(d) << name << ": " << why;
    ASSERT_EQ(d->size(), 2u) << name;
    EXPECT_EQ((*d)[0].host, "gpu-g01") << name;
    EXPECT_EQ((*d)[1].host, "gpu-g02") << name;
    for (const ParsedPortDump& h : *d) {
      EXPECT_TRUE(h.errors.empty()) << name << ": " << h.errors.front().message;
      ASSERT_EQ(h.ports.size(), 1u) << name;
    }
    EXPECT_EQ((*d)[0].ports[0].rate_gbps, 200) << name;
    EXPECT_EQ((*d)[1].ports[0].rate_gbps, 100) << name;
    EXPECT_EQ((*d)[1].ports[0].node_guid, "0xb83fd20300a1c2f8") << name;
    // One host's reader refuses it, naming both.
    EXPECT_FALSE(ParsePortDump(Read(name), PortDumpContext{}, &why)) << name;
    EXPECT_NE(why.find("gpu-g01, gpu-g02"), std::string::npos) << why;
  }
  // One host's prompt names no second host: one unnamed dump.
  std::string why;
  std::optional<std::vector<ParsedPortDump>> one =
      ParsePortDumpDocument(Read("gpu-b07.perfquery.txt"), PortDumpContext{}, &why);
  ASSERT_TRUE(one) << why;
  ASSERT_EQ(one->size(), 1u);
  EXPECT_EQ(one->front().host, std::nullopt);
}

// sysfs as `for f in *; do echo "=== ./$f ==="; cat $f; done` prints it
// (the directory from the `cd` or the prompt), `tail -n +1`'s `==> FILE
// <==` and `grep . FILE...` in a port's directory: the same samples as
// `grep -H` of the absolute paths, saturation included.
TEST(PortDumpSections, SysfsCatLoopTailAndRelativeGrep) {
  ParsedPortDump before = Parse("gpu-h05.sysfs-catloop.0200.txt");
  EXPECT_EQ(before.format, PortDumpFormat::kSysfs);
  EXPECT_TRUE(before.errors.empty()) << before.errors.front().message;
  ASSERT_EQ(before.ports.size(), 1u);
  EXPECT_EQ(before.ports[0].device, "mlx5_1");
  EXPECT_EQ(before.ports[0].port, 1);
  EXPECT_EQ(before.ports[0].counters.size(), 21u);
  EXPECT_EQ(before.ports[0].counters.at("symbol_error"), 12u);
  EXPECT_EQ(before.ports[0].xmit_bytes, 96120455301120ull * 4);
  EXPECT_TRUE(before.ports[0].saturated.empty());

  ParsedPortDump after = Parse("gpu-h05.sysfs-catloop.0210.txt");
  EXPECT_TRUE(after.errors.empty()) << after.errors.front().message;
  ASSERT_EQ(after.ports.size(), 1u);
  EXPECT_EQ(after.ports[0].device, "mlx5_1");
  EXPECT_EQ(after.ports[0].counters.size(), 21u);
  // 32-bit port_xmit_wait, 8-bit link_downed, 16-bit port_xmit_discards at
  // their maximum, and a 64-bit data counter at 2^64-1 (no bytes from it).
  EXPECT_EQ(after.ports[0].saturated,
            (std::vector<std::string>{"link_downed", "port_rcv_data", "port_xmit_discards",
                                      "port_xmit_wait"}));
  EXPECT_EQ(after.ports[0].rcv_bytes, std::nullopt);

  ParsedPortDump tail = Parse("gpu-h05.sysfs-tail.txt");
  EXPECT_TRUE(tail.errors.empty()) << tail.errors.front().message;
  ASSERT_EQ(tail.ports.size(), 1u);
  EXPECT_EQ(tail.ports[0].state, "ACTIVE");
  EXPECT_EQ(tail.ports[0].phys_state_code, 5);
  EXPECT_EQ(tail.ports[0].rate_gbps, 200);
  EXPECT_EQ(tail.ports[0].link_layer, "InfiniBand");

  ParsedPortDump grep = Parse("gpu-h05.sysfs-grep-relative.txt");
  EXPECT_TRUE(grep.errors.empty()) << grep.errors.front().message;
  ASSERT_EQ(grep.ports.size(), 1u);
  EXPECT_EQ(grep.ports[0].device, "mlx5_1");
  EXPECT_EQ(grep.ports[0].state, "ACTIVE");
  EXPECT_EQ(grep.ports[0].saturated,
            (std::vector<std::string>{"link_downed", "port_rcv_data", "port_xmit_wait"}));

  // No directory anywhere: the caller's port, else an error naming the file.
  const std::string bare = "=== ./symbol_error ===\n7\n=== ./state ===\n4: ACTIVE\n";
  std::string why;
  std::optional<ParsedPortDump> d = ParsePortDump(bare, PortDumpContext{}, &why);
  ASSERT_TRUE(d) << why;
  ASSERT_FALSE(d->errors.empty());
  EXPECT_EQ(d->errors[0].line, 1);
  d = ParsePortDump(bare, PortDumpContext{.device = std::string("mlx5_3"), .port = 1}, &why);
  ASSERT_TRUE(d) << why;
  EXPECT_TRUE(d->errors.empty());
  ASSERT_EQ(d->ports.size(), 1u);
  EXPECT_EQ(d->ports[0].device, "mlx5_3");
  EXPECT_EQ(d->ports[0].counters.at("symbol_error"), 7u);
  EXPECT_EQ(d->ports[0].state, "ACTIVE");
}

// The live reader judges a 64-bit counter at 2^64-1 as the dump reader does.
TEST(PortDumpParser, LiveReaderSaturatesA64BitCounterAtItsMaximumToo) {
  const std::string root =
      std::filesystem::temp_directory_path() / ("sysfs_max64_" + std::to_string(getpid()));
  const std::string dir = root + "/class/infiniband/mlx5_0/ports/1/counters/";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "port_rcv_data") << "18446744073709551615\n";
  std::ofstream(dir + "unicast_rcv_packets") << "5\n";
  HostPorts live = ReadSysfsPorts(root);
  std::filesystem::remove_all(root);
  ASSERT_EQ(live.ports.size(), 1u);
  EXPECT_EQ(live.ports[0].saturated, std::vector<std::string>{"port_rcv_data"});
}

// Comment lines before or between sysfs and perfquery lines are skipped;
// a port whose every file read N/A (no PMA) is not stored.
TEST(PortDumpSections, CommentLinesAroundSysfsAndPerfquery) {
  ParsedPortDump sysfs = Parse("gpu-c14.sysfs-comments.txt");
  EXPECT_TRUE(sysfs.errors.empty()) << sysfs.errors.front().message;
  ASSERT_EQ(sysfs.ports.size(), 2u);
  EXPECT_EQ(sysfs.ports[0].device, "i40iw0");
  EXPECT_TRUE(sysfs.ports[0].counters.empty());
  EXPECT_EQ(sysfs.ports[0].rate_gbps, 10);
  EXPECT_EQ(sysfs.ports[1].counters.at("symbol_error"), 3u);

  ParsedPortDump perfquery = Parse("gpu-d04.perfquery.comments.txt");
  EXPECT_TRUE(perfquery.errors.empty()) << perfquery.errors.front().message;
  ASSERT_EQ(perfquery.ports.size(), 1u);
  EXPECT_EQ(perfquery.ports[0].device, "mlx5_2");
  EXPECT_EQ(perfquery.ports[0], Parse("gpu-d04.perfquery.0200.txt").ports[0]);

  std::string why;
  EXPECT_FALSE(ParsePortDump(
      "# i40iw\n/sys/class/infiniband/i40iw0/ports/1/counters/link_downed:N/A (no PMA)\n"
      "/sys/class/infiniband/i40iw0/ports/1/counters/port_rcv_data:N/A (no PMA)\n",
      PortDumpContext{}, &why));
  EXPECT_NE(why.find("N/A (no PMA)"), std::string::npos) << why;
}

// `ethtool -S` with the command and a date before "NIC statistics:": read,
// the interface from the command line.
TEST(PortDumpSections, EthtoolAfterBannerLines) {
  ParsedPortDump d =
      ParseWith("roce-a3.ethtool-banner.txt", {.netdev_map = {{"mlx5_1", 1, "ens1f1np1"}}});
  EXPECT_EQ(d.format, PortDumpFormat::kEthtool);
  EXPECT_TRUE(d.errors.empty()) << d.errors.front().message;
  ASSERT_EQ(d.ports.size(), 1u);
  EXPECT_EQ(d.ports[0].device, "mlx5_1");
  EXPECT_EQ(d.ports[0].netdev, "ens1f1np1");
  EXPECT_EQ(d.ports[0].ethtool, KeptEthtool());
  std::vector<PortDumpError> errors;
  std::string why;
  std::optional<std::map<std::string, uint64_t>> all =
      ParseEthtoolStatistics(Read("roce-a3.ethtool-banner.txt"), &errors, &why);
  ASSERT_TRUE(all) << why;
  EXPECT_TRUE(errors.empty());
  EXPECT_EQ(all->at("rx_prio3_pause"), 2987u);
  // Nothing after the line: said so, not "without any port".
  std::optional<ParsedPortDump> none =
      ParsePortDump("$ ethtool -S eth0\nNIC statistics:\n", PortDumpContext{}, &why);
  ASSERT_TRUE(none) << why;
  ASSERT_EQ(none->errors.size(), 1u);
  EXPECT_NE(none->errors[0].message.find("no statistic"), std::string::npos);
}

// Per-queue statistics have a colon in their names (bnx2x "[0]: rx_bytes",
// be2net "rxq0: rx_pkts"); a markdown "# ethtool -S output" heading names
// no interface.
TEST(PortDumpSections, EthtoolPerQueueNamesAndAMarkdownHeading) {
  std::string why;
  std::optional<ParsedPortDump> d = ParsePortDump(
      "# ethtool -S output\n\n```\nNIC statistics:\n     rx_pause_frames: 5\n"
      "     [0]: rx_bytes: 209487\n     [0]: rx_discards: 3\n     rxq1: rx_drops_no_frags: 7\n"
      "```\n",
      PortDumpContext{.netdev = std::string("eth2")}, &why);
  ASSERT_TRUE(d) << why;
  EXPECT_TRUE(d->errors.empty()) << d->errors.front().message;
  ASSERT_EQ(d->ports.size(), 1u);
  EXPECT_EQ(d->ports[0].netdev, "eth2");
  EXPECT_EQ(d->ports[0].ethtool,
            (std::map<std::string, uint64_t>{{"[0]: rx_discards", 3}, {"rx_pause_frames", 5}}));
}

// `cat FILE` prompts each followed by the file's value, and ansible's
// ad-hoc "HOST | CHANGED | rc=0 >>" headers of two hosts.
TEST(PortDumpSections, CatPromptsAndAnsibleHeaders) {
  std::string why;
  std::optional<ParsedPortDump> d = ParsePortDump(
      "[root@gpu-k02 ~]# cat /sys/class/infiniband/mlx5_3/ports/1/counters/port_xmit_wait\n"
      "4294967295\n"
      "[root@gpu-k02 ~]# cat /sys/class/infiniband/mlx5_3/ports/1/state\n4: ACTIVE\n"
      "[root@gpu-k02 ~]# cd /sys/class/infiniband/mlx5_3/ports/1/counters\n"
      "[root@gpu-k02 counters]# cat symbol_error\n17\n[root@gpu-k02 counters]# \n",
      PortDumpContext{}, &why);
  ASSERT_TRUE(d) << why;
  EXPECT_TRUE(d->errors.empty()) << d->errors.front().message;
  ASSERT_EQ(d->ports.size(), 1u);
  EXPECT_EQ(d->ports[0].device, "mlx5_3");
  EXPECT_EQ(d->ports[0].state, "ACTIVE");
  EXPECT_EQ(d->ports[0].counters.at("symbol_error"), 17u);
  EXPECT_EQ(d->ports[0].saturated, std::vector<std::string>{"port_xmit_wait"});

  std::string ibstat = Read("pair-g01-g02.headers.txt");
  std::string ansible;
  for (std::string_view host : {"gpu-g01:", "gpu-g02:"}) {
    const size_t at = ibstat.find(host);
    ibstat.replace(at, host.size(),
                   std::string(host.substr(0, host.size() - 1)) + " | CHANGED | rc=0 >>");
  }
  std::optional<std::vector<ParsedPortDump>> hosts =
      ParsePortDumpDocument(ibstat, PortDumpContext{}, &why);
  ASSERT_TRUE(hosts) << why;
  ASSERT_EQ(hosts->size(), 2u);
  EXPECT_EQ((*hosts)[1].host, "gpu-g02");
  EXPECT_EQ((*hosts)[1].ports.at(0).rate_gbps, 100);
}

// A node-check file of ibstat and a perfquery without -C: the LID joins
// perfquery's counters to ibstat's port.
TEST(PortDumpSections, PerfqueryWithoutDeviceJoinsIbstatsPortByLid) {
  std::string perfquery = Read("gpu-b07.perfquery.txt");
  perfquery.replace(perfquery.find(" -C mlx5_0"), 10, "");
  std::string why;
  std::optional<ParsedPortDump> d =
      ParsePortDump(Read("gpu-b07.ibstat.txt") + perfquery, PortDumpContext{}, &why);
  ASSERT_TRUE(d) << why;
  EXPECT_TRUE(d->errors.empty()) << d->errors.front().message;
  EXPECT_EQ(d->formats,
            (std::vector<PortDumpFormat>{PortDumpFormat::kIbstat, PortDumpFormat::kPerfquery}));
  ASSERT_EQ(d->ports.size(), 2u);
  EXPECT_EQ(d->ports[0].device, "mlx5_0");
  EXPECT_EQ(d->ports[0].state, "ACTIVE");
  EXPECT_EQ(d->ports[0].counters.at("port_xmit_data"), 87232017739652u);
  EXPECT_EQ(d->ports[0].saturated, std::vector<std::string>{"port_xmit_wait"});
  EXPECT_TRUE(d->ports[1].counters.empty());
}

// A paste copied from an issue page keeps its HTML: "<pre>" before the
// output and "</pre>" after it end nothing early and cut nothing off.
TEST(PortDumpSections, HtmlAroundAPasteIsNoCut) {
  std::string why;
  std::string ibstatus = Read("roce-a3.ibstatus.txt");
  while (ibstatus.ends_with("\n")) ibstatus.pop_back();
  std::optional<ParsedPortDump> d = ParsePortDump(
      "<summary>ibstatus</summary>\n<pre>\n" + ibstatus + "\n</pre>\n", PortDumpContext{}, &why);
  ASSERT_TRUE(d) << why;
  EXPECT_TRUE(d->errors.empty()) << d->errors.front().message;
  EXPECT_EQ(d->ports.size(), 2u);
}

// Issue 30, round three: shapes of real public dumps the fixtures above did
// not have (README of the fixtures: "Shapes from real samples").
TEST(PortDumpRealShapes, CommentLinesInsideAnIbstatPortBlock) {
  // A how-to's ibstat with a "# ..." note under each key: it was "ends
  // without Physical state, Rate, Port GUID: the dump is cut off".
  ParsedPortDump d = Parse("gpu-k02.ibstat-annotated.txt");
  EXPECT_TRUE(d.errors.empty()) << (d.errors.empty() ? "" : d.errors[0].message);
  ASSERT_EQ(d.ports.size(), 2u);
  EXPECT_EQ(d.ports[0].device, "mlx5_0");
  EXPECT_EQ(d.ports[0].state, "DOWN");
  EXPECT_EQ(d.ports[0].phys_state, "Disabled");
  EXPECT_EQ(d.ports[0].rate_gbps, 400);
  EXPECT_EQ(d.ports[0].link_layer, "Ethernet");
  EXPECT_EQ(d.ports[0].node_guid, "0x58a2e10300c471e2");
  EXPECT_EQ(d.ports[1].state, "ACTIVE");
}

TEST(PortDumpRealShapes, NodeCheckLoopTitlesAndAnotherNodesPerfquery) {
  // A node check's `echo "========== mt4123_pciconf$i =========="` titles
  // before mlxlink's output were read as cat-loop files ("a file of no
  // known directory"); `perfquery -C mlx5_0 2` printed LID 2's (a switch's)
  // port 0, stored as mlx5_0 port 0.
  std::string why;
  std::optional<std::vector<ParsedPortDump>> d =
      ParsePortDumpDocument(Read("gpu-m07.node-check-loop.txt"), PortDumpContext{}, &why);
  ASSERT_TRUE(d) << why;
  ASSERT_EQ(d->size(), 1u);
  const ParsedPortDump& dump = d->front();
  EXPECT_TRUE(dump.errors.empty()) << (dump.errors.empty() ? "" : dump.errors[0].message);
  ASSERT_EQ(dump.ports.size(), 2u);
  EXPECT_EQ(dump.ports[0].device, "mlx5_0");
  EXPECT_EQ(dump.ports[0].port, 1);
  EXPECT_TRUE(dump.ports[0].counters.empty());
  EXPECT_EQ(dump.ports[1].device, "mlx5_1");
  EXPECT_EQ(dump.ports[1].state, "DOWN");  // ibstat's, not mlxlink's "State : Active"
  ASSERT_FALSE(dump.notes.empty());
  EXPECT_NE(dump.notes.back().find("LID 2 port 0, asked through mlx5_0, are another node's"),
            std::string::npos)
      << dump.notes.back();
}

TEST(PortDumpRealShapes, EthtoolIKeysWithoutValueAreNoHosts) {
  // `ethtool -i` before `ethtool -S`: its "firmware-version:" and
  // "expansion-rom-version:" (empty) were two hosts' headers. One port,
  // enp5s0, with the one statistic fabtrack keeps of it: rx_missed, the
  // r8169's drop counter (round eight; before it, nothing was kept and
  // nothing stored).
  std::string why;
  std::optional<std::vector<ParsedPortDump>> d =
      ParsePortDumpDocument(Read("ws-l12.ethtool-i-and-S.txt"), PortDumpContext{}, &why);
  ASSERT_TRUE(d) << why;
  ASSERT_EQ(d->size(), 1u);
  EXPECT_EQ(d->front().host, std::nullopt);
  ASSERT_EQ(d->front().ports.size(), 1u);
  EXPECT_EQ(d->front().ports[0].netdev, "enp5s0");
  EXPECT_EQ(d->front().ports[0].ethtool, (std::map<std::string, uint64_t>{{"rx_missed", 3}}));
}

TEST(PortDumpRealShapes, GrepRunInSysClassGivesPathsWithoutTheirRoot) {
  // `grep -H . infiniband/*/...` in /sys/class: "infiniband/mlx5_0/ports/
  // 1/counters/port_xmit_wait:4294967295", beside device/ lines. It was
  // "not a port dump fabtrack knows".
  ParsedPortDump d = Parse("gpu-n03.sysfs-grep-sys-class.txt");
  EXPECT_EQ(d.format, PortDumpFormat::kSysfs);
  EXPECT_TRUE(d.errors.empty()) << (d.errors.empty() ? "" : d.errors[0].message);
  ASSERT_EQ(d.ports.size(), 2u);
  EXPECT_EQ(d.ports[0].device, "mlx5_0");
  EXPECT_EQ(d.ports[0].state, "ACTIVE");
  EXPECT_EQ(d.ports[0].rate_gbps, 400);
  EXPECT_EQ(d.ports[0].saturated, std::vector<std::string>{"port_xmit_wait"});
  EXPECT_EQ(d.ports[1].counters.at("symbol_error"), 3u);
  EXPECT_EQ(d.ports[1].hw_counters.at("rnr_nak_retry_err"), 0u);
}

TEST(PortDumpRealShapes, ValuesBlankedOutBeforePostingAreAbsent) {
  // "Node GUID: ..." (a post with the GUIDs removed) was stored as the
  // node's GUID "...".
  ParsedPortDump d = Parse("gpu-p21.ibstat-redacted.txt");
  EXPECT_TRUE(d.errors.empty()) << (d.errors.empty() ? "" : d.errors[0].message);
  ASSERT_EQ(d.ports.size(), 1u);
  EXPECT_EQ(d.ports[0].node_guid, std::nullopt);
  EXPECT_EQ(d.ports[0].state, "DOWN");
  EXPECT_EQ(d.ports[0].phys_state, "Polling");
  EXPECT_EQ(d.ports[0].rate_gbps, 10);
  EXPECT_EQ(d.ports[0].lid, "1207");
}

TEST(PortDumpRealShapes, EthtoolCutInsideANameSaysCutOff) {
  // A paste cut at "     tx" or "     rx-8.rx_bytes:" was "not a
  // statistic": the README promises the cut is said.
  std::string why;
  std::optional<std::vector<ParsedPortDump>> d =
      ParsePortDumpDocument(Read("roce-a3.ens1f0np0.ethtool.cut.txt"),
                            PortDumpContext{.netdev = std::string("ens1f0np0")}, &why);
  ASSERT_TRUE(d) << why;
  ASSERT_FALSE(d->front().errors.empty());
  EXPECT_EQ(d->front().errors.back().message,
            "cut off: the last line, rx_prio3_pa, is no whole statistic");
}

TEST(PortDumpRealShapes, EthtoolCutInsideAPerQueueNameSaysCutOff) {
  // bnx2x and be2net print per-queue names with a colon of their own; a
  // paste cut at "[3]: rx_ucast_pack" or "rxq1: rx_bytes:" was "not a
  // statistic".
  const std::string head =
      "$ ethtool -S eth2\nNIC statistics:\n     [0]: rx_bytes: 88120334\n"
      "     rxq0: rx_pkts: 41200\n     rx_discards_phy: 3\n";
  for (const char* last : {"     [3]: rx_ucast_pack", "     rxq1: rx_bytes:"}) {
    std::string why;
    std::optional<std::vector<ParsedPortDump>> d =
        ParsePortDumpDocument(head + last, PortDumpContext{.netdev = std::string("eth2")}, &why);
    ASSERT_TRUE(d) << why;
    ASSERT_FALSE(d->front().errors.empty()) << last;
    EXPECT_EQ(d->front().errors.back().message,
              "cut off: the last line, " + std::string(last).substr(5) + ", is no whole statistic");
  }
}

TEST(PortDumpRealShapes, QuotedCommandNamesTheInterface) {
  // "> ethtool -S enp66s0f0" quoted above the fenced output in an issue:
  // the interface was "named nowhere".
  const std::string text =
      "> ethtool -S ens2f0np0\n\n```\nNIC statistics:\n     rx_prio3_pause: 5\n"
      "     tx_prio3_pause: 0\n```\n";
  std::string why;
  std::optional<std::vector<ParsedPortDump>> d =
      ParsePortDumpDocument(text, PortDumpContext{}, &why);
  ASSERT_TRUE(d) << why;
  ASSERT_EQ(d->front().ports.size(), 1u);
  EXPECT_EQ(d->front().ports[0].device, "ens2f0np0");
  EXPECT_EQ(d->front().ports[0].ethtool.at("rx_prio3_pause"), 5u);
}

TEST(PortDumpRealShapes, EthtoolFilteredThroughGrepUnderItsCommand) {
  // `ethtool -S IFACE | grep prio` as posted in guides and issues: no
  // "NIC statistics:" line, the kept command naming the interface, a "..."
  // where lines were left out and notes after a value ("0  <- stays zero").
  // It was "not a port dump fabtrack knows".
  std::string why;
  std::optional<std::vector<ParsedPortDump>> d =
      ParsePortDumpDocument(Read("roce-c07.ethtool-grep.txt"), PortDumpContext{}, &why);
  ASSERT_TRUE(d) << why;
  ASSERT_EQ(d->size(), 1u);
  const ParsedPortDump& dump = d->front();
  EXPECT_TRUE(dump.errors.empty()) << (dump.errors.empty() ? "" : dump.errors[0].message);
  ASSERT_EQ(dump.ports.size(), 1u);  // both greps are of one interface
  EXPECT_EQ(dump.ports[0].device, "ens3f1np1");
  EXPECT_EQ(dump.ports[0].ethtool.at("rx_prio3_pause"), 2210u);
  EXPECT_EQ(dump.ports[0].ethtool.at("tx_prio3_pause"), 15u);
  EXPECT_EQ(dump.ports[0].ethtool.at("rx_discards_phy"), 0u);
  EXPECT_EQ(dump.ports[0].ethtool.at("rx_out_of_buffer"), 9u);
  // The interface tied to no HCA port is said once, not once per grep.
  EXPECT_EQ(dump.notes.size(), 1u);
}

TEST(PortDumpRealShapes, NotesAfterValuesAreNoPartOfThem) {
  // A book's annotated ibstat and perfquery ("State: Active   # logical
  // state ...", "Base lid: 7   # from the subnet manager"): the notes were
  // stored in the state, physical state, LID and node GUID.
  ParsedPortDump d = Parse("lab-r04.ibstat-perfquery-annotated.md");
  EXPECT_TRUE(d.errors.empty()) << (d.errors.empty() ? "" : d.errors[0].message);
  ASSERT_EQ(d.ports.size(), 1u);
  const PortSample& p = d.ports[0];
  EXPECT_EQ(p.device, "mlx5_2");
  EXPECT_EQ(p.state, "ACTIVE");
  EXPECT_EQ(p.state_code, 4);
  EXPECT_EQ(p.phys_state, "LinkUp");
  EXPECT_EQ(p.rate_gbps, 200);
  EXPECT_EQ(p.lid, "7");
  EXPECT_EQ(p.link_layer, "InfiniBand");
  EXPECT_EQ(p.node_guid, "0x1c34da0300a1b2c4");
  EXPECT_EQ(p.fw_version, "20.35.2000");
  // perfquery of LID 7 port 1 joins the port; its notes are no part of the numbers.
  EXPECT_EQ(p.counters.at("symbol_error"), 3u);
  EXPECT_EQ(p.counters.at("port_xmit_discards"), 12u);
  EXPECT_EQ(p.counters.at("port_xmit_data"), 52011840u);
}

TEST(PortDumpRealShapes, AnAbridgedIbstatEndingAtLinkLayerIsNoCut) {
  // A book's ibstat with the Port GUID and capability mask left out, ending
  // at "Link layer" (the last line of a port block) inside its code fence:
  // it was "ends without Port GUID: the dump is cut off", nothing stored.
  ParsedPortDump d = Parse("lab-r05.ibstat-abridged.md");
  EXPECT_TRUE(d.errors.empty()) << (d.errors.empty() ? "" : d.errors[0].message);
  ASSERT_EQ(d.ports.size(), 1u);
  EXPECT_EQ(d.ports[0].device, "mlx5_1");
  EXPECT_EQ(d.ports[0].state, "ACTIVE");
  EXPECT_EQ(d.ports[0].phys_state, "LinkUp");
  EXPECT_EQ(d.ports[0].rate_gbps, 100);
  EXPECT_EQ(d.ports[0].lid, "0");
  EXPECT_EQ(d.ports[0].link_layer, "Ethernet");
}

TEST(PortDumpRealShapes, AnIbstatBlockCutAfterItsRateIsStillCut) {
  // The other side of the rule above: a block that stops after Rate, with
  // neither Port GUID nor Link layer, is a cut dump.
  const std::string text =
      "CA 'mlx5_4'\n\tCA type: MT4129\n\tNumber of ports: 1\n\tPort 1:\n"
      "\t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tRate: 400\n"
      "\t\tBase lid: 31\n";
  std::string why;
  std::optional<ParsedPortDump> d = ParsePortDump(text, std::nullopt, &why);
  ASSERT_TRUE(d) << why;
  ASSERT_FALSE(d->errors.empty());
  EXPECT_NE(d->errors.back().message.find("cut off"), std::string::npos);
  // The end lines are named once, as either of them.
  const std::string two =
      "CA 'mlx5_4'\n\tNumber of ports: 2\n\tPort 1:\n\t\tState: Active\n"
      "\t\tPhysical state: LinkUp\n\t\tRate: 400\n\t\tPort GUID: 0x1\n"
      "\t\tLink layer: InfiniBand\n\tPort 2:\n\t\tState: Down\n";
  d = ParsePortDump(two, std::nullopt, &why);
  ASSERT_TRUE(d) << why;
  ASSERT_FALSE(d->errors.empty());
  EXPECT_EQ(d->errors.front().message,
            "ibstat block of mlx5_4 port 2 (from line 9) ends without Physical state, Rate, Port "
            "GUID or Link layer: the dump is cut off");
}

TEST(PortDumpRealShapes, LoopOfNameAndValueInTheDirectoryACdLineSet) {
  // `cd .../hw_counters` then `for i in *; do printf "%-20.20s  %s\n" "$i"
  // "$(<$i)"; done` (a PR thread's dump of a port's counters): the names
  // are relative to the cd line's directory. It was "not a port dump
  // fabtrack knows".
  ParsedPortDump d = Parse("gpu-q09.sysfs-cd-loop.txt");
  EXPECT_TRUE(d.errors.empty()) << (d.errors.empty() ? "" : d.errors[0].message);
  ASSERT_EQ(d.ports.size(), 1u);
  const PortSample& p = d.ports[0];
  EXPECT_EQ(p.device, "mlx5_3");
  EXPECT_EQ(p.port, 1);
  EXPECT_EQ(p.counters.size(), 17u);
  EXPECT_EQ(p.counters.at("link_downed"), 2u);
  EXPECT_EQ(p.counters.at("port_xmit_discards"), 311u);
  EXPECT_EQ(p.counters.at("port_xmit_data"), 8123400012u);
  EXPECT_EQ(p.xmit_bytes, 8123400012ull * 4);
  EXPECT_EQ(p.saturated, std::vector<std::string>{"port_xmit_wait"});
}

TEST(PortDumpRealShapes, ALoopCutAtANameIsCutOff) {
  // The same loop's output ending at a name with no value: cut, nothing
  // stored; prose after a whole loop is no counter.
  std::string text = Read("gpu-q09.sysfs-cd-loop.txt");
  text = text.substr(0, text.find("symbol_error")) + "symbol_error\n";
  std::string why;
  std::optional<ParsedPortDump> cut = ParsePortDump(text, std::nullopt, &why);
  ASSERT_TRUE(cut) << why;
  ASSERT_FALSE(cut->errors.empty());
  EXPECT_NE(cut->errors.back().message.find("cut off"), std::string::npos)
      << cut->errors.back().message;
  std::optional<ParsedPortDump> prose =
      ParsePortDump(Read("gpu-q09.sysfs-cd-loop.txt") + "\nThe discards grew by 311 overnight.\n",
                    std::nullopt, &why);
  ASSERT_TRUE(prose) << why;
  EXPECT_TRUE(prose->errors.empty()) << prose->errors.front().message;
  EXPECT_EQ(prose->ports.at(0).counters.size(), 17u);
}

TEST(PortDumpRealShapes, PerfqueryHeaderWrappedByAMailClient) {
  // A perfquery -x pasted through e-mail, its header broken after
  // "CapMask2:" and the rest ("0x0000002)") on a line of its own: it was
  // "ends without PortRcvPkts: the dump is cut off" at that line.
  ParsedPortDump d = Parse("gpu-d05.perfquery-x.mail-wrapped.txt", "mlx5_1");
  EXPECT_TRUE(d.errors.empty()) << (d.errors.empty() ? "" : d.errors[0].message);
  ASSERT_EQ(d.ports.size(), 1u);
  EXPECT_EQ(d.ports[0].device, "mlx5_1");
  EXPECT_EQ(d.ports[0].lid, "377");
  EXPECT_EQ(d.ports[0].counters.at("port_xmit_data"), 88120419377u);
  EXPECT_EQ(d.ports[0].counters.at("symbol_error"), 17u);
  EXPECT_EQ(d.ports[0].counters.at("port_xmit_wait"), 90211u);
  // Cut after its error counters, the same paste is still cut off, at its end.
  std::string text = Read("gpu-d05.perfquery-x.mail-wrapped.txt");
  text = text.substr(0, text.find("VL15Dropped"));
  std::string why;
  std::optional<ParsedPortDump> cut = ParsePortDump(text, std::string("mlx5_1"), &why);
  ASSERT_TRUE(cut) << why;
  ASSERT_FALSE(cut->errors.empty());
  EXPECT_EQ(cut->errors.front().line, 26);
  EXPECT_NE(cut->errors.front().message.find("PortXmitWait"), std::string::npos);
}

TEST(PortDumpRealShapes, EthtoolHeaderWithANoteAfterIt) {
  // A how-to's annotated `ethtool -S` ("NIC statistics:   # statistics of
  // ...", a note after every value): it was "not a port dump fabtrack
  // knows".
  std::string why;
  std::optional<std::vector<ParsedPortDump>> d =
      ParsePortDumpDocument(Read("roce-a4.ens2f0np0.ethtool-annotated.md"),
                            PortDumpContext{.netdev = std::string("ens2f0np0")}, &why);
  ASSERT_TRUE(d) << why;
  ASSERT_EQ(d->size(), 1u);
  const ParsedPortDump& dump = d->front();
  EXPECT_TRUE(dump.errors.empty()) << (dump.errors.empty() ? "" : dump.errors[0].message);
  ASSERT_EQ(dump.ports.size(), 1u);
  EXPECT_EQ(dump.ports[0].ethtool.at("rx_prio3_pause"), 5120u);
  EXPECT_EQ(dump.ports[0].ethtool.at("rx_discards_phy"), 14u);
  EXPECT_EQ(dump.ports[0].ethtool.at("link_down_events_phy"), 1u);
}

TEST(PortDumpRealShapes, TheShellsNextPromptEndsTheOutput) {
  // Round eight (real sample: an OpenShift how-to's `sh-5.1# ibstat` with
  // the next bare `sh-5.1#` prompt after it): the prompt right after the last
  // "Link layer" was taken for the dump cut short, nothing stored.
  ParsedPortDump d = Parse("gpu-s31.ibstat-bash-prompt.txt");
  EXPECT_TRUE(d.errors.empty()) << (d.errors.empty() ? "" : d.errors[0].message);
  ASSERT_EQ(d.ports.size(), 3u);
  EXPECT_EQ(d.ports[1].device, "mlx5_1");
  EXPECT_EQ(d.ports[1].lid, "23");
  EXPECT_EQ(d.ports[2].state, "DOWN");
  EXPECT_EQ(d.ports[2].link_layer, "Ethernet");
  // A line that is no prompt still is a cut.
  std::string why;
  std::string text = Read("gpu-s31.ibstat-bash-prompt.txt");
  text.replace(text.rfind("sh-5.1#"), 7, "sh-5.1 ");
  std::optional<ParsedPortDump> cut = ParsePortDump(text, std::nullopt, &why);
  ASSERT_TRUE(cut) << why;
  ASSERT_FALSE(cut->errors.empty());
  EXPECT_NE(cut->errors.front().message.find("cut off"), std::string::npos);
}

TEST(PortDumpRealShapes, ANoteAfterTheLinkLayerIsNoPartOfIt) {
  // Round eight (real sample: a blog's ibstatus with its own note after
  // "link_layer: Ethernet"): the note was stored in the link layer.
  ParsedPortDump d = Parse("roce-t05.ibstatus-noted.txt");
  EXPECT_TRUE(d.errors.empty()) << (d.errors.empty() ? "" : d.errors[0].message);
  ASSERT_EQ(d.ports.size(), 1u);
  EXPECT_EQ(d.ports[0].link_layer, "Ethernet");
  EXPECT_EQ(d.ports[0].state, "ACTIVE");
  EXPECT_EQ(d.ports[0].rate_gbps, 100);
}

TEST(PortDumpRealShapes, DropCountersOfDriversThatDoNotSayDiscard) {
  // Round eight (real sample: node_exporter's ethtool fixture of an Intel
  // port, "port.rx_dropped", "rx_missed"): "none of the statistics is one
  // fabtrack keeps (... drops ...)", nothing stored. The device's drop
  // counters are kept by their whole names, no queue's.
  std::string why;
  std::optional<std::vector<ParsedPortDump>> d =
      ParsePortDumpDocument(Read("ws-u08.eno1.ethtool-intel.txt"), PortDumpContext{}, &why);
  ASSERT_TRUE(d) << why;
  ASSERT_EQ(d->size(), 1u);
  const ParsedPortDump& dump = d->front();
  EXPECT_TRUE(dump.errors.empty()) << (dump.errors.empty() ? "" : dump.errors[0].message);
  ASSERT_EQ(dump.ports.size(), 1u);
  EXPECT_EQ(dump.ports[0].netdev, "eno1");
  EXPECT_EQ(dump.ports[0].ethtool, (std::map<std::string, uint64_t>{{"port.rx_crc_errors", 0},
                                                                    {"port.rx_dropped", 3311},
                                                                    {"rx_dropped", 0},
                                                                    {"rx_missed", 27},
                                                                    {"tx_dropped", 0}}));
  EXPECT_EQ(FlowControlStats({{"rx3_xdp_drop", 5}, {"tx_queue_dropped", 1}}).size(), 0u);
}

// Round nine: a fresh sweep of real public samples (fixtures README).
TEST(PortDumpRealShapes, IbvDevinfoOfTheOnePortItWasAskedFor) {
  // A how-to's `#ibv_devinfo -d mlx5_1 -i 2 -v`: one port block under
  // phys_port_cnt 2 is the port asked for, not a dump cut short.
  ParsedPortDump d = Parse("lab-m03.ibv_devinfo-one-port.md");
  EXPECT_TRUE(d.errors.empty()) << (d.errors.empty() ? "" : d.errors[0].message);
  ASSERT_EQ(d.ports.size(), 1u);
  PortSample want;
  want.device = "mlx5_1";
  want.port = 2;
  want.link_layer = "InfiniBand";
  want.state = "ACTIVE";
  want.state_code = 4;
  want.phys_state = "LinkUp";
  want.phys_state_code = 5;
  want.rate_gbps = 100;
  want.lid = "58";
  want.node_guid = "1070:fd03:00c2:7e14";
  want.fw_version = "20.31.1014";
  want.board_id = "MT_0000000223";
  EXPECT_EQ(d.ports[0], want);
  // Without the command line the missing port is still a cut.
  std::string text = Read("lab-m03.ibv_devinfo-one-port.md");
  text.replace(text.find("#ibv_devinfo -d mlx5_1 -i 2 -v"), 30, "");
  EXPECT_FALSE(ErrorsOfText(text).empty());
  // `--ib-port=2` says the same.
  text = Read("lab-m03.ibv_devinfo-one-port.md");
  text.replace(text.find("-i 2"), 4, "--ib-port=2");
  EXPECT_TRUE(ErrorsOfText(text).empty());
}

TEST(PortDumpRealShapes, IbstatThatGaveUpOnAnHcaIsNoCutAndIsSaid) {
  // ibstat's own "ibpanic: ... stat of IB device 'mlx5_2' failed": it was
  // "cut off: the last line is no line of the ibstat output", which hid
  // that an HCA is gone; and with a prompt after it nothing was said.
  std::vector<PortDumpError> errors = ErrorsOf("gpu-t17.ibstat-ibpanic.txt");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].line, 35);
  EXPECT_NE(errors[0].message.find("ibstat stopped on an error of its own"), std::string::npos)
      << errors[0].message;
  EXPECT_NE(errors[0].message.find("'mlx5_2'"), std::string::npos) << errors[0].message;
  errors = ErrorsOfText(Read("gpu-t17.ibstat-ibpanic.txt") + "[root@gpu-t17 ~]# \n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].line, 35);
}

TEST(PortDumpRealShapes, TwoIbstatOutputsRunTogetherAreNoOneHost) {
  // Two hosts' ibstat pasted one after the other, no line naming either:
  // the second host's mlx5_0 was merged into the first's, silently.
  const std::string a = Read("gpu-b07.ibstat.txt");
  std::string b = a;
  b.replace(b.find("State: Active"), 13, "State: Down  ");
  std::vector<PortDumpError> errors = ErrorsOfText(a + b);
  ASSERT_FALSE(errors.empty());
  EXPECT_NE(errors[0].message.find("mlx5_0 port 1 again (first at line 8)"), std::string::npos)
      << errors[0].message;
  // The same output twice is one host's, read once.
  std::string why;
  std::optional<ParsedPortDump> d = ParsePortDump(a + a, PortDumpContext{}, &why);
  ASSERT_TRUE(d) << why;
  EXPECT_TRUE(d->errors.empty()) << d->errors.front().message;
  EXPECT_EQ(d->ports.size(), 2u);
}

TEST(PortDumpRealShapes, PerfqueryWithNoHcaSaysWhereItIsStored) {
  // infiniband-diags' issue sample, `perfquery -x 10 1` under a `# ` root
  // prompt: stored as device "lid10" without a word.
  std::string perfquery = Read("gpu-b07.perfquery.txt");
  perfquery.replace(perfquery.find(" -C mlx5_0"), 10, "");
  std::string why;
  std::optional<ParsedPortDump> d = ParsePortDump(perfquery, PortDumpContext{}, &why);
  ASSERT_TRUE(d) << why;
  ASSERT_EQ(d->ports.size(), 1u);
  EXPECT_EQ(d->ports[0].device, "lid" + *d->ports[0].lid);
  ASSERT_EQ(d->notes.size(), 1u);
  EXPECT_NE(d->notes[0].find("perfquery names no HCA"), std::string::npos) << d->notes[0];
  EXPECT_NE(d->notes[0].find("stored as device " + d->ports[0].device), std::string::npos);
  // Named, nothing to say.
  d = ParsePortDump(Read("gpu-b07.perfquery.txt"), PortDumpContext{}, &why);
  ASSERT_TRUE(d) << why;
  EXPECT_TRUE(d->notes.empty()) << d->notes.front();
}

TEST(PortDumpRealShapes, ASentenceAfterCatIsNoSysfsValue) {
  // A prompt's `cat FILE` then the file's text: a how-to's sentence and a
  // perfquery under it. With --device the sentence was read as the port
  // file FILE's value ("not a counter value"), nothing stored.
  const std::string text =
      "[root@gpu-d04 ~]# cat perfquery-notes\n"
      "Example output of perfquery -x on the second rail, before the reset:\n" +
      Read("gpu-d04.perfquery.0200.txt");
  std::string why;
  std::optional<ParsedPortDump> d =
      ParsePortDump(text, PortDumpContext{.device = std::string("mlx5_2")}, &why);
  ASSERT_TRUE(d) << why;
  EXPECT_TRUE(d->errors.empty()) << d->errors.front().message;
  ASSERT_EQ(d->ports.size(), 1u);
  EXPECT_EQ(d->ports[0].device, "mlx5_2");
  EXPECT_FALSE(d->ports[0].counters.empty());
  // A value after `cat` still is the file's.
  d = ParsePortDump("[root@gpu-d04 ~]# cat state\n4: ACTIVE\n",
                    PortDumpContext{.device = std::string("mlx5_2")}, &why);
  ASSERT_TRUE(d) << why;
  ASSERT_EQ(d->ports.size(), 1u);
  EXPECT_EQ(d->ports[0].state, "ACTIVE");
}

TEST(PortDumpRealShapes, ADumpQuotedWholeInAReplyReadsAsPosted) {
  // Real pastes answered with a quote reply ("> " before every line of the
  // ibstat): "not a port dump fabtrack knows", nothing stored.
  ParsedPortDump quoted = Parse("gpu-w11.ibstat-quote-reply.md");
  EXPECT_TRUE(quoted.errors.empty()) << (quoted.errors.empty() ? "" : quoted.errors[0].message);
  ASSERT_EQ(quoted.ports.size(), 2u);
  EXPECT_EQ(quoted.ports[0].device, "mlx5_0");
  EXPECT_EQ(quoted.ports[0].state, "ACTIVE");
  EXPECT_EQ(quoted.ports[0].rate_gbps, 400);
  EXPECT_EQ(quoted.ports[1].phys_state, "Polling");
  // The same lines unquoted read the same.
  std::string plain = Read("gpu-w11.ibstat-quote-reply.md");
  for (size_t at = 0; (at = plain.find("> ", at)) != std::string::npos;) plain.erase(at, 2);
  for (size_t at = 0; (at = plain.find(">\n", at)) != std::string::npos;) plain.erase(at, 1);
  std::string why;
  std::optional<ParsedPortDump> d = ParsePortDump(plain, PortDumpContext{}, &why);
  ASSERT_TRUE(d) << why;
  EXPECT_EQ(d->ports, quoted.ports);
}

TEST(PortDumpRealShapes, AByteOrderMarkLosesNoBlock) {
  // A dump saved by a Windows editor starts with a UTF-8 byte order mark: the
  // first "CA 'mlx5_0'" was no CA line, its port read as nobody's and left
  // out without a word (8 of 9 ports stored).
  for (const char* name :
       {"gpu-b07.ibstat.txt", "roce-a3.ibstatus.txt", "roce-a3.ibv_devinfo.txt"}) {
    std::string why;
    std::optional<ParsedPortDump> plain = ParsePortDump(Read(name), PortDumpContext{}, &why);
    ASSERT_TRUE(plain) << why;
    std::optional<ParsedPortDump> marked =
        ParsePortDump("\xEF\xBB\xBF" + Read(name), PortDumpContext{}, &why);
    ASSERT_TRUE(marked) << name << ": " << why;
    EXPECT_TRUE(marked->errors.empty()) << name;
    EXPECT_EQ(marked->ports, plain->ports) << name;
  }
}

TEST(PortDumpCutOff, TheLastIbstatBlockEndingAtPortGuidWhereTheOthersGoOnIsCut) {
  // Every real ibstat of this round cut after every line: cut after the last
  // CA's "Port GUID", where the other CAs go on to "Link layer", was read
  // whole (an older ibstat ends at Port GUID, but not one that printed the
  // link layer of the CA above).
  std::string text = Read("gpu-b07.ibstat.txt");
  text.erase(text.rfind("\t\tLink layer:"));
  std::vector<PortDumpError> errors = ErrorsOfText(text);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].line, LineCount("gpu-b07.ibstat.txt") - 1);
  EXPECT_NE(errors[0].message.find("ends without Link layer: the dump is cut off"),
            std::string::npos)
      << errors[0].message;
  // One block ending at Port GUID: an older ibstat's whole output.
  text = Read("gpu-b07.ibstat.txt");
  text.erase(text.find("\t\tLink layer:"), text.find("CA '", 10) - text.find("\t\tLink layer:"));
  text.erase(text.rfind("\t\tLink layer:"));
  EXPECT_TRUE(ErrorsOfText(text).empty()) << ErrorsOfText(text).front().message;
}

TEST(PortDumpRealShapes, ABareEthtoolCommandLineNamesItsGrepsInterface) {
  // A netmap issue's `ethtool -S IFACE | grep "48"` kept without a prompt
  // sign in its fence, the matched line under it and ".." for lines left
  // out: "not a port dump fabtrack knows", nothing stored.
  const std::string text =
      "It looks like the stat rx_out_of_buffer does explain the drops:\n"
      "\n"
      "```\n"
      " ethtool -S ens2f1np1 | grep \"1731\"\n"
      "     rx_out_of_buffer: 1731\n"
      "     ..\n"
      "     ..\n"
      "```\n";
  std::string why;
  std::optional<ParsedPortDump> d = ParsePortDump(text, PortDumpContext{}, &why);
  ASSERT_TRUE(d) << why;
  EXPECT_TRUE(d->errors.empty()) << d->errors.front().message;
  ASSERT_EQ(d->ports.size(), 1u);
  EXPECT_EQ(d->ports[0].netdev, "ens2f1np1");
  EXPECT_EQ(d->ports[0].ethtool, (std::map<std::string, uint64_t>{{"rx_out_of_buffer", 1731}}));
}

}  // namespace
}  // namespace fabtrack
