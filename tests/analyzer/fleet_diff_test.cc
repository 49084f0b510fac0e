// The fleet diff on generated fleets: one odd node is named, and only it.
#include "analyzer/topology/fleet_diff.h"

#include <gtest/gtest.h>

namespace fabtrack {
namespace {

NodeTopology Rails(int n) {
  NodeTopology t;
  for (int i = 0; i < n; ++i) {
    TopoGpu g;
    g.name = "GPU" + std::to_string(i);
    g.nic = "mlx5_" + std::to_string(i);
    g.path = TopoPath::kPix;
    t.gpus.push_back(g);
    TopoNic nic;
    nic.name = g.nic;
    t.nics.push_back(nic);
  }
  return t;
}

std::map<std::string, NodeTopology> Fleet(int nodes) {
  std::map<std::string, NodeTopology> fleet;
  for (int i = 1; i <= nodes; ++i) fleet["node" + std::to_string(i)] = Rails(8);
  return fleet;
}

TEST(FleetDiff, OneOddNodeAmongSixtyFourIsNamedWithBothPaths) {
  std::map<std::string, NodeTopology> fleet = Fleet(64);
  fleet["node17"].gpus[3].path = TopoPath::kSys;
  std::vector<TopologyFinding> f = DiffFleet(fleet);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].kind, "topology_odd_node");
  EXPECT_EQ(f[0].severity, Severity::kCritical);
  EXPECT_EQ(f[0].host, "node17");
  EXPECT_EQ(f[0].gpu, "GPU3");
  EXPECT_EQ(f[0].nic, "mlx5_3");
  EXPECT_EQ(f[0].message, "node17: GPU3 -> mlx5_3 is SYS, 63 other nodes PIX");
}

TEST(FleetDiff, AnotherNicOrNoneOrAMissingGpu) {
  std::map<std::string, NodeTopology> fleet = Fleet(10);
  fleet["node2"].gpus[5].nic = "mlx5_4";
  fleet["node2"].gpus[5].path = TopoPath::kPhb;
  fleet["node3"].gpus[0].nic.clear();
  fleet["node3"].gpus[0].path.reset();
  fleet["node4"].gpus.pop_back();
  std::vector<TopologyFinding> f = DiffFleet(fleet);
  // node4's GPU count says it all; its rails are not compared (8 others).
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[0].message, "node3: GPU0 has no NIC, 8 other nodes GPU0 -> mlx5_0 PIX");
  EXPECT_EQ(f[0].severity, Severity::kCritical);
  EXPECT_EQ(f[1].message, "node4: 7 GPU(s), 9 other nodes 8");
  EXPECT_EQ(f[2].message, "node2: GPU5 -> mlx5_4 is PHB, 8 other nodes GPU5 -> mlx5_5 PIX");
  EXPECT_EQ(f[2].severity, Severity::kWarning);
}

TEST(FleetDiff, NoMajorityOrTooFewNodesSaysNothing) {
  std::map<std::string, NodeTopology> fleet = Fleet(4);
  fleet["node1"].gpus[3].path = TopoPath::kSys;
  fleet["node2"].gpus[3].path = TopoPath::kSys;
  EXPECT_TRUE(DiffFleet(fleet).empty());  // 2 against 2
  std::map<std::string, NodeTopology> two = Fleet(2);
  two["node1"].gpus[3].path = TopoPath::kSys;
  EXPECT_TRUE(DiffFleet(two).empty());
  EXPECT_TRUE(DiffFleet(Fleet(30)).empty());
}

}  // namespace
}  // namespace fabtrack
