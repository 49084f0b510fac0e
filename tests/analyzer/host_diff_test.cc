// What differs between the nodes of one file (issue 30), on the two-host
// fixtures and on models.
#include "analyzer/topology/host_diff.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "collector/parse/node_topology_parser.h"

namespace fabtrack {
namespace {

std::vector<ParsedNodeTopology> ParseFixture(const std::string& name) {
  std::ifstream in(std::string(FABTRACK_FIXTURE_DIR) + "/topology/node/" + name, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return ParseNodeTopologies(s.str(), name);
}

std::vector<std::vector<TopologyFinding>> Diff(const std::vector<ParsedNodeTopology>& nodes) {
  std::vector<std::pair<std::string, const NodeTopology*>> hosts;
  for (const ParsedNodeTopology& p : nodes) hosts.push_back({p.host, &p.topology});
  return DiffHosts(hosts);
}

std::string Messages(const std::vector<TopologyFinding>& findings) {
  std::string out;
  for (const TopologyFinding& f : findings) {
    out += f.kind + " " + f.host + " [" + f.gpu + "|" + f.nic + "] " + f.message + "\n";
  }
  return out;
}

TEST(HostDiff, TheSameNicSlotAtX8OnOneHostAndX16OnTheOther) {
  std::vector<ParsedNodeTopology> nodes = ParseFixture("multi_host_xml.txt");
  ASSERT_EQ(nodes.size(), 2u);
  std::vector<std::vector<TopologyFinding>> d = Diff(nodes);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(Messages(d[0]), "");
  EXPECT_EQ(Messages(d[1]),
            "host_differs hgx-b11 [|mlx5_2] hgx-b11: NIC at 0000:3b:00.0 PCIe width x8, hgx-b07 "
            "x16\n");
}

TEST(HostDiff, NicNamesThatDifferBetweenTwoMatrices) {
  std::vector<std::vector<TopologyFinding>> d = Diff(ParseFixture("multi_host_smi.txt"));
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(Messages(d[0]), "");
  EXPECT_EQ(Messages(d[1]),
            "host_differs hgx-c02 [GPU0|] hgx-c02: GPU0 -> ibp24s0 PIX, hgx-c01 mlx5_0 PIX\n"
            "host_differs hgx-c02 [GPU1|] hgx-c02: GPU1 -> ibp41s0 PIX, hgx-c01 mlx5_1 PIX\n"
            "host_differs hgx-c02 [|ibp24s0] hgx-c02: NIC #0 is ibp24s0, hgx-c01 mlx5_0\n"
            "host_differs hgx-c02 [|ibp41s0] hgx-c02: NIC #1 is ibp41s0, hgx-c01 mlx5_1\n");
}

TEST(HostDiff, TheMajorityDecidesWhoDiffersAndCountsAreCompared) {
  NodeTopology a;
  TopoGpu g;
  g.name = "GPU0";
  g.nic = "mlx5_0";
  g.path = TopoPath::kPix;
  g.link_width = 16;
  a.gpus = {g};
  TopoNic n;
  n.name = "mlx5_0";
  a.nics = {n};
  NodeTopology b = a, c = a;
  b.gpus[0].link_width = 8;
  c.gpus.push_back(g);
  c.gpus[1].name = "GPU1";
  std::vector<std::vector<TopologyFinding>> d = DiffHosts({{"n1", &a}, {"n2", &b}, {"n3", &c}});
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(Messages(d[0]), "");
  EXPECT_EQ(Messages(d[1]), "host_differs n2 [GPU0|] n2: GPU0 PCIe width x8, 2 other hosts x16\n");
  EXPECT_EQ(Messages(d[2]), "host_differs n3 [|] n3: GPU count 2, 2 other hosts 1\n");
  EXPECT_TRUE(DiffHosts({{"n1", &a}})[0].empty());
}

TEST(HostDiff, ADualPortNicsLinkIsComparedOnce) {
  // Two hosts' dumps posted in one issue (NCCL 2.30), each with one
  // dual-port NIC (two <net> under one PCI device) at x16 on one host and
  // x8 on the other: the width was said twice, both times of the second
  // port's name (both ports were matched to the last <net> of the bus id).
  std::vector<ParsedNodeTopology> nodes = ParseFixture("multi_host_xml_dual_port.txt");
  ASSERT_EQ(nodes.size(), 2u);
  std::vector<std::vector<TopologyFinding>> d = Diff(nodes);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(Messages(d[0]), "");
  EXPECT_EQ(Messages(d[1]),
            "host_differs lab-r02 [|mlx5_0] lab-r02: NIC at 0000:4b:00.0 PCIe width x8, lab-r01 "
            "x16\n");
}

}  // namespace
}  // namespace fabtrack
