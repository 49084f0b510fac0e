// Issue 30, round three: topology files in shapes found on real public
// samples that the earlier fixtures did not cover (fixtures in the image of
// those samples, tests/fixtures/topology/node/README.md "Shapes from real
// samples"): GRAPH prints whose NICs have no NET below them, RCCL's DEV/
// nodes, matrices with shortened affinity labels or a rule under the
// header, matrices inside a source comment, PCI skeletons without classes.
#include <gtest/gtest.h>

#include <algorithm>

#include "collector/parse/node_topology_parser.h"
#include "tests/parse/node_topology_fixtures.h"

namespace fabtrack {
namespace {

using topology_fixtures::FirstError;
using topology_fixtures::Fixture;
using topology_fixtures::Pairs;
using topology_fixtures::Parse;

TEST(GraphPrintRealShapes, NicWithoutNetIsTheGpusNicByTheUsingListsName) {
  // A single-rank communicator (NCCL 2.19 in a container): the print has
  // "+ PCI[24.0] - NIC/3B000" with no NET below it. It was "GPU0 has no
  // known path to any NIC" (critical) for a GPU and NIC on one CPU.
  std::vector<ParsedNodeTopology> nodes =
      ParseNodeTopologies(Fixture("graph_nic_without_net.log"), "graph_nic_without_net.log");
  ASSERT_EQ(nodes.size(), 2u);
  for (const ParsedNodeTopology& p : nodes) {
    EXPECT_TRUE(p.errors.empty()) << FirstError(p);
    EXPECT_EQ(Pairs(p.topology), "GPU0>roce1/PHB") << p.host;
    ASSERT_EQ(p.topology.nics.size(), 1u);
    EXPECT_EQ(p.topology.nics[0].bus_id, "0000:3b:00.0");
    EXPECT_EQ(p.topology.nics[0].numa_node, 0);
  }
  EXPECT_EQ(nodes[0].host, "c7e2a91f04bd");
  EXPECT_EQ(nodes[1].host, "f03b5c6d8e12");
}

TEST(GraphPrintRealShapes, RcclDevNodesCarryTheGpuAndItsSocketNic) {
  // Newer RCCL: "+ PCI[24.0] - DEV/0-23000" with the GPU under it by a LOC
  // link, XGMI peers as DEV/.., the socket NIC as a bare "NIC/0-6000".
  ParsedNodeTopology p = ParseNodeTopology(Fixture("rccl_graph_dev_nodes.log"), "rccl.log");
  EXPECT_EQ(p.format, "nccl_graph");
  EXPECT_TRUE(p.errors.empty()) << FirstError(p);
  EXPECT_EQ(Pairs(p.topology), "GPU0>eno2/PHB GPU1>eno2/PHB");
  ASSERT_EQ(p.topology.gpus.size(), 2u);
  EXPECT_EQ(p.topology.gpus[1].bus_id, "0000:43:00.0");
  EXPECT_EQ(p.topology.gpus[1].numa_node, 0);
  // Each switch above a DEV is an uplink of that GPU.
  ASSERT_EQ(p.topology.uplinks.size(), 2u);
  EXPECT_EQ(p.topology.uplinks[0].gpus, std::vector<std::string>{"GPU0"});
}

TEST(GraphPrintRealShapes, DevIsTheGpusFunctionNotASwitchOnThePath) {
  // GPU and NIC under one switch are PIX, the DEV/ level not counted.
  const std::string text =
      "h1:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [RO]; OOB ib0:10.0.0.1<0>\n"
      "h1:1:2 [0] NCCL INFO === System : maxWidth 24.0 totalWidth 24.0 ===\n"
      "h1:1:2 [0] NCCL INFO CPU/0 (1/1/2)\n"
      "h1:1:2 [0] NCCL INFO + PCI[24.0] - PCI/0-20000 (10b5874710b58747)\n"
      "h1:1:2 [0] NCCL INFO               + PCI[24.0] - DEV/0-23000 (100266a1106b0101)\n"
      "h1:1:2 [0] NCCL INFO                             + LOC[5000.0] - GPU/0-23000\n"
      "h1:1:2 [0] NCCL INFO               + PCI[24.0] - NIC/0-24000\n"
      "h1:1:2 [0] NCCL INFO                             + NET[25.0] - NET/0-0 (0/1/25.0)\n"
      "h1:1:2 [0] NCCL INFO ==========================================\n";
  ParsedNodeTopology p = ParseNodeTopology(text, "dev.log");
  EXPECT_TRUE(p.errors.empty()) << FirstError(p);
  EXPECT_EQ(Pairs(p.topology), "GPU/23000>mlx5_0/PIX");
}

TEST(GraphPrintRealShapes, SeveralNicsWithoutNetAreNamedInBusOrder) {
  const std::string text =
      "h2:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [RO]; OOB "
      "ib0:10.0.0.2<0>\n"
      "h2:1:2 [0] NCCL INFO === System : maxBw 24.0 totalBw 24.0 ===\n"
      "h2:1:2 [0] NCCL INFO CPU/0 (1/2/-1)\n"
      "h2:1:2 [0] NCCL INFO + PCI[24.0] - NIC/C1000\n"
      "h2:1:2 [0] NCCL INFO + PCI[24.0] - GPU/C4000 (0)\n"
      "h2:1:2 [0] NCCL INFO + PCI[24.0] - NIC/41000\n"
      "h2:1:2 [0] NCCL INFO ==========================================\n";
  ParsedNodeTopology p = ParseNodeTopology(text, "two.log");
  EXPECT_TRUE(p.errors.empty()) << FirstError(p);
  ASSERT_EQ(p.topology.nics.size(), 2u);
  EXPECT_EQ(p.topology.nics[0].name, "mlx5_0");
  EXPECT_EQ(p.topology.nics[0].bus_id, "0000:41:00.0");
  EXPECT_EQ(p.topology.nics[1].name, "mlx5_1");
  EXPECT_EQ(p.topology.nics[1].bus_id, "0000:c1:00.0");
}

TEST(GraphPrintRealShapes, ThreePartIdsAreReadByTheirLastPart) {
  // Round seven: a rank-0 print quoted in public notes names its nodes with
  // two prefixes ("GPU/0-0-47000", "NIC/0-0-43000", "NET/0-0-0"). The GPU
  // was read as "0-47000" and the NIC dropped: "no NIC" (critical) for a
  // GPU and a NIC under one switch.
  const std::string text =
      "gx-07:881:881 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [RO]; OOB bond0:10.4.0.7<0>\n"
      "gx-07:881:881 [0] NCCL INFO === System : maxBw 240.0 totalBw 240.0 ===\n"
      "gx-07:881:881 [0] NCCL INFO CPU/0-0 (1/2/0)\n"
      "gx-07:881:881 [0] NCCL INFO + PCI[24.0] - PCI/0-0-18000\n"
      "gx-07:881:881 [0] NCCL INFO               + PCI[24.0] - GPU/0-0-1a000 (0)\n"
      "gx-07:881:881 [0] NCCL INFO                             + NVL[240.0] - NVS/0-0-0\n"
      "gx-07:881:881 [0] NCCL INFO               + PCI[24.0] - NIC/0-0-1c000\n"
      "gx-07:881:881 [0] NCCL INFO                             + NET[25.0] - NET/0-0-0 "
      "(0/5e1c/1/25.000000)\n"
      "gx-07:881:881 [0] NCCL INFO ==========================================\n";
  ParsedNodeTopology p = ParseNodeTopology(text, "three.log");
  EXPECT_TRUE(p.errors.empty()) << FirstError(p);
  EXPECT_EQ(Pairs(p.topology), "GPU/1a000>mlx5_0/PIX");
  ASSERT_EQ(p.topology.nics.size(), 1u);
  EXPECT_EQ(p.topology.nics[0].bus_id, "0000:1c:00.0");
  ASSERT_EQ(p.topology.gpus.size(), 1u);
  EXPECT_EQ(p.topology.gpus[0].bus_id, "0000:1a:00.0");
}

TEST(SmiMatrixRealShapes, RetypedHeaderWithShortLabelsAndARule) {
  // "CPU Affinity  NUMA  GPU NUMA" and a dashed rule under the header were
  // "unexpected column label" and "row '----' is not a column" errors; a
  // prose line before the matrix named a host "(`".
  ParsedNodeTopology p = Parse("smi_retyped_short_labels.txt");
  EXPECT_EQ(p.format, "nvidia_smi_topo");
  EXPECT_TRUE(p.errors.empty()) << FirstError(p);
  EXPECT_EQ(p.host, "");
  EXPECT_EQ(Pairs(p.topology), "GPU0>mlx5_0/PIX GPU1>mlx5_0/PIX GPU2>mlx5_1/PIX GPU3>mlx5_1/PIX");
  ASSERT_EQ(p.topology.gpus.size(), 4u);
  EXPECT_EQ(p.topology.gpus[3].numa_node, 0);
  ASSERT_EQ(p.topology.nics.size(), 3u);
  EXPECT_EQ(p.topology.nics[2].name, "mlx5_bond_0");
}

TEST(SmiMatrixRealShapes, MatrixInsideASourceComment) {
  // A matrix kept in a Javadoc/C block comment ("     * GPU0\t X ..."),
  // as scheduler code quotes the output it parses: was "neither ... nor".
  ParsedNodeTopology p = Parse("smi_in_source_comment.txt");
  EXPECT_EQ(p.format, "nvidia_smi_topo");
  EXPECT_TRUE(p.errors.empty()) << FirstError(p);
  EXPECT_EQ(Pairs(p.topology), "GPU0>mlx5_0/PHB GPU1>mlx5_0/PHB GPU2>mlx5_0/SYS GPU3>mlx5_0/SYS");
}

TEST(XmlRealShapes, SkeletonWithoutClassesIsNothingToCheck) {
  // AWS's g5.48xlarge NCCL_TOPO_FILE shape: bare <pci busid=".."/> under
  // each <cpu>. It read as "0 GPU(s), 0 NIC(s): OK, every GPU has its own
  // NIC"; now an error naming the <system> line (exit 3: not checked).
  ParsedNodeTopology p = ParseNodeTopology(Fixture("nccl_xml_pci_skeleton_no_class.xml"), "s.xml");
  EXPECT_EQ(p.format, "nccl_xml");
  EXPECT_TRUE(p.topology.gpus.empty());
  ASSERT_EQ(p.errors.size(), 1u);
  EXPECT_EQ(p.errors[0].substr(0, 28), "s.xml:6: no GPU and no NIC: ");
}

TEST(XmlRealShapes, ADumpCutAfterProseSaysWhatItReadAndWhereItStops) {
  // An issue's NCCL_TOPO_DUMP_FILE pasted after a sentence and a ```xml
  // fence, cut before </system>: it was "neither an NCCL topology dump
  // (<system>), ... nor NCCL GRAPH debug lines", nothing read.
  std::vector<ParsedNodeTopology> docs =
      ParseNodeTopologies(Fixture("xml_after_prose_cut.md"), "xml_after_prose_cut.md");
  ASSERT_EQ(docs.size(), 1u);
  const ParsedNodeTopology& p = docs[0];
  EXPECT_EQ(p.format, "nccl_xml");
  ASSERT_EQ(p.topology.gpus.size(), 1u);
  EXPECT_EQ(p.topology.gpus[0].bus_id, "0000:9c:00.0");
  ASSERT_FALSE(p.errors.empty());
  EXPECT_NE(p.errors[0].find("truncated"), std::string::npos) << p.errors[0];
  // Prose that names the element inline is still no dump.
  EXPECT_EQ(
      SniffTopologyFormat("Set NCCL_TOPO_FILE to a file starting with\n<system version=\"1\">\n"
                          "and nothing else.\n"),
      "");
}

TEST(GraphPrintRealShapes, PopulateNicsLinesNameTheNicsAndBridgesStayOut) {
  // RCCL with socket nets on a workstation: the print's NICs have no NET;
  // "ncclTopoPopulateNics : Filled enp7s0 ... pciPath=.../0000:07:00.0" says
  // which function is enp7s0, docker0 and the veth (pciPath=(null)) share
  // NCCL's virtual NIC/0-0. It was "no known path" for both GPUs and
  // 3 NICs.
  ParsedNodeTopology p = Parse("rccl_graph_socket_bridges.log");
  EXPECT_TRUE(p.errors.empty()) << FirstError(p);
  EXPECT_EQ(Pairs(p.topology), "GPU0>enp7s0/PHB GPU1>enp7s0/PIX");
  ASSERT_EQ(p.topology.nics.size(), 1u);
  EXPECT_EQ(p.topology.nics[0].bus_id, "0000:07:00.0");
}

TEST(GraphPrintRealShapes, SoftRoceOnNcclsVirtualNicHasNoBusId) {
  // Soft-RoCE (rxe0) hangs off NCCL's virtual "NIC/0" (PCI[5000.0]): it was
  // given bus id 0000:00:00.0, the host bridge's.
  const std::string text =
      "node0:47:63 [0] NCCL INFO NET/IB : Using [0]rxe0:1/RoCE [RO]; OOB eth0:172.30.0.25<0>\n"
      "node0:47:63 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'rxe0'\n"
      "node0:47:63 [0] NCCL INFO === System : maxBw 0.3 totalBw 12.0 ===\n"
      "node0:47:63 [0] NCCL INFO CPU/FFFFFFFFFFFFFFFF (1/1/1)\n"
      "node0:47:63 [0] NCCL INFO + PCI[5000.0] - NIC/0\n"
      "node0:47:63 [0] NCCL INFO                 + NET[0.3] - NET/0 (6216a3feff3e16f8/1/0.312500)\n"
      "node0:47:63 [0] NCCL INFO + PCI[12.0] - GPU/80 (0)\n"
      "node0:47:63 [0] NCCL INFO ==========================================\n";
  ParsedNodeTopology p = ParseNodeTopology(text, "rxe.log");
  EXPECT_TRUE(p.errors.empty()) << FirstError(p);
  EXPECT_EQ(Pairs(p.topology), "GPU/80>rxe0/PHB");
  ASSERT_EQ(p.topology.nics.size(), 1u);
  EXPECT_EQ(p.topology.nics[0].bus_id, "");
  EXPECT_EQ(p.topology.nics[0].speed_mbps, 2500);
  EXPECT_EQ(p.topology.nics[0].gdr, false);
}

TEST(GraphPrintRealShapes, GdrEnabledForGpuLinesSayTheGpuCan) {
  // "GPU Direct RDMA Enabled for GPU 81000 / HCA 1 (distance 6 <= 7)" (a
  // PCIe A100 with NCCL_NET_GDR_LEVEL=SYS): the GPU's gdr was left unknown.
  const std::string text =
      "n21:10:20 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_2:1/IB [RO]; OOB "
      "ib0:10.1.0.21<0>\n"
      "n21:10:20 [0] NCCL INFO GPU Direct RDMA Enabled for GPU 81000 / HCA 1 (distance 6 <= 7), "
      "read 0\n"
      "n21:10:20 [0] NCCL INFO === System : maxBw 24.0 totalBw 24.0 ===\n"
      "n21:10:20 [0] NCCL INFO CPU/1 (1/2/-1)\n"
      "n21:10:20 [0] NCCL INFO + PCI[24.0] - GPU/81000 (0)\n"
      "n21:10:20 [0] NCCL INFO + PCI[24.0] - NIC/D1000\n"
      "n21:10:20 [0] NCCL INFO               + NET[25.0] - NET/1 (7a852d0003f6ceb8/1/25.000000)\n"
      "n21:10:20 [0] NCCL INFO ==========================================\n";
  ParsedNodeTopology p = ParseNodeTopology(text, "gdr.log");
  EXPECT_TRUE(p.errors.empty()) << FirstError(p);
  ASSERT_EQ(p.topology.gpus.size(), 1u);
  EXPECT_EQ(p.topology.gpus[0].gdr, true);
  EXPECT_EQ(Pairs(p.topology), "GPU/81000>mlx5_2/PHB");
}

TEST(SmiMatrixRealShapes, TableScrapedWithEverySpaceLostIsOneUnreadableMatrix) {
  // A page scrape that lost every space ("GPU0XNV4SYSSYS0-150N/A"): its
  // rows were taken for a second header, a second node "dump2" with one
  // GPU and two NICs ("XNV4SYSSYS0-150", "N/A") that differed from the
  // first. Now one matrix: its four GPUs, no NIC, and each row an error.
  std::vector<ParsedNodeTopology> all =
      ParseNodeTopologies(Fixture("smi_scraped_no_spaces.txt"), "s.txt");
  ASSERT_EQ(all.size(), 1u);
  const ParsedNodeTopology& p = all.front();
  EXPECT_EQ(p.host, "");
  EXPECT_EQ(p.topology.gpus.size(), 4u);
  EXPECT_TRUE(p.topology.nics.empty());
  ASSERT_FALSE(p.errors.empty());
  EXPECT_EQ(p.errors[0], "s.txt:6: row 'GPU0XNV4SYSSYS0-150N/A' is not a column of the header");
}

TEST(SmiMatrixRealShapes, CodeBlockCaptionAboveTheMatrixNamesNoHost) {
  // A blog engine prints the code block's language ("TEXT") above the
  // fence: it was taken for the node's name.
  ParsedNodeTopology p = Parse("smi_blog_code_caption.txt");
  EXPECT_EQ(p.format, "nvidia_smi_topo");
  EXPECT_TRUE(p.errors.empty()) << FirstError(p);
  EXPECT_EQ(p.host, "");
  EXPECT_EQ(Pairs(p.topology), "GPU0>mlx5_0/PIX GPU1>mlx5_0/PIX GPU2>mlx5_1/PIX GPU3>mlx5_1/PIX");
}

TEST(SmiMatrixRealShapes, AShellsOwnPromptNamesNoHost) {
  // "sh-5.1# nvidia-smi topo -mp" in a container without a host name in its
  // prompt: the shell and its version were printed as the node's name.
  ParsedNodeTopology p = Parse("smi_shell_version_prompt.txt");
  EXPECT_EQ(p.format, "nvidia_smi_topo");
  EXPECT_TRUE(p.errors.empty()) << FirstError(p);
  EXPECT_EQ(p.host, "");
  EXPECT_EQ(Pairs(p.topology), "GPU0>mlx5_2/PIX GPU1>mlx5_5/PIX");
  for (const char* prompt : {"sh-5.1# ", "zsh-5.9% ", "bash-5.2$ "}) {
    std::string text = Fixture("smi_shell_version_prompt.txt");
    text.replace(text.find("bash-4.4$ "), 10, prompt);
    EXPECT_EQ(ParseNodeTopology(text, "pod.txt").host, "") << prompt;
  }
  // A host whose name merely starts like a shell keeps it.
  std::string text = Fixture("smi_shell_version_prompt.txt");
  text.replace(text.find("bash-4.4$ "), 10, "[root@sh-gpu07 ~]# ");
  EXPECT_EQ(ParseNodeTopology(text, "pod.txt").host, "sh-gpu07");
}

TEST(SmiMatrixRealShapes, ACodeFenceRightAfterTheRowsEndsTheMatrix) {
  // An issue's matrix pasted without its legend, the closing ``` on the line
  // after the last row: it was an error, "row '```' is not a column of the
  // header".
  ParsedNodeTopology p = Parse("smi_fence_right_after_rows.txt");
  EXPECT_EQ(p.format, "nvidia_smi_topo");
  EXPECT_TRUE(p.errors.empty()) << FirstError(p);
  EXPECT_EQ(Pairs(p.topology), "GPU0>mlx5_0/PIX GPU1>mlx5_0/PHB GPU2>mlx5_1/PIX GPU3>mlx5_1/PHB");
  std::string tilde = Fixture("smi_fence_right_after_rows.txt");
  tilde.replace(tilde.rfind("```"), 3, "~~~");
  EXPECT_TRUE(ParseNodeTopology(tilde, "tilde.txt").errors.empty());
}

TEST(SmiMatrixRealShapes, CellsRunTogetherWhereATabWasLost) {
  // A tab-separated paste that lost some tabs: "NIC2NIC3" in the header
  // and "PIXNODE" / "NODEPIX" in rows. The rows' cells shifted left by
  // one: GPU2 and GPU3 were paired by the wrong columns, with "not a PCIe
  // path" errors for the merged cell and the affinity.
  ParsedNodeTopology p = Parse("smi_tabs_lost_merged_cells.txt");
  EXPECT_EQ(p.format, "nvidia_smi_topo");
  EXPECT_TRUE(p.errors.empty()) << FirstError(p);
  EXPECT_EQ(Pairs(p.topology), "GPU0>mlx5_0/PIX GPU1>mlx5_1/PIX GPU2>mlx5_2/PIX GPU3>mlx5_3/PIX");
  ASSERT_EQ(p.topology.gpus.size(), 4u);
  EXPECT_EQ(p.topology.gpus[3].numa_node, 1);
}

TEST(SmiMatrixRealShapes, RocmSmiTablesAreNoNvidiaSmiMatrices) {
  // `rocm-smi --showtopo`'s weight, hops and link-type tables have the same
  // "GPU0  GPU1 ..." header: they were read as three nodes of four GPUs and
  // no NIC ("no_nic" critical x3). fabtrack does not read them: one error.
  std::vector<ParsedNodeTopology> all =
      ParseNodeTopologies(Fixture("rocm_smi_showtopo.txt"), "r.txt");
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].format, "");
  EXPECT_TRUE(all[0].topology.gpus.empty());
  ASSERT_EQ(all[0].errors.size(), 1u);
  EXPECT_NE(all[0].errors[0].find("`rocm-smi --showtopo` tables are not read"), std::string::npos)
      << all[0].errors[0];
}

TEST(SmiMatrixRealShapes, APeerAccessTableAfterTheMatrixIsNoSecondNode) {
  // A benchmark issue's details blocks: the matrix, then `nvidia-smi topo
  // -p2p rw` under the same kind of header ("GPU0 X CNS"). The peer-access
  // table was read as a second node "dump2" with two GPUs and no NIC, and
  // a host_differs warning for its unknown NUMA nodes.
  std::vector<ParsedNodeTopology> all =
      ParseNodeTopologies(Fixture("smi_then_p2p_matrix.md"), "bench.md");
  ASSERT_EQ(all.size(), 1u);
  const ParsedNodeTopology& p = all.front();
  EXPECT_EQ(p.format, "nvidia_smi_topo");
  EXPECT_TRUE(p.errors.empty()) << FirstError(p);
  EXPECT_EQ(p.host, "");
  ASSERT_EQ(p.topology.gpus.size(), 2u);
  EXPECT_EQ(p.topology.gpus[1].numa_node, 0);
  EXPECT_TRUE(p.topology.nics.empty());
  // The peer-access table alone is no topology.
  std::string text = Fixture("smi_then_p2p_matrix.md");
  text.erase(0, text.find("<details><summary>Peer"));
  std::vector<ParsedNodeTopology> p2p = ParseNodeTopologies(text, "p2p.md");
  ASSERT_EQ(p2p.size(), 1u);
  EXPECT_EQ(p2p[0].format, "");
  EXPECT_TRUE(p2p[0].topology.gpus.empty());
}

TEST(CutOffStartRealShapes, AnXmlExcerptStartingInsideTheTreeSaysSo) {
  // An issue's excerpt of a dump that starts at a GPU's <pci> (the <system>
  // and <cpu> above it left out): it was "neither an NCCL topology dump
  // (<system>) ... nor NCCL GRAPH debug lines", which it is.
  const std::string text =
      "```\n"
      "        <pci busid=\"0000:1a:00.0\" class=\"0x030200\" link_speed=\"16.0 GT/s PCIe\" "
      "link_width=\"16\">\n"
      "          <gpu dev=\"0\" sm=\"80\" rank=\"0\" gdr=\"1\"/>\n"
      "        </pci>\n"
      "      </pci>\n";
  std::vector<ParsedNodeTopology> all = ParseNodeTopologies(text, "cut.md");
  ASSERT_EQ(all.size(), 1u);
  EXPECT_TRUE(all[0].topology.gpus.empty());
  ASSERT_EQ(all[0].errors.size(), 1u);
  EXPECT_EQ(all[0].errors[0],
            "cut.md:2: part of an NCCL topology dump without its <system> start (the first "
            "element here is a <pci>): the start is cut off, nothing to check");
}

TEST(CutOffStartRealShapes, AGraphPrintExcerptWithoutItsSystemLineSaysSo) {
  // The tree of a GRAPH print from its middle (an issue quoting the NICs of
  // CPU/1): NCCL lines, but no "=== System" line to start a tree from.
  const std::string text =
      "h20-n04:3811:3902 [1] NCCL INFO + PCI[48.0] - PCI/A1000 (1000c0301000100b)\n"
      "h20-n04:3811:3902 [1] NCCL INFO               + PCI[48.0] - NIC/A3000\n"
      "h20-n04:3811:3902 [1] NCCL INFO                             + NET[50.0] - NET/6 "
      "(77aa1f0003bd70c4/1/50.000000)\n"
      "h20-n04:3811:3902 [1] NCCL INFO + SYS[10.0] - CPU/0\n";
  std::vector<ParsedNodeTopology> all = ParseNodeTopologies(text, "g.log");
  ASSERT_EQ(all.size(), 1u);
  ASSERT_EQ(all[0].errors.size(), 1u);
  EXPECT_EQ(all[0].errors[0],
            "g.log:1: part of an NCCL GRAPH print without its \"=== System : ...\" line: the "
            "start is cut off, nothing to check");
  // Prose and other logs keep the general message.
  std::vector<ParsedNodeTopology> prose =
      ParseNodeTopologies("n1:1:1 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n", "b.log");
  ASSERT_EQ(prose.size(), 1u);
  EXPECT_NE(prose[0].errors[0].find("neither an NCCL topology dump"), std::string::npos);
}

TEST(CutOffStartRealShapes, AGraphFileIsNoTopologyAndSaysSo) {
  // Round eight (real sample: a cloud image's setup script writing both
  // NCCL_TOPO_FILE and NCCL_GRAPH_FILE): the graph file, rings of
  // <gpu dev=..> elements, was "part of an NCCL topology dump without its
  // <system> start ... cut off", which it is not.
  const std::string text =
      "<graphs version=\"1\">\n"
      "  <graph id=\"0\" pattern=\"4\" crossnic=\"0\" nchannels=\"1\" speedintra=\"12\" "
      "speedinter=\"12\" latencyinter=\"0\" typeintra=\"NVL\" typeinter=\"PIX\" "
      "samechannels=\"0\">\n"
      "    <channel>\n"
      "      <gpu dev=\"0\"/>\n"
      "      <gpu dev=\"1\"/>\n"
      "    </channel>\n"
      "  </graph>\n"
      "</graphs>\n";
  std::vector<ParsedNodeTopology> all = ParseNodeTopologies(text, "graph.xml");
  ASSERT_EQ(all.size(), 1u);
  EXPECT_TRUE(all[0].topology.gpus.empty());
  ASSERT_EQ(all[0].errors.size(), 1u);
  EXPECT_EQ(all[0].errors[0],
            "graph.xml:1: an NCCL graph file (NCCL_GRAPH_DUMP_FILE: the rings and trees NCCL "
            "chose), not a topology: it names no PCI path or NIC, nothing to check (give the "
            "NCCL_TOPO_DUMP_FILE or the GRAPH debug print)");
}

TEST(XmlRealShapes, LogLinesAfterTheLastDumpAreNoPartOfIt) {
  // Round nine (real sample: an NCCL 2.30 bug report's two hosts' dumps,
  // unfenced, the second ending "</system>**", then the job's log): the
  // log's "ens16f1:10.153.235.11<0>" was read as a tag <0> never closed,
  // "file truncated?", exit 3 for two whole dumps.
  std::vector<ParsedNodeTopology> nodes =
      ParseNodeTopologies(Fixture("multi_host_xml_then_log.md"), "multi_host_xml_then_log.md");
  ASSERT_EQ(nodes.size(), 2u);
  for (const ParsedNodeTopology& p : nodes) {
    EXPECT_TRUE(p.errors.empty()) << FirstError(p);
    EXPECT_EQ(Pairs(p.topology), "GPU0>mlx5_0/PHB GPU1>mlx5_1/SYS") << p.host;
  }
  EXPECT_EQ(nodes[1].host, "topology_10.40.7.22.xml");
  // Inside the dump a "<" that opens no element still is an error.
  std::vector<ParsedNodeTopology> bad = ParseNodeTopologies(
      "<system version=\"1\">\n  <cpu numaid=\"0\">\n    <0>\n  </cpu>\n</system>\n", "bad.xml");
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_FALSE(bad[0].errors.empty());
}

TEST(SmiMatrixRealShapes, AMatrixQuotedInAReplyToAReplyReadsAsPosted) {
  // A mailing-list answer quoting a quoted matrix ("> > GPU0 ...") under its
  // own once-quoted words: "neither an NCCL topology dump ... nor ...".
  std::vector<ParsedNodeTopology> nodes =
      ParseNodeTopologies(Fixture("smi_mail_reply_quoted.txt"), "smi_mail_reply_quoted.txt");
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_TRUE(nodes[0].errors.empty()) << FirstError(nodes[0]);
  EXPECT_EQ(nodes[0].host, "hgx-q03");
  EXPECT_EQ(Pairs(nodes[0].topology),
            "GPU0>mlx5_0/PIX GPU1>mlx5_0/PIX GPU2>mlx5_1/PIX GPU3>mlx5_1/PIX");
}

TEST(SmiMatrixRealShapes, AByteOrderMarkBeforeTheHeaderIsNoPartOfIt) {
  // A matrix saved by a Windows editor: "\xEF\xBB\xBF\tGPU0\tGPU1 ..." was
  // "neither an NCCL topology dump ... nor ..." (the XML reader skipped it).
  const std::string text = Fixture("smi_rail8.txt");
  std::vector<ParsedNodeTopology> plain = ParseNodeTopologies(text, "m.txt");
  std::vector<ParsedNodeTopology> marked = ParseNodeTopologies("\xEF\xBB\xBF" + text, "m.txt");
  ASSERT_EQ(marked.size(), 1u);
  EXPECT_TRUE(marked[0].errors.empty()) << FirstError(marked[0]);
  EXPECT_EQ(Pairs(marked[0].topology), Pairs(plain[0].topology));
  EXPECT_EQ(marked[0].topology.gpus.size(), 8u);
}

TEST(SmiMatrixRealShapes, PdshPrefixedMatricesAreOneNodeEach) {
  // `pdsh -w gpu-n0[1-2] nvidia-smi topo -m`, each line after its node's
  // "gpu-n01: " and the two nodes' lines interleaved as they arrived (the
  // fleet shape of the real matrices of this round run through pdsh): it was
  // "neither an NCCL topology dump ... nor ...", exit 3.
  std::vector<ParsedNodeTopology> nodes =
      ParseNodeTopologies(Fixture("pdsh_smi_interleaved.txt"), "p.txt");
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].host, "gpu-n01");
  EXPECT_EQ(nodes[1].host, "gpu-n02");
  for (const ParsedNodeTopology& p : nodes) EXPECT_TRUE(p.errors.empty()) << FirstError(p);
  EXPECT_EQ(Pairs(nodes[0].topology),
            "GPU0>mlx5_0/PIX GPU1>mlx5_0/PIX GPU2>mlx5_1/PIX GPU3>mlx5_1/PIX");
  EXPECT_EQ(Pairs(nodes[1].topology),
            "GPU0>mlx5_0/PIX GPU1>mlx5_0/PIX GPU2>mlx5_1/NODE GPU3>mlx5_1/NODE");
  // A node's problem names the file's line, not its own text's: the line
  // its own text names, counted in the file.
  std::string text = Fixture("pdsh_smi_interleaved.txt");
  const size_t row = text.find("gpu-n02: GPU3\t");
  text.erase(row, text.find('\n', row) + 1 - row);
  std::string own;
  std::vector<int> numbers;
  int number = 0;
  for (size_t at = 0; at < text.size();) {
    const size_t end = text.find('\n', at);
    const std::string line = text.substr(at, end - at);
    ++number;
    if (line.starts_with("gpu-n02: ")) {
      own += line.substr(9) + "\n";
      numbers.push_back(number);
    }
    at = end + 1;
  }
  std::vector<ParsedNodeTopology> alone = ParseNodeTopologies(own, "p.txt");
  ASSERT_FALSE(alone[0].errors.empty());
  const int local = std::stoi(alone[0].errors[0].substr(6));
  nodes = ParseNodeTopologies(text, "p.txt");
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_TRUE(nodes[0].errors.empty());
  ASSERT_FALSE(nodes[1].errors.empty());
  EXPECT_NE(nodes[1].errors[0].find("GPU3 has no row"), std::string::npos) << nodes[1].errors[0];
  const std::string want = "p.txt:" + std::to_string(numbers[local - 1]) + ":";
  EXPECT_EQ(nodes[1].errors[0].substr(0, want.size()), want) << nodes[1].errors[0];
}

}  // namespace
}  // namespace fabtrack
