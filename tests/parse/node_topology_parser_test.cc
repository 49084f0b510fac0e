// Readers of one node's GPU/NIC wiring, on fixtures in the image of real
// NCCL topology dumps and `nvidia-smi topo -m` matrices
// (tests/fixtures/topology/node/README.md).
#include "collector/parse/node_topology_parser.h"

#include <gtest/gtest.h>

#include "tests/parse/node_topology_fixtures.h"

namespace fabtrack {
namespace {

using topology_fixtures::Fixture;
using topology_fixtures::Pairs;
using topology_fixtures::Parse;

TEST(NcclTopoXml, RailOptimizedHgxPairsEachGpuWithItsOwnNic) {
  ParsedNodeTopology p = Parse("nccl_xml_rail8.xml");
  EXPECT_EQ(p.format, "nccl_xml");
  EXPECT_TRUE(p.errors.empty()) << p.errors.front();
  EXPECT_EQ(Pairs(p.topology),
            "GPU0>mlx5_0/PIX GPU1>mlx5_1/PIX GPU2>mlx5_2/PIX GPU3>mlx5_3/PIX GPU4>mlx5_4/PIX "
            "GPU5>mlx5_5/PIX GPU6>mlx5_6/PIX GPU7>mlx5_7/PIX");
  TopoGpu gpu3;
  gpu3.name = "GPU3";
  gpu3.bus_id = "0000:5d:00.0";
  gpu3.numa_node = 0;
  gpu3.rank = 3;
  gpu3.gdr = true;
  gpu3.link_gts = 32.0;
  gpu3.link_width = 16;
  gpu3.nic = "mlx5_3";
  gpu3.path = TopoPath::kPix;
  EXPECT_EQ(p.topology.gpus[3], gpu3);
  TopoNic nic7;
  nic7.name = "mlx5_7";
  nic7.bus_id = "0000:dc:00.0";
  nic7.numa_node = 1;
  nic7.speed_mbps = 400000;
  nic7.port = 1;
  nic7.gdr = true;
  nic7.link_gts = 32.0;
  nic7.link_width = 16;
  EXPECT_EQ(p.topology.nics[7], nic7);
}

TEST(NcclTopoXml, PathsFollowNcclsSwitchCount) {
  // Two GPUs per NIC under one switch: PIX; two PLX levels apart: PXB;
  // another socket's slot: SYS.
  EXPECT_EQ(Pairs(Parse("nccl_xml_shared_nic.xml").topology),
            "GPU0>mlx5_0/PIX GPU1>mlx5_0/PIX GPU2>mlx5_1/PIX GPU3>mlx5_1/PIX GPU4>mlx5_2/PIX "
            "GPU5>mlx5_2/PIX GPU6>mlx5_3/PIX GPU7>mlx5_3/PIX");
  EXPECT_EQ(Pairs(Parse("nccl_xml_old_v100.xml").topology),
            "GPU0>mlx5_0/PXB GPU1>mlx5_0/PXB GPU2>mlx5_1/PXB GPU3>mlx5_1/PXB GPU4>mlx5_2/PXB "
            "GPU5>mlx5_2/PXB GPU6>mlx5_3/PXB GPU7>mlx5_3/PXB");
  EXPECT_EQ(Pairs(Parse("nccl_xml_nic_sys.xml").topology),
            "GPU0>mlx5_0/PIX GPU1>mlx5_1/PIX GPU2>mlx5_2/PIX GPU3>mlx5_3/PIX GPU4>mlx5_4/SYS "
            "GPU5>mlx5_5/SYS GPU6>mlx5_6/SYS GPU7>mlx5_7/SYS");
  // A socket net with no PCI function hangs off the CPU.
  EXPECT_EQ(Pairs(Parse("nccl_xml_vm_socket.xml").topology),
            "GPU0>eth0/PHB GPU1>eth0/PHB GPU2>eth0/PHB GPU3>eth0/PHB");
}

TEST(NcclTopoXml, VmWithoutNicOrNumaOrLinkSpeed) {
  ParsedNodeTopology p = Parse("nccl_xml_vm_no_nic.xml");
  EXPECT_TRUE(p.errors.empty());
  ASSERT_EQ(p.topology.gpus.size(), 4u);
  EXPECT_TRUE(p.topology.nics.empty());
  EXPECT_EQ(p.topology.gpus[0].numa_node, std::nullopt);
  EXPECT_EQ(p.topology.gpus[0].link_gts, std::nullopt);
  EXPECT_EQ(p.topology.gpus[0].link_width, std::nullopt);
  EXPECT_EQ(p.topology.gpus[0].nic, "");
}

TEST(NcclTopoXml, TruncatedDumpIsAnErrorNamingFileAndLineAndKeepsWhatWasRead) {
  ParsedNodeTopology p = Parse("nccl_xml_truncated.xml");
  ASSERT_FALSE(p.errors.empty());
  EXPECT_EQ(p.errors[0].rfind("nccl_xml_truncated.xml:", 0), 0u) << p.errors[0];
  EXPECT_NE(p.errors[0].find("truncated"), std::string::npos) << p.errors[0];
  EXPECT_GE(p.topology.gpus.size(), 4u);
}

TEST(NcclTopoXml, MalformedInputsAreErrorsNotCrashes) {
  for (const char* text :
       {"<system version=\"1\"><cpu numaid=0></cpu></system>", "<system><gpu dev=\"x\"/></system>",
        "<system><cpu></pci></cpu></system>", "<system><!-- never closed", "<<<>>>",
        "<system><cpu numaid=\"0\"><pci busid=\"a\"><gpu dev=\"0\" gdr=\"1\"/></pci><nic><net "
        "name=\"mlx5_0\" speed=\"fast\"/></nic></cpu></system>"}) {
    ParsedNodeTopology p = ParseNcclTopoXml(text, "bad.xml");
    ASSERT_FALSE(p.errors.empty()) << text;
    EXPECT_EQ(p.errors[0].rfind("bad.xml:1: ", 0), 0u) << p.errors[0];
  }
}

TEST(SmiTopoMatrix, RailOptimizedWithNicLegendAndAnsiHeader) {
  ParsedNodeTopology p = Parse("smi_rail8.txt");
  EXPECT_EQ(p.format, "nvidia_smi_topo");
  EXPECT_TRUE(p.errors.empty()) << p.errors.front();
  EXPECT_EQ(Pairs(p.topology),
            "GPU0>mlx5_0/PIX GPU1>mlx5_1/PIX GPU2>mlx5_2/PIX GPU3>mlx5_3/PIX GPU4>mlx5_4/PIX "
            "GPU5>mlx5_5/PIX GPU6>mlx5_6/PIX GPU7>mlx5_7/PIX");
  ASSERT_EQ(p.topology.nics.size(), 9u);
  EXPECT_EQ(p.topology.nics[8].name, "mlx5_bond_0");
  EXPECT_EQ(p.topology.gpus[0].numa_node, 0);
  EXPECT_EQ(p.topology.gpus[7].numa_node, 1);
  // A matrix says nothing of bus ids, GDR or rates.
  EXPECT_EQ(p.topology.gpus[0].bus_id, "");
  EXPECT_EQ(p.topology.gpus[0].gdr, std::nullopt);
  EXPECT_EQ(p.topology.nics[0].speed_mbps, std::nullopt);
}

TEST(SmiTopoMatrix, SharedSysAndOldDriverColumns) {
  EXPECT_EQ(Pairs(Parse("smi_shared_nic.txt").topology),
            "GPU0>mlx5_0/PXB GPU1>mlx5_0/PXB GPU2>mlx5_1/PXB GPU3>mlx5_1/PXB GPU4>mlx5_2/PXB "
            "GPU5>mlx5_2/PXB GPU6>mlx5_3/PXB GPU7>mlx5_3/PXB");
  EXPECT_EQ(Pairs(Parse("smi_nic_sys.txt").topology),
            "GPU0>mlx5_0/PIX GPU1>mlx5_1/PIX GPU2>mlx5_2/PIX GPU3>mlx5_3/PIX GPU4>mlx5_4/SYS "
            "GPU5>mlx5_5/SYS GPU6>mlx5_6/SYS GPU7>mlx5_7/SYS");
  ParsedNodeTopology old = Parse("smi_old_driver.txt");
  EXPECT_TRUE(old.errors.empty()) << old.errors.front();
  EXPECT_EQ(Pairs(old.topology), Pairs(Parse("smi_shared_nic.txt").topology));
}

TEST(SmiTopoMatrix, VmWithoutNic) {
  ParsedNodeTopology p = Parse("smi_vm_no_nic.txt");
  EXPECT_TRUE(p.errors.empty()) << p.errors.front();
  EXPECT_EQ(Pairs(p.topology), "GPU0>-/- GPU1>-/-");
  EXPECT_EQ(p.topology.gpus[0].numa_node, std::nullopt);
}

TEST(SmiTopoMatrix, TruncatedMatrixNamesTheCutLineAndTheMissingRows) {
  ParsedNodeTopology p = Parse("smi_truncated.txt");
  ASSERT_FALSE(p.errors.empty());
  std::string all;
  for (const std::string& e : p.errors) all += e + "\n";
  EXPECT_NE(all.find("smi_truncated.txt:7: GPU5 has 5 of 17 cells"), std::string::npos) << all;
  EXPECT_NE(all.find("GPU6 has no row"), std::string::npos) << all;
  EXPECT_NE(all.find("NIC0 is not in the NIC Legend"), std::string::npos) << all;
  EXPECT_EQ(p.topology.gpus[4].nic, "NIC4");
}

TEST(SmiTopoMatrix, UnknownCellIsAnError) {
  ParsedNodeTopology p = ParseSmiTopoMatrix(
      "\tGPU0\tNIC0\tCPU Affinity\nGPU0\t X \tFAR\t0-7\nNIC0\tFAR\t X \n\nNIC Legend:\n\n  NIC0: "
      "mlx5_0\n",
      "m.txt");
  ASSERT_EQ(p.errors.size(), 1u);
  EXPECT_EQ(p.errors[0],
            "m.txt:2: GPU0 -> NIC0: 'FAR' is not a PCIe path (PIX, PXB, PHB, NODE, SYS, SOC)");
}

TEST(NcclGraphLines, FirstHostsPathsDeviceListAndGdr) {
  ParsedNodeTopology p = Parse("nccl_graph_shared.log");
  EXPECT_EQ(p.format, "nccl_graph");
  EXPECT_TRUE(p.errors.empty()) << p.errors.front();
  EXPECT_EQ(Pairs(p.topology), "GPU0>mlx5_0/PIX GPU1>mlx5_0/PIX GPU2>mlx5_1/PXB GPU3>mlx5_1/PXB");
  EXPECT_EQ(p.topology.gpus[2].bus_id, "0000:9a:00.0");
  EXPECT_EQ(p.topology.gpus[2].numa_node, 1);
  ASSERT_EQ(p.topology.nics.size(), 2u);
  EXPECT_EQ(p.topology.nics[1].gdr, false);
  EXPECT_EQ(p.topology.nics[0].gdr, std::nullopt);
  EXPECT_EQ(p.topology.nics[0].port, 1);
}

TEST(NcclGraphLines, SystemPrefixedIdsUnlistedNetsAndBadEntries) {
  // NCCL 2.19+ prefixes ids with the system ("GPU/0-1b000"); without a
  // "Using" line a NIC keeps NCCL's index.
  ParsedNodeTopology p = ParseNcclGraphLines(
      "h1:1:2 [0] NCCL INFO GPU/0-1b000 :GPU/0-1b000 (0/5000.000000/LOC) CPU/0-0 "
      "(1/24.000000/PHB) NET/0-0 (3/24.000000/PHB) NET/0-1 (5/10.000000/SYS)\n"
      "h1:1:2 [0] NCCL INFO GPU/0-3d000 :GPU/0-3d000 (0/5000.000000/LOC) NET/0-0 (2/24.0/PIX) "
      "NET/0-1 garbage\n",
      "g.log");
  EXPECT_EQ(Pairs(p.topology), "GPU/1b000>NET/0/PHB GPU/3d000>NET/0/PIX");
  ASSERT_EQ(p.errors.size(), 1u);
  EXPECT_EQ(p.errors[0], "g.log:2: cannot read path entry 'NET/0-1 garbage'");
  EXPECT_FALSE(ParseNcclGraphLines("h1:1:2 [0] NCCL INFO Init COMPLETE\n", "n.log").errors.empty());
}

TEST(Sniff, FormatsAndNeither) {
  EXPECT_EQ(SniffTopologyFormat(Fixture("nccl_xml_old_v100.xml")), "nccl_xml");
  EXPECT_EQ(SniffTopologyFormat(Fixture("smi_old_driver.txt")), "nvidia_smi_topo");
  EXPECT_EQ(SniffTopologyFormat(Fixture("nccl_graph_shared.log")), "nccl_graph");
  EXPECT_EQ(SniffTopologyFormat("# nccl-tests\n#  out-of-place\n"), "");
  EXPECT_EQ(SniffTopologyFormat("<?xml version=\"1.0\"?>\n<!-- dump -->\n<system version=\"2\">"),
            "nccl_xml");
  // Quoting the element is not being the dump.
  EXPECT_EQ(SniffTopologyFormat("NCCL writes <system version=\"1\"> first\n"), "");
  ParsedNodeTopology p = ParseNodeTopology("hello\n", "x.txt");
  ASSERT_EQ(p.errors.size(), 1u);
  EXPECT_EQ(p.errors[0].rfind("x.txt:1: neither", 0), 0u);
}

}  // namespace
}  // namespace fabtrack
