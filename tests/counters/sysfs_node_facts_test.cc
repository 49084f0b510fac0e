// Node facts (issue 21 item 4) from fake sysfs trees laid out like the real
// one (make_cx7_tree.sh: ConnectX-7 NDR HCAs): each HCA's fw_ver and each
// port's rate/width as the files say, the kernel when the sample has it, and
// a fleet of nodes merged into one run's facts naming the odd node.
#include "core/node_facts.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "collector/counters/sysfs_ports.h"

namespace fabtrack {
namespace {

std::string BuildTree(const std::string& name, int hcas) {
  const std::string root = ::testing::TempDir() + "/node_facts_" + name;
  const std::string cmd = std::string("sh ") + FABTRACK_FIXTURE_DIR + "/sysfs/make_cx7_tree.sh " +
                          root + " " + std::to_string(hcas);
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  return root;
}

void Write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text << "\n";
}

TEST(NodeFacts, FirmwareAndLinksAsTheTreeSaysThem) {
  const std::string root = BuildTree("plain", 2);
  HostPorts host = ReadSysfsPorts(root);
  host.kernel_release = "6.8.0-45-generic";
  EXPECT_EQ(HostFactsFromPorts(host), (NodeFacts{{"fw_ver mlx5_0", "28.39.1002"},
                                                 {"fw_ver mlx5_1", "28.39.1002"},
                                                 {"kernel", "6.8.0-45-generic"},
                                                 {"link mlx5_0/1", "400 Gb/sec (4X NDR)"},
                                                 {"link mlx5_1/1", "400 Gb/sec (4X NDR)"}}));
  std::filesystem::remove_all(root);
}

TEST(NodeFacts, TheOddNodeIsNamedWithItsValue) {
  const std::string a = BuildTree("a", 2), b = BuildTree("b", 2), c = BuildTree("c", 2);
  // Node c: mlx5_1 flashed to newer firmware, its link trained down to HDR.
  const std::string dev = c + "/class/infiniband/mlx5_1";
  Write(dev + "/fw_ver", "28.40.1000");
  Write(dev + "/ports/1/rate", "200 Gb/sec (4X HDR)");
  std::vector<std::pair<std::string, NodeFacts>> fleet;
  for (const auto& [host, root] :
       {std::pair{"node1", a}, std::pair{"node2", b}, std::pair{"node3", c}}) {
    HostPorts ports = ReadSysfsPorts(root);
    ports.kernel_release = "6.8.0-45-generic";
    fleet.push_back({host, HostFactsFromPorts(ports)});
  }
  const NodeFacts merged = MergeNodeFacts(fleet);
  EXPECT_EQ(merged.at("fw_ver mlx5_0"), "28.39.1002");
  EXPECT_EQ(merged.at("fw_ver mlx5_1"), "28.39.1002 (node1,node2); 28.40.1000 (node3)");
  EXPECT_EQ(merged.at("link mlx5_1/1"),
            "400 Gb/sec (4X NDR) (node1,node2); 200 Gb/sec (4X HDR) (node3)");
  EXPECT_EQ(merged.at("kernel"), "6.8.0-45-generic");
  EXPECT_EQ(merged.size(), 5u);
  for (const std::string& root : {a, b, c}) std::filesystem::remove_all(root);
}

TEST(NodeFacts, NoPortsNoKernelNoFacts) {
  HostPorts empty = ReadSysfsPorts(::testing::TempDir() + "/no_such_sysfs");
  EXPECT_TRUE(HostFactsFromPorts(empty).empty());
  EXPECT_TRUE(MergeNodeFacts({}).empty());
  EXPECT_TRUE(KernelRelease().has_value());  // this host's uname
}

}  // namespace
}  // namespace fabtrack
