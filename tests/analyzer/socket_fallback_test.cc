#include <gtest/gtest.h>

#include "tests/analyzer/input_builder.h"

namespace fabtrack::analyzer {
namespace {

using testing::InputBuilder;

std::vector<Finding> FindingsOf(InputBuilder& b) {
  return testing::DetectOnly("socket_fallback", b.Build());
}

// Two ranks per node on two nodes: ranks 0,1 on node01, 2,3 on node02.
void AddTwoNodeChannels(InputBuilder& b, const RunView& run, const std::string& rank3_family) {
  b.AddChannel(run, "node01", 0, "NET/IB", 0);
  b.AddChannel(run, "node01", 1, "NET/IB", 1);
  b.AddChannel(run, "node02", 2, "NET/IB", 0);
  b.AddChannel(run, "node02", 3, rank3_family, 1);
  b.AddChannel(run, "node01", 0, "P2P/IPC");
}

TEST(SocketFallback, PartialFallbackOfOneRankIsCritical) {
  InputBuilder b;
  RunView& run = b.AddRun(0, 2);
  run.ranks_per_node = 2;
  AddTwoNodeChannels(b, run, "NET/Socket");
  auto findings = FindingsOf(b);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].kind, "socket_fallback");
  EXPECT_EQ(findings[0].severity, Severity::kCritical);
  EXPECT_EQ(findings[0].host, "node02");
  EXPECT_EQ(findings[0].value, 1);
  EXPECT_NE(findings[0].message.find("partial"), std::string::npos);
  EXPECT_EQ(findings[0].evidence["socket_ranks_by_host"]["node02"][0], 3);
}

TEST(SocketFallback, AllIbIsClean) {
  InputBuilder b;
  RunView& run = b.AddRun(0, 2);
  AddTwoNodeChannels(b, run, "NET/IB");
  EXPECT_TRUE(FindingsOf(b).empty());
}

TEST(SocketFallback, SingleNodeSocketNetworkWithOnlyP2PIsNotAFallback) {
  InputBuilder b;
  RunView& run = b.AddRun(0, 1);
  run.network = "Socket";
  run.transports = {"P2P/IPC"};
  b.AddChannel(run, "node01", 0, "P2P/IPC");
  EXPECT_TRUE(FindingsOf(b).empty());
}

TEST(SocketFallback, SocketNetworkWithoutChannelLinesNeedsRdmaEvidence) {
  InputBuilder b;
  RunView& history = b.AddRun(0, 2);  // history used IB
  (void)history;
  RunView& run = b.AddRun(1, 2);
  run.network = "Socket";
  run.transports = {};
  b.JudgeFrom(1);
  auto findings = FindingsOf(b);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_NE(findings[0].message.find("used NET/IB"), std::string::npos);

  InputBuilder no_rdma;  // nothing says this cluster ever had RDMA
  RunView& lone = no_rdma.AddRun(0, 2);
  lone.network = "Socket";
  lone.transports = {};
  EXPECT_TRUE(FindingsOf(no_rdma).empty());
}

TEST(SocketFallback, EthernetOnlyClusterIsNeverFlagged) {
  InputBuilder b;
  b.input().cluster.fabric = "ethernet";
  RunView& run = b.AddRun(0, 2);
  AddTwoNodeChannels(b, run, "NET/Socket");
  EXPECT_TRUE(FindingsOf(b).empty());
}

TEST(SocketFallback, MpiBackendRunsAreNotNccl) {
  InputBuilder b;
  b.input().cluster.fabric = "infiniband";
  RunView& run = b.AddRun(0, 4);
  run.source = "fabtrack-allreduce";
  run.backend = "mpi";
  run.network = "Socket";
  EXPECT_TRUE(FindingsOf(b).empty());
}

TEST(SocketFallback, HistoryIsNotJudged) {
  InputBuilder b;
  RunView& old = b.AddRun(0, 2);
  AddTwoNodeChannels(b, old, "NET/Socket");
  RunView& tonight = b.AddRun(1, 2);
  AddTwoNodeChannels(b, tonight, "NET/IB");
  b.JudgeFrom(1);
  EXPECT_TRUE(FindingsOf(b).empty());
}

}  // namespace
}  // namespace fabtrack::analyzer
