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

TEST(SocketFallback, SocketNetworkWithoutChannelLinesCitesRdmaEvidence) {
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
}

// A single-node run prints "Using network IB" while every channel is P2P:
// it says nothing about the fabric and is not cited as RDMA evidence. A
// multi-node run that selected IB (no channel lines) is.
TEST(SocketFallback, ASingleNodeRunOverP2POnlyIsNotRdmaEvidence) {
  InputBuilder b;
  RunView& single = b.AddRun(0, 1);
  single.network = "IB";
  single.transports = {"P2P/IPC"};
  RunView& run = b.AddRun(1, 2);
  run.network = "Socket";
  run.transports = {};
  b.JudgeFrom(1);
  auto findings = FindingsOf(b);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].message.find("RDMA expected"), std::string::npos) << findings[0].message;
  EXPECT_NE(findings[0].message.find("nothing says this cluster has RDMA"), std::string::npos)
      << findings[0].message;
  EXPECT_FALSE(findings[0].evidence.contains("rdma_evidence")) << findings[0].evidence.dump();

  RunView& multi = b.AddRun(0, 2, 60);  // selected IB, no channel lines kept
  multi.transports = {};
  const int64_t multi_id = multi.id;
  findings = FindingsOf(b);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_NE(findings[0].message.find("RDMA expected: run " + std::to_string(multi_id) + " "),
            std::string::npos)
      << findings[0].message;
}

// Issue 16: a cluster that has always run multi-node jobs over sockets was
// never told (socket_fallback needed earlier RDMA evidence). The first run
// is flagged, and the finding names the hosts.
TEST(SocketFallback, FirstMultiNodeSocketRunIsFlaggedWithoutHistory) {
  InputBuilder b;  // nothing says this cluster ever had RDMA
  RunView& lone = b.AddRun(0, 4);
  lone.network = "Socket";
  lone.transports = {};
  auto findings = FindingsOf(b);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].severity, Severity::kCritical);
  for (const char* host : {"node01", "node02", "node03", "node04"}) {
    EXPECT_NE(findings[0].message.find(host), std::string::npos) << findings[0].message;
  }
  EXPECT_NE(findings[0].message.find("transport = socket"), std::string::npos);

  InputBuilder channels;  // the same with channel lines: every rank on NET/Socket
  RunView& run = channels.AddRun(0, 2);
  run.ranks_per_node = 2;
  run.network = "Socket";
  for (int rank = 0; rank < 4; ++rank) {
    channels.AddChannel(run, rank < 2 ? "node01" : "node02", rank, "NET/Socket", 0, 2, false);
  }
  findings = FindingsOf(channels);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].severity, Severity::kCritical);
  EXPECT_NE(findings[0].message.find("node01, node02"), std::string::npos);
}

// A cluster built for sockets says so in its analyzer config: a note, not an alarm.
TEST(SocketFallback, DeclaredSocketTransportIsAnInfoNote) {
  InputBuilder b;
  RunView& run = b.AddRun(0, 2);
  AddTwoNodeChannels(b, run, "NET/Socket");
  AnalyzerConfig config = ParseAnalyzerConfig("[cluster]\ntransport = socket\n", "t.conf");
  auto findings = testing::DetectOnly("socket_fallback", b.Build(), config);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].severity, Severity::kInfo);
  EXPECT_NE(findings[0].message.find("declares transport = socket"), std::string::npos);
  EXPECT_THROW(ParseAnalyzerConfig("[cluster]\ntransport = carrier-pigeon\n", "t.conf"),
               ConfigError);
}

TEST(SocketFallback, EthernetOnlyClusterGetsANoteNotAnAlarm) {
  InputBuilder b;
  b.input().cluster.fabric = "ethernet";
  RunView& run = b.AddRun(0, 2);
  AddTwoNodeChannels(b, run, "NET/Socket");
  auto findings = FindingsOf(b);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].severity, Severity::kInfo);
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
