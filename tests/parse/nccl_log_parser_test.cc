#include "collector/parse/nccl_log_parser.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "collector/parse/line_cleaner.h"
#include "collector/parse/nccl_log_line.h"
#include "core/model.h"

namespace fabtrack {
namespace {

std::string ReadFixture(const std::string& name) {
  std::ifstream in(std::string(FABTRACK_FIXTURE_DIR) + "/nccl_logs/" + name, std::ios::binary);
  EXPECT_TRUE(in.good()) << "missing fixture " << name;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

NcclLogInfo ParseText(const std::string& text, std::vector<ParseError>* errors) {
  return ParseNcclLog(SplitAndClean(text), errors);
}

ParsedFile WithLog(NcclLogInfo log) {
  ParsedFile file;
  file.log = std::move(log);
  return file;
}

bool Contains(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

void ExpectChannel(const ChannelObservation& got, const ChannelObservation& want) {
  SCOPED_TRACE("channel on line " + std::to_string(want.line));
  EXPECT_EQ(got.host, want.host);
  EXPECT_EQ(got.pid, want.pid);
  EXPECT_EQ(got.cuda_device, want.cuda_device);
  EXPECT_EQ(got.channel, want.channel);
  EXPECT_EQ(got.conn_index, want.conn_index);
  EXPECT_EQ(got.from_rank, want.from_rank);
  EXPECT_EQ(got.to_rank, want.to_rank);
  EXPECT_EQ(got.from_bus_id, want.from_bus_id);
  EXPECT_EQ(got.to_bus_id, want.to_bus_id);
  EXPECT_EQ(got.direction, want.direction);
  EXPECT_EQ(got.family, want.family);
  EXPECT_EQ(got.detail, want.detail);
  EXPECT_EQ(got.nic_index, want.nic_index);
  EXPECT_EQ(got.gdrdma, want.gdrdma);
  EXPECT_EQ(got.is_ring_line, want.is_ring_line);
  EXPECT_EQ(got.line, want.line);
}

void ExpectDevices(const std::vector<NetDevice>& got, const std::vector<NetDevice>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE("device " + std::to_string(i));
    EXPECT_EQ(got[i].host, want[i].host);
    EXPECT_EQ(got[i].index, want[i].index);
    EXPECT_EQ(got[i].name, want[i].name);
    EXPECT_EQ(got[i].port, want[i].port);
    EXPECT_EQ(got[i].link, want[i].link);
    EXPECT_EQ(got[i].sharp, want[i].sharp);
  }
}

// ---------------------------------------------------------------------------
// Table over the fixture logs: the summary every consumer reads.

struct FixtureCase {
  std::string file{};
  std::optional<std::string> nccl_version{};
  std::optional<std::string> cuda_version{};
  std::optional<std::string> network{};
  std::vector<std::string> networks{};
  std::vector<std::string> hosts{};
  std::vector<std::string> transports{};
  std::optional<bool> gdrdma{};
  std::optional<int> nranks{};
  bool ib_no_device = false;
  std::vector<std::string> socket_interfaces{};
  std::vector<std::string> gdr_disabled_hcas{};
  size_t net_devices = 0;
  size_t channels = 0;
  size_t warnings = 0;
  int info_lines = 0;
  std::vector<int> error_lines{};
  // Things a naive parser would report and this one must not.
  std::vector<std::string> absent_transports{};
  std::vector<std::string> absent_hosts{};
  std::vector<std::string> absent_socket_interfaces{};
};

std::ostream& operator<<(std::ostream& os, const FixtureCase& c) { return os << c.file; }

class NcclLogFixtureTest : public ::testing::TestWithParam<FixtureCase> {};

TEST_P(NcclLogFixtureTest, Summary) {
  const FixtureCase& want = GetParam();
  std::vector<ParseError> errors;
  NcclLogInfo got = ParseText(ReadFixture(want.file), &errors);
  ParsedFile file = WithLog(got);

  EXPECT_EQ(got.nccl_version, want.nccl_version);
  EXPECT_EQ(got.cuda_version, want.cuda_version);
  EXPECT_EQ(got.network, want.network);
  EXPECT_EQ(got.networks, want.networks);
  EXPECT_EQ(got.hosts, want.hosts);
  EXPECT_EQ(file.Transports(), want.transports);
  EXPECT_EQ(file.Gdrdma(), want.gdrdma);
  EXPECT_TRUE(file.Usable());
  EXPECT_EQ(got.nranks, want.nranks);
  EXPECT_EQ(got.ib_no_device, want.ib_no_device);
  EXPECT_EQ(got.socket_interfaces, want.socket_interfaces);
  EXPECT_EQ(got.gdr_disabled_hcas, want.gdr_disabled_hcas);
  EXPECT_EQ(got.net_devices.size(), want.net_devices);
  EXPECT_EQ(got.channels.size(), want.channels);
  EXPECT_EQ(got.warnings.size(), want.warnings);
  EXPECT_EQ(got.info_lines, want.info_lines);
  std::vector<int> error_lines;
  for (const ParseError& e : errors) error_lines.push_back(e.line);
  EXPECT_EQ(error_lines, want.error_lines);
  for (const std::string& t : want.absent_transports) {
    EXPECT_FALSE(Contains(file.Transports(), t)) << "unexpected transport " << t;
  }
  for (const std::string& h : want.absent_hosts) {
    EXPECT_FALSE(Contains(got.hosts, h)) << "unexpected host " << h;
  }
  for (const std::string& s : want.absent_socket_interfaces) {
    EXPECT_FALSE(Contains(got.socket_interfaces, s)) << "unexpected interface " << s;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, NcclLogFixtureTest,
    ::testing::Values(
        FixtureCase{
            .file = "ib_gdrdma_2node_p2p_read_nccl2.10.log",
            .nccl_version = "2.10.3",
            .cuda_version = "11.4",
            .network = "IB",
            .networks = {"IB"},
            .hosts = {"dgx-r07n11", "dgx-r07n12"},
            .transports = {"NET/IB", "P2P/IPC"},
            .gdrdma = true,
            .nranks = 8,
            .net_devices = 4,  // two HCAs per host; rank 1 repeats rank 0's line
            .channels = 8,
            .info_lines = 28,
            .error_lines = {28},  // cut after "via"
            .absent_transports = {"NET/Socket", "P2P/IPC/read", "NET/IB/1"},
        },
        FixtureCase{
            .file = "roce_gdr_disabled_nccl2.19.log",
            .nccl_version = "2.19.3",
            .cuda_version = "12.2",
            .network = "IB",
            .networks = {"IB"},
            .hosts = {"h100-rack3-01", "h100-rack3-02"},
            .transports = {"NET/IB", "P2P/CUMEM"},
            .gdrdma = false,
            .nranks = 16,
            .gdr_disabled_hcas = {"mlx5_2", "mlx5_3"},
            .net_devices = 4,
            .channels = 8,
            .warnings = 1,
            .info_lines = 33,
            .absent_transports = {"P2P/CUMEM/read", "NET/IB/0/Shared"},
        },
        FixtureCase{
            .file = "socket_fallback_4node_nccl2.12.log",
            .nccl_version = "2.12.12",
            .cuda_version = "11.6",
            .network = "Socket",
            .networks = {"Socket"},
            .hosts = {"vm-train-0", "vm-train-1", "vm-train-2", "vm-train-3"},
            .transports = {"NET/Socket"},
            .gdrdma = false,
            .nranks = 4,
            .ib_no_device = true,
            .socket_interfaces = {"ens5", "ens6"},
            .channels = 5,
            .info_lines = 26,
            .error_lines = {26},  // "NET/Socket : Using [0]ens" cut off
            .absent_transports = {"NET/IB"},
            // "NET/Socket: Using 2 threads ..." and the cut "[0]ens".
            .absent_socket_interfaces = {"2", "ens"},
        },
        FixtureCase{
            .file = "single_node_socket_p2p_shm_nccl2.18.log",
            .nccl_version = "2.18.5",
            .cuda_version = "11.8",
            .network = "Socket",
            .networks = {"Socket"},
            .hosts = {"ws-a6000-07"},
            // "Using network Socket" but no data crossed a NIC.
            .transports = {"P2P/IPC", "SHM"},
            .gdrdma = std::nullopt,
            .nranks = 4,
            .ib_no_device = true,
            .socket_interfaces = {"eno1"},
            .channels = 6,
            .info_lines = 27,
            .absent_transports = {"NET/Socket", "NET/IB", "SHM/direct/direct"},
        },
        FixtureCase{
            .file = "ring_nccl2.4_ib_socket_init.log",
            .nccl_version = "2.4.8",
            .cuda_version = "10.1",
            .network = std::nullopt,  // 2.4 did not print "Using network"
            .networks = {},
            .hosts = {"ml-node05", "ml-node06"},
            .transports = {"NET/IB", "P2P/IPC", "SHM"},
            .gdrdma = true,
            .nranks = 8,
            .socket_interfaces = {"eth0"},  // NET/Socket initialised, not used
            .net_devices = 2,
            .channels = 8,
            .info_lines = 24,
            .absent_transports = {"NET/Socket", "direct shared memory"},
        },
        FixtureCase{
            .file = "ib_nccl2.27_version_info_line.log",
            .nccl_version = "2.27.6",
            .cuda_version = "12.9",
            .network = "IB",
            .networks = {"IB"},
            .hosts = {"cx7-vm-a03", "cx7-vm-a04"},
            .transports = {"NET/IB"},
            .gdrdma = true,
            .nranks = 2,
            .net_devices = 4,
            .channels = 5,
            .warnings = 1,
            .info_lines = 33,
            .absent_transports = {"NET/Socket"},
            // The WARN line carries NCCL's default "[%F %T] " timestamp.
            .absent_hosts = {"[2025-10-03 14:22:07] cx7-vm-a04", "[2025-10-03"},
            // "Bootstrap: Using enp9s0np0:..." is not a NET/Socket interface.
            .absent_socket_interfaces = {"enp9s0np0"},
        },
        FixtureCase{
            .file = "aws_libfabric_openmpi_tagged_nccl2.18.log",
            .nccl_version = "2.18.3",
            .cuda_version = "12.2",
            .network = "AWS Libfabric",
            .networks = {"AWS Libfabric"},
            .hosts = {"trn-efa-0", "trn-efa-1"},
            .transports = {"NET/AWS Libfabric"},
            .gdrdma = true,
            .nranks = 2,
            .channels = 4,
            .warnings = 1,
            .info_lines = 23,
            .error_lines = {36},  // "via NET/AWS Lib" cut off
            .absent_transports = {"NET/AWS", "NET/AWS Lib", "NET/AWS Libfabric/0"},
            .absent_hosts = {"[1,0]<stdout>:trn-efa-0"},
        },
        FixtureCase{
            .file = "ibext_v8_sharp_mixed_ib_roce_nccl2.21.log",
            .nccl_version = "2.21.5",
            .cuda_version = "12.4",
            .network = "IBext_v8",
            .networks = {"IBext_v8"},
            .hosts = {"sup-gpu-101", "sup-gpu-102"},
            .transports = {"P2P/CUMEM", "NET/IBext_v8", "COLLNET/SHARP"},
            .gdrdma = true,
            .nranks = 16,
            .net_devices = 6,
            .channels = 7,
            .info_lines = 27,
            .absent_transports = {"NET/IB", "NET/IBext_v8/1", "COLLNET/SHARP/0"},
        },
        FixtureCase{
            .file = "redacted_hosts_pxn_shapes_nccl2.28.log",
            .nccl_version = "2.28.9",
            .cuda_version = "13.0",
            .network = "IB",
            .networks = {"IB"},
            .hosts = {"<redacted>"},  // empty and missing hosts are not hosts
            .transports = {"P2P/direct pointer", "P2P/indirect", "SHM", "P2P/MNNVL", "NET/IB"},
            .gdrdma = true,
            .nranks = 8,
            .net_devices = 2,
            .channels = 6,
            .info_lines = 16,
            .error_lines = {14},  // two lines written into one
            // From the merged line and from a TRACE "<-" line.
            .absent_transports = {"P2P/IPC", "P2P/CUMEM"},
            .absent_hosts = {"", "host-b"},
        }),
    [](const ::testing::TestParamInfo<FixtureCase>& info) {
      std::string name = info.param.file.substr(0, info.param.file.rfind('.'));
      std::replace_if(
          name.begin(), name.end(),
          [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
      return name;
    });

// ---------------------------------------------------------------------------
// Per-fixture details.

TEST(NcclLogParserTest, IbGdrdmaChannelsAndTruncatedLastLine) {
  std::vector<ParseError> errors;
  NcclLogInfo got = ParseText(ReadFixture("ib_gdrdma_2node_p2p_read_nccl2.10.log"), &errors);
  ASSERT_EQ(got.channels.size(), 8u);
  ExpectChannel(got.channels[0], ChannelObservation{.host = "dgx-r07n11",
                                                    .pid = 20314,
                                                    .cuda_device = 3,
                                                    .channel = 0,
                                                    .conn_index = std::nullopt,
                                                    .from_rank = 3,
                                                    .to_rank = 4,
                                                    .from_bus_id = "c1000",
                                                    .to_bus_id = "41000",
                                                    .direction = "send",
                                                    .family = "NET/IB",
                                                    .detail = "NET/IB/1/GDRDMA",
                                                    .nic_index = 1,
                                                    .gdrdma = true,
                                                    .is_ring_line = false,
                                                    .line = 16});
  ExpectChannel(got.channels[3], ChannelObservation{.host = "dgx-r07n11",
                                                    .pid = 20312,
                                                    .cuda_device = 1,
                                                    .channel = 0,
                                                    .conn_index = std::nullopt,
                                                    .from_rank = 1,
                                                    .to_rank = 0,
                                                    .from_bus_id = "47000",
                                                    .to_bus_id = "41000",
                                                    .direction = std::nullopt,
                                                    .family = "P2P/IPC",
                                                    .detail = "P2P/IPC/read",
                                                    .nic_index = std::nullopt,
                                                    .gdrdma = false,
                                                    .line = 19});
  EXPECT_EQ(got.channels[1].direction, "receive");
  EXPECT_EQ(got.channels[1].nic_index, 0);

  ExpectDevices(got.net_devices, {
                                     {"dgx-r07n11", 0, "mlx5_0", 1, "IB", false},
                                     {"dgx-r07n11", 1, "mlx5_1", 1, "IB", false},
                                     {"dgx-r07n12", 0, "mlx5_0", 1, "IB", false},
                                     {"dgx-r07n12", 1, "mlx5_1", 1, "IB", false},
                                 });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].line, 28);
  EXPECT_EQ(errors[0].message.rfind("truncated channel line", 0), 0u) << errors[0].message;
}

TEST(NcclLogParserTest, RoceWithGdrDisabledAndWarnWithSourceLocation) {
  std::vector<ParseError> errors;
  NcclLogInfo got = ParseText(ReadFixture("roce_gdr_disabled_nccl2.19.log"), &errors);
  for (const NetDevice& d : got.net_devices) {
    EXPECT_EQ(d.link, "RoCE") << d.name;
    EXPECT_FALSE(d.sharp) << d.name;
  }
  for (const ChannelObservation& c : got.channels) EXPECT_FALSE(c.gdrdma) << c.detail;
  ASSERT_EQ(got.channels.size(), 8u);
  ExpectChannel(got.channels[7], ChannelObservation{.host = "h100-rack3-01",
                                                    .pid = 71820,
                                                    .cuda_device = 0,
                                                    .channel = 2,
                                                    .conn_index = 1,
                                                    .from_rank = 0,
                                                    .to_rank = 8,
                                                    .from_bus_id = "0",
                                                    .to_bus_id = "0",
                                                    .direction = "send",
                                                    .family = "NET/IB",
                                                    .detail = "NET/IB/0/Shared",
                                                    .nic_index = 0,
                                                    .gdrdma = false,
                                                    .line = 29});
  EXPECT_EQ(got.channels[0].conn_index, 0);
  ASSERT_EQ(got.warnings.size(), 1u);
  EXPECT_EQ(got.warnings[0].host, "h100-rack3-02");
  EXPECT_EQ(got.warnings[0].level, "WARN");
  EXPECT_EQ(got.warnings[0].text, "Call to ibv_modify_qp failed with error Network is unreachable");
  EXPECT_EQ(got.warnings[0].line, 32);
  // "transport/net_ib.cc:840 -> 2" has an arrow but is no channel and no error.
  EXPECT_TRUE(errors.empty());
}

TEST(NcclLogParserTest, SocketFallbackChannelsUseSocketNics) {
  NcclLogInfo got = ParseText(ReadFixture("socket_fallback_4node_nccl2.12.log"), nullptr);
  ASSERT_EQ(got.channels.size(), 5u);
  EXPECT_EQ(got.channels[0].family, "NET/Socket");
  EXPECT_EQ(got.channels[0].nic_index, 0);
  EXPECT_EQ(got.channels[3].nic_index, 1);
  EXPECT_EQ(got.channels[3].host, "vm-train-1");
  EXPECT_TRUE(got.net_devices.empty());
}

TEST(NcclLogParserTest, SingleNodeShmAndP2pChannelShapes) {
  NcclLogInfo got = ParseText(ReadFixture("single_node_socket_p2p_shm_nccl2.18.log"), nullptr);
  ASSERT_EQ(got.channels.size(), 6u);
  EXPECT_EQ(got.channels[0].conn_index, 0);             // "Channel 00/0"
  EXPECT_EQ(got.channels[1].conn_index, std::nullopt);  // SHM prints "Channel 00"
  EXPECT_EQ(got.channels[1].family, "SHM");
  EXPECT_EQ(got.channels[1].detail, "SHM/direct/direct");
  EXPECT_EQ(got.channels[1].nic_index, std::nullopt);
}

TEST(NcclLogParserTest, PreSevenRingLines) {
  NcclLogInfo got = ParseText(ReadFixture("ring_nccl2.4_ib_socket_init.log"), nullptr);
  ASSERT_EQ(got.channels.size(), 8u);
  for (const ChannelObservation& c : got.channels) EXPECT_TRUE(c.is_ring_line) << c.line;
  // 2.4 NET lines name peers by rank only.
  ExpectChannel(got.channels[0], ChannelObservation{.host = "ml-node05",
                                                    .pid = 31102,
                                                    .cuda_device = 0,
                                                    .channel = 0,
                                                    .conn_index = std::nullopt,
                                                    .from_rank = 7,
                                                    .to_rank = 0,
                                                    .from_bus_id = "",
                                                    .to_bus_id = "",
                                                    .direction = "receive",
                                                    .family = "NET/IB",
                                                    .detail = "NET/IB/0/GDRDMA",
                                                    .nic_index = 0,
                                                    .gdrdma = true,
                                                    .is_ring_line = true,
                                                    .line = 13});
  EXPECT_EQ(got.channels[4].from_bus_id, "0");
  EXPECT_EQ(got.channels[4].to_bus_id, "1");
  EXPECT_EQ(got.channels[7].family, "SHM");
  EXPECT_EQ(got.channels[7].detail, "direct shared memory");
}

TEST(NcclLogParserTest, Nccl227InfoVersionAndTimestampedWarn) {
  NcclLogInfo got = ParseText(ReadFixture("ib_nccl2.27_version_info_line.log"), nullptr);
  ASSERT_EQ(got.warnings.size(), 1u);
  EXPECT_EQ(got.warnings[0].host, "cx7-vm-a04");
  EXPECT_EQ(got.warnings[0].line, 33);
  EXPECT_EQ(got.warnings[0].text.rfind("NET/IB: mlx5dv_get_data_direct_sysfs_path failed", 0), 0u);
  // "GPU Direct RDMA Enabled" is not a disabled HCA.
  EXPECT_TRUE(got.gdr_disabled_hcas.empty());
}

TEST(NcclLogParserTest, AwsLibfabricUnderOpenMpiTags) {
  std::vector<ParseError> errors;
  NcclLogInfo got = ParseText(ReadFixture("aws_libfabric_openmpi_tagged_nccl2.18.log"), &errors);
  ASSERT_EQ(got.channels.size(), 4u);
  ExpectChannel(got.channels[0], ChannelObservation{.host = "trn-efa-1",
                                                    .pid = 33,
                                                    .cuda_device = 0,
                                                    .channel = 0,
                                                    .conn_index = 0,
                                                    .from_rank = 0,
                                                    .to_rank = 1,
                                                    .from_bus_id = "10",
                                                    .to_bus_id = "10",
                                                    .direction = "receive",
                                                    .family = "NET/AWS Libfabric",
                                                    .detail = "NET/AWS Libfabric/0/GDRDMA",
                                                    .nic_index = 0,
                                                    .gdrdma = true,
                                                    .line = 20});
  ASSERT_EQ(got.warnings.size(), 1u);
  EXPECT_EQ(got.warnings[0].host, "trn-efa-1");
  EXPECT_EQ(got.warnings[0].line, 25);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].message.rfind("truncated channel line", 0), 0u) << errors[0].message;
}

TEST(NcclLogParserTest, IbextPluginSharpMixedLinksAndConnIndex) {
  NcclLogInfo got = ParseText(ReadFixture("ibext_v8_sharp_mixed_ib_roce_nccl2.21.log"), nullptr);
  ExpectDevices(got.net_devices, {
                                     {"sup-gpu-101", 0, "mlx5_0", 1, "IB", true},
                                     {"sup-gpu-101", 1, "mlx5_1", 1, "IB", true},
                                     {"sup-gpu-101", 2, "mlx5_4", 1, "RoCE", false},
                                     {"sup-gpu-102", 0, "mlx5_0", 1, "IB", true},
                                     {"sup-gpu-102", 1, "mlx5_1", 1, "IB", true},
                                     {"sup-gpu-102", 2, "mlx5_4", 1, "RoCE", false},
                                 });
  ASSERT_EQ(got.channels.size(), 7u);
  EXPECT_EQ(got.channels[1].conn_index, 0);
  EXPECT_EQ(got.channels[2].conn_index, 1);  // "Channel 00/1"
  EXPECT_EQ(got.channels[4].channel, 4);
  EXPECT_EQ(got.channels[4].conn_index, 1);  // "Channel 04/1"
  EXPECT_EQ(got.channels[4].from_rank, 15);
  EXPECT_TRUE(got.channels[4].gdrdma);
  // A CollNet connection has one rank and no peer.
  ExpectChannel(got.channels[5], ChannelObservation{.host = "sup-gpu-101",
                                                    .pid = 22001,
                                                    .cuda_device = 0,
                                                    .channel = 0,
                                                    .conn_index = 0,
                                                    .from_rank = 0,
                                                    .to_rank = 0,
                                                    .from_bus_id = "",
                                                    .to_bus_id = "",
                                                    .direction = "receive",
                                                    .family = "COLLNET/SHARP",
                                                    .detail = "COLLNET/SHARP/0/GDRDMA",
                                                    .nic_index = 0,
                                                    .gdrdma = true,
                                                    .line = 24});
}

TEST(NcclLogParserTest, HostlessLinesPxnAndNewTransportFlags) {
  std::vector<ParseError> errors;
  NcclLogInfo got = ParseText(ReadFixture("redacted_hosts_pxn_shapes_nccl2.28.log"), &errors);
  ASSERT_EQ(got.channels.size(), 6u);
  EXPECT_EQ(got.channels[0].host, "");
  EXPECT_EQ(got.channels[0].pid, 4410);
  // PXN "1(0)": NIC 1 reached through proxy rank 0; 2.28 "GDRDMA(PCI)".
  EXPECT_EQ(got.channels[4].nic_index, 1);
  EXPECT_TRUE(got.channels[4].gdrdma);
  EXPECT_EQ(got.channels[4].detail, "NET/IB/1(0)/GDRDMA(PCI)/Shared");
  EXPECT_FALSE(got.channels[5].gdrdma);
  ASSERT_EQ(got.net_devices.size(), 2u);
  EXPECT_EQ(got.net_devices[0].host, "");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].message.rfind("malformed channel line", 0), 0u) << errors[0].message;
}

// ---------------------------------------------------------------------------
// Inline cases for single line shapes.

struct VersionCase {
  std::string text;
  std::optional<std::string> nccl;
  std::optional<std::string> cuda;
};

TEST(NcclLogParserTest, VersionForms) {
  const VersionCase cases[] = {
      {"NCCL version 2.4.8+cuda10.1", "2.4.8", "10.1"},
      {"NCCL version 2.19.3+cuda12.3", "2.19.3", "12.3"},
      {"[1,0]<stdout>:NCCL version 2.12.7+cuda11.4", "2.12.7", "11.4"},
      {"node-1:12:12 [0] NCCL INFO NCCL version 2.27.6+cuda13.0", "2.27.6", "13.0"},
      {"[2025-01-02 10:11:12] NCCL version 2.23.4+cuda12.6", "2.23.4", "12.6"},
      {"NCCL version 2.28.3", "2.28.3", std::nullopt},
      {"node-1:12:12 [0] init.cc:896 NCCL WARN NCCL version mismatch", std::nullopt, std::nullopt},
      {"# nccl-tests version 2.18.0 nccl-headers=22907", std::nullopt, std::nullopt},
  };
  for (const VersionCase& c : cases) {
    // Whole lines: an unterminated last line is ignored (see
    // UnterminatedLastLineIsIgnored).
    NcclLogInfo got = ParseText(std::string(c.text) + "\n", nullptr);
    EXPECT_EQ(got.nccl_version, c.nccl) << c.text;
    EXPECT_EQ(got.cuda_version, c.cuda) << c.text;
  }
}

TEST(NcclLogParserTest, FirstVersionWins) {
  NcclLogInfo got = ParseText(
      "NCCL version 2.19.3+cuda12.3\n"
      "b:1:1 [0] NCCL INFO NCCL version 2.27.6+cuda13.0\n",
      nullptr);
  EXPECT_EQ(got.nccl_version, "2.19.3");
  EXPECT_EQ(got.cuda_version, "12.3");
}

TEST(NcclLogParserTest, PartialFallbackKeepsFirstNetworkAndListsAll) {
  NcclLogInfo got = ParseText(
      "a:1:1 [0] NCCL INFO Using network IB\n"
      "b:2:2 [0] NCCL INFO Using network IB\n"
      "c:3:3 [0] NCCL INFO Using network Socket\n",
      nullptr);
  EXPECT_EQ(got.network, "IB");
  EXPECT_EQ(got.networks, (std::vector<std::string>{"IB", "Socket"}));
}

TEST(NcclLogParserTest, PluginLinesOnlyStandInForUsingNetwork) {
  // "Using network" wins even when the plugin lines come first.
  NcclLogInfo both = ParseText(
      "a:1:1 [0] NCCL INFO Initialized NET plugin Socket\n"
      "a:1:1 [0] NCCL INFO Assigned NET plugin IBext_v10 to comm\n"
      "a:1:1 [0] NCCL INFO Using network IB\n",
      nullptr);
  EXPECT_EQ(both.network, "IB");
  EXPECT_EQ(both.networks, (std::vector<std::string>{"IBext_v10", "IB"}));

  NcclLogInfo assigned = ParseText(
      "a:1:1 [0] NCCL INFO Initialized NET plugin Socket\n"
      "a:1:1 [0] NCCL INFO Assigned NET plugin AWS Libfabric to comm\n",
      nullptr);
  EXPECT_EQ(assigned.network, "AWS Libfabric");
  EXPECT_EQ(assigned.networks, (std::vector<std::string>{"AWS Libfabric"}));

  NcclLogInfo initialized = ParseText("a:1:1 [0] NCCL INFO Initialized NET plugin IB\n", nullptr);
  EXPECT_EQ(initialized.network, "IB");
}

TEST(NcclLogParserTest, NetworkNameKeepsBlanksAndDropsTrailingSpace) {
  NcclLogInfo got = ParseText("a:1:1 [0] NCCL INFO Using network AWS Libfabric   \r\n", nullptr);
  EXPECT_EQ(got.network, "AWS Libfabric");
}

TEST(NcclLogParserTest, IbDeviceLineForms) {
  std::vector<ParseError> errors;
  NcclLogInfo got = ParseText(
      // Empty list: NCCL saw HCAs but can use none.
      "a:1:1 [0] NCCL INFO NET/IB : Using ; OOB eth0:10.1.0.1<0>\n"
      // Old form, identical entries from two ranks of one host.
      "b:2:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.1.0.2<0>\n"
      "b:3:3 [1] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.1.0.2<0>\n"
      // Cut before "; OOB": the last entry cannot be trusted.
      "c:4:4 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/Ro\n"
      // Unknown link layer (2.28 prints UNSPECIFIED).
      "d:5:5 [0] NCCL INFO NET/IB : Using [0]mlx5_7:2/UNSPECIFIED [RO]; OOB eth0:10.1.0.4<0>\n",
      &errors);
  EXPECT_TRUE(got.ib_no_device);
  ExpectDevices(got.net_devices, {
                                     {"b", 0, "mlx5_0", 1, "IB", false},
                                     {"c", 0, "mlx5_0", 1, "IB", false},
                                     {"d", 0, "mlx5_7", 2, "", false},
                                 });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].line, 4);
}

TEST(NcclLogParserTest, NoIbDeviceIsFalseWhenDevicesListed) {
  NcclLogInfo got = ParseText(
      "b:2:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.1.0.2<0>\n", nullptr);
  EXPECT_FALSE(got.ib_no_device);
}

TEST(NcclLogParserTest, GdrDisabledForms) {
  NcclLogInfo got = ParseText(
      // 2.4
      "a:1:1 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for GPU 0[0] / HCA 0 'mlx5_0' (no "
      "module or not supported by GPU)\n"
      // 2.7 to 2.18
      "a:1:1 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 1 'mlx5_1' (no module)\n"
      // plugin prefix, repeated name
      "a:1:1 [0] NCCL INFO NET/IBext_v8 : GPU Direct RDMA Disabled for HCA 1 'mlx5_1'\n"
      // distance-based: one GPU/NIC pair, no HCA name
      "a:1:1 [0] NCCL INFO GPU Direct RDMA Disabled for GPU 1b000 / HCA 0 (distance 5 > 4)\n"
      "a:1:1 [0] NCCL INFO NET/IB : GPU Direct RDMA Enabled for HCA 2 'mlx5_2'\n",
      nullptr);
  EXPECT_EQ(got.gdr_disabled_hcas, (std::vector<std::string>{"mlx5_0", "mlx5_1"}));
}

// NCCL 2.28 imports every network into its topology and says so for the
// socket transport too, on IB jobs as well (a one-rank H200 run with
// NCCL_NET=Socket printed the first line; the IB lines of the same job the
// others): the socket's line is read apart from the HCAs'.
TEST(NcclLogParserTest, SocketGdrDisabledLineOf228IsReadApartFromTheHcas) {
  NcclLogInfo got = ParseText(
      "vm:946:946 [0] NCCL INFO NET/Socket : GPU Direct RDMA Disabled for HCA 0 'eth0'\n"
      "vm:946:946 [0] NCCL INFO NET/Socket : GPU Direct RDMA Disabled for HCA 1 'ens3f0np0'\n"
      "node1:77:77 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'\n",
      nullptr);
  EXPECT_EQ(got.socket_gdr_disabled, (std::vector<std::string>{"eth0", "ens3f0np0"}));
  EXPECT_EQ(got.gdr_disabled_hcas, (std::vector<std::string>{"mlx5_0"}));

  ParsedFile ib_job;
  ib_job.log = ParseText(
      "n1:7:7 [0] NCCL INFO NET/Socket : GPU Direct RDMA Disabled for HCA 0 'eth0'\n"
      "n1:7:7 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0/GDRDMA\n",
      nullptr);
  EXPECT_EQ(ib_job.Gdrdma(), std::optional<bool>(true));
  ParsedFile socket_line_only;
  socket_line_only.log = ParseText(
      "n1:7:7 [0] NCCL INFO NET/Socket : GPU Direct RDMA Disabled for HCA 0 'eth0'\n", nullptr);
  EXPECT_EQ(socket_line_only.Gdrdma(), std::nullopt) << "no verdict on GDR from the socket's line";
}

TEST(NcclLogParserTest, NranksIsLargestCommunicator) {
  NcclLogInfo got = ParseText(
      "a:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 16 cudaDev 0 busId 1000 - Init COMPLETE\n"
      "a:1:1 [0] NCCL INFO ncclCommSplit comm 0x2 rank 0 nranks 8 cudaDev 0 nvmlDev 0 busId 1000 "
      "parent 0x1 splitCount 1 color 0 key 0 - Init COMPLETE\n"
      "a:1:1 [0] NCCL INFO bootstrapSplit: rank 0 nranks 64 color 0 key 0 prev 1 next 1 - DONE\n"
      "a:1:1 [0] NCCL INFO NVLS Creating Multicast group nranks 32 size 1024 on rank 0\n",
      nullptr);
  EXPECT_EQ(got.nranks, 16);
}

TEST(NcclLogParserTest, ListingsAreNeitherChannelsNorErrors) {
  std::vector<ParseError> errors;
  NcclLogInfo got = ParseText(
      "a:1:1 [0] NCCL INFO Channel 00/02 :    0   1   2   3\n"
      "a:1:1 [0] NCCL INFO Channel 00 :    0   1\n"
      "a:1:1 [0] NCCL INFO Ring 00 : 3 -> 0 -> 1\n"
      "a:1:1 [0] NCCL INFO Trees [0] 1/-1/-1->0->-1 [1] -1/-1/-1->0->1\n"
      "a:1:1 [0] NCCL INFO Tree 0 : -1 -> 0 -> 1/-1/-1\n"
      "a:1:1 [0] NCCL INFO Connected all rings\n"
      "a:1:1 [0] NCCL INFO 2 coll channels, 2 p2p channels, 2 p2p channels per peer\n"
      "a:1:1 [0] 12.5 transport/p2p.cc:458 NCCL TRACE Ring 00 : 0[0] <- 1[1] via P2P/IPC\n",
      &errors);
  EXPECT_TRUE(got.channels.empty());
  EXPECT_TRUE(errors.empty());
  EXPECT_EQ(got.info_lines, 8);
}

TEST(NcclLogParserTest, BrokenChannelLinesAreReportedNotThrown) {
  const std::string lines[] = {
      "a:1:1 [0] NCCL INFO Channel 00 : 4[7000] -> 5[a000] via",
      "a:1:1 [0] NCCL INFO Channel 00 : 4[7000] -> 5[a0",
      "a:1:1 [0] NCCL INFO Channel 00/",
      "a:1:1 [0] NCCL INFO Channel 00 : 4[7000] -> 5[a000] [send] via NET/IB",
      "a:1:1 [0] NCCL INFO Channel 00 : x[1] -> 2[2] via P2P/IPC",
      "a:1:1 [0] NCCL INFO Channel 00 : 1[1] -> 2[2] -> 3[3] via P2P/IPC",
      "a:1:1 [0] NCCL INFO Channel 99999999999999999999 : 1[1] -> 2[2] via P2P/IPC",
      "a:1:1 [0] NCCL INFO Ring 00 : 1[1] -> 2[2] via ",
  };
  for (const std::string& line : lines) {
    std::vector<ParseError> errors;
    NcclLogInfo got;
    // Newline-terminated: the line is read, its content is what is broken.
    EXPECT_NO_THROW(got = ParseText(line + "\n", &errors)) << line;
    EXPECT_TRUE(got.channels.empty()) << line;
    ASSERT_EQ(errors.size(), 1u) << line;
    EXPECT_EQ(errors[0].line, 1);
    EXPECT_NE(errors[0].message.find("channel line"), std::string::npos) << errors[0].message;
    // A null error sink is allowed.
    EXPECT_NO_THROW(ParseText(line, nullptr)) << line;
  }
}

TEST(NcclLogParserTest, OddDeviceAndSocketLinesDoNotCrash) {
  std::vector<ParseError> errors;
  NcclLogInfo got = ParseText(
      "a:1:1 [0] NCCL INFO NET/IB : Using [\n"
      "a:1:1 [0] NCCL INFO NET/IB : Using []:/ ; OOB\n"
      "a:1:1 [0] NCCL INFO NET/IB : Using [0]:1/IB ; OOB\n"
      "a:1:1 [0] NCCL INFO NET/Socket : Using [0]\n"
      "a:1:1 [0] NCCL INFO NET/Socket : Using [1]eth1:fe80::1%eth1<0>\n"
      "a:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 99999999999999 cudaDev 0\n",
      &errors);
  EXPECT_TRUE(got.net_devices.empty());
  EXPECT_EQ(got.socket_interfaces, (std::vector<std::string>{"eth1"}));
  EXPECT_EQ(got.nranks, std::nullopt);
  EXPECT_EQ(errors.size(), 4u);
}

// Excerpts cut lines anywhere: every prefix of every fixture line must parse
// without throwing and never yield a channel without a family.
TEST(NcclLogParserTest, EveryPrefixOfEveryFixtureLineIsSafe) {
  const char* files[] = {
      "aws_libfabric_openmpi_tagged_nccl2.18.log",
      "ib_gdrdma_2node_p2p_read_nccl2.10.log",
      "ib_nccl2.27_version_info_line.log",
      "ibext_v8_sharp_mixed_ib_roce_nccl2.21.log",
      "redacted_hosts_pxn_shapes_nccl2.28.log",
      "ring_nccl2.4_ib_socket_init.log",
      "roce_gdr_disabled_nccl2.19.log",
      "single_node_socket_p2p_shm_nccl2.18.log",
      "socket_fallback_4node_nccl2.12.log",
  };
  for (const char* file : files) {
    for (const CleanLine& line : SplitAndClean(ReadFixture(file))) {
      for (size_t n = 0; n <= line.text.size(); ++n) {
        std::vector<CleanLine> cut = {CleanLine{1, line.text.substr(0, n), "", -1}};
        std::vector<ParseError> errors;
        NcclLogInfo got;
        ASSERT_NO_THROW(got = ParseNcclLog(cut, &errors)) << cut[0].text;
        ASSERT_LE(got.channels.size(), 1u) << cut[0].text;
        for (const ChannelObservation& c : got.channels) {
          ASSERT_FALSE(c.family.empty()) << cut[0].text;
        }
      }
    }
  }
}

TEST(NcclLogParserTest, NonNcclTextYieldsNothing) {
  std::vector<ParseError> errors;
  NcclLogInfo got = ParseText(
      "#  Rank  0 Group  0 Pid 43 on node-a device  0 [0x0f] NVIDIA A100-SXM4-40GB\n"
      "           8             2     float     sum      -1    88.41    0.00    0.00      0\n"
      "Channel 00 : 0[0] -> 1[1] via P2P/IPC\n"  // no NCCL header: not a log line
      "Using network IB\n",
      &errors);
  EXPECT_EQ(got.info_lines, 0);
  EXPECT_TRUE(got.channels.empty());
  EXPECT_EQ(got.network, std::nullopt);
  EXPECT_TRUE(got.hosts.empty());
  EXPECT_TRUE(errors.empty());
  EXPECT_FALSE(WithLog(got).Usable());
}

// ---------------------------------------------------------------------------
// ParsedFile helpers (core/model.cc).

ChannelObservation Channel(std::string family, bool gdrdma = false) {
  ChannelObservation c;
  c.family = std::move(family);
  c.gdrdma = gdrdma;
  return c;
}

TEST(ParsedFileTest, TransportsAreDistinctInFirstSeenOrder) {
  NcclLogInfo log;
  log.channels = {Channel("P2P/IPC"), Channel("NET/IB", true), Channel("P2P/IPC"), Channel("SHM"),
                  Channel("NET/IB")};
  EXPECT_EQ(WithLog(log).Transports(), (std::vector<std::string>{"P2P/IPC", "NET/IB", "SHM"}));
  EXPECT_TRUE(WithLog(NcclLogInfo{}).Transports().empty());
}

struct GdrCase {
  std::string name;
  std::vector<ChannelObservation> channels;
  std::vector<std::string> disabled;
  std::optional<bool> want;
};

TEST(ParsedFileTest, Gdrdma) {
  const GdrCase cases[] = {
      {"no evidence", {}, {}, std::nullopt},
      {"intra-node only", {Channel("P2P/IPC"), Channel("SHM")}, {}, std::nullopt},
      {"collnet is not NET/", {Channel("COLLNET/SHARP", true)}, {}, std::nullopt},
      {"net without gdr", {Channel("NET/IB"), Channel("P2P/IPC")}, {}, false},
      {"disabled line only", {}, {"mlx5_0"}, false},
      {"net with gdr", {Channel("NET/IB"), Channel("NET/IB", true)}, {}, true},
      {"gdr channel beats disabled line", {Channel("NET/IB", true)}, {"mlx5_4"}, true},
      {"plugin net", {Channel("NET/AWS Libfabric", true)}, {}, true},
  };
  for (const GdrCase& c : cases) {
    NcclLogInfo log;
    log.channels = c.channels;
    log.gdr_disabled_hcas = c.disabled;
    EXPECT_EQ(WithLog(log).Gdrdma(), c.want) << c.name;
  }
}

TEST(ParsedFileTest, Usable) {
  ParsedFile empty;
  EXPECT_FALSE(empty.Usable());
  ParsedFile with_log;
  with_log.log.info_lines = 1;
  EXPECT_TRUE(with_log.Usable());
  ParsedFile with_table;
  with_table.tests.emplace_back();
  EXPECT_TRUE(with_table.Usable());
}

// ---------------------------------------------------------------------------
// Issue 16: node facts in NCCL's words, a strict line grammar, vocabulary.

TEST(NcclLogParserTest, FrameworkLinesMarkdownAndProseNeverBecomeHosts) {
  std::vector<ParseError> errors;
  NcclLogInfo got = ParseText(ReadFixture("framework_noise_markdown_readme_nccl2.18.log"), &errors);
  EXPECT_EQ(got.hosts, (std::vector<std::string>{"tr-node17"}));
  EXPECT_TRUE(
      got.warnings.empty());  // "[rank1]:[W ProcessGroupNCCL.cpp:1182] NCCL WARN" is not NCCL's
  EXPECT_EQ(got.network, "Socket");  // not the "IB" of the README's example line
  EXPECT_EQ(got.nccl_version, "2.18.6");
  EXPECT_EQ(got.cuda_version, "12.1");
  EXPECT_EQ(WithLog(got).Transports(), (std::vector<std::string>{"P2P/IPC"}));
  EXPECT_TRUE(errors.empty());
}

TEST(NcclLogParserTest, TruncatedLastLineIsNotTransportP2) {
  std::vector<ParseError> errors;
  NcclLogInfo got = ParseText(ReadFixture("cut_last_line_p2_nccl2.19.log"), &errors);
  EXPECT_EQ(WithLog(got).Transports(), (std::vector<std::string>{"P2P/IPC"}));
  EXPECT_EQ(got.channels.size(), 2u);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].line, 6);
  EXPECT_NE(errors[0].message.find("without a newline"), std::string::npos) << errors[0].message;
}

TEST(NcclLogParserTest, UnknownTransportWordsAreReportedNotStored) {
  const std::string lines[] = {
      "a:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2",
      "a:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IP",
      "a:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC/rea",
      "a:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] [send] via NET/IB/0/GDR",
      "a:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] [send] via NET/IBex/0",
      "a:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via SHM/dir/direct",
      "a:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via SH",
  };
  for (const std::string& line : lines) {
    std::vector<ParseError> errors;
    NcclLogInfo got = ParseText(line + "\n", &errors);
    EXPECT_TRUE(got.channels.empty()) << line << " -> " << got.channels[0].family;
    ASSERT_EQ(errors.size(), 1u) << line;
    EXPECT_EQ(errors[0].line, 1);
  }
  std::vector<ParseError> errors;
  NcclLogInfo got = ParseText("a:1:1 [0] NCCL INFO Using network IBex\n", &errors);
  EXPECT_EQ(got.network, std::nullopt);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].message.find("unknown network name: IBex"), std::string::npos);
}

TEST(NcclLogParserTest, PrefixStrippedLinesKeepTheirFactsButNameNoHost) {
  std::vector<ParseError> errors;
  NcclLogInfo got = ParseText(ReadFixture("prefix_stripped_ibext_v8_nccl2.21.log"), &errors);
  EXPECT_EQ(got.network, "IBext_v8");
  EXPECT_EQ(WithLog(got).Transports(), (std::vector<std::string>{"NET/IBext_v8"}));
  EXPECT_EQ(WithLog(got).Gdrdma(), true);
  EXPECT_TRUE(got.hosts.empty());
  EXPECT_EQ(got.nranks, 16);
  EXPECT_EQ(got.nnodes, 2);
  EXPECT_EQ(got.local_ranks, 8);
  EXPECT_EQ(got.net_plugin, "NCCL RDMA Plugin v8");
  EXPECT_EQ(got.env_settings.at("NCCL_IB_HCA"), "mlx5_0,mlx5_3");
  ASSERT_EQ(got.warnings.size(), 1u);
  EXPECT_EQ(got.warnings[0].host, "");
  EXPECT_EQ(got.net_devices.size(), 2u);
  for (const NetDevice& d : got.net_devices) EXPECT_EQ(d.host, "");
  EXPECT_TRUE(errors.empty());
}

TEST(NcclLogParserTest, CommShapeLineGivesNcclsNodeCount) {
  NcclLogInfo got =
      ParseText(ReadFixture("socket_fallback_4node_rank0_excerpt_nccl2.21.log"), nullptr);
  EXPECT_EQ(got.hosts, (std::vector<std::string>{"lab-c07"}));
  EXPECT_EQ(got.nranks, 4);
  EXPECT_EQ(got.nnodes, 4);
  EXPECT_EQ(got.local_ranks, 1);
  EXPECT_EQ(got.net_plugin, "internal");
  EXPECT_EQ(got.cuda_driver_version, "12.4");
  // Init START, the shape line and Init COMPLETE each name rank 0 of 4.
  EXPECT_EQ(got.comm_ranks.size(), 3u);
  for (const CommRank& r : got.comm_ranks) {
    EXPECT_EQ(r, (CommRank{0, 4, "lab-c07", r.line}));
  }
}

TEST(NcclLogParserTest, SmallerCommunicatorsDoNotSetTheJobsShape) {
  NcclLogInfo got = ParseText(
      "a:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0\n"
      "a:1:1 [0] NCCL INFO comm 0x2 rank 0 nRanks 8 nNodes 1 localRanks 8 localRank 0 MNNVL 0\n"
      "a:1:1 [0] NCCL INFO comm 0x3 rank 0 nRanks 2 nNodes 9 localRanks 1 localRank 0 MNNVL 0\n",
      nullptr);
  EXPECT_EQ(got.nranks, 16);
  EXPECT_EQ(got.nnodes, 2);  // the last line's nNodes > nRanks is garbage anyway
  EXPECT_EQ(got.local_ranks, 8);
}

TEST(NcclLogParserTest, EchoedSettingsVersionsAndPluginOf228) {
  std::vector<ParseError> errors;
  NcclLogInfo got = ParseText(ReadFixture("env_echo_versions_nccl2.28.log"), &errors);
  EXPECT_EQ(got.env_settings, (std::map<std::string, std::string>{
                                  {"NCCL_IB_HCA", "=mlx5_0:1,mlx5_1:1"},
                                  {"NCCL_IB_TIMEOUT", "22"},  // NCCL's "22." for numbers
                                  {"NCCL_SOCKET_IFNAME", "ens7"},
                              }));
  EXPECT_EQ(got.nccl_version, "2.28.9");
  EXPECT_EQ(got.cuda_version, "12.8");
  EXPECT_EQ(got.cuda_driver_version, "12.8");
  EXPECT_EQ(got.net_plugin, "internal");
  EXPECT_EQ(got.network, "IB");
  EXPECT_EQ(got.nranks, 8);
  EXPECT_EQ(got.nnodes, 2);
  EXPECT_EQ(got.local_ranks, 4);
  EXPECT_EQ(WithLog(got).Transports(), (std::vector<std::string>{"P2P/CUMEM", "NET/IB"}));
  EXPECT_EQ(WithLog(got).Gdrdma(), true);
  EXPECT_TRUE(got.gdr_disabled_hcas.empty());
  EXPECT_EQ(got.socket_gdr_disabled, (std::vector<std::string>{"ens7"}));
  EXPECT_EQ(got.net_devices.size(), 2u);
  EXPECT_TRUE(errors.empty());
}

TEST(NcclLogParserTest, FirstLineCutInsideTheHostIsIgnored) {
  std::vector<ParseError> errors;
  NcclLogInfo got = ParseText(
      "b-07:11:11 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] via NET/IB/0\n"
      "node-b-07:11:11 [0] NCCL INFO Using network IB\n"
      "node-b-08:12:12 [0] NCCL INFO Using network IB\n",
      &errors);
  EXPECT_EQ(got.hosts, (std::vector<std::string>{"node-b-07", "node-b-08"}));
  EXPECT_TRUE(got.channels.empty());
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].line, 1);
}

struct PrefixCase {
  std::string text;
  bool is_line = false;
  std::string host{};
  std::optional<int> device{};
};

TEST(NcclLogLineTest, StrictPrefixGrammar) {
  const PrefixCase cases[] = {
      {"gpu-01:123:456 [3] NCCL INFO x", true, "gpu-01", 3},
      {":123:456 [3] NCCL INFO x", true, "", 3},  // empty host field
      {"<redacted>:1:2 [0] NCCL INFO x", true, "<redacted>", 0},
      {"[1,0]<stdout>:gpu-01:1:2 [0] NCCL INFO x", true, "gpu-01", 0},
      {"[2025-01-02 10:11:12] [1,3]<stderr>:gpu-01:1:2 [0] NCCL INFO x", true, "gpu-01", 0},
      {"[default3]:gpu-01:1:2 [3] NCCL INFO x", true, "gpu-01", 3},  // torchrun --tee
      {"gpu-01: gpu-01:1:2 [0] NCCL INFO x", true, "gpu-01", 0},     // pdsh
      {"2025-01-02T10:11:12.5Z gpu-01:1:2 [0] NCCL INFO x", true, "gpu-01", 0},
      {"gpu-01:1:2 [0] misc/ibvwrap.cc:187 NCCL WARN x", true, "gpu-01", 0},
      {"gpu-01:1:2 [0] 12.5 transport/p2p.cc:458 NCCL TRACE x", true, "gpu-01", 0},
      {"[0] NCCL INFO x", true, "", 0},
      {"NCCL INFO x", true, "", std::nullopt},
      {"> NCCL INFO x", true, "", std::nullopt},
      // A log console's copy (CloudWatch): a cell bar, the time, a cell bar.
      {"  | 2025-05-16T16:39:51.208-07:00 | gpu-01:1:2 [0] NCCL INFO x", true, "gpu-01", 0},
      {"| 2025-05-16T16:39:51.208-07:00 | NCCL INFO x", true, "", std::nullopt},
      {"net_ib.cc:12 NCCL WARN x", true, "", std::nullopt},
      // The console's second copy of an expanded event: its time glued to the
      // host (round eight, aws-ofi-nccl#889), with or without the bar.
      {"| 2025-05-16T16:39:51.208-07:00gpu-01:1:2 [0] NCCL INFO x", true, "gpu-01", 0},
      {"2025-05-16T16:39:51Zgpu-01:1:2 [0] NCCL INFO x", true, "gpu-01", 0},
      {"2025-05-16T16:39:51.5+01:00[1,0]<stdout>:gpu-01:1:2 [0] NCCL INFO x", false},
      // Not NCCL's prefix: no host, and not a line at all.
      {"## NCCL INFO output", false},
      {"Set NCCL_DEBUG=INFO to see NCCL INFO lines", false},
      {"`gpu-01:1:2 [0] NCCL INFO Using network IB`", false},
      {"[rank0]:[W ProcessGroupNCCL.cpp:1182] NCCL WARN x", false},
      {"2024-02-11 09:14:05,004 - torch.distributed - INFO - NCCL INFO x", false},
      {"gpu-01:1:2 NCCL INFO x", false},  // NCCL always prints [dev]
      {"gpu 01:1:2 [0] NCCL INFO x", false},
      {"NCCL INFOx", false},
      {"| why | gpu-01:1:2 [0] NCCL INFO x", false},
      // A time glued to a host only with its zone, which is where it ends.
      {"2025-05-16T16:39:51.208gpu-01:1:2 [0] NCCL INFO x", false},
      {"x2025-05-16T16:39:51Zgpu-01:1:2 [0] NCCL INFO x", false},
  };
  for (const PrefixCase& c : cases) {
    std::optional<NcclLogLine> got = SplitNcclLogLine(c.text);
    ASSERT_EQ(got.has_value(), c.is_line) << c.text;
    if (!got) continue;
    EXPECT_EQ(got->host, c.host) << c.text;
    EXPECT_EQ(got->cuda_device, c.device) << c.text;
    EXPECT_EQ(got->message, "x") << c.text;
  }
}

// Issue 30: lines in NCCL's plain shape are read by a one-pass reader, the
// rest by the general one; lines at the edge of the plain shape must come out
// as the general reading says (all fields), or not at all.
TEST(NcclLogLineTest, PlainShapeAndItsEdgesSplitLikeTheGeneralReading) {
  struct Case {
    std::string text;
    std::optional<NcclLogLine> want;
  };
  auto line = [](std::string host, int64_t pid, int64_t tid, std::optional<int> dev,
                 std::string level, std::string location, std::string message) {
    return std::optional<NcclLogLine>(NcclLogLine{host, pid, tid, dev, level, location, message});
  };
  const Case cases[] = {
      {"gpu-b19:2564734:2564806 [1] NCCL INFO Channel 00/0 : 0[18000] -> 1[2a000] via P2P/IPC",
       line("gpu-b19", 2564734, 2564806, 1, "INFO", "",
            "Channel 00/0 : 0[18000] -> 1[2a000] via P2P/IPC")},
      // Two blanks before the marker, blanks after the level: the general reading.
      {"gpu-1:42:43 [3]  NCCL INFO   x  ", line("gpu-1", 42, 43, 3, "INFO", "", "x")},
      {"gpu-1:42:43 [0] NCCL WARN", line("gpu-1", 42, 43, 0, "WARN", "", "")},
      {"gpu-1:0042:43 [007] NCCL ABORT y", line("gpu-1", 42, 43, 7, "ABORT", "", "y")},
      {"gpu-1:42:43 [-1] NCCL INFO x", line("gpu-1", 42, 43, -1, "INFO", "", "x")},
      {"gpu-1:42:43 [999999] NCCL INFO x", line("gpu-1", 42, 43, 999999, "INFO", "", "x")},
      // A device past NCCL's range, a level that is not one, a pid past int64.
      {"gpu-1:42:43 [1048577] NCCL INFO x", std::nullopt},
      {"gpu-1:42:43 [0] NCCL INFOS x", std::nullopt},
      {"gpu-1:12345678901234567890:43 [0] NCCL INFO x", std::nullopt},
      // 19 digits: past the plain reader, still a pid for the general one.
      {"gpu-1:1234567890123456789:43 [0] NCCL INFO x",
       line("gpu-1", 1234567890123456789, 43, 0, "INFO", "", "x")},
      // The marker later in the line: the general reading finds it.
      {"gpu-1:42:43 [0] init.cc:1798 NCCL INFO x",
       line("gpu-1", 42, 43, 0, "INFO", "init.cc:1798", "x")},
  };
  for (const Case& c : cases) {
    std::optional<NcclLogLine> got = SplitNcclLogLine(c.text);
    ASSERT_EQ(got.has_value(), c.want.has_value()) << c.text;
    if (!got) continue;
    EXPECT_EQ(got->host, c.want->host) << c.text;
    EXPECT_EQ(got->pid, c.want->pid) << c.text;
    EXPECT_EQ(got->tid, c.want->tid) << c.text;
    EXPECT_EQ(got->cuda_device, c.want->cuda_device) << c.text;
    EXPECT_EQ(got->level, c.want->level) << c.text;
    EXPECT_EQ(got->source_location, c.want->source_location) << c.text;
    EXPECT_EQ(got->message, c.want->message) << c.text;
  }
}

TEST(NcclLogParserTest, NoIbDeviceThenTheSocketNetIsTheSocketNetworkBefore212) {
  // NCCL before 2.12 printed no "Using network" line: "NET/IB : No device
  // found." then "NET/Socket : Using [0]enp5s0:..." is how it said it fell
  // back to sockets. The network was left unknown.
  std::vector<ParseError> errors;
  NcclLogInfo got = ParseText(ReadFixture("socket_no_ib_device_nccl2.5.log"), &errors);
  EXPECT_TRUE(errors.empty());
  EXPECT_EQ(got.nccl_version, "2.5.6");
  EXPECT_EQ(got.network, "Socket");
  EXPECT_EQ(got.networks, std::vector<std::string>{"Socket"});
  EXPECT_TRUE(got.ib_no_device);
  // IB found, or no socket interface listed: no network is inferred.
  const std::string ib =
      "n1:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB eth0:10.0.0.1<0>\n"
      "n1:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n";
  EXPECT_EQ(ParseText(ib, &errors).network, std::nullopt);
  const std::string no_socket = "n1:1:1 [0] NCCL INFO NET/IB : No device found.\n";
  EXPECT_EQ(ParseText(no_socket, &errors).network, std::nullopt);
  // A plugin that loaded carries the traffic, whatever IB said.
  const std::string plugin =
      "n1:1:1 [0] NCCL INFO NET/Plugin : Loaded net plugin AWS Libfabric (v5)\n"
      "n1:1:1 [0] NCCL INFO NET/IB : No device found.\n"
      "n1:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n";
  EXPECT_EQ(ParseText(plugin, &errors).network, std::nullopt);
}

// Issue 30, round eight (real sample: NVIDIA/nccl#1584): a log with every
// "host:pid:tid [dev] NCCL INFO" prefix stripped gave only its version. What
// NCCL's own grammar says whole is read: the connection lines, "Using
// network", the NET/IB list, init lines, echoed settings; no host.
TEST(NcclLogParserTest, LogWithEveryPrefixStrippedIsReadByNcclsOwnGrammar) {
  std::vector<ParseError> errors;
  NcclLogInfo got = ParseText(ReadFixture("prefixes_all_stripped_ib_2node_nccl2.23.log"), &errors);
  EXPECT_EQ(got.nccl_version, "2.23.4");
  EXPECT_EQ(got.cuda_version, "12.6");
  EXPECT_EQ(got.cuda_driver_version, "12.6");
  EXPECT_EQ(got.network, "IB");
  EXPECT_EQ(got.net_plugin, "internal");
  EXPECT_EQ(WithLog(got).Transports(), (std::vector<std::string>{"NET/IB"}));
  EXPECT_EQ(WithLog(got).Gdrdma(), true);
  ASSERT_EQ(got.channels.size(), 4u);
  EXPECT_EQ(got.channels[0].line, 16);
  EXPECT_EQ(got.channels[0].host, "");
  EXPECT_EQ(got.channels[0].pid, std::nullopt);
  EXPECT_EQ(got.nranks, 2);
  EXPECT_EQ(got.nnodes, 2);
  EXPECT_EQ(got.env_settings.at("NCCL_IB_HCA"), "mlx5_0,mlx5_1");
  ASSERT_EQ(got.net_devices.size(), 2u);
  EXPECT_EQ(got.net_devices[1].name, "mlx5_1");
  EXPECT_TRUE(got.hosts.empty());
  EXPECT_TRUE(errors.empty()) << errors[0].line << ": " << errors[0].message;
}

// The other side of it: a prefix anywhere keeps the strict grammar (a line
// without one is then not NCCL's), and text that is not a log (no version
// banner: NonNcclTextYieldsNothing too) says nothing, nor do lines that only
// begin in NCCL's words.
TEST(NcclLogParserTest, LinesWithoutPrefixCountOnlyInALogWithoutPrefixes) {
  std::vector<ParseError> errors;
  NcclLogInfo mixed = ParseText(
      "NCCL version 2.23.4+cuda12.6\n"
      "gpu-01:1:2 [0] NCCL INFO Using network Socket\n"
      "Using network IB\n"
      "Channel 00/0 : 0[0] -> 1[1] via NET/IB/0\n",
      &errors);
  EXPECT_EQ(mixed.network, "Socket");
  EXPECT_EQ(mixed.networks, (std::vector<std::string>{"Socket"}));
  EXPECT_TRUE(mixed.channels.empty());
  NcclLogInfo prose = ParseText(
      "To check the fabric, look for these lines:\n"
      "Using network IB\n"
      "Channel 00/0 : 0[0] -> 1[1] via NET/IB/0\n"
      "and make sure nothing says Using network Socket.\n",
      &errors);
  EXPECT_EQ(prose.network, std::nullopt);
  EXPECT_EQ(prose.info_lines, 0);
  NcclLogInfo words = ParseText(
      "NCCL version 2.23.4+cuda12.6\n"
      "Channel 00/0 : 0[0] -> 1[1] via NET/IB/0 was slow\n"
      "Using network IB, as configured\n"
      "NET/IB : the devices were mlx5_0 and mlx5_1\n"
      "comm rank 0 of 2 was slow\n",
      &errors);
  EXPECT_EQ(words.network, std::nullopt);
  EXPECT_TRUE(words.channels.empty());
  EXPECT_TRUE(words.net_devices.empty());
  EXPECT_EQ(words.info_lines, 1);  // the banner
  EXPECT_TRUE(errors.empty());
}

// Issue 30, round eight (real sample: aws-ofi-nccl#889): CloudWatch's console
// lists an event as "  | <time> | <line>" and, expanded, again with the time
// glued to the host. The glued copy was not read (no host field); now it is
// read, and the copy of the line before it is not counted twice: one WARN,
// one observation per connection.
TEST(NcclLogParserTest, ConsoleCopyDoubledLinesCountOnce) {
  std::vector<ParseError> errors;
  NcclLogInfo got = ParseText(ReadFixture("cloudwatch_console_doubled_efa_nccl2.21.log"), &errors);
  EXPECT_EQ(got.nccl_version, "2.21.5");
  EXPECT_EQ(got.network, "AWS Libfabric");
  EXPECT_EQ(got.net_plugin, "AWS Libfabric");
  EXPECT_EQ(got.hosts, (std::vector<std::string>{"ip-10-8-3-17"}));
  EXPECT_EQ(got.nranks, 16);
  EXPECT_EQ(got.nnodes, 2);
  ASSERT_EQ(got.channels.size(), 4u);
  EXPECT_EQ(got.channels[0].line, 11);
  EXPECT_EQ(got.channels[1].line, 13);
  EXPECT_EQ(WithLog(got).Transports(), (std::vector<std::string>{"NET/AWS Libfabric"}));
  ASSERT_EQ(got.warnings.size(), 1u);
  EXPECT_EQ(got.warnings[0].line, 17);
  // 19 lines: 13 NCCL events, 5 copies, and the PyTorch error.
  EXPECT_EQ(got.info_lines, 13);
  EXPECT_TRUE(errors.empty()) << errors[0].line << ": " << errors[0].message;
}

// Only a copy of the line just before, in the other form, is the console's:
// the same line twice in one form is NCCL's twice, and a glued line alone is
// read like any.
TEST(NcclLogParserTest, OnlyTheConsolesOwnCopyIsDropped) {
  const std::string bar =
      "  | 2025-05-22T14:26:34.311-07:00 | gpu-01:1:2 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] "
      "[receive] via NET/IB/0\n";
  const std::string glued =
      "2025-05-22T14:26:34.311-07:00gpu-01:1:2 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] "
      "[receive] via NET/IB/0\n";
  std::vector<ParseError> errors;
  EXPECT_EQ(ParseText(bar + bar, &errors).channels.size(), 2u);
  EXPECT_EQ(ParseText(glued + glued, &errors).channels.size(), 2u);
  EXPECT_EQ(ParseText(glued, &errors).channels.size(), 1u);
  EXPECT_EQ(ParseText(glued + bar, &errors).channels.size(), 1u);
  EXPECT_EQ(ParseText(bar + glued + bar + glued, &errors).channels.size(), 2u);
  EXPECT_TRUE(errors.empty());
}

// The failure forms' words are searched 16 places at a time, the last places
// of a line from a padded copy (HasFailureWords): a form at every offset, in
// lines of every length around those blocks, is found, and a line one letter
// short of a form is not.
TEST(NcclLogParserTest, TestFailureLinesFoundAtEveryOffset) {
  const std::vector<std::string> forms = {
      "Test NCCL failure common.cu:393 'unhandled cuda error'",
      "Test CUDA failure common.cu:12 'out of memory'",
      "DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error",
      "srun: NCCL error: remote process exited",
      // Cut right after the words: they fall in a line's last places.
      "Test NCCL failure", "Test CUDA failure", "x NCCL error in:", "x NCCL error:"};
  std::string text;
  int expected = 0;
  for (const std::string& form : forms) {
    for (size_t before = 0; before <= 40; ++before) {
      for (size_t after : {0, 1, 7, 20}) {
        // Letters of the needles around it ("N", "a", "e", "r"), never a
        // needle: false candidates next to the true one.
        text += std::string(before, before % 2 ? 'N' : 'a') + form + std::string(after, 'r') + "\n";
        ++expected;
      }
    }
  }
  for (size_t before = 0; before <= 40; ++before) {
    text += std::string(before, 'e') + "Test NCCL failur common.cu:1 'cut'\n";
    text += std::string(before, 'r') + "srun: NCCL erro: remote process exited\n";
  }
  std::vector<ParseError> errors;
  NcclLogInfo info = ParseText(text, &errors);
  int found = static_cast<int>(info.dropped_notices);
  for (const LogMessage& m : info.notices) found += m.level == "TEST" ? 1 : 0;
  EXPECT_EQ(found, expected);
}

}  // namespace
}  // namespace fabtrack
