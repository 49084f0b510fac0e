// rdma_absent and the HCA-level lost GDR (issue 16), on NCCL's own lines
// (shapes of /work/shared/reference b04, b12, b27).
#include <gtest/gtest.h>

#include "tests/analyzer/input_builder.h"

namespace fabtrack::analyzer {
namespace {

using testing::DetectOnly;
using testing::InputBuilder;

TEST(RdmaAbsent, NoIbDeviceOnAMultiNodeSocketRunNamesTheHosts) {
  InputBuilder b;
  RunView& run = b.AddRun(0, 2);
  run.network = "Socket";
  run.transports = {"NET/Socket"};
  b.AddLogEvent(run, "info", 4, "node01", "NET/IB : No device found.");
  b.AddLogEvent(run, "info", 9, "node02", "NET/IB : No device found.");
  auto findings = DetectOnly("rdma_absent", b.Build());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].severity, Severity::kCritical);
  EXPECT_NE(findings[0].message.find("No device found"), std::string::npos);
  EXPECT_NE(findings[0].message.find("node01, node02"), std::string::npos);
  EXPECT_NE(findings[0].message.find("(line 4)"), std::string::npos);
}

TEST(RdmaAbsent, MissingLibibverbsAndPluginFailureBeforeSockets) {
  InputBuilder b;
  RunView& run = b.AddRun(0, 2);
  run.network = "Socket";
  b.AddLogEvent(run, "info", 2, "node01",
                "NET/Plugin : Plugin load (libnccl-net.so) returned 2 : libnccl-net.so: cannot "
                "open shared object file");
  b.AddLogEvent(run, "warn", 3, "node01", "Failed to open libibverbs.so[.1]");
  auto findings = DetectOnly("rdma_absent", b.Build());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].host, "node01");
  EXPECT_EQ(findings[0].evidence["causes"].size(), 2u);
}

TEST(RdmaAbsent, PluginFailureBeforeIbIsNotAbsence) {
  InputBuilder b;
  RunView& run = b.AddRun(0, 2);
  b.AddChannel(run, "node01", 0, "NET/IB", 0);
  b.AddLogEvent(run, "info", 2, "node01",
                "NET/Plugin : Plugin load (libnccl-net.so) returned 2 : libnccl-net.so: cannot "
                "open shared object file");
  EXPECT_TRUE(DetectOnly("rdma_absent", b.Build()).empty());
}

TEST(RdmaAbsent, SingleNodeAndDeclaredSocketClusters) {
  InputBuilder single;
  RunView& one = single.AddRun(0, 1);
  one.network = "Socket";
  single.AddLogEvent(one, "info", 4, "node01", "NET/IB : No device found.");
  EXPECT_TRUE(DetectOnly("rdma_absent", single.Build()).empty());

  InputBuilder b;
  RunView& run = b.AddRun(0, 2);
  run.network = "Socket";
  b.AddLogEvent(run, "info", 4, "node01", "NET/IB : No device found.");
  auto findings = DetectOnly("rdma_absent", b.Build(),
                             ParseAnalyzerConfig("[cluster]\ntransport = socket\n", "t"));
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].severity, Severity::kInfo);
}

TEST(GdrdmaDisabled, DisabledForHcaLineNamesHostHcaAndLine) {
  InputBuilder b;
  RunView& run = b.AddRun(0, 2);
  run.gdrdma.reset();
  b.AddLogEvent(run, "info", 31, "hostname1",
                "NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'");
  b.AddLogEvent(run, "info", 32, "hostname1",
                "NET/IB : GPU Direct RDMA Disabled for HCA 1 'mlx5_1'");
  // 2.28 prints it for the socket interface too: not a lost GDR.
  b.AddLogEvent(run, "info", 33, "hostname2",
                "NET/Socket : GPU Direct RDMA Disabled for HCA 0 'eth0'");
  auto findings = DetectOnly("gdrdma_disabled", b.Build());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].severity, Severity::kWarning);
  EXPECT_EQ(findings[0].host, "hostname1");
  EXPECT_EQ(findings[0].device, "mlx5_0");
  EXPECT_NE(findings[0].message.find("mlx5_0, mlx5_1"), std::string::npos);
  EXPECT_NE(findings[0].message.find("(line 31)"), std::string::npos);
}

// A rank-0 excerpt of a 16-rank RoCE job (the shape of NCCL issue #1537)
// shows one host: the lost GDR is still reported.
TEST(GdrdmaDisabled, OneHostExcerptOfAJobStillReportsTheLostHca) {
  InputBuilder b;
  RunView& run = b.AddRun(0, 1);
  run.gdrdma.reset();
  b.AddLogEvent(run, "info", 9, "hostname1",
                "NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'");
  auto findings = DetectOnly("gdrdma_disabled", b.Build());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].severity, Severity::kWarning);
  EXPECT_EQ(findings[0].device, "mlx5_0");
  // Without that line, a single-node run has nothing to say about GDR.
  InputBuilder quiet;
  quiet.AddRun(0, 1).gdrdma = false;
  EXPECT_TRUE(DetectOnly("gdrdma_disabled", quiet.Build()).empty());
}

TEST(GdrdmaDisabled, ChannelsWithGdrdmaOutweighTheLine) {
  InputBuilder b;
  RunView& run = b.AddRun(0, 2);
  b.AddChannel(run, "node01", 0, "NET/IB", 0, 4, true);
  b.AddChannel(run, "node02", 8, "NET/IB", 0, 4, true);
  b.AddLogEvent(run, "info", 31, "node01", "NET/IB : GPU Direct RDMA Disabled for HCA 1 'mlx5_1'");
  EXPECT_TRUE(DetectOnly("gdrdma_disabled", b.Build()).empty());
}

}  // namespace
}  // namespace fabtrack::analyzer
