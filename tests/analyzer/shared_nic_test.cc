#include <gtest/gtest.h>

#include "tests/analyzer/input_builder.h"

namespace fabtrack::analyzer {
namespace {

using testing::DetectOnly;
using testing::InputBuilder;

// node01 has 4 GPUs and 4 NICs mlx5_0..3.
RunView& FourGpuRun(InputBuilder& b) {
  RunView& run = b.AddRun(0, 2);
  run.ranks_per_node = 4;
  for (int nic = 0; nic < 4; ++nic) {
    b.AddNetDevice(run, "node01", nic, "mlx5_" + std::to_string(nic));
    b.AddNetDevice(run, "node02", nic, "mlx5_" + std::to_string(nic));
  }
  return run;
}

TEST(SharedNic, RailOptimizedSpreadIsClean) {
  InputBuilder b;
  RunView& run = FourGpuRun(b);
  for (int rank = 0; rank < 4; ++rank) {
    b.AddChannel(run, "node01", rank, "NET/IB", rank, 4);
    b.AddChannel(run, "node01", rank, "NET/IB", (rank + 1) % 4, 1);  // a PXN side channel
    b.AddChannel(run, "node02", rank + 4, "NET/IB", rank, 4);
  }
  EXPECT_TRUE(DetectOnly("shared_nic", b.Build()).empty());
}

TEST(SharedNic, FourRanksOnOneNicOfFour) {
  InputBuilder b;
  RunView& run = FourGpuRun(b);
  for (int rank = 0; rank < 4; ++rank) {
    b.AddChannel(run, "node01", rank, "NET/IB", 0, 4);
    b.AddChannel(run, "node02", rank + 4, "NET/IB", rank, 4);
  }
  auto findings = DetectOnly("shared_nic", b.Build());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].host, "node01");
  EXPECT_EQ(findings[0].device, "mlx5_0");
  EXPECT_EQ(findings[0].value, 4);
  EXPECT_EQ(findings[0].baseline, 1);
  EXPECT_EQ(findings[0].evidence["ranks_by_nic"]["mlx5_0"].size(), 4u);
}

TEST(SharedNic, MoreRanksThanNicsIsNotSharingBeyondNeed) {
  InputBuilder b;
  RunView& run = b.AddRun(0, 2);
  b.AddNetDevice(run, "node01", 0, "mlx5_0");
  b.AddNetDevice(run, "node01", 1, "mlx5_1");
  for (int rank = 0; rank < 4; ++rank) b.AddChannel(run, "node01", rank, "NET/IB", rank % 2, 2);
  EXPECT_TRUE(DetectOnly("shared_nic", b.Build()).empty());
}

TEST(SharedNic, DeclaredNotRailOptimizedIsSkipped) {
  InputBuilder b;
  b.input().cluster.rail_optimized = false;
  RunView& run = FourGpuRun(b);
  for (int rank = 0; rank < 4; ++rank) b.AddChannel(run, "node01", rank, "NET/IB", 0, 4);
  EXPECT_TRUE(DetectOnly("shared_nic", b.Build()).empty());
}

}  // namespace
}  // namespace fabtrack::analyzer
