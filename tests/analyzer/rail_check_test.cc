// The rail check on the topology fixtures (both formats) and on models.
#include "analyzer/topology/rail_check.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "collector/parse/node_topology_parser.h"

namespace fabtrack {
namespace {

std::vector<TopologyFinding> CheckFixture(const std::string& name) {
  std::ifstream in(std::string(FABTRACK_FIXTURE_DIR) + "/topology/node/" + name, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  ParsedNodeTopology p = ParseNodeTopology(s.str(), name);
  EXPECT_TRUE(p.errors.empty()) << name << ": " << p.errors.front();
  return CheckRails(p.topology);
}

// "severity kind gpu nic" per finding, one per line.
std::string Summary(const std::vector<TopologyFinding>& findings) {
  std::string out;
  for (const TopologyFinding& f : findings) {
    out += std::string(SeverityName(f.severity)) + " " + f.kind + " " + f.gpu + " " + f.nic + "\n";
  }
  return out;
}

TEST(RailCheck, VerdictsOnEveryFixture) {
  struct Case {
    const char* file;
    const char* expected;
  };
  const std::string eight_sys =
      "critical nic_far GPU4 mlx5_4\ncritical nic_far GPU5 mlx5_5\n"
      "critical nic_far GPU6 mlx5_6\ncritical nic_far GPU7 mlx5_7\n";
  const std::string four_shared =
      "warning shared_nic GPU0,GPU1 mlx5_0\nwarning shared_nic GPU2,GPU3 mlx5_1\n"
      "warning shared_nic GPU4,GPU5 mlx5_2\nwarning shared_nic GPU6,GPU7 mlx5_3\n";
  std::string gdr_off;
  for (int g = 0; g < 8; ++g) {
    gdr_off += "warning gdr_off GPU" + std::to_string(g) + " mlx5_" + std::to_string(g) + "\n";
  }
  const Case cases[] = {
      {"nccl_xml_rail8.xml", ""},
      {"smi_rail8.txt", ""},
      {"nccl_xml_shared_nic.xml", four_shared.c_str()},
      {"smi_shared_nic.txt", four_shared.c_str()},
      {"smi_old_driver.txt", four_shared.c_str()},
      {"nccl_xml_old_v100.xml", four_shared.c_str()},
      {"nccl_xml_nic_sys.xml", eight_sys.c_str()},
      {"smi_nic_sys.txt", eight_sys.c_str()},
      {"nccl_xml_gdr_off.xml", gdr_off.c_str()},
      {"nccl_xml_link_degraded.xml",
       "warning link_degraded GPU5 mlx5_5\nwarning link_degraded GPU2 mlx5_2\n"},
      {"nccl_xml_vm_no_nic.xml", "critical no_nic  \n"},
      {"nccl_graph_shared.log",
       "warning shared_nic GPU0,GPU1 mlx5_0\nwarning shared_nic GPU2,GPU3 mlx5_1\n"
       "warning gdr_off GPU2 mlx5_1\nwarning gdr_off GPU3 mlx5_1\n"},
      {"smi_vm_no_nic.txt", "critical no_nic  \n"},
      {"nccl_xml_vm_socket.xml",
       "warning shared_nic GPU0,GPU1,GPU2,GPU3 eth0\nwarning nic_far GPU0 eth0\n"
       "warning nic_far GPU1 eth0\nwarning nic_far GPU2 eth0\nwarning nic_far GPU3 eth0\n"
       "warning gdr_off GPU0 eth0\nwarning gdr_off GPU1 eth0\nwarning gdr_off GPU2 eth0\n"
       "warning gdr_off GPU3 eth0\n"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(Summary(CheckFixture(c.file)), c.expected) << c.file;
  }
}

TEST(RailCheck, MessagesNameGpuNicPathAndRates) {
  std::vector<TopologyFinding> sys = CheckFixture("nccl_xml_nic_sys.xml");
  ASSERT_FALSE(sys.empty());
  EXPECT_EQ(sys[0].message.rfind("GPU4 -> mlx5_4 is SYS", 0), 0u) << sys[0].message;
  std::vector<TopologyFinding> slow = CheckFixture("nccl_xml_link_degraded.xml");
  ASSERT_EQ(slow.size(), 2u);
  EXPECT_EQ(slow[0].message, "GPU5 PCIe link x8, peers x16");
  EXPECT_EQ(slow[1].message, "mlx5_2 port rate 200 Gb/s, peers 400 Gb/s");
  std::vector<TopologyFinding> gdr = CheckFixture("nccl_xml_gdr_off.xml");
  EXPECT_EQ(gdr[0].message.rfind("GPU0 -> mlx5_0: no GPUDirect RDMA (mlx5_0 gdr=0)", 0), 0u)
      << gdr[0].message;
}

NodeTopology Rails(int n);

// Issue 30: the shapes people paste, and PCIe bridges slower or narrower
// than the devices below them (link_degraded naming both of the link's ends).
TEST(RailCheck, VerdictsOnThePastedShapes) {
  std::string vm_uplinks;
  const char* vm[][3] = {{"GPU/44000", "NET/4"}, {"GPU/4a000", "NET/5"}, {"GPU/54000", "NET/6"},
                         {"GPU/59000", "NET/7"}, {"GPU/b4000", "NET/0"}, {"GPU/ba000", "NET/1"},
                         {"GPU/c4000", "NET/2"}, {"GPU/c9000", "NET/3"}};
  for (const auto& pair : vm) {
    vm_uplinks += std::string("warning link_degraded ") + pair[0] + " " + pair[1] + "\n";
  }
  const std::string four_shared =
      "warning shared_nic GPU0,GPU1 mlx5_0\nwarning shared_nic GPU2,GPU3 mlx5_1\n"
      "warning shared_nic GPU4,GPU5 mlx5_2\nwarning shared_nic GPU6,GPU7 mlx5_3\n";
  const struct {
    const char* file;
    std::string expected;
  } cases[] = {
      {"nccl_graph_print_vm.log", vm_uplinks},
      {"nccl_graph_print_old.log",
       "warning shared_nic GPU/1b000,GPU/3d000 mlx5_0\nwarning shared_nic GPU/88000,GPU/af000 "
       "mlx5_1\nwarning nic_far GPU/1b000 mlx5_0\nwarning nic_far GPU/3d000 mlx5_0\n"
       "warning nic_far GPU/88000 mlx5_1\nwarning nic_far GPU/af000 mlx5_1\n"
       "warning link_degraded GPU/88000,GPU/af000 mlx5_1\n"},
      {"rccl_graph_print.log",
       "warning shared_nic GPU/35000,GPU/3a000 NET/0\nwarning shared_nic GPU/b5000,GPU/ba000 "
       "NET/1\n"},
      {"smi_pasted_commented.txt", four_shared},
      {"smi_pasted_spaces.txt", four_shared},
      {"smi_pasted_mp.txt", four_shared},
      {"smi_2017_soc.txt",
       "warning shared_nic GPU0,GPU1,GPU2 mlx5_0\nwarning nic_far GPU2 mlx5_0\n"},
      {"nccl_xml_pci_only_rail.xml", ""},
      {"nccl_xml_pci_only_far_nic.xml",
       "critical nic_far GPU2 0101:00:00.0\ncritical nic_far GPU3 0101:00:00.0\n"
       "warning shared_nic GPU0,GPU1,GPU2,GPU3 0101:00:00.0\n"},
      {"nccl_xml_bridge_degraded.xml",
       "warning link_degraded GPU1 mlx5_1\nwarning link_degraded GPU6 mlx5_6\n"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(Summary(CheckFixture(c.file)), c.expected) << c.file;
  }
}

TEST(RailCheck, DegradedUplinkMessagesNameBothEnds) {
  std::vector<TopologyFinding> vm = CheckFixture("nccl_graph_print_vm.log");
  ASSERT_FALSE(vm.empty());
  EXPECT_EQ(vm[0].message,
            "PCIe link CPU0 <-> 0000:41:00.0 is 0.2 GB/s where the links below get 48 GB/s: it "
            "throttles GPU/44000, NET/4");
  std::vector<TopologyFinding> xml = CheckFixture("nccl_xml_bridge_degraded.xml");
  ASSERT_EQ(xml.size(), 2u);
  EXPECT_EQ(xml[0].message,
            "PCIe link CPU0 <-> 0000:27:00.0 is x1 where the links below are x16: it throttles "
            "GPU1, mlx5_1");
  EXPECT_EQ(xml[1].message,
            "PCIe link CPU1 <-> 0000:b7:00.0 is 2.5 GT/s where the links below run 32 GT/s: it "
            "throttles GPU6, mlx5_6");
}

TEST(RailCheck, AnUplinkAsFastAsItsDevicesOrAboveNoRailIsFine) {
  NodeTopology t = Rails(2);
  TopoUplink u;
  u.upper = "CPU0";
  u.lower = "0000:15:00.0";
  u.link_width = 16;
  u.below_width = 16;
  u.link_gts = 32.0;
  u.below_gts = 32.0;
  u.gpus = {"GPU0"};
  t.uplinks.push_back(u);
  TopoUplink storage = u;  // narrow, but only a NIC no GPU uses is below it
  storage.link_width = 4;
  storage.gpus.clear();
  storage.nics = {"mlx5_bond_0"};
  t.uplinks.push_back(storage);
  EXPECT_EQ(Summary(CheckRails(t)), "");
  t.uplinks[0].link_width = 8;
  EXPECT_EQ(Summary(CheckRails(t)), "warning link_degraded GPU0 \n");
}

TEST(RailCheck, OneGenerationSlowerUplinkIsADesignNotADegradedLink) {
  // AWS's p5.48xlarge NCCL_TOPO_FILE: switches at 16.0 GT/s above 32.0 GT/s
  // GPUs (a Gen4 root port, Gen5 devices) were 8 link_degraded warnings.
  NodeTopology t = Rails(1);
  TopoUplink u;
  u.upper = "CPU0";
  u.lower = "0000:00:00.0";
  u.link_width = 16;
  u.below_width = 16;
  u.link_gts = 16.0;
  u.below_gts = 32.0;
  u.gpus = {"GPU0"};
  t.uplinks.push_back(u);
  EXPECT_EQ(Summary(CheckRails(t)), "");
  t.uplinks[0].link_gts = 8.0;  // two generations down: trained low
  EXPECT_EQ(Summary(CheckRails(t)), "warning link_degraded GPU0 \n");
  t.uplinks[0].link_gts.reset();
  t.uplinks[0].bandwidth_gbs = 24.0;  // GRAPH print: PCI[24.0] over PCI[48.0]
  t.uplinks[0].below_bandwidth_gbs = 48.0;
  EXPECT_EQ(Summary(CheckRails(t)), "");
}

NodeTopology Rails(int n) {
  NodeTopology t;
  for (int i = 0; i < n; ++i) {
    TopoGpu g;
    g.name = "GPU" + std::to_string(i);
    g.nic = "mlx5_" + std::to_string(i);
    g.path = TopoPath::kPix;
    g.gdr = true;
    t.gpus.push_back(g);
    TopoNic nic;
    nic.name = g.nic;
    nic.gdr = true;
    nic.speed_mbps = 400000;
    t.nics.push_back(nic);
  }
  return t;
}

TEST(RailCheck, PhbAndNodeAreWarningsSysIsCritical) {
  NodeTopology t = Rails(4);
  t.gpus[1].path = TopoPath::kPhb;
  t.gpus[2].path = TopoPath::kNode;
  t.gpus[3].path = TopoPath::kSys;
  EXPECT_EQ(Summary(CheckRails(t)),
            "critical nic_far GPU3 mlx5_3\nwarning nic_far GPU1 mlx5_1\n"
            "warning nic_far GPU2 mlx5_2\n");
}

TEST(RailCheck, OnlyRailNicsAreComparedAndAMissingPathIsNoNic) {
  NodeTopology t = Rails(2);
  TopoNic storage;
  storage.name = "mlx5_bond_0";
  storage.speed_mbps = 100000;  // a slower storage NIC no GPU uses: not a rail
  t.nics.push_back(storage);
  t.gpus[1].nic.clear();
  t.gpus[1].path.reset();
  EXPECT_EQ(Summary(CheckRails(t)), "critical no_nic GPU1 \n");
}

TEST(RailCheck, UnknownRatesAndGdrSayNothing) {
  NodeTopology t = Rails(8);
  for (TopoNic& n : t.nics) {
    n.speed_mbps.reset();
    n.gdr.reset();
  }
  t.nics[3].speed_mbps = 100000;  // one value alone has no peers to compare with
  EXPECT_EQ(Summary(CheckRails(t)), "");
  EXPECT_TRUE(CheckRails(NodeTopology{}).empty());
}

TEST(RailCheck, VirtualNicsOfTheSocketNetAreNoPortRatePeers) {
  // NCCL's socket net lists docker bridges and veths in a bare <nic> (no
  // PCI device, speed 10000 by default): the host's one physical 25G NIC
  // was "port rate 25 Gb/s, peers ..." below them, or with a 1G NIC as in
  // the real dump, a link_degraded warning against virtual interfaces.
  std::vector<TopologyFinding> f = CheckFixture("nccl_xml_socket_virtual_nics.xml");
  for (const TopologyFinding& x : f) EXPECT_NE(x.kind, "link_degraded") << x.message;
  std::ifstream in(
      std::string(FABTRACK_FIXTURE_DIR) + "/topology/node/nccl_xml_socket_virtual_nics.xml",
      std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  std::string text = s.str();
  text.replace(text.find("speed=\"25000\""), 13, "speed=\"1000\" ");
  ParsedNodeTopology p = ParseNodeTopology(text, "one_gig.xml");
  for (const TopologyFinding& x : CheckRails(p.topology)) {
    EXPECT_NE(x.kind, "link_degraded") << x.message;
  }
}

}  // namespace
}  // namespace fabtrack
