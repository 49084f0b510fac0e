// SysfsPortSampler: always equal to a fresh ReadSysfsPorts, and free of heap
// allocations in steady state (global operator new is counted here).
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace fabtrack
