// Issue 30: topology outputs in the shapes people post them, on fixtures in
// the image of real ones (tests/fixtures/topology/node/README.md, written by
// generate_pasted.py): NCCL's and RCCL's GRAPH system print, pasted
// nvidia-smi matrices, PCI-only NCCL_TOPO_FILEs, files holding two hosts.
#include <gtest/gtest.h>

#include "collector/parse/node_topology_parser.h"
#include "tests/parse/node_topology_fixtures.h"

namespace fabtrack {
namespace {

using topology_fixtures::FirstError;
using topology_fixtures::Fixture;
using topology_fixtures::Pairs;
using topology_fixtures::Parse;

// ---- (a) the GRAPH system print ----------------------------------------

TEST(GraphSystemPrint, TreeAloneGivesGpusNicsPathsAndTheSlowUplinks) {
  // Only the "=== System : maxBw" tree (no per-GPU path lines): it used to
  // be "neither an NCCL topology dump nor a matrix".
  ParsedNodeTopology p = Parse("nccl_graph_print_vm.log");
  EXPECT_EQ(p.format, "nccl_graph");
  EXPECT_TRUE(p.errors.empty()) << FirstError(p);
  EXPECT_EQ(p.host, "vm-h200-03");
  // GPUs in bus order (no Init START lines), each beside its own NIC.
  EXPECT_EQ(Pairs(p.topology),
            "GPU/44000>NET/4/PIX GPU/4a000>NET/5/PIX GPU/54000>NET/6/PIX GPU/59000>NET/7/PIX "
            "GPU/b4000>NET/0/PIX GPU/ba000>NET/1/PIX GPU/c4000>NET/2/PIX GPU/c9000>NET/3/PIX");
  ASSERT_EQ(p.topology.nics.size(), 8u);
  const TopoNic& net4 = p.topology.nics[4];
  EXPECT_EQ(net4.name, "NET/4");
  EXPECT_EQ(net4.bus_id, "0000:43:00.0");
  EXPECT_EQ(net4.numa_node, 0);
  EXPECT_EQ(net4.port, 1);
  EXPECT_EQ(net4.speed_mbps, 400000);  // 50 GB/s
  EXPECT_EQ(p.topology.gpus[4].rank, 4);
  EXPECT_EQ(p.topology.gpus[4].numa_node, 1);
  EXPECT_EQ(p.topology.gpus[4].bus_id, "0000:b4:00.0");
  // Every switch hangs off its CPU at 0.2 GB/s while its GPU and NIC get 48.
  ASSERT_EQ(p.topology.uplinks.size(), 8u);
  const TopoUplink& u = p.topology.uplinks[0];
  EXPECT_EQ(u.upper, "CPU0");
  EXPECT_EQ(u.lower, "0000:41:00.0");
  EXPECT_EQ(u.bandwidth_gbs, 0.2);
  EXPECT_EQ(u.below_bandwidth_gbs, 48.0);
  EXPECT_EQ(u.gpus, std::vector<std::string>{"GPU/44000"});
  EXPECT_EQ(u.nics, std::vector<std::string>{"NET/4"});
}

TEST(GraphSystemPrint, OlderNcclWordingAndTheUsingListsNames) {
  // NCCL before 2.12: "maxWidth .. totalWidth", ids without a system
  // prefix in upper-case hex, NET (asic/port/GB/s); NICs hang off the CPU.
  ParsedNodeTopology p = Parse("nccl_graph_print_old.log");
  EXPECT_EQ(p.format, "nccl_graph");
  EXPECT_TRUE(p.errors.empty()) << FirstError(p);
  EXPECT_EQ(Pairs(p.topology),
            "GPU/1b000>mlx5_0/PHB GPU/3d000>mlx5_0/PHB GPU/88000>mlx5_1/PHB GPU/af000>mlx5_1/PHB");
  ASSERT_EQ(p.topology.nics.size(), 2u);
  EXPECT_EQ(p.topology.nics[1].bus_id, "0000:d8:00.0");
  EXPECT_EQ(p.topology.nics[1].speed_mbps, 25000);
  EXPECT_EQ(p.topology.nics[1].numa_node, 1);
  EXPECT_TRUE(p.topology.uplinks.empty());  // no switches
}

TEST(GraphSystemPrint, RcclWordingWithXgmiPeersAndTwoSwitchLevels) {
  ParsedNodeTopology p = Parse("rccl_graph_print.log");
  EXPECT_EQ(p.format, "nccl_graph");
  EXPECT_TRUE(p.errors.empty()) << FirstError(p);
  // "+ XGMI[24.0] - GPU/3A000" under GPU/35000 names a peer, not a GPU there.
  ASSERT_EQ(p.topology.gpus.size(), 4u);
  EXPECT_EQ(Pairs(p.topology),
            "GPU/35000>NET/0/PXB GPU/3a000>NET/0/PXB GPU/b5000>NET/1/PXB GPU/ba000>NET/1/PXB");
  EXPECT_EQ(p.topology.gpus[1].rank, 1);
}

TEST(GraphSystemPrint, PathLinesStillDecideAndEveryHostIsANode) {
  // The issue-21 fixture: both hosts print the tree and path lines.
  std::vector<ParsedNodeTopology> hosts =
      ParseNodeTopologies(Fixture("nccl_graph_shared.log"), "g.log");
  ASSERT_EQ(hosts.size(), 2u);
  EXPECT_EQ(hosts[0].host, "gpu-a01");
  EXPECT_EQ(hosts[1].host, "gpu-a02");
  EXPECT_EQ(Pairs(hosts[1].topology),
            "GPU0>mlx5_0/PIX GPU1>mlx5_0/PIX GPU2>mlx5_1/PXB GPU3>mlx5_1/PXB");
}

TEST(GraphSystemPrint, NetIdsAreHexadecimal) {
  // NCCL prints node ids with %lx: the eleventh NIC is NET/a.
  ParsedNodeTopology p = ParseNcclGraphLines(
      "h1:1:2 [0] NCCL INFO NET/IB : Using [9]mlx5_9:1/IB [10]mlx5_10:1/IB [RO]; OOB eth0:1<0>\n"
      "h1:1:2 [0] NCCL INFO GPU/0-1b000 :GPU/0-1b000 (0/5000.0/LOC) NET/0-9 (5/24.0/SYS) "
      "NET/0-a (2/48.0/PIX)\n",
      "h.log");
  EXPECT_TRUE(p.errors.empty()) << FirstError(p);
  EXPECT_EQ(Pairs(p.topology), "GPU/1b000>mlx5_10/PIX");
}

// ---- (f) a cut-off print --------------------------------------------------

TEST(GraphSystemPrint, CutOffPrintKeepsWhatItReadAndNamesTheLine) {
  ParsedNodeTopology p = Parse("nccl_graph_print_cut.log");
  // The cut line itself, then the print it leaves unfinished.
  ASSERT_EQ(p.errors.size(), 2u);
  EXPECT_EQ(p.errors[0], "nccl_graph_print_cut.log:33: cannot read system print line '+ NVL['");
  EXPECT_EQ(p.errors[1],
            "nccl_graph_print_cut.log:33: the system print begun on line 4 is cut off before its "
            "closing ===== line (file truncated?)");
  EXPECT_EQ(Pairs(p.topology),
            "GPU/44000>NET/4/PIX GPU/4a000>NET/5/PIX GPU/54000>NET/6/PIX GPU/59000>NET/7/PIX "
            "GPU/b4000>NET/0/PIX");
}

// ---- (b) matrices as pasted ----------------------------------------------

TEST(PastedMatrix, CommentedSpacedAndPciOnlyReadAsTheCleanMatrix) {
  ParsedNodeTopology clean = Parse("smi_shared_nic.txt");
  ASSERT_TRUE(clean.errors.empty());
  for (const char* name :
       {"smi_pasted_commented.txt", "smi_pasted_spaces.txt", "smi_pasted_mp.txt"}) {
    ParsedNodeTopology p = Parse(name);
    EXPECT_EQ(p.format, "nvidia_smi_topo") << name;
    EXPECT_TRUE(p.errors.empty()) << name << ": " << FirstError(p);
    EXPECT_EQ(p.topology, clean.topology) << name << ": " << Pairs(p.topology);
  }
}

TEST(PastedMatrix, SocLegendAndRunTogetherHeaderReadAsTheClean2017Matrix) {
  ParsedNodeTopology clean = Parse("smi_2017_clean.txt");
  ASSERT_TRUE(clean.errors.empty()) << FirstError(clean);
  EXPECT_EQ(Pairs(clean.topology),
            "GPU0>mlx5_0/PIX GPU1>mlx5_0/PIX GPU2>mlx5_0/PHB GPU3>mlx5_1/PIX");
  ASSERT_EQ(clean.topology.nics.size(), 3u);
  EXPECT_EQ(clean.topology.nics[0].name, "mlx4_0");
  ParsedNodeTopology soc = Parse("smi_2017_soc.txt");
  EXPECT_EQ(soc.format, "nvidia_smi_topo");
  EXPECT_TRUE(soc.errors.empty()) << FirstError(soc);
  EXPECT_EQ(soc.topology, clean.topology) << Pairs(soc.topology);
}

TEST(PastedMatrix, HeaderWithEveryLabelRunTogether) {
  // Tabs lost from a whole header, as a pdsh/run_cmd paste shows it.
  const std::string text =
      "GPU0GPU1NIC0NIC1CPU AffinityNUMA AffinityGPU NUMA ID          \n"
      "GPU0     X     SYS    PHB    SYS    0-13,28-41    0        N/A\n"
      "GPU1    SYS     X     SYS    PHB    14-27,42-55    1        N/A\n"
      "NIC0    PHB    SYS     X     SYS\n"
      "NIC1    SYS    PHB    SYS     X \n"
      "\nNIC Legend:\n\n  NIC0: rocep4s0f0\n  NIC1: rocep137s0f0\n";
  ParsedNodeTopology p = ParseNodeTopology(text, "t.txt");
  EXPECT_TRUE(p.errors.empty()) << FirstError(p);
  EXPECT_EQ(Pairs(p.topology), "GPU0>rocep4s0f0/PHB GPU1>rocep137s0f0/PHB");
  EXPECT_EQ(p.topology.gpus[1].numa_node, 1);
}

// ---- (c) PCI-only topology files -------------------------------------------

TEST(PciOnlyXml, GpusAndNicsFromTheirClassCodes) {
  ParsedNodeTopology p = Parse("nccl_xml_pci_only_rail.xml");
  EXPECT_EQ(p.format, "nccl_xml");
  EXPECT_TRUE(p.errors.empty()) << FirstError(p);
  // GPUs in bus order; each pair of GPUs shares a bridge with two NICs.
  EXPECT_EQ(Pairs(p.topology),
            "GPU0>0101:00:00.0/PIX GPU1>0102:00:00.0/PIX GPU2>0103:00:00.0/PIX "
            "GPU3>0104:00:00.0/PIX GPU4>0105:00:00.0/PIX GPU5>0106:00:00.0/PIX "
            "GPU6>0107:00:00.0/PIX GPU7>0108:00:00.0/PIX");
  EXPECT_EQ(p.topology.gpus[6].bus_id, "000d:00:00.0");
  EXPECT_EQ(p.topology.gpus[6].numa_node, 3);
  EXPECT_EQ(p.topology.gpus[6].link_gts, 16.0);
  EXPECT_EQ(p.topology.nics[7].numa_node, 3);

  ParsedNodeTopology far = Parse("nccl_xml_pci_only_far_nic.xml");
  EXPECT_TRUE(far.errors.empty()) << FirstError(far);
  EXPECT_EQ(Pairs(far.topology),
            "GPU0>0101:00:00.0/PIX GPU1>0101:00:00.0/PIX GPU2>0101:00:00.0/SYS "
            "GPU3>0101:00:00.0/SYS");
}

TEST(PciOnlyXml, ANicWithoutBusIdIsAnErrorButStillANic) {
  ParsedNodeTopology p = ParseNodeTopology(
      "<system version=\"1\">\n"
      "  <cpu numaid=\"0\">\n"
      "    <pci busid=\"ffff:ff:01.0\" class=\"0x060400\">\n"
      "      <pci busid=\"0001:00:00.0\" class=\"0x030200\"/>\n"
      "      <pci bus=\"0101:00:00.0\" class=\"0x020700\"/>\n"
      "    </pci>\n  </cpu>\n</system>\n",
      "p.xml");
  ASSERT_EQ(p.errors.size(), 1u);
  EXPECT_EQ(p.errors[0], "p.xml:5: <pci class=\"0x020700\"> without busid");
  EXPECT_EQ(Pairs(p.topology), "GPU0>NIC#0/PIX");
}

TEST(PciOnlyXml, AFullDumpsGpuElementsAreNotCountedTwice) {
  ParsedNodeTopology p = Parse("nccl_xml_rail8.xml");
  EXPECT_EQ(p.topology.gpus.size(), 8u);
  EXPECT_EQ(p.topology.nics.size(), 8u);
}

// ---- (e) the PCIe tree's uplinks in the XML ---------------------------------

TEST(XmlUplinks, EachSwitchWithTheBestLinkBelowIt) {
  ParsedNodeTopology p = Parse("nccl_xml_bridge_degraded.xml");
  EXPECT_TRUE(p.errors.empty()) << FirstError(p);
  ASSERT_EQ(p.topology.uplinks.size(), 8u);
  const TopoUplink& x1 = p.topology.uplinks[1];
  EXPECT_EQ(x1.upper, "CPU0");
  EXPECT_EQ(x1.lower, "0000:27:00.0");
  EXPECT_EQ(x1.link_width, 1);
  EXPECT_EQ(x1.below_width, 16);
  EXPECT_EQ(x1.gpus, std::vector<std::string>{"GPU1"});
  EXPECT_EQ(x1.nics, std::vector<std::string>{"mlx5_1"});
  const TopoUplink& gen1 = p.topology.uplinks[6];
  EXPECT_EQ(gen1.lower, "0000:b7:00.0");
  EXPECT_EQ(gen1.link_gts, 2.5);
  EXPECT_EQ(gen1.below_gts, 32.0);
}

// ---- (d) several hosts in one file -----------------------------------------

TEST(SeveralHosts, TwoXmlDumpsAfterTheirHostNames) {
  std::vector<ParsedNodeTopology> hosts =
      ParseNodeTopologies(Fixture("multi_host_xml.txt"), "m.txt");
  ASSERT_EQ(hosts.size(), 2u);
  EXPECT_EQ(hosts[0].host, "hgx-b07");
  EXPECT_EQ(hosts[1].host, "hgx-b11");
  for (const ParsedNodeTopology& h : hosts) {
    EXPECT_EQ(h.format, "nccl_xml");
    EXPECT_TRUE(h.errors.empty()) << FirstError(h);
    EXPECT_EQ(h.topology.gpus.size(), 8u);
  }
  EXPECT_EQ(hosts[0].topology.nics[2].link_width, 16);
  EXPECT_EQ(hosts[1].topology.nics[2].link_width, 8);
  EXPECT_EQ(hosts[1].topology.nics[2].bus_id, "0000:3b:00.0");
}

TEST(SeveralHosts, TwoMatricesAfterPdshLinesKeepTheFilesLineNumbers) {
  const std::string text = Fixture("multi_host_smi.txt");
  std::vector<ParsedNodeTopology> hosts = ParseNodeTopologies(text, "m.txt");
  ASSERT_EQ(hosts.size(), 2u);
  EXPECT_EQ(hosts[0].host, "hgx-c01");
  EXPECT_EQ(hosts[1].host, "hgx-c02");
  EXPECT_TRUE(hosts[0].errors.empty()) << FirstError(hosts[0]);
  EXPECT_TRUE(hosts[1].errors.empty()) << FirstError(hosts[1]);
  EXPECT_EQ(hosts[0].topology.gpus[0].nic, "mlx5_0");
  EXPECT_EQ(hosts[1].topology.gpus[0].nic, "ibp24s0");
  // A cell broken in the second matrix is reported at its line in the file.
  std::string broken = text;
  const size_t second = broken.find("hgx-c02 nvidia-smi");
  const size_t row = broken.find("\nGPU3\t", second);
  ASSERT_NE(row, std::string::npos);
  const size_t pix = broken.find("PIX", row);  // GPU3 -> NIC3
  broken.replace(pix, 3, "FAR");
  int line = 1;
  for (size_t i = 0; i < row + 1; ++i) line += broken[i] == '\n';
  hosts = ParseNodeTopologies(broken, "m.txt");
  ASSERT_EQ(hosts.size(), 2u);
  ASSERT_EQ(hosts[1].errors.size(), 1u);
  EXPECT_EQ(hosts[1].errors[0].rfind("m.txt:" + std::to_string(line) + ": GPU3 -> NIC3", 0), 0u)
      << hosts[1].errors[0];
}

TEST(SeveralHosts, OneDumpIsOneNode) {
  EXPECT_EQ(ParseNodeTopologies(Fixture("nccl_xml_rail8.xml"), "x").size(), 1u);
  EXPECT_EQ(ParseNodeTopologies(Fixture("smi_rail8.txt"), "x").size(), 1u);
  EXPECT_EQ(ParseNodeTopologies("hello\n", "x").size(), 1u);
}

}  // namespace
}  // namespace fabtrack
