// The PCIe tree of the fake hosts: GPUs and HCAs found through the same
// symlinks as on a real /sys, and the GPU-to-NIC distances NCCL would see.
#include "collector/readiness/pci_topology.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "tests/readiness/node_fixtures.h"

namespace fabtrack {
namespace {

using fabtrack::testing::NodeFixtures;

PciFunction Fn(std::vector<std::string> chain, std::optional<int> numa = 0) {
  PciFunction f;
  f.bdf = chain.back();
  f.chain = std::move(chain);
  f.numa_node = numa;
  return f;
}

TEST(PciTopologyTest, FindsTheEightGpusButNotNvSwitchesOrOtherDevices) {
  PciTopology t = ReadPciTopology(NodeFixtures::Sys("healthy"));
  EXPECT_TRUE(t.problems.empty()) << ::testing::PrintToString(t.problems);
  std::vector<std::string> bdfs;
  for (const PciFunction& g : t.gpus) bdfs.push_back(g.bdf);
  EXPECT_EQ(bdfs, (std::vector<std::string>{"0000:1a:00.0", "0000:1e:00.0", "0000:3c:00.0",
                                            "0000:40:00.0", "0000:9c:00.0", "0000:a0:00.0",
                                            "0000:be:00.0", "0000:c2:00.0"}));
  const PciFunction& g0 = t.gpus.front();
  EXPECT_EQ(g0.vendor, "0x10de");
  EXPECT_EQ(g0.device_class, "0x030200");
  EXPECT_EQ(g0.numa_node, 0);
  EXPECT_EQ(g0.chain,
            (std::vector<std::string>{"pci0000:15", "0000:15:01.0", "0000:16:00.0", "0000:17:00.0",
                                      "0000:18:00.0", "0000:19:00.0", "0000:1a:00.0"}));
  EXPECT_EQ(t.gpus.back().numa_node, 1);
}

TEST(PciTopologyTest, ResolvesEachHcaToItsPciFunction) {
  PciTopology t = ReadPciTopology(NodeFixtures::Sys("healthy"));
  ASSERT_EQ(t.hcas.size(), 8u);
  EXPECT_EQ(t.hcas[0].name, "mlx5_0");
  EXPECT_EQ(t.hcas[0].pci.bdf, "0000:1b:00.0");
  EXPECT_EQ(t.hcas[0].pci.vendor, "0x15b3");
  EXPECT_EQ(t.hcas[7].name, "mlx5_7");
  EXPECT_EQ(t.hcas[7].pci.numa_node, 1);
}

TEST(PciTopologyTest, NoInfinibandClassMeansNoHcas) {
  PciTopology t = ReadPciTopology(NodeFixtures::Sys("no_hca"));
  EXPECT_EQ(t.gpus.size(), 8u);
  EXPECT_TRUE(t.hcas.empty());
  EXPECT_TRUE(t.problems.empty());
}

TEST(PciTopologyTest, DanglingLinksAreProblemsNotCrashes) {
  namespace fs = std::filesystem;
  fs::path root = fs::path(::testing::TempDir()) / "fabtrack_dangling";
  fs::remove_all(root);
  fs::create_directories(root / "bus/pci/devices");
  fs::create_directories(root / "class/infiniband/rxe0");
  fs::create_directory_symlink("../../../devices/pci0000:00/0000:00:02.0",
                               root / "bus/pci/devices/0000:00:02.0");
  PciTopology t = ReadPciTopology(root.string());
  EXPECT_TRUE(t.gpus.empty());
  EXPECT_TRUE(t.hcas.empty());
  ASSERT_EQ(t.problems.size(), 2u);
  EXPECT_NE(t.problems[0].find("0000:00:02.0: dangling link"), std::string::npos);
  EXPECT_NE(t.problems[1].find("rxe0/device: no PCI function"), std::string::npos);
  fs::remove_all(root);
}

TEST(PciTopologyTest, ClassifiesPathsLikeNvidiaSmiTopo) {
  PciFunction gpu = Fn({"pci0000:15", "0000:15:01.0", "0000:16:00.0", "0000:17:00.0",
                        "0000:18:00.0", "0000:19:00.0", "0000:1a:00.0"});
  PciFunction same_switch = Fn({"pci0000:15", "0000:15:01.0", "0000:16:00.0", "0000:17:00.0",
                                "0000:18:00.0", "0000:19:01.0", "0000:1b:00.0"});
  PciFunction top_switch = Fn({"pci0000:15", "0000:15:01.0", "0000:16:00.0", "0000:17:01.0",
                               "0000:1c:00.0", "0000:1d:01.0", "0000:1f:00.0"});
  PciFunction other_port = Fn({"pci0000:15", "0000:15:02.0", "0000:20:00.0"});
  PciFunction other_root_same_numa = Fn({"pci0000:37", "0000:37:01.0", "0000:38:00.0"}, 0);
  PciFunction other_numa = Fn({"pci0000:97", "0000:97:01.0", "0000:98:00.0"}, 1);
  EXPECT_EQ(ClassifyPath(gpu, same_switch), PciPath::kPix);
  EXPECT_EQ(ClassifyPath(gpu, top_switch), PciPath::kPxb);
  EXPECT_EQ(ClassifyPath(gpu, other_port), PciPath::kPhb);
  EXPECT_EQ(ClassifyPath(gpu, other_root_same_numa), PciPath::kNode);
  EXPECT_EQ(ClassifyPath(gpu, other_numa), PciPath::kSys);
  EXPECT_EQ(ClassifyPath(gpu, Fn({"pci0000:37", "0000:37:01.0"}, std::nullopt)), PciPath::kSys);
  EXPECT_STREQ(PciPathName(PciPath::kNode), "NODE");
}

TEST(PciTopologyTest, VgaAndThreeDControllersAreGpus) {
  PciFunction f;
  f.vendor = "0x10de";
  f.device_class = "0x030000";
  EXPECT_TRUE(IsNvidiaGpu(f));
  f.device_class = "0x030200";
  EXPECT_TRUE(IsNvidiaGpu(f));
  f.device_class = "0x068000";  // NVSwitch
  EXPECT_FALSE(IsNvidiaGpu(f));
  f.device_class = "0x040300";  // HDMI audio of a GPU
  EXPECT_FALSE(IsNvidiaGpu(f));
  f.vendor = "0x1002";
  f.device_class = "0x030200";
  EXPECT_FALSE(IsNvidiaGpu(f));
}

TEST(PciTopologyTest, PairsEachGpuWithTheNicUnderItsSwitch) {
  PciTopology t = ReadPciTopology(NodeFixtures::Sys("healthy"));
  std::vector<GpuNicPair> pairs = PairGpusWithNics(t.gpus, t.hcas);
  ASSERT_EQ(pairs.size(), 8u);
  for (size_t i = 0; i < pairs.size(); ++i) {
    EXPECT_EQ(pairs[i].nic, "mlx5_" + std::to_string(i)) << pairs[i].gpu;
    EXPECT_EQ(pairs[i].path, PciPath::kPix) << pairs[i].gpu;
  }
}

TEST(PciTopologyTest, TwoNicsForEightGpusFallBackToTheNumaNode) {
  PciTopology t = ReadPciTopology(NodeFixtures::Sys("gpu8_hca2"));
  std::vector<GpuNicPair> pairs = PairGpusWithNics(t.gpus, t.hcas);
  ASSERT_EQ(pairs.size(), 8u);
  EXPECT_EQ(pairs[0], (GpuNicPair{"0000:1a:00.0", 0, "mlx5_0", PciPath::kPix}));
  EXPECT_EQ(pairs[1], (GpuNicPair{"0000:1e:00.0", 0, "mlx5_0", PciPath::kPxb}));
  EXPECT_EQ(pairs[2], (GpuNicPair{"0000:3c:00.0", 0, "mlx5_0", PciPath::kNode}));
  EXPECT_EQ(pairs[3], (GpuNicPair{"0000:40:00.0", 0, "mlx5_0", PciPath::kNode}));
  EXPECT_EQ(pairs[4], (GpuNicPair{"0000:9c:00.0", 1, "mlx5_1", PciPath::kPix}));
  EXPECT_EQ(pairs[7], (GpuNicPair{"0000:c2:00.0", 1, "mlx5_1", PciPath::kNode}));
}

TEST(PciTopologyTest, TheSameNodeInTheSharedTopologyModel) {
  NodeTopology t = ToNodeTopology(ReadPciTopology(NodeFixtures::Sys("gpu8_hca2")));
  ASSERT_EQ(t.gpus.size(), 8u);
  ASSERT_EQ(t.nics.size(), 2u);
  TopoGpu gpu1;
  gpu1.name = "GPU1";
  gpu1.bus_id = "0000:1e:00.0";
  gpu1.numa_node = 0;
  gpu1.nic = "mlx5_0";
  gpu1.path = TopoPath::kPxb;
  EXPECT_EQ(t.gpus[1], gpu1);
  EXPECT_EQ(t.gpus[7].nic, "mlx5_1");
  EXPECT_EQ(t.gpus[7].path, TopoPath::kNode);
  EXPECT_EQ(t.nics[1].name, "mlx5_1");
  EXPECT_EQ(t.nics[1].numa_node, 1);
  EXPECT_EQ(t.nics[1].speed_mbps, std::nullopt);
}

TEST(PciTopologyTest, NoNicLeavesTheGpuUnpaired) {
  std::vector<GpuNicPair> pairs = PairGpusWithNics({Fn({"pci0000:15", "0000:15:01.0"})}, {});
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0].nic, "");
}

}  // namespace
}  // namespace fabtrack
