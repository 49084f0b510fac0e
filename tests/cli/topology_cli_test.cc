// `fabtrack topology check`: the real binary on the topology fixtures; no
// database.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/readiness/node_fixtures.h"
#include "tests/support/run_command.h"
#include "tests/support/test_database.h"

namespace fabtrack {
namespace {

using fabtrack::testing::CommandOutput;
using fabtrack::testing::TestDatabase;

std::string Node(const std::string& name) {
  return std::string(FABTRACK_FIXTURE_DIR) + "/topology/node/" + name;
}

CommandOutput Check(const std::string& args) {
  return fabtrack::testing::RunCommand(std::string(FABTRACK_CLI) + " topology check " + args);
}

TEST(TopologyCli, RailOptimizedNodesExitZeroInBothFormats) {
  CommandOutput r = Check(Node("nccl_xml_rail8.xml") + " " + Node("smi_rail8.txt"));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("nccl_xml_rail8.xml (nccl_xml): 8 GPU(s), 8 NIC(s): OK"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("GPU3 0000:5d:00.0 -> mlx5_3 PIX gdr"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("smi_rail8.txt (nvidia_smi_topo): 8 GPU(s), 9 NIC(s): OK"),
            std::string::npos)
      << r.out;
}

TEST(TopologyCli, JsonHasTheDocumentedFieldsPerFile) {
  CommandOutput r =
      Check(Node("nccl_xml_nic_sys.xml") + " " + Node("smi_shared_nic.txt") + " --format json");
  EXPECT_EQ(r.exit_code, 2) << r.err;  // a SYS path is critical
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["format"], "nccl_xml");
  EXPECT_EQ(j[0]["gpus"][4], (nlohmann::json{{"gpu", "GPU4"},
                                             {"bus_id", "0000:9a:00.0"},
                                             {"nic", "mlx5_4"},
                                             {"path", "SYS"},
                                             {"gdr", true},
                                             {"numa_node", 1},
                                             {"link_gts", 32.0},
                                             {"link_width", 16},
                                             {"gpu_gdr", true},
                                             {"rank", 4}}));
  EXPECT_EQ(j[0]["nics"][4]["name"], "mlx5_4");
  EXPECT_EQ(j[0]["nics"][4]["speed_mbps"], 400000);
  EXPECT_EQ(j[0]["nics"][4]["port"], 1);
  EXPECT_EQ(j[0]["nics"][4]["gdr"], true);
  EXPECT_EQ(j[0]["findings"][0],
            (nlohmann::json{{"kind", "nic_far"},
                            {"severity", "critical"},
                            {"gpu", "GPU4"},
                            {"nic", "mlx5_4"},
                            {"message",
                             "GPU4 -> mlx5_4 is SYS: across the CPU interconnect, no GPUDirect "
                             "RDMA"}}));
  EXPECT_EQ(j[1]["format"], "nvidia_smi_topo");
  EXPECT_EQ(j[1]["gpus"][1]["bus_id"], nullptr);
  EXPECT_EQ(j[1]["gpus"][1]["gdr"], nullptr);
  EXPECT_EQ(j[1]["findings"][0]["kind"], "shared_nic");
  EXPECT_EQ(j[1]["findings"][0]["severity"], "warning");
  EXPECT_EQ(j[1]["findings"][0]["gpu"], "GPU0,GPU1");
  EXPECT_EQ(j[1]["errors"], nlohmann::json::array());
}

TEST(TopologyCli, WarningsExitOne) {
  EXPECT_EQ(Check(Node("nccl_xml_gdr_off.xml")).exit_code, 1);
  EXPECT_EQ(Check(Node("smi_old_driver.txt")).exit_code, 1);
  EXPECT_EQ(Check(Node("nccl_xml_link_degraded.xml")).exit_code, 1);
  EXPECT_EQ(Check(Node("nccl_xml_rail8.xml") + " " + Node("nccl_xml_vm_no_nic.xml")).exit_code, 2);
}

TEST(TopologyCli, TruncatedUnreadableAndForeignFilesExitThreeNamingFileAndLine) {
  CommandOutput r = Check(Node("smi_truncated.txt"));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("smi_truncated.txt:7: GPU5 has"), std::string::npos) << r.err;
  r = Check(Node("nccl_xml_truncated.xml") + " --format json");
  EXPECT_EQ(r.exit_code, 3);
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_NE(j[0]["errors"][0].get<std::string>().find("nccl_xml_truncated.xml:"),
            std::string::npos);
  r = Check(Node("no_such_file.xml") + " " + Node("nccl_xml_rail8.xml"));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("cannot read"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("nccl_xml_rail8.xml (nccl_xml)"), std::string::npos) << r.out;
  r = Check(Node("README.md"));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("README.md:1: neither"), std::string::npos) << r.err;
  EXPECT_EQ(Check("--format yaml " + Node("smi_rail8.txt")).exit_code, 3);
}

// Issue 30: a file holding two hosts' dumps is checked per host, and what
// differs between them is the finding.
TEST(TopologyCli, TwoHostsInOneFileAreTwoVerdictsAndTheirDifference) {
  CommandOutput r = Check(Node("multi_host_xml.txt"));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("multi_host_xml.txt [hgx-b07] (nccl_xml): 8 GPU(s), 8 NIC(s): OK"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("multi_host_xml.txt [hgx-b11] (nccl_xml): 8 GPU(s), 8 NIC(s)\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("WARNING host_differs: hgx-b11: NIC at 0000:3b:00.0 PCIe width x8, "
                       "hgx-b07 x16"),
            std::string::npos)
      << r.out;
  // hgx-b11's own rail check sees the narrow NIC against its peers too.
  EXPECT_NE(r.out.find("WARNING link_degraded: mlx5_2 PCIe link x8, peers x16"), std::string::npos)
      << r.out;

  r = Check(Node("multi_host_smi.txt") + " --format json");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["host"], "hgx-c01");
  EXPECT_EQ(j[0]["findings"], nlohmann::json::array());
  EXPECT_EQ(j[1]["host"], "hgx-c02");
  EXPECT_EQ(j[1]["gpus"][0]["nic"], "ibp24s0");
  ASSERT_EQ(j[1]["findings"].size(), 4u);
  EXPECT_EQ(j[1]["findings"][2]["kind"], "host_differs");
  EXPECT_EQ(j[1]["findings"][2]["message"], "hgx-c02: NIC #0 is ibp24s0, hgx-c01 mlx5_0");

  // One node's file keeps "host": null, and ingest stores one node only.
  r = Check(Node("nccl_xml_rail8.xml") + " --format json");
  EXPECT_EQ(nlohmann::json::parse(r.out)[0]["host"], nullptr);
  r = fabtrack::testing::RunCommand(std::string(FABTRACK_CLI) + " topology ingest " +
                                    Node("multi_host_xml.txt") +
                                    " --host x --cluster c --db 'host=/nonexistent'");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("holds 2 nodes' dumps (hgx-b07, hgx-b11), none of them x"),
            std::string::npos)
      << r.err;
}

TEST(TopologyCli, PciOnlyTopologyFilesHaveGpusAndNics) {
  CommandOutput r = Check(Node("nccl_xml_pci_only_rail.xml"));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("nccl_xml_pci_only_rail.xml (nccl_xml): 8 GPU(s), 8 NIC(s): OK"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("GPU4 000b:00:00.0 -> 0105:00:00.0 PIX"), std::string::npos) << r.out;
  r = Check(Node("nccl_xml_pci_only_far_nic.xml"));
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.out.find("CRITICAL nic_far: GPU2 -> 0101:00:00.0 is SYS"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("WARNING shared_nic: GPU0, GPU1, GPU2, GPU3 share 0101:00:00.0"),
            std::string::npos)
      << r.out;
}

TEST(TopologyCli, GraphPrintAloneAndCutOff) {
  CommandOutput r = Check(Node("nccl_graph_print_vm.log"));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("nccl_graph_print_vm.log [vm-h200-03] (nccl_graph): 8 GPU(s), 8 NIC(s)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("WARNING link_degraded: PCIe link CPU0 <-> 0000:41:00.0 is 0.2 GB/s where "
                       "the links below get 48 GB/s"),
            std::string::npos)
      << r.out;
  // Cut off: what was read is printed, the exit is 3 and stderr names file:line.
  r = Check(Node("nccl_graph_print_cut.log"));
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("(nccl_graph): 5 GPU(s), 5 NIC(s)"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("nccl_graph_print_cut.log:33: the system print begun on line 4 is cut off"),
            std::string::npos)
      << r.err;
}

// A job's log or a post of several nodes: ingest stores the node --host
// names, here the one whose mlx5_2 runs at x8.
TEST(TopologyIngestCli, TheNodeNamedByHostFromAFileOfSeveral) {
  TestDatabase db;
  CommandOutput r = fabtrack::testing::RunCommand(
      std::string(FABTRACK_CLI) + " topology ingest " + Node("multi_host_xml.txt") +
      " --host hgx-b11 --cluster lab --db '" + db.conninfo() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("stored: hgx-b11 in lab (8 GPU(s), 8 NIC(s), nccl_xml)"), std::string::npos)
      << r.out;
  // A file cut short stores nothing, whichever node the cut is in.
  r = fabtrack::testing::RunCommand(
      std::string(FABTRACK_CLI) + " topology ingest " + Node("nccl_graph_print_cut.log") +
      " --host vm-h200-03 --cluster lab --db '" + db.conninfo() + "'");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
}

// A file that cannot be read is said once, on stderr, with the OS's reason;
// the other files are still checked.
TEST(TopologyCli, AnUnreadableFileIsReportedOnce) {
  CommandOutput r = Check("/nonexistent/topo.xml " + Node("nccl_xml_rail8.xml"));
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  const std::string both = r.out + r.err;
  size_t said = 0;
  for (size_t at = both.find("/nonexistent/topo.xml"); at != std::string::npos;
       at = both.find("/nonexistent/topo.xml", at + 1)) {
    ++said;
  }
  EXPECT_EQ(said, 1u) << r.out << r.err;
  EXPECT_NE(r.err.find("cannot read /nonexistent/topo.xml: No such file or directory"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("nccl_xml_rail8.xml (nccl_xml): 8 GPU(s)"), std::string::npos) << r.out;
}

// This node's PCIe tree (the fake /sys trees of `check node`) through the
// same model and rail check.
TEST(TopologyCli, SysfsTreeOfTheNode) {
  using fabtrack::testing::NodeFixtures;
  CommandOutput r = Check("--sysfs " + NodeFixtures::Sys("healthy") + " --format json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j[0]["format"], "sysfs");
  EXPECT_EQ(j[0]["gpus"].size(), 8u);
  EXPECT_EQ(j[0]["gpus"][2]["nic"], "mlx5_2");
  EXPECT_EQ(j[0]["gpus"][2]["path"], "PIX");
  r = Check("--sysfs " + NodeFixtures::Sys("gpu8_hca2"));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("WARNING shared_nic: GPU0, GPU1, GPU2, GPU3 share mlx5_0"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("WARNING nic_far: GPU2 -> mlx5_0 is NODE"), std::string::npos) << r.out;
  EXPECT_EQ(Check("").exit_code, 3);
}

// The PCIe links sysfs reports (current_link_* against max_link_*, and each
// switch's uplink against the links below it): a Gen5 board whose idle GPUs
// read 2.5 GT/s is clean; GPU2 trained x8, mlx5_1 at Gen4 in a Gen5 slot and
// GPU6's switch on a Gen1 uplink are each one link_degraded naming both ends.
TEST(TopologyCli, SysfsPcieLinksBelowTheirDevicesAndSwitchUplinks) {
  using fabtrack::testing::NodeFixtures;
  CommandOutput r = Check("--sysfs " + NodeFixtures::Sys("pcie_gen5") + " --format json");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j[0]["gpus"][0]["link_width"], 16);
  EXPECT_EQ(j[0]["gpus"][0]["link_gts"], 2.5);
  EXPECT_EQ(j[0]["nics"][0]["link_gts"], 32.0);
  EXPECT_TRUE(j[0]["findings"].empty()) << j[0]["findings"].dump();

  r = Check("--sysfs " + NodeFixtures::Sys("pcie_degraded") + " --format json");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  j = nlohmann::json::parse(r.out);
  std::vector<std::string> messages;
  for (const auto& f : j[0]["findings"]) {
    EXPECT_EQ(f["kind"], "link_degraded") << f.dump();
    messages.push_back(f["message"].get<std::string>());
  }
  ASSERT_EQ(messages.size(), 3u) << j[0]["findings"].dump(1);
  const std::string all = j[0]["findings"].dump();
  EXPECT_NE(all.find("GPU2 PCIe link x8, the device supports x16"), std::string::npos) << all;
  EXPECT_NE(all.find("mlx5_1 PCIe link 16 GT/s, the device supports 32 GT/s"), std::string::npos)
      << all;
  EXPECT_NE(all.find("2.5 GT/s where the links below run 32 GT/s: it throttles GPU6, mlx5_6"),
            std::string::npos)
      << all;
}

// A fleet of eight nodes stored in a real PostgreSQL: seven rail-optimized,
// node5 with its second socket's NICs in the first socket's slots.
TEST(TopologyIngestCli, FleetDiffNamesTheOddNodeAndOnlyIt) {
  TestDatabase db;
  CommandOutput r;
  for (int i = 1; i <= 8; ++i) {
    const std::string file = i == 5 ? "nccl_xml_nic_sys.xml" : "nccl_xml_rail8.xml";
    r = fabtrack::testing::RunCommand(std::string(FABTRACK_CLI) + " topology ingest " + Node(file) +
                                      " --host node" + std::to_string(i) + " --cluster lab --db '" +
                                      db.conninfo() + "'");
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }
  EXPECT_NE(r.out.find("stored: node8 in lab (8 GPU(s), 8 NIC(s), nccl_xml)"), std::string::npos)
      << r.out;
  // One node off the majority, whatever the number of its GPUs on another rail.
  EXPECT_NE(r.out.find("fleet: 8 node(s) of lab, 1 off the majority (4 findings)\n"),
            std::string::npos)
      << r.out;
  for (int g = 4; g < 8; ++g) {
    const std::string gpu = "GPU" + std::to_string(g), nic = "mlx5_" + std::to_string(g);
    EXPECT_NE(r.out.find("CRITICAL topology_odd_node: node5: " + gpu + " -> " + nic +
                         " is SYS, 7 other nodes PIX"),
              std::string::npos)
        << r.out;
  }
  for (int i : {1, 2, 3, 4, 6, 7, 8}) {
    EXPECT_EQ(r.out.find("node" + std::to_string(i) + ":"), std::string::npos) << r.out;
  }
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM node_topologies WHERE cluster = 'lab'"), "8");
  EXPECT_EQ(db.Scalar("SELECT topology->'gpus'->4->>'path' FROM node_topologies WHERE host = "
                      "'node5'"),
            "SYS");

  // The same wiring again adds nothing; a fixed node5 leaves no odd node.
  std::string db_flag = " --cluster lab --db '" + db.conninfo() + "'";
  r = fabtrack::testing::RunCommand(std::string(FABTRACK_CLI) + " topology ingest " +
                                    Node("nccl_xml_rail8.xml") + " --host node8" + db_flag);
  EXPECT_NE(r.out.find("unchanged: node8"), std::string::npos) << r.out;
  r = fabtrack::testing::RunCommand(std::string(FABTRACK_CLI) + " topology ingest " +
                                    Node("nccl_xml_rail8.xml") + " --host node5" + db_flag);
  EXPECT_NE(r.out.find("fleet: 8 node(s) of lab, 0 off the majority"), std::string::npos) << r.out;
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM node_topologies"), "9");
}

// A cluster whose only data is its nodes' wiring is analyzed: the fleet
// diff reaches the report as topology_odd_node (not "nothing to judge"),
// with or without --cluster.
TEST(TopologyIngestCli, AnalysisOfAClusterWithOnlyTopologiesJudgesTheWiring) {
  TestDatabase db;
  for (int i = 1; i <= 4; ++i) {
    const std::string file = i == 3 ? "nccl_xml_nic_sys.xml" : "nccl_xml_rail8.xml";
    CommandOutput r = fabtrack::testing::RunCommand(
        std::string(FABTRACK_CLI) + " topology ingest " + Node(file) + " --host node" +
        std::to_string(i) + " --cluster wired --db '" + db.conninfo() + "'");
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }
  for (const std::string cluster : {" --cluster wired", ""}) {
    CommandOutput r =
        fabtrack::testing::RunCommand(std::string(FABTRACK_CLI) + " analyze" + cluster +
                                      " --format json --db '" + db.conninfo() + "'");
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;  // node3's SYS paths are critical
    ASSERT_FALSE(r.out.empty()) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["judged_runs"], 0);
    EXPECT_EQ(j["judged_topologies"], 4);
    int odd = 0;
    for (const nlohmann::json& f : j["findings"]) {
      if (f["kind"] != "topology_odd_node") continue;
      ++odd;
      EXPECT_EQ(f["host"], "node3") << f.dump();
    }
    EXPECT_EQ(odd, 4) << r.out;
  }
  CommandOutput text = fabtrack::testing::RunCommand(std::string(FABTRACK_CLI) +
                                                     " analyze --cluster wired --no-store --db '" +
                                                     db.conninfo() + "'");
  EXPECT_EQ(text.exit_code, 2) << text.out << text.err;
  EXPECT_NE(text.out.find("0 run(s) and the wiring of 4 node(s) judged"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("topology_odd_node  node3 GPU4"), std::string::npos) << text.out;
}

TEST(TopologyIngestCli, AnIncompleteFileStoresNothing) {
  CommandOutput r = fabtrack::testing::RunCommand(
      std::string(FABTRACK_CLI) + " topology ingest " + Node("nccl_xml_truncated.xml") +
      " --host node1 --cluster lab --db 'host=/nonexistent dbname=x'");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("nccl_xml_truncated.xml:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nothing stored"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace fabtrack
