// SysfsPortSampler: always equal to a fresh ReadSysfsPorts, and free of heap
// allocations in steady state (global operator new is counted here).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <new>

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

}  // namespace
}  // namespace fabtrack
