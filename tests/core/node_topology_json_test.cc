// The stored document of a node's wiring reads back as the same struct, every
// field filled; a document that is not one is refused with why.
#include "core/node_topology_json.h"

#include <gtest/gtest.h>

namespace fabtrack {
namespace {

NodeTopology Filled() {
  NodeTopology t;
  TopoGpu g;
  g.name = "GPU3";
  g.bus_id = "0000:5d:00.0";
  g.numa_node = 1;
  g.rank = 11;
  g.gdr = false;
  g.link_gts = 16.0;
  g.link_width = 8;
  g.nic = "mlx5_3";
  g.path = TopoPath::kNode;
  t.gpus.push_back(g);
  TopoGpu lone;
  lone.name = "GPU4";
  t.gpus.push_back(lone);
  TopoNic n;
  n.name = "mlx5_3";
  n.bus_id = "0000:5e:00.0";
  n.numa_node = 1;
  n.speed_mbps = 400000;
  n.port = 2;
  n.gdr = true;
  n.link_gts = 32.0;
  n.link_width = 16;
  t.nics.push_back(n);
  return t;
}

TEST(NodeTopologyJson, RoundTripKeepsEveryField) {
  NodeTopology t = Filled();
  std::string why;
  std::optional<NodeTopology> back = NodeTopologyFromJson(NodeTopologyToJson(t), &why);
  ASSERT_TRUE(back) << why;
  EXPECT_EQ(*back, t);
  EXPECT_EQ(TopologyFingerprint(*back), TopologyFingerprint(t));
  t.gpus[0].path = TopoPath::kSys;
  EXPECT_NE(TopologyFingerprint(*back), TopologyFingerprint(t));
}

TEST(NodeTopologyJson, PairGdrIsFalseWhenEitherSideSaysNo) {
  nlohmann::json gpus = TopologyGpusToJson(Filled());
  EXPECT_EQ(gpus[0]["gdr"], false);
  EXPECT_EQ(gpus[0]["gpu_gdr"], false);
  EXPECT_EQ(gpus[1]["gdr"], nullptr);
  EXPECT_EQ(gpus[1]["nic"], nullptr);
}

TEST(NodeTopologyJson, NotATopologyIsRefused) {
  std::string why;
  EXPECT_FALSE(NodeTopologyFromJson(nlohmann::json::object(), &why));
  EXPECT_FALSE(why.empty());
  EXPECT_FALSE(NodeTopologyFromJson(
      {{"gpus", {{{"gpu", "GPU0"}, {"path", "FAR"}}}}, {"nics", nlohmann::json::array()}}, &why));
  EXPECT_NE(why.find("FAR"), std::string::npos);
}

}  // namespace
}  // namespace fabtrack
