// SysfsPortSampler: always equal to a fresh ReadSysfsPorts, and free of heap
// allocations in steady state (global operator new is counted here).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <new>
#include <optional>

#include "collector/counters/sysfs_ports.h"

namespace {
std::atomic<size_t> allocations{0};
}  // namespace

void* operator new(size_t size) {
  ++allocations;
  if (void* p = std::malloc(size ? size : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }

namespace fabtrack {
namespace {

namespace fs = std::filesystem;

// A private copy of a fixture tree, so that values can change under it.
class TreeCopy {
 public:
  explicit TreeCopy(const std::string& fixture) {
    root_ = fs::temp_directory_path() / ("sampler-" + std::to_string(::getpid()) + "-" + fixture);
    fs::remove_all(root_);
    fs::copy(std::string(FABTRACK_FIXTURE_DIR) + "/sysfs/" + fixture, root_,
             fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  }
  ~TreeCopy() { fs::remove_all(root_); }
  std::string root() const { return root_.string(); }
  void Write(const std::string& rel, const std::string& value) {
    std::ofstream(root_ / rel) << value << "\n";
  }

 private:
  fs::path root_;
};

const std::string kPort = "class/infiniband/mlx5_0/ports/1/";

TEST(SysfsPortSamplerTest, EqualsAFreshReadOnEveryFixture) {
  for (const char* fixture : {"ndr_8hca", "roce_host", "mixed_faults"}) {
    std::string root = std::string(FABTRACK_FIXTURE_DIR) + "/sysfs/" + fixture;
    SysfsPortSampler sampler(root);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(sampler.Sample(), ReadSysfsPorts(root)) << fixture;
  }
}

TEST(SysfsPortSamplerTest, FollowsChangingValuesWithoutWalkingTheTree) {
  TreeCopy tree("ndr_8hca");
  SysfsPortSampler sampler(tree.root());
  sampler.Sample();
  ASSERT_EQ(sampler.full_reads(), 1u);
  tree.Write(kPort + "counters/symbol_error", "7");
  tree.Write(kPort + "counters/port_xmit_data", "123456789");
  tree.Write(kPort + "hw_counters/out_of_buffer", "42");
  tree.Write(kPort + "state", "1: DOWN");
  tree.Write(kPort + "rate", "200 Gb/sec (4X HDR)");
  EXPECT_EQ(sampler.Sample(), ReadSysfsPorts(tree.root()));
  EXPECT_EQ(sampler.full_reads(), 1u);  // all by pread
  const PortSample& p = sampler.Sample().ports[0];
  EXPECT_EQ(p.counters.at("symbol_error"), 7u);
  EXPECT_EQ(p.xmit_bytes, 123456789u * 4);
  EXPECT_EQ(p.state, "DOWN");
  EXPECT_EQ(p.rate_gbps, 200.0);
}

TEST(SysfsPortSamplerTest, SurprisesFallBackToAFullRead) {
  TreeCopy tree("ndr_8hca");
  SysfsPortSampler sampler(tree.root());
  sampler.Sample();
  tree.Write(kPort + "counters/port_rcv_errors", "N/A (no PMA)");  // absent, never 0
  EXPECT_EQ(sampler.Sample(), ReadSysfsPorts(tree.root()));
  EXPECT_FALSE(sampler.Sample().ports[0].counters.contains("port_rcv_errors"));
  tree.Write(kPort + "counters/port_rcv_errors", "0");
  tree.Write(kPort + "counters/link_downed", "255");  // saturated legacy counter
  EXPECT_EQ(sampler.Sample(), ReadSysfsPorts(tree.root()));
  EXPECT_EQ(sampler.Sample().ports[0].saturated, std::vector<std::string>{"link_downed"});
  fs::remove_all(fs::path(tree.root()) / "class/infiniband/mlx5_7");  // device unplugged
  EXPECT_EQ(sampler.Sample(), ReadSysfsPorts(tree.root()));
  EXPECT_GE(sampler.full_reads(), 3u);
}

TEST(SysfsPortSamplerTest, SteadyStateAllocatesNothing) {
  TreeCopy tree("ndr_8hca");
  SysfsPortSampler sampler(tree.root());
  sampler.Sample();
  sampler.Sample();
  const size_t before = allocations.load();
  size_t ports = 0;
  for (int i = 0; i < 100; ++i) ports += sampler.Sample().ports.size();
  EXPECT_EQ(allocations.load() - before, 0u);
  EXPECT_EQ(ports, 800u);
  EXPECT_EQ(sampler.full_reads(), 1u);
}

// A tree of ConnectX-7 HCAs with real values, saturated legacy counters
// included (tests/fixtures/sysfs/make_cx7_tree.sh).
class Cx7Tree {
 public:
  explicit Cx7Tree(int ports) {
    root_ = fs::temp_directory_path() /
            ("sampler-cx7-" + std::to_string(::getpid()) + "-" + std::to_string(ports));
    const std::string cmd = std::string(FABTRACK_FIXTURE_DIR) + "/sysfs/make_cx7_tree.sh '" +
                            root_.string() + "' " + std::to_string(ports);
    if (std::system(cmd.c_str()) != 0) ADD_FAILURE() << cmd;
  }
  ~Cx7Tree() { fs::remove_all(root_); }
  std::string root() const { return root_.string(); }
  fs::path Port(int dev) const {
    return fs::canonical(root_ / ("class/infiniband/mlx5_" + std::to_string(dev))) / "ports/1";
  }
  void Write(int dev, const std::string& rel, const std::string& value) {
    std::ofstream(Port(dev) / rel) << value << "\n";
  }

 private:
  fs::path root_;
};

// Saturated legacy counters of every port: port_xmit_wait, port_xmit_discards,
// link_downed, excessive_buffer_overrun_errors; symbol_error on every 4th.
size_t ExpectedSaturated(int ports) { return ports * 4 + (ports + 3) / 4; }

TEST(SysfsPortSamplerTest, RealValuesKeepTheFastPathForEveryCounter) {
  for (int ports : {16, 64}) {
    Cx7Tree tree(ports);
    SysfsPortSampler sampler(tree.root(), 1e9);
    const HostPorts first = sampler.Sample();
    ASSERT_EQ(first, ReadSysfsPorts(tree.root()));
    ASSERT_EQ(first.ports.size(), static_cast<size_t>(ports));
    EXPECT_EQ(first.ports[0].saturated,
              (std::vector<std::string>{"excessive_buffer_overrun_errors", "link_downed",
                                        "port_xmit_discards", "port_xmit_wait", "symbol_error"}));
    const SamplerPlan& plan = sampler.plan();
    EXPECT_TRUE(plan.fast) << plan.why;
    EXPECT_EQ(plan.saturated, ExpectedSaturated(ports));
    // state, phys_state, rate, 21 counters, 20 hw_counters (lifespan is a setting).
    EXPECT_EQ(plan.files, static_cast<size_t>(ports) * (3 + 21 + 20));
    const SamplerStats at_plan = sampler.stats();
    EXPECT_EQ(at_plan.opens, plan.files);
    for (int i = 0; i < 10; ++i) {
      // Values from the fast path equal a full walk's, struct for struct.
      EXPECT_EQ(sampler.Sample(), ReadSysfsPorts(tree.root())) << ports << " ports";
    }
    // One pread per planned file per sample, no new opens, no walk.
    EXPECT_EQ(sampler.stats().full_reads, 1u);
    EXPECT_EQ(sampler.stats().opens, at_plan.opens);
    EXPECT_EQ(sampler.stats().preads - at_plan.preads, 10 * plan.files);
  }
}

TEST(SysfsPortSamplerTest, SaturationIsJudgedPerCounterOnTheFastPath) {
  Cx7Tree tree(16);
  SysfsPortSampler sampler(tree.root(), 1e9);
  sampler.Sample();
  tree.Write(1, "counters/symbol_error", "65535");         // saturates now
  tree.Write(0, "counters/link_downed", "0");              // reset (perfquery -R)
  tree.Write(2, "counters/port_xmit_data", "4294967295");  // 64-bit: a value like any
  const HostPorts& h = sampler.Sample();
  EXPECT_EQ(h, ReadSysfsPorts(tree.root()));
  EXPECT_EQ(h.ports[1].saturated,
            (std::vector<std::string>{"excessive_buffer_overrun_errors", "link_downed",
                                      "port_xmit_discards", "port_xmit_wait", "symbol_error"}));
  EXPECT_EQ(h.ports[0].saturated,
            (std::vector<std::string>{"excessive_buffer_overrun_errors", "port_xmit_discards",
                                      "port_xmit_wait", "symbol_error"}));
  EXPECT_EQ(sampler.plan().saturated, ExpectedSaturated(16));  // one more, one fewer
  EXPECT_EQ(sampler.stats().full_reads, 1u);
}

// A 64-bit counter at 2^64-1 is saturated on the fast path as in a full
// read (and in saved dumps, collector/parse/sysfs_values.h).
TEST(SysfsPortSamplerTest, A64BitCounterAtItsMaximumIsSaturatedOnTheFastPath) {
  Cx7Tree tree(16);
  SysfsPortSampler sampler(tree.root(), 1e9);
  sampler.Sample();
  tree.Write(2, "counters/port_rcv_data", "18446744073709551615");
  const HostPorts& h = sampler.Sample();
  EXPECT_EQ(h, ReadSysfsPorts(tree.root()));
  EXPECT_NE(std::find(h.ports[2].saturated.begin(), h.ports[2].saturated.end(), "port_rcv_data"),
            h.ports[2].saturated.end());
  EXPECT_EQ(h.ports[2].rcv_bytes, std::nullopt);
  EXPECT_EQ(sampler.stats().full_reads, 1u);
}

TEST(SysfsPortSamplerTest, ASaturatedLegacyDataCounterIsReadFromItsExtendedFile) {
  // An old kernel: counters/ holds the 32-bit PortCounters, counters_ext/ the
  // 64-bit PortCountersExtended values.
  Cx7Tree tree(16);
  for (const char* c : {"unicast_xmit_packets", "unicast_rcv_packets", "multicast_xmit_packets",
                        "multicast_rcv_packets"}) {
    fs::remove(tree.Port(3) / "counters" / c);
  }
  tree.Write(3, "counters/port_xmit_data", "4294967295");
  tree.Write(3, "counters/port_rcv_data", "4294967295");
  fs::create_directory(tree.Port(3) / "counters_ext");
  tree.Write(3, "counters_ext/port_xmit_data_64", "818204062374912");
  SysfsPortSampler sampler(tree.root(), 1e9);
  sampler.Sample();
  EXPECT_EQ(sampler.plan().widened, 1u);
  tree.Write(3, "counters_ext/port_xmit_data_64", "818204062375000");
  const HostPorts& h = sampler.Sample();
  EXPECT_EQ(h, ReadSysfsPorts(tree.root()));
  EXPECT_EQ(h.ports[3].counters.at("port_xmit_data"), 818204062375000u);
  EXPECT_EQ(h.ports[3].xmit_bytes, 818204062375000u * 4);
  // port_rcv_data has no 64-bit file: it is the one reported saturated.
  EXPECT_EQ(std::count(h.ports[3].saturated.begin(), h.ports[3].saturated.end(), "port_rcv_data"),
            1);
  EXPECT_EQ(std::count(h.ports[3].saturated.begin(), h.ports[3].saturated.end(), "port_xmit_data"),
            0);
  EXPECT_EQ(sampler.stats().full_reads, 1u);
}

TEST(SysfsPortSamplerTest, ANewOrVanishedDeviceMakesANewPlanAtOnce) {
  Cx7Tree tree(16);
  SysfsPortSampler sampler(tree.root(), 1e9);
  std::vector<SamplerPlan> logged;
  sampler.OnPlanChange([&](const SamplerPlan& p) { logged.push_back(p); });
  sampler.Sample();
  ASSERT_EQ(logged.size(), 1u);
  EXPECT_TRUE(logged[0].fast);
  EXPECT_NE(DescribePlan(logged[0]).find("fast"), std::string::npos);
  // Hot unplug: the class symlink goes (the device's files are still open).
  fs::remove(fs::path(tree.root()) / "class/infiniband/mlx5_15");
  EXPECT_EQ(sampler.Sample(), ReadSysfsPorts(tree.root()));
  EXPECT_EQ(sampler.Sample().ports.size(), 15u);
  EXPECT_EQ(sampler.stats().plans, 2u);
  // Hot plug: it comes back.
  fs::create_directory_symlink(
      "../../devices/pci0000:00/0000:00:01.0/0000:1f:00.0/infiniband/mlx5_15",
      fs::path(tree.root()) / "class/infiniband/mlx5_15");
  EXPECT_EQ(sampler.Sample(), ReadSysfsPorts(tree.root()));
  EXPECT_EQ(sampler.Sample().ports.size(), 16u);
  EXPECT_EQ(sampler.stats().plans, 3u);
  EXPECT_TRUE(sampler.plan().fast);
  EXPECT_EQ(logged.size(), 3u);  // 16 ports, 15, 16 again: each logged once
  for (int i = 0; i < 3; ++i) sampler.Sample();
  EXPECT_EQ(sampler.stats().plans, 3u);
}

// --hw-counters: the files of hw_counters/ of a tree, counted by walking it
// (lifespan aside: a setting, never read): the oracle for what a selection saves.
size_t HwCounterFiles(const std::string& root) {
  size_t n = 0;
  for (const auto& dev : fs::directory_iterator(fs::path(root) / "class/infiniband")) {
    for (const auto& port : fs::directory_iterator(fs::canonical(dev.path()) / "ports")) {
      if (!fs::exists(port.path() / "hw_counters")) continue;
      for (const auto& f : fs::directory_iterator(port.path() / "hw_counters")) {
        n += f.path().filename() != "lifespan";
      }
    }
  }
  return n;
}

HwCounterSelection Selection(const std::string& text) {
  std::string why;
  std::optional<HwCounterSelection> s = ParseHwCounterSelection(text, &why);
  EXPECT_TRUE(s) << text << ": " << why;
  return s.value_or(HwCounterSelection{});
}

TEST(SysfsPortSamplerTest, HwCountersNoneReadsExactlyTheHwCounterFilesFewer) {
  for (int ports : {16, 64}) {
    Cx7Tree tree(ports);
    // One hw counter that reads N/A: "all" keeps it open to watch it, "none"
    // must not open it either.
    tree.Write(5, "hw_counters/rx_dct_connect", "N/A (no PMA)");
    const size_t hw_files = HwCounterFiles(tree.root());
    ASSERT_EQ(hw_files, static_cast<size_t>(ports) * 20);
    SysfsPortSampler all(tree.root(), 1e9);
    SysfsPortSampler none(tree.root(), 1e9, Selection("none"));
    const HostPorts everything = all.Sample();
    const HostPorts& h = none.Sample();
    EXPECT_EQ(h, ReadSysfsPorts(tree.root(), Selection("none")));
    ASSERT_EQ(h.ports.size(), everything.ports.size());
    for (size_t i = 0; i < h.ports.size(); ++i) {
      EXPECT_TRUE(h.ports[i].hw_counters.empty()) << h.ports[i].device;
      // Everything else is what the full selection reads.
      PortSample without_hw = everything.ports[i];
      without_hw.hw_counters.clear();
      EXPECT_EQ(h.ports[i], without_hw);
    }
    EXPECT_TRUE(none.plan().fast) << none.plan().why;
    EXPECT_EQ(none.plan().hw_counters, 0u);
    EXPECT_EQ(all.plan().hw_counters, hw_files);  // the N/A one watched (read, not kept)
    EXPECT_EQ(none.plan().files, all.plan().files - all.plan().hw_counters);
    // Opened: every hw_counters file fewer, the watched N/A one included.
    EXPECT_EQ(all.stats().opens - none.stats().opens, hw_files);
    const SamplerStats all_before = all.stats(), none_before = none.stats();
    for (int i = 0; i < 10; ++i) {
      all.Sample();
      EXPECT_EQ(none.Sample(), ReadSysfsPorts(tree.root(), Selection("none")));
    }
    const size_t all_reads = all.stats().preads - all_before.preads;
    const size_t none_reads = none.stats().preads - none_before.preads;
    EXPECT_EQ(none_reads, 10 * none.plan().files);
    // Per sample: exactly the hw_counters files fewer reads.
    EXPECT_EQ(all_reads - none_reads, 10 * hw_files);
    EXPECT_EQ(none.stats().full_reads, 1u);
    EXPECT_EQ(all.stats().full_reads, 1u);
  }
}

TEST(SysfsPortSamplerTest, AListedSelectionReadsOnlyThoseFiles) {
  Cx7Tree tree(16);
  // np_cnp_sent is a RoCE counter: an IB port has none, it is simply absent.
  const HwCounterSelection listed = Selection("out_of_buffer,np_cnp_sent,out_of_sequence");
  SysfsPortSampler sampler(tree.root(), 1e9, listed);
  const HostPorts full = ReadSysfsPorts(tree.root());
  const HostPorts& first = sampler.Sample();
  EXPECT_EQ(first, ReadSysfsPorts(tree.root(), listed));
  for (size_t i = 0; i < first.ports.size(); ++i) {
    const auto& all_hw = full.ports[i].hw_counters;
    EXPECT_EQ(first.ports[i].hw_counters,
              (std::map<std::string, uint64_t>{{"out_of_buffer", all_hw.at("out_of_buffer")},
                                               {"out_of_sequence", all_hw.at("out_of_sequence")}}));
  }
  EXPECT_EQ(sampler.plan().hw_counters, 16u * 2);
  EXPECT_EQ(sampler.stats().opens, sampler.plan().files);
  // Selected values are followed by pread; unselected ones are not read, so
  // neither a new value nor an N/A there makes a new plan.
  tree.Write(3, "hw_counters/out_of_buffer", "777");
  tree.Write(3, "hw_counters/rx_write_requests", "1");
  tree.Write(4, "hw_counters/rx_read_requests", "N/A (no PMA)");
  const SamplerStats before = sampler.stats();
  const HostPorts& h = sampler.Sample();
  EXPECT_EQ(h.ports[3].hw_counters.at("out_of_buffer"), 777u);
  EXPECT_FALSE(h.ports[3].hw_counters.contains("rx_write_requests"));
  EXPECT_EQ(h, ReadSysfsPorts(tree.root(), listed));
  EXPECT_EQ(sampler.stats().plans, 1u);
  EXPECT_EQ(sampler.stats().preads - before.preads, sampler.plan().files);
  // A selected counter going N/A leaves the map (a new plan), and comes back.
  tree.Write(6, "hw_counters/out_of_sequence", "N/A (no PMA)");
  EXPECT_FALSE(sampler.Sample().ports[6].hw_counters.contains("out_of_sequence"));
  EXPECT_EQ(sampler.Sample(), ReadSysfsPorts(tree.root(), listed));
  tree.Write(6, "hw_counters/out_of_sequence", "12");
  EXPECT_EQ(sampler.Sample().ports[6].hw_counters.at("out_of_sequence"), 12u);
  EXPECT_EQ(sampler.Sample(), ReadSysfsPorts(tree.root(), listed));
}

TEST(SysfsPortSamplerTest, ANewPlanAfterHotPlugKeepsTheSelection) {
  Cx7Tree tree(16);
  for (const char* text : {"none", "out_of_buffer,rx_write_requests"}) {
    const HwCounterSelection sel = Selection(text);
    const size_t per_port = sel.mode == HwCounterSelection::Mode::kNone ? 0 : 2;
    SysfsPortSampler sampler(tree.root(), 1e9, sel);
    sampler.Sample();
    EXPECT_EQ(sampler.plan().hw_counters, 16 * per_port) << text;
    fs::remove(fs::path(tree.root()) / "class/infiniband/mlx5_15");  // unplugged
    EXPECT_EQ(sampler.Sample(), ReadSysfsPorts(tree.root(), sel)) << text;
    EXPECT_EQ(sampler.plan().hw_counters, 15 * per_port) << text;
    fs::create_directory_symlink(
        "../../devices/pci0000:00/0000:00:01.0/0000:1f:00.0/infiniband/mlx5_15",
        fs::path(tree.root()) / "class/infiniband/mlx5_15");  // back
    const HostPorts& h = sampler.Sample();
    EXPECT_EQ(h, ReadSysfsPorts(tree.root(), sel)) << text;
    EXPECT_EQ(h.ports.size(), 16u);
    EXPECT_EQ(h.ports[15].hw_counters.size(), per_port) << text;
    EXPECT_EQ(sampler.plan().hw_counters, 16 * per_port) << text;
    EXPECT_EQ(sampler.stats().plans, 3u) << text;
    EXPECT_TRUE(sampler.plan().fast) << text;
  }
}

TEST(SysfsPortSamplerTest, ASelectionEqualsAFreshReadOnEveryFixture) {
  for (const char* fixture : {"ndr_8hca", "roce_host", "mixed_faults"}) {
    std::string root = std::string(FABTRACK_FIXTURE_DIR) + "/sysfs/" + fixture;
    for (const char* text : {"none", "np_cnp_sent,out_of_buffer"}) {
      SysfsPortSampler sampler(root, 60, Selection(text));
      for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(sampler.Sample(), ReadSysfsPorts(root, Selection(text)))
            << fixture << " " << text;
      }
    }
  }
  // The RoCE host's CNP counter, read under the list, as the full read has it.
  const std::string roce = std::string(FABTRACK_FIXTURE_DIR) + "/sysfs/roce_host";
  const HostPorts listed = ReadSysfsPorts(roce, Selection("np_cnp_sent,out_of_buffer"));
  const HostPorts full = ReadSysfsPorts(roce);
  ASSERT_FALSE(listed.ports.empty());
  EXPECT_EQ(listed.ports[0].hw_counters.size(), 2u);
  EXPECT_EQ(listed.ports[0].hw_counters.at("np_cnp_sent"),
            full.ports[0].hw_counters.at("np_cnp_sent"));
}

TEST(HwCounterNamesTest, NamesEveryPortsFilesOnceWithoutLifespan) {
  const std::string roce = std::string(FABTRACK_FIXTURE_DIR) + "/sysfs/roce_host";
  std::vector<std::string> names = HwCounterNames(roce);
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_EQ(std::count(names.begin(), names.end(), "np_cnp_sent"), 1);
  EXPECT_EQ(std::count(names.begin(), names.end(), "lifespan"), 0);
  // The union of what a full read finds on every port.
  std::vector<std::string> oracle;
  for (const PortSample& p : ReadSysfsPorts(roce).ports) {
    for (const auto& [name, value] : p.hw_counters) oracle.push_back(name);
  }
  std::sort(oracle.begin(), oracle.end());
  oracle.erase(std::unique(oracle.begin(), oracle.end()), oracle.end());
  EXPECT_EQ(names, oracle);
  EXPECT_EQ(HwCounterNames(::testing::TempDir() + "/no_such_sysfs"), std::vector<std::string>{});
}

}  // namespace
}  // namespace fabtrack
