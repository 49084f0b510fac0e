// locate's topology readers: fabtrack's topology file and ibnetdiscover
// output (fixtures in the image of infiniband-diags captures: managed
// switches named "MF0;<host>:<model>/U1", unmanaged ones sharing one
// description, an in-network aggregation node on a leaf).
#include "collector/parse/locate_topology_parser.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/fabric_scan_json.h"
#include "tests/subnet/subnet_test_scans.h"

namespace fabtrack {
namespace {

std::string Fixture(const std::string& name) {
  std::ifstream in(std::string(FABTRACK_FIXTURE_DIR) + "/topology/" + name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

LocateTopology TwoLeaves(const std::string& leaf1, const std::string& leaf2,
                         const std::string& spine) {
  LocateTopology t;
  for (int i = 1; i <= 8; ++i) {
    const std::string node = "gpu-a0" + std::to_string(i);
    t.nodes.push_back(node);
    t.leaf_of[node] = i <= 4 ? leaf1 : leaf2;
  }
  t.spine_of = {{leaf1, spine}, {leaf2, spine}};
  return t;
}

void ExpectSame(const LocateTopology& got, const LocateTopology& want) {
  EXPECT_EQ(got.nodes, want.nodes);
  EXPECT_EQ(got.leaf_of, want.leaf_of);
  EXPECT_EQ(got.spine_of, want.spine_of);
}

TEST(LocateTopologyFile, ReadsLeavesAndSpine) {
  ParsedTopology p = ParseTopology(Fixture("two_leaves.topology"), "two_leaves.topology");
  EXPECT_TRUE(p.errors.empty()) << p.errors.front();
  ExpectSame(p.topology, TwoLeaves("leaf1", "leaf2", "spine01"));
}

TEST(LocateTopologyFile, ErrorsNameFileAndLine) {
  const std::string text =
      "leaf1: a b\n"
      "# comment\n"
      "leaf2 c d\n"   // 3: no colon
      "leaf2: b c\n"  // 4: b twice
      "leaf1: e\n"    // 5: leaf1 twice
      "spine: leaf1 leaf2\n"
      "top: spine\n"    // 7: three tiers
      "odd: leaf1 x\n"  // 8: mixed
      "empty:\n";       // 9: no members
  ParsedTopology p = ParseLocateTopologyFile(text, "t.topo");
  ASSERT_EQ(p.errors.size(), 6u);
  EXPECT_EQ(p.errors[0], "t.topo:3: expected \"switch: member member ...\"");
  EXPECT_EQ(p.errors[1], "t.topo:5: switch leaf1 is listed again (first on line 1)");
  EXPECT_EQ(p.errors[2], "t.topo:9: switch empty has no members");
  EXPECT_EQ(p.errors[3], "t.topo:8: switch odd mixes switches and nodes among its members");
  EXPECT_EQ(p.errors[4], "t.topo:4: node b is under leaf leaf1 (line 1) already");
  EXPECT_EQ(p.errors[5],
            "t.topo:7: spine is a spine under spine top (only two tiers: leaves and spines)");
}

TEST(LocateTopologyFile, LeafWithoutSpineHasNoUplink) {
  ParsedTopology p = ParseLocateTopologyFile("rack: n1 n2\n", "f");
  EXPECT_TRUE(p.errors.empty());
  EXPECT_EQ(p.topology.nodes, (std::vector<std::string>{"n1", "n2"}));
  EXPECT_TRUE(p.topology.spine_of.empty());
}

TEST(LocateTopologyFile, EmptyIsAnError) {
  EXPECT_EQ(ParseLocateTopologyFile("# nothing\n\n", "f").errors,
            std::vector<std::string>{"f:1: no switch listed"});
}

TEST(LocateTopologyFile, FormatRoundTrips) {
  const LocateTopology t = TwoLeaves("leaf1", "leaf2", "spine");
  const std::string text = FormatLocateTopology(t);
  EXPECT_EQ(text,
            "leaf1: gpu-a01 gpu-a02 gpu-a03 gpu-a04\nleaf2: gpu-a05 gpu-a06 gpu-a07 gpu-a08\n"
            "spine: leaf1 leaf2\n");
  ParsedTopology p = ParseLocateTopologyFile(text, "f");
  EXPECT_TRUE(p.errors.empty());
  ExpectSame(p.topology, t);
}

TEST(Ibnetdiscover, ManagedSwitchesAreNamedByTheirHostPart) {
  const std::string text = Fixture("ibnetdiscover_managed.txt");
  EXPECT_TRUE(LooksLikeIbnetdiscover(text));
  ParsedTopology p = ParseTopology(text, "managed");
  EXPECT_TRUE(p.errors.empty()) << p.errors.front();
  // The aggregation node on leaf01 is not a node to probe.
  ExpectSame(p.topology, TwoLeaves("leaf01", "leaf02", "spine01"));
}

TEST(Ibnetdiscover, UnmanagedSwitchesSharingADescriptionAreNamedByGuid) {
  ParsedTopology p = ParseTopology(Fixture("ibnetdiscover_unmanaged.txt"), "unmanaged");
  EXPECT_TRUE(p.errors.empty()) << p.errors.front();
  ExpectSame(p.topology,
             TwoLeaves("S-b8cef60300a1c300", "S-b8cef60300a1c320", "S-b8cef60300a1c2e0"));
}

TEST(Ibnetdiscover, SniffingKeepsTopologyFilesApart) {
  EXPECT_FALSE(LooksLikeIbnetdiscover(Fixture("two_leaves.topology")));
  EXPECT_FALSE(LooksLikeIbnetdiscover("Switches: a b\n"));
}

TEST(Ibnetdiscover, PortLineOutsideABlockAndLonelyCaAreErrors) {
  const std::string text =
      "[1]\t\"H-0000000000000001\"[1]\t\t# \"x\" lid 1 4xHDR\n"
      "caguid=0x2\n"
      "Ca\t1 \"H-0000000000000002\"\t\t# \"lonely mlx5_0\"\n";
  ParsedTopology p = ParseIbnetdiscover(text, "ib");
  ASSERT_EQ(p.errors.size(), 2u);
  EXPECT_EQ(p.errors[0], "ib:1: port line outside a Switch or Ca block");
  EXPECT_EQ(p.errors[1], "ib:3: Ca H-0000000000000002 (lonely) is linked to no switch");
}

// `fabtrack fabric scan --format json` as a topology: its CAs placed on
// their leaves by the first word of their description, each leaf's uplink
// named by its first spine.
TEST(FabricScanTopology, HostsOnLeavesAndLeavesUnderSpines) {
  FabricScan scan = testing::SmallFatTree();  // node1-2 on leaf01, node3-4 on leaf02
  for (FabricNode& n : scan.nodes) {
    if (n.type == "ca") n.description += " mlx5_0";
  }
  ParsedTopology p = ParseTopology(FabricScanToJson(scan).dump(2), "scan.json");
  ASSERT_TRUE(p.errors.empty()) << p.errors.front();
  EXPECT_EQ(p.topology.nodes, (std::vector<std::string>{"node1", "node2", "node3", "node4"}));
  EXPECT_EQ(p.topology.leaf_of.at("node1"), "leaf01");
  EXPECT_EQ(p.topology.leaf_of.at("node4"), "leaf02");
  EXPECT_EQ(p.topology.spine_of.at("leaf01"), "spine01");
  EXPECT_EQ(p.topology.spine_of.at("leaf02"), "spine01");
}

TEST(FabricScanTopology, JsonThatIsNoScanIsAnError) {
  ParsedTopology p = ParseTopology("{\"nodes\": 3}", "x.json");
  ASSERT_EQ(p.errors.size(), 1u);
  EXPECT_EQ(p.errors[0].rfind("x.json:1: not a `fabtrack fabric scan --format json` document", 0),
            0u)
      << p.errors[0];
}

}  // namespace
}  // namespace fabtrack
