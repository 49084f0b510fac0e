#include "collector/harness/machine_placement.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace fabtrack::harness {
namespace {

const std::vector<int> kTwoCpus = {0, 1};

TEST(MachinePlacementTest, NamespacesOnOneMachineShareItsCpus) {
  // Four "nodes" (network namespaces) on one 2-CPU machine: one boot id.
  MachinePlacement p =
      PlaceOnMachines({"b1", "b1", "b1", "b1"}, {kTwoCpus, kTwoCpus, kTwoCpus, kTwoCpus});
  EXPECT_EQ(p.machines, 1);
  EXPECT_EQ(p.max_ranks_per_machine, 4);
  EXPECT_EQ(p.cpus_per_machine, 2);
  EXPECT_TRUE(p.Oversubscribed());
}

TEST(MachinePlacementTest, RanksBoundToACoreEachDoNotShareIt) {
  // mpirun's default binding: each rank sees only its own core.
  MachinePlacement p = PlaceOnMachines({"a", "a"}, {{0}, {1}});
  EXPECT_EQ(p.cpus_per_machine, 2);
  EXPECT_FALSE(p.Oversubscribed());
  // Two ranks bound to the same core do.
  EXPECT_TRUE(PlaceOnMachines({"a", "a"}, {{3}, {3}}).Oversubscribed());
}

TEST(MachinePlacementTest, OneRankPerCpuOnRealNodesIsNotOversubscribed) {
  std::vector<int> eight = {0, 1, 2, 3, 4, 5, 6, 7};
  MachinePlacement p = PlaceOnMachines({"a", "a", "b", "b"}, {eight, eight, eight, eight});
  EXPECT_EQ(p.machines, 2);
  EXPECT_EQ(p.max_ranks_per_machine, 2);
  EXPECT_EQ(p.cpus_per_machine, 8);
  EXPECT_FALSE(p.Oversubscribed());
}

TEST(MachinePlacementTest, TheMostCrowdedMachineCounts) {
  // Machine b: 3 ranks confined to CPUs 4 and 5 (a cpuset).
  MachinePlacement p =
      PlaceOnMachines({"a", "b", "b", "b", "c"}, {{0, 1, 2, 3}, {4, 5}, {4}, {5}, {0}});
  EXPECT_EQ(p.machines, 3);
  EXPECT_EQ(p.max_ranks_per_machine, 3);
  EXPECT_EQ(p.cpus_per_machine, 2);
  EXPECT_TRUE(p.Oversubscribed());
}

TEST(MachinePlacementTest, UnknownBootIdsAreNeverMerged) {
  MachinePlacement p = PlaceOnMachines({"", "", ""}, {{0}, {0}, {0}});
  EXPECT_EQ(p.machines, 3);
  EXPECT_FALSE(p.Oversubscribed());
}

TEST(MachinePlacementTest, CpuListsRoundTripAndSkipGarbage) {
  EXPECT_EQ(CpuListText({0, 1, 17}), "0,1,17");
  EXPECT_EQ(ParseCpuList("0,1,17"), (std::vector<int>{0, 1, 17}));
  EXPECT_EQ(ParseCpuList(""), std::vector<int>{});
  EXPECT_EQ(ParseCpuList("3,x,-1,,99999999999,4"), (std::vector<int>{3, 4}));
}

TEST(MachinePlacementTest, ReadsTheBootIdUnderAProcRoot) {
  std::filesystem::path root =
      std::filesystem::temp_directory_path() / ("fabtrack-proc-" + std::to_string(getpid()));
  std::filesystem::create_directories(root / "sys/kernel/random");
  std::ofstream(root / "sys/kernel/random/boot_id") << "5d1f0c3e-8a2b-4c1d-9e7f-0a1b2c3d4e5f\n";
  EXPECT_EQ(ReadBootId(root.string()), "5d1f0c3e-8a2b-4c1d-9e7f-0a1b2c3d4e5f");
  EXPECT_EQ(ReadBootId((root / "missing").string()), "");
  std::filesystem::remove_all(root);
  EXPECT_FALSE(ReadBootId().empty()) << "this Linux host has a boot id";
  EXPECT_FALSE(UsableCpus().empty());
}

}  // namespace
}  // namespace fabtrack::harness
