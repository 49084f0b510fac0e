#include "collector/counters/sysfs_ports.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace fabtrack {

// Readable failure messages for whole-struct comparisons.
void PrintTo(const PortSample& s, std::ostream* os) {
  auto opt = [os](const char* name, const auto& v) {
    if (v) *os << " " << name << "=" << *v;
  };
  *os << "{" << s.device << "/" << s.port;
  opt("link_layer", s.link_layer);
  opt("state", s.state);
  opt("state_code", s.state_code);
  opt("phys_state", s.phys_state);
  opt("phys_state_code", s.phys_state_code);
  opt("rate_gbps", s.rate_gbps);
  opt("rate_text", s.rate_text);
  opt("lid", s.lid);
  opt("netdev", s.netdev);
  opt("node_guid", s.node_guid);
  opt("fw_version", s.fw_version);
  opt("board_id", s.board_id);
  opt("xmit_bytes", s.xmit_bytes);
  opt("rcv_bytes", s.rcv_bytes);
  *os << " counters={";
  for (const auto& [k, v] : s.counters) *os << k << ":" << v << " ";
  *os << "} hw_counters={";
  for (const auto& [k, v] : s.hw_counters) *os << k << ":" << v << " ";
  *os << "} saturated={";
  for (const auto& n : s.saturated) *os << n << " ";
  *os << "}}";
}

void PrintTo(const PortProblem& p, std::ostream* os) {
  *os << "{" << p.path << ": " << p.message << "}";
}

namespace {

namespace fs = std::filesystem;
using Counters = std::map<std::string, uint64_t>;

const std::string kFixtures = std::string(FABTRACK_FIXTURE_DIR) + "/sysfs";

// A private directory, removed with everything under it at the end.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::path(testing::TempDir()) / "sysfs_ports.XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
    if (path_.empty()) ADD_FAILURE() << "mkdtemp failed";
  }
  ~TempDir() {
    std::error_code ec;
    fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A copy of a fixture tree (symlinks kept as symlinks, so still relative).
std::string CopyFixture(const TempDir& dir, const std::string& tree) {
  fs::copy(kFixtures + "/" + tree, dir.path(),
           fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  return dir.path();
}

// Writes one sysfs attribute, `value` followed by the kernel's newline.
void Put(const fs::path& file, const std::string& value, bool newline = true) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << value << (newline ? "\n" : "");
}

// The device directory of <root>/class/infiniband/<dev> (created as a plain
// directory in trees built by the tests).
fs::path Dev(const std::string& root, const std::string& dev) {
  return fs::path(root) / "class/infiniband" / dev;
}

// A minimal active InfiniBand port, for the tests that vary one file.
fs::path MinimalPort(const std::string& root, const std::string& dev = "mlx5_0", int port = 1) {
  fs::path p = Dev(root, dev) / "ports" / std::to_string(port);
  Put(p / "state", "4: ACTIVE");
  Put(p / "phys_state", "5: LinkUp");
  Put(p / "rate", "400 Gb/sec (4X NDR)");
  Put(p / "link_layer", "InfiniBand");
  return p;
}

const PortSample* Find(const HostPorts& h, const std::string& dev, int port) {
  for (const PortSample& s : h.ports) {
    if (s.device == dev && s.port == port) return &s;
  }
  return nullptr;
}

Counters StandardCounters(uint64_t xmit_data, uint64_t rcv_data, uint64_t xmit_pkts,
                          uint64_t rcv_pkts, uint64_t xmit_wait) {
  return {{"VL15_dropped", 0},
          {"excessive_buffer_overrun_errors", 0},
          {"link_downed", 0},
          {"link_error_recovery", 0},
          {"local_link_integrity_errors", 0},
          {"multicast_rcv_packets", 0},
          {"multicast_xmit_packets", 0},
          {"port_rcv_constraint_errors", 0},
          {"port_rcv_data", rcv_data},
          {"port_rcv_errors", 0},
          {"port_rcv_packets", rcv_pkts},
          {"port_rcv_remote_physical_errors", 0},
          {"port_rcv_switch_relay_errors", 0},
          {"port_xmit_constraint_errors", 0},
          {"port_xmit_data", xmit_data},
          {"port_xmit_discards", 0},
          {"port_xmit_packets", xmit_pkts},
          {"port_xmit_wait", xmit_wait},
          {"symbol_error", 0},
          {"unicast_rcv_packets", rcv_pkts},
          {"unicast_xmit_packets", xmit_pkts}};
}

// ---- ndr_8hca: 8 x NDR InfiniBand, mlx5_3 trained at HDR.

TEST(ReadSysfsPortsTest, NdrHostWholeFirstPort) {
  HostPorts h = ReadSysfsPorts(kFixtures + "/ndr_8hca");
  ASSERT_EQ(h.ports.size(), 8u);
  EXPECT_EQ(h.host, "");  // the caller fills it
  EXPECT_EQ(h.problems, std::vector<PortProblem>{});

  PortSample want;
  want.device = "mlx5_0";
  want.port = 1;
  want.link_layer = "InfiniBand";
  want.state = "ACTIVE";
  want.state_code = 4;
  want.phys_state = "LinkUp";
  want.phys_state_code = 5;
  want.rate_gbps = 400.0;
  want.rate_text = "400 Gb/sec (4X NDR)";
  want.lid = "0x40";
  want.node_guid = "a088:c203:0000:f0e0";
  want.fw_version = "28.39.1002";
  want.board_id = "MT_0000000838";
  want.counters = StandardCounters(1000000017, 900000003, 4000000, 3900000, 0);
  want.counters["multicast_rcv_packets"] = 9;
  want.counters["multicast_xmit_packets"] = 12;
  want.counters["unicast_rcv_packets"] = 3899991;
  want.counters["unicast_xmit_packets"] = 3999988;
  want.hw_counters = {{"duplicate_request", 0}, {"local_ack_timeout_err", 0},
                      {"out_of_buffer", 0},     {"out_of_sequence", 0},
                      {"packet_seq_err", 0},    {"rnr_nak_retry_err", 0}};
  want.xmit_bytes = 4000000068ull;
  want.rcv_bytes = 3600000012ull;
  EXPECT_EQ(h.ports[0], want);
}

TEST(ReadSysfsPortsTest, NdrHostEveryHcaRateAndOrder) {
  HostPorts h = ReadSysfsPorts(kFixtures + "/ndr_8hca");
  struct Row {
    std::string device;
    double rate;
    std::string rate_text;
    uint64_t symbol_error;
  };
  const std::vector<Row> rows = {
      {"mlx5_0", 400, "400 Gb/sec (4X NDR)", 0}, {"mlx5_1", 400, "400 Gb/sec (4X NDR)", 0},
      {"mlx5_2", 400, "400 Gb/sec (4X NDR)", 0}, {"mlx5_3", 200, "200 Gb/sec (4X HDR)", 37},
      {"mlx5_4", 400, "400 Gb/sec (4X NDR)", 0}, {"mlx5_5", 400, "400 Gb/sec (4X NDR)", 0},
      {"mlx5_6", 400, "400 Gb/sec (4X NDR)", 0}, {"mlx5_7", 400, "400 Gb/sec (4X NDR)", 0},
  };
  ASSERT_EQ(h.ports.size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const PortSample& s = h.ports[i];
    SCOPED_TRACE(rows[i].device);
    EXPECT_EQ(s.device, rows[i].device);
    EXPECT_EQ(s.port, 1);
    EXPECT_EQ(s.rate_gbps, rows[i].rate);
    EXPECT_EQ(s.rate_text, rows[i].rate_text);
    EXPECT_EQ(s.state, "ACTIVE");
    EXPECT_EQ(s.netdev, std::nullopt);  // InfiniBand: no netdev
    EXPECT_EQ(s.counters.at("symbol_error"), rows[i].symbol_error);
    EXPECT_EQ(s.counters.at("port_xmit_wait"), 1234 * i);
    EXPECT_EQ(s.hw_counters.at("local_ack_timeout_err"), i);
    EXPECT_EQ(s.hw_counters.count("lifespan"), 0u);  // a setting, not a counter
    EXPECT_EQ(s.xmit_bytes, (1000000000ull * (i + 1) + 17) * 4);
    EXPECT_EQ(s.saturated, std::vector<std::string>{});
  }
}

TEST(ReadSysfsPortsTest, ReadingTwiceGivesTheSameResult) {
  EXPECT_EQ(ReadSysfsPorts(kFixtures + "/ndr_8hca"), ReadSysfsPorts(kFixtures + "/ndr_8hca"));
  EXPECT_EQ(ReadSysfsPorts(kFixtures + "/mixed_faults"),
            ReadSysfsPorts(kFixtures + "/mixed_faults"));
}

// ---- roce_host: Ethernet link layer, RoCE congestion counters.

TEST(ReadSysfsPortsTest, RoceHostWholeFirstPort) {
  HostPorts h = ReadSysfsPorts(kFixtures + "/roce_host");
  ASSERT_EQ(h.ports.size(), 2u);
  EXPECT_EQ(h.problems, std::vector<PortProblem>{});

  PortSample want;
  want.device = "mlx5_0";
  want.port = 1;
  want.link_layer = "Ethernet";
  want.state = "ACTIVE";
  want.state_code = 4;
  want.phys_state = "LinkUp";
  want.phys_state_code = 5;
  want.rate_gbps = 100.0;
  want.rate_text = "100 Gb/sec (4X EDR)";
  want.lid = "0x0";
  want.netdev = "ens1f0np0";  // from gid_attrs/ndevs/0
  want.node_guid = "0c42:a103:00a1:b2c0";
  want.fw_version = "22.36.1010";
  want.board_id = "MT_0000000359";
  want.counters = StandardCounters(2500000000, 2400000000, 7100000, 7000000, 0);
  want.hw_counters = {{"duplicate_request", 0},
                      {"implied_nak_seq_err", 2},
                      {"local_ack_timeout_err", 5},
                      {"np_cnp_sent", 5120},
                      {"np_ecn_marked_roce_packets", 6144},
                      {"out_of_buffer", 0},
                      {"out_of_sequence", 3},
                      {"packet_seq_err", 1},
                      {"req_cqe_error", 0},
                      {"resp_cqe_error", 0},
                      {"rnr_nak_retry_err", 0},
                      {"roce_adp_retrans", 11},
                      {"roce_slow_restart", 1},
                      {"rp_cnp_handled", 4096},
                      {"rp_cnp_ignored", 0}};
  want.xmit_bytes = 10000000000ull;
  want.rcv_bytes = 9600000000ull;
  EXPECT_EQ(h.ports[0], want);
}

TEST(ReadSysfsPortsTest, RoceHostNetdevFallsBackToPciNetDirectory) {
  HostPorts h = ReadSysfsPorts(kFixtures + "/roce_host");
  ASSERT_EQ(h.ports.size(), 2u);
  const PortSample& s = h.ports[1];
  EXPECT_EQ(s.device, "mlx5_1");
  EXPECT_EQ(s.netdev, "ens1f1np1");  // no gid_attrs: device/net/<if>
  EXPECT_EQ(s.rate_gbps, 25.0);
  EXPECT_EQ(s.rate_text, "25 Gb/sec (1X EDR)");
  EXPECT_EQ(s.hw_counters.at("np_cnp_sent"), 5121u);
  EXPECT_EQ(s.hw_counters.at("rp_cnp_handled"), 4097u);
  EXPECT_EQ(s.hw_counters.at("out_of_buffer"), 77u);
  EXPECT_EQ(s.hw_counters.size(), 15u);
}

// ---- mixed_faults: down port, saturated legacy counters, no PMA, counters_ext.

TEST(ReadSysfsPortsTest, MixedFaultsPortStates) {
  HostPorts h = ReadSysfsPorts(kFixtures + "/mixed_faults");
  EXPECT_EQ(h.problems, std::vector<PortProblem>{});
  struct Row {
    std::string device;
    int port;
    std::string link_layer, state;
    int state_code;
    std::string phys_state;
    int phys_state_code;
    double rate;
    std::optional<std::string> fw_version;
  };
  const std::vector<Row> rows = {
      {"i40iw0", 1, "Ethernet", "ACTIVE", 4, "LinkUp", 5, 10, "0.2"},
      {"mlx4_0", 1, "InfiniBand", "ACTIVE", 4, "LinkUp", 5, 56, std::nullopt},
      {"mlx4_0", 2, "InfiniBand", "DOWN", 1, "Disabled", 3, 10, std::nullopt},
      {"qib0", 1, "InfiniBand", "ACTIVE", 4, "LinkUp", 5, 40, "0.0.0"},
  };
  ASSERT_EQ(h.ports.size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const PortSample& s = h.ports[i];
    const Row& r = rows[i];
    SCOPED_TRACE(r.device + "/" + std::to_string(r.port));
    EXPECT_EQ(s.device, r.device);
    EXPECT_EQ(s.port, r.port);
    EXPECT_EQ(s.link_layer, r.link_layer);
    EXPECT_EQ(s.state, r.state);
    EXPECT_EQ(s.state_code, r.state_code);
    EXPECT_EQ(s.phys_state, r.phys_state);
    EXPECT_EQ(s.phys_state_code, r.phys_state_code);
    EXPECT_EQ(s.rate_gbps, r.rate);
    EXPECT_EQ(s.fw_version, r.fw_version);  // no fw_ver before kernel 4.10
  }
}

TEST(ReadSysfsPortsTest, CountersExtWinOverNarrowCounters) {
  HostPorts h = ReadSysfsPorts(kFixtures + "/mixed_faults");
  const PortSample* s = Find(h, "mlx4_0", 1);
  ASSERT_NE(s, nullptr);
  Counters want = StandardCounters(81604378624, 77309411328, 9000000000, 8000000000, 4294967295);
  want["unicast_xmit_packets"] = 8999999000;
  want["unicast_rcv_packets"] = 7999999000;
  want["multicast_xmit_packets"] = 1000;
  want["multicast_rcv_packets"] = 1000;
  EXPECT_EQ(s->counters, want);
  EXPECT_EQ(s->xmit_bytes, 81604378624ull * 4);
  EXPECT_EQ(s->rcv_bytes, 77309411328ull * 4);
  // The narrow data counters read 4294967295 but are replaced; port_xmit_wait
  // has no 64-bit twin and is stuck.
  EXPECT_EQ(s->saturated, std::vector<std::string>{"port_xmit_wait"});
  EXPECT_EQ(s->hw_counters, Counters{});
}

TEST(ReadSysfsPortsTest, DownPortUnusableValuesAreAbsent) {
  HostPorts h = ReadSysfsPorts(kFixtures + "/mixed_faults");
  const PortSample* s = Find(h, "mlx4_0", 2);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->rate_text, "10 Gb/sec (4X)");
  EXPECT_EQ(s->lid, "0xffff");
  // Empty, "12x" and 2^64 are absent, not zero.
  EXPECT_EQ(s->counters.count("symbol_error"), 0u);
  EXPECT_EQ(s->counters.count("link_downed"), 0u);
  EXPECT_EQ(s->counters.count("port_xmit_wait"), 0u);
  EXPECT_EQ(s->counters.at("port_xmit_data"), 0u);
  EXPECT_EQ(s->counters.at("unicast_xmit_packets"), 0u);  // from counters_ext
  EXPECT_EQ(s->counters.size(), 18u);
  EXPECT_EQ(s->xmit_bytes, 0u);
  EXPECT_EQ(s->saturated, std::vector<std::string>{});
}

TEST(ReadSysfsPortsTest, LegacyCountersAtTheirMaximumAreSaturated) {
  HostPorts h = ReadSysfsPorts(kFixtures + "/mixed_faults");
  const PortSample* s = Find(h, "qib0", 1);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->saturated, (std::vector<std::string>{
                              "VL15_dropped",
                              "excessive_buffer_overrun_errors",
                              "link_downed",
                              "link_error_recovery",
                              "local_link_integrity_errors",
                              "port_rcv_constraint_errors",
                              "port_rcv_data",
                              "port_rcv_errors",
                              "port_rcv_packets",
                              "port_rcv_remote_physical_errors",
                              "port_rcv_switch_relay_errors",
                              "port_xmit_constraint_errors",
                              "port_xmit_data",
                              "port_xmit_discards",
                              "port_xmit_packets",
                              "port_xmit_wait",
                              "symbol_error",
                          }));
  EXPECT_EQ(s->counters.at("symbol_error"), 65535u);
  EXPECT_EQ(s->counters.at("link_downed"), 255u);
  EXPECT_EQ(s->counters.at("port_xmit_wait"), 4294967295u);
  EXPECT_EQ(s->xmit_bytes, 4294967295ull * 4);  // still reported; `saturated` says it is stuck
}

TEST(ReadSysfsPortsTest, NoPmaCountersAreAbsentNotZero) {
  HostPorts h = ReadSysfsPorts(kFixtures + "/mixed_faults");
  const PortSample* s = Find(h, "i40iw0", 1);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->counters, Counters{});
  EXPECT_EQ(s->xmit_bytes, std::nullopt);
  EXPECT_EQ(s->rcv_bytes, std::nullopt);
  EXPECT_EQ(s->saturated, std::vector<std::string>{});
  EXPECT_EQ(s->netdev, "eno1");
  EXPECT_EQ(s->board_id, "I40IW_Board_ID");
}

// ---- value parsing, one file varied at a time.

TEST(ReadSysfsPortsTest, RateTexts) {
  struct Row {
    std::string text;
    std::optional<double> gbps;
  };
  const std::vector<Row> rows = {
      {"2.5 Gb/sec (1X SDR)", 2.5}, {"10 Gb/sec (4X)", 10},
      {"25 Gb/sec (1X EDR)", 25},   {"53.125 Gb/sec (1X HDR)", 53.125},
      {"100 Gb/sec (4X EDR)", 100}, {"400 Gb/sec (4X NDR)", 400},
      {"800 Gb/sec (4X XDR)", 800}, {"N/A", std::nullopt},
      {"fast", std::nullopt},       {"100", std::nullopt},
  };
  for (const Row& r : rows) {
    SCOPED_TRACE(r.text);
    TempDir dir;
    Put(MinimalPort(dir.path()) / "rate", r.text);
    HostPorts h = ReadSysfsPorts(dir.path());
    ASSERT_EQ(h.ports.size(), 1u);
    EXPECT_EQ(h.ports[0].rate_gbps, r.gbps);
    EXPECT_EQ(h.ports[0].rate_text, r.text);
  }
}

TEST(ReadSysfsPortsTest, StateTexts) {
  struct Row {
    std::string state, phys;
    std::optional<std::string> state_text;
    std::optional<int> state_code;
    std::optional<std::string> phys_text;
    std::optional<int> phys_code;
  };
  const std::vector<Row> rows = {
      {"4: ACTIVE", "5: LinkUp", "ACTIVE", 4, "LinkUp", 5},
      {"2: INIT", "5: LinkUp", "INIT", 2, "LinkUp", 5},
      {"1: DOWN", "2: Polling", "DOWN", 1, "Polling", 2},
      {"5: ACTIVE_DEFER", "7: Phy Test", "ACTIVE_DEFER", 5, "Phy Test", 7},
      {"ACTIVE", "", "ACTIVE", std::nullopt, std::nullopt, std::nullopt},
  };
  for (const Row& r : rows) {
    SCOPED_TRACE(r.state + " / " + r.phys);
    TempDir dir;
    fs::path p = MinimalPort(dir.path());
    Put(p / "state", r.state);
    Put(p / "phys_state", r.phys);
    HostPorts h = ReadSysfsPorts(dir.path());
    ASSERT_EQ(h.ports.size(), 1u);
    EXPECT_EQ(h.ports[0].state, r.state_text);
    EXPECT_EQ(h.ports[0].state_code, r.state_code);
    EXPECT_EQ(h.ports[0].phys_state, r.phys_text);
    EXPECT_EQ(h.ports[0].phys_state_code, r.phys_code);
  }
}

TEST(ReadSysfsPortsTest, CounterValues) {
  struct Row {
    std::string text;
    bool newline;
    std::optional<uint64_t> value;
  };
  const std::vector<Row> rows = {
      {"0", true, 0},
      {"42", true, 42},
      {"42", false, 42},
      {"18446744073709551615", true, std::numeric_limits<uint64_t>::max()},
      {"18446744073709551616", true, std::nullopt},
      {"N/A (no PMA)", true, std::nullopt},
      {"", true, std::nullopt},
      {"", false, std::nullopt},
      {"-1", true, std::nullopt},
      {"12x", true, std::nullopt},
      {"0x10", true, std::nullopt},
  };
  for (const Row& r : rows) {
    SCOPED_TRACE("'" + r.text + "'");
    TempDir dir;
    fs::path p = MinimalPort(dir.path());
    Put(p / "counters/port_rcv_errors", r.text, r.newline);
    Put(p / "hw_counters/out_of_buffer", r.text, r.newline);
    HostPorts h = ReadSysfsPorts(dir.path());
    ASSERT_EQ(h.ports.size(), 1u);
    Counters want;
    if (r.value) want["port_rcv_errors"] = *r.value;
    EXPECT_EQ(h.ports[0].counters, want);
    Counters want_hw;
    if (r.value) want_hw["out_of_buffer"] = *r.value;
    EXPECT_EQ(h.ports[0].hw_counters, want_hw);
  }
}

TEST(ReadSysfsPortsTest, FilesThatFailToReadAreAbsent) {
  TempDir dir;
  fs::path p = MinimalPort(dir.path());
  Put(p / "counters/symbol_error", "3");
  // read() fails with EIO (offset 0 of our own address space is unmapped) and
  // with EISDIR: the kinds of failure sysfs gives when the hardware cannot
  // answer, reproducible even as root.
  fs::create_symlink("/proc/self/mem", p / "counters/port_rcv_errors");
  fs::create_symlink("/", p / "counters/link_downed");
  fs::remove(p / "rate");
  fs::create_symlink("/proc/self/mem", p / "rate");
  HostPorts h = ReadSysfsPorts(dir.path());
  ASSERT_EQ(h.ports.size(), 1u);
  EXPECT_EQ(h.ports[0].counters, (Counters{{"symbol_error", 3}}));
  EXPECT_EQ(h.ports[0].rate_text, std::nullopt);
  EXPECT_EQ(h.ports[0].rate_gbps, std::nullopt);
  EXPECT_EQ(h.problems, std::vector<PortProblem>{});
}

// Unreadable files (EACCES) cannot be produced as root, who reads mode-000 files; the
// EIO case above (a symlink to /proc/self/mem) covers a file that fails to read.

TEST(ReadSysfsPortsTest, DataCounterWidths) {
  // port_xmit_data at 2^32-1 is stuck only when it is the 32-bit
  // PortCounters field: not when counters_ext replaces it, nor when the
  // kernel shows the extended set (unicast_* exist only there).
  struct Row {
    std::string name;
    bool ext_replaces, extended_set, saturated;
  };
  const std::vector<Row> rows = {
      {"32-bit", false, false, true},
      {"counters_ext", true, false, false},
      {"extended set", false, true, false},
  };
  for (const Row& r : rows) {
    SCOPED_TRACE(r.name);
    TempDir dir;
    fs::path p = MinimalPort(dir.path());
    Put(p / "counters/port_xmit_data", "4294967295");
    if (r.ext_replaces) Put(p / "counters_ext/port_xmit_data_64", "4294967295");
    if (r.extended_set) Put(p / "counters/unicast_xmit_packets", "5");
    HostPorts h = ReadSysfsPorts(dir.path());
    ASSERT_EQ(h.ports.size(), 1u);
    EXPECT_EQ(h.ports[0].saturated, r.saturated ? std::vector<std::string>{"port_xmit_data"}
                                                : std::vector<std::string>{});
    EXPECT_EQ(h.ports[0].xmit_bytes, 4294967295ull * 4);
  }
}

TEST(ReadSysfsPortsTest, ByteCountThatWouldOverflowIsAbsent) {
  TempDir dir;
  fs::path p = MinimalPort(dir.path());
  Put(p / "counters/port_xmit_data", "4611686018427387904");  // 2^62
  Put(p / "counters/port_rcv_data", "4611686018427387903");
  HostPorts h = ReadSysfsPorts(dir.path());
  ASSERT_EQ(h.ports.size(), 1u);
  EXPECT_EQ(h.ports[0].counters.at("port_xmit_data"), 4611686018427387904u);
  EXPECT_EQ(h.ports[0].xmit_bytes, std::nullopt);
  EXPECT_EQ(h.ports[0].rcv_bytes, 18446744073709551612u);
}

TEST(ReadSysfsPortsTest, DevicesInNaturalOrderPortsNumerically) {
  TempDir dir;
  for (const char* dev : {"mlx5_10", "mlx5_2", "mlx5_1", "bnxt_re0"}) MinimalPort(dir.path(), dev);
  for (int port : {10, 2}) MinimalPort(dir.path(), "mlx4_0", port);
  Put(Dev(dir.path(), "mlx4_0") / "ports/not_a_port/state", "4: ACTIVE");
  HostPorts h = ReadSysfsPorts(dir.path());
  std::vector<std::pair<std::string, int>> got;
  for (const PortSample& s : h.ports) got.emplace_back(s.device, s.port);
  EXPECT_EQ(got, (std::vector<std::pair<std::string, int>>{{"bnxt_re0", 1},
                                                           {"mlx4_0", 2},
                                                           {"mlx4_0", 10},
                                                           {"mlx5_1", 1},
                                                           {"mlx5_2", 1},
                                                           {"mlx5_10", 1}}));
}

TEST(ReadSysfsPortsTest, GidTableNetdevWinsOverPciNetDirectory) {
  // RoCE LAG: the GID table names the bond, the PCI function its own port.
  TempDir dir;
  std::string root = CopyFixture(dir, "roce_host");
  Put(fs::path(root) / "class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/0", "bond0");
  HostPorts h = ReadSysfsPorts(root);
  ASSERT_EQ(h.ports.size(), 2u);
  EXPECT_EQ(h.ports[0].netdev, "bond0");
}

TEST(ReadSysfsPortsTest, DualPortNetdevByDevPort) {
  TempDir dir;
  for (int port : {1, 2}) Put(MinimalPort(dir.path(), "mlx4_0", port) / "link_layer", "Ethernet");
  fs::path dev = Dev(dir.path(), "mlx4_0");
  Put(dev / "device/net/eth3/dev_port", "1");
  Put(dev / "device/net/eth2/dev_port", "0");
  HostPorts h = ReadSysfsPorts(dir.path());
  ASSERT_EQ(h.ports.size(), 2u);
  EXPECT_EQ(h.ports[0].netdev, "eth2");
  EXPECT_EQ(h.ports[1].netdev, "eth3");
}

// ---- missing and vanishing devices.

TEST(ReadSysfsPortsTest, NoInfinibandClassIsNoDataNotAnError) {
  TempDir dir;
  for (const std::string& root : {dir.path(), dir.path() + "/absent"}) {
    SCOPED_TRACE(root);
    HostPorts want;
    want.problems = {
        {root + "/class/infiniband", "no RDMA devices under " + root + "/class/infiniband"}};
    EXPECT_EQ(ReadSysfsPorts(root), want);
  }
  fs::create_directories(dir.path() + "/class/infiniband");  // ib_core loaded, no HCA
  EXPECT_EQ(ReadSysfsPorts(dir.path()).ports, std::vector<PortSample>{});
  EXPECT_EQ(ReadSysfsPorts(dir.path()).problems.size(), 1u);
}

TEST(ReadSysfsPortsTest, DeviceVanishedBetweenListingAndOpening) {
  // A class/infiniband entry whose target is gone is what a device removed
  // between readdir and open looks like: listed, then ENOENT.
  TempDir dir;
  std::string root = CopyFixture(dir, "ndr_8hca");
  fs::create_directory_symlink(
      "../../devices/pci0000:00/0000:00:01.0/0000:99:00.0/infiniband/mlx5_8",
      root + "/class/infiniband/mlx5_8");
  HostPorts h = ReadSysfsPorts(root);
  EXPECT_EQ(h.ports.size(), 8u);
  EXPECT_EQ(h.problems, (std::vector<PortProblem>{
                            {root + "/class/infiniband/mlx5_8", "device vanished while reading"}}));
  // The other devices read as before.
  HostPorts original = ReadSysfsPorts(kFixtures + "/ndr_8hca");
  EXPECT_EQ(h.ports, original.ports);
}

TEST(ReadSysfsPortsTest, PortVanishedBetweenListingAndOpening) {
  TempDir dir;
  std::string root = CopyFixture(dir, "roce_host");
  fs::path ports = fs::path(root) / "class/infiniband/mlx5_0/ports";
  fs::create_directory_symlink("gone", ports / "2");
  HostPorts h = ReadSysfsPorts(root);
  ASSERT_EQ(h.ports.size(), 2u);
  EXPECT_EQ(h.ports[0].device, "mlx5_0");
  EXPECT_EQ(h.ports[0].port, 1);
  EXPECT_EQ(h.ports[1].device, "mlx5_1");
  EXPECT_EQ(h.problems, (std::vector<PortProblem>{{root + "/class/infiniband/mlx5_0/ports/2",
                                                   "port vanished while reading"}}));
}

TEST(ReadSysfsPortsTest, PortWithoutCountersDirectoryKeepsItsState) {
  TempDir dir;
  std::string root = CopyFixture(dir, "ndr_8hca");
  fs::remove_all(fs::path(root) / "class/infiniband/mlx5_2/ports/1/counters");
  HostPorts h = ReadSysfsPorts(root);
  const PortSample* s = Find(h, "mlx5_2", 1);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->counters, Counters{});
  EXPECT_EQ(s->xmit_bytes, std::nullopt);
  EXPECT_EQ(s->state, "ACTIVE");
  EXPECT_EQ(s->hw_counters.size(), 6u);
  EXPECT_EQ(h.problems, std::vector<PortProblem>{});
}

TEST(ReadSysfsPortsTest, CounterFileGoneWhilePortRemainsIsAbsent) {
  // A listed counter that cannot be opened (ENOENT) while its port is still
  // there is one missing value, not a vanished port.
  TempDir dir;
  std::string root = CopyFixture(dir, "ndr_8hca");
  fs::path c = fs::path(root) / "class/infiniband/mlx5_1/ports/1/counters";
  fs::remove(c / "symbol_error");
  fs::create_symlink("nowhere", c / "symbol_error");
  HostPorts h = ReadSysfsPorts(root);
  const PortSample* s = Find(h, "mlx5_1", 1);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->counters.count("symbol_error"), 0u);
  EXPECT_EQ(s->counters.size(), 20u);
  EXPECT_EQ(h.problems, std::vector<PortProblem>{});
}

}  // namespace
}  // namespace fabtrack
