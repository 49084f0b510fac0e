// run_failure and ib_completion_error (issue 16): failed runs were "OK, exit
// 0". Shapes from public nccl-tests and NCCL reports (NVIDIA/nccl #214, #902).
#include <gtest/gtest.h>

#include "analyzer/analyze.h"
#include "analyzer/log_events.h"
#include "tests/analyzer/input_builder.h"

namespace fabtrack::analyzer {
namespace {

using testing::DetectOnly;
using testing::InputBuilder;

RunView& HealthyRun(InputBuilder& b, int night, int nodes = 2) {
  RunView& run = b.AddRun(night, nodes);
  for (int64_t size = 8; size <= (int64_t{1} << 20); size *= 8) b.AddResult(run, size, 30, 40);
  return run;
}

TEST(RunFailure, HealthyRunIsClean) {
  InputBuilder b;
  HealthyRun(b, 0);
  EXPECT_TRUE(DetectOnly("run_failure", b.Build()).empty());
  EXPECT_TRUE(DetectOnly("ib_completion_error", b.Build()).empty());
}

TEST(RunFailure, OutOfBoundsFailedIsCriticalAndTheAnalysisExitsTwo) {
  InputBuilder b;
  RunView& run = HealthyRun(b, 0);
  run.status = "failed";
  run.oob_ok = false;
  run.oob_count = 4;
  b.input().results.back().wrong = 2;
  auto findings = DetectOnly("run_failure", b.Build());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].severity, Severity::kCritical);
  EXPECT_NE(findings[0].message.find("Out of bounds values 4 FAILED"), std::string::npos);
  EXPECT_EQ(findings[0].evidence["wrong"][0]["wrong"], 2);
  EXPECT_EQ(ExitStatusOf(Analyze(b.Build(), AnalyzerConfig{})), 2);
}

TEST(RunFailure, WrongElementsWithoutTrailerAreCritical) {
  InputBuilder b;
  RunView& run = HealthyRun(b, 0);
  b.input().results.front().wrong = 17;
  (void)run;
  auto findings = DetectOnly("run_failure", b.Build());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].severity, Severity::kCritical);
  EXPECT_NE(findings[0].message.find("#wrong > 0 at 1 size(s)"), std::string::npos);
}

TEST(RunFailure, TestNcclFailureNamesTheHostAndLine) {
  InputBuilder b;
  RunView& run = HealthyRun(b, 0);
  run.status = "partial";
  b.AddLogEvent(run, "test", 57, "node02",
                "Test NCCL failure common.cu:1279 'remote process exited or there was a network "
                "error / '");
  auto findings = DetectOnly("run_failure", b.Build());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].severity, Severity::kCritical);
  EXPECT_EQ(findings[0].host, "node02");
  EXPECT_NE(findings[0].message.find("Test NCCL failure common.cu:1279"), std::string::npos);
  EXPECT_NE(findings[0].message.find("(line 57)"), std::string::npos);
  EXPECT_NE(findings[0].message.find("stopped before its last size"), std::string::npos);
  EXPECT_EQ(findings[0].evidence["test_failures"][0]["lines"][0], 57);
}

TEST(RunFailure, HeaderOnlyRunIsCritical) {
  InputBuilder b;
  RunView& run = b.AddRun(0, 2);
  run.status = "failed";
  auto findings = DetectOnly("run_failure", b.Build());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].severity, Severity::kCritical);
  EXPECT_NE(findings[0].message.find("header and no result row"), std::string::npos);
}

TEST(RunFailure, LogOnlyRunWithoutRowsIsNotHeaderOnly) {
  InputBuilder b;
  RunView& run = b.AddRun(0, 2);
  run.source = "nccl-log";
  EXPECT_TRUE(DetectOnly("run_failure", b.Build()).empty());
}

TEST(RunFailure, WarnLinesAreGroupedByKind) {
  InputBuilder b;
  RunView& run = HealthyRun(b, 0);
  b.AddLogEvent(run, "warn", 10, "node01", "Cuda failure 'out of memory'");
  b.AddLogEvent(run, "warn", 11, "node02", "Cuda failure 'out of memory'");
  b.AddLogEvent(run, "warn", 12, "node02", "Call to ibv_modify_qp failed with error Timeout");
  auto findings = DetectOnly("run_failure", b.Build());
  ASSERT_EQ(findings.size(), 1u);
  // The run completed with correct numbers: NCCL's warnings alone warn.
  EXPECT_EQ(findings[0].severity, Severity::kWarning);
  EXPECT_NE(findings[0].message.find("NCCL warned 3 time(s) (2 kind(s)"), std::string::npos);
  ASSERT_EQ(findings[0].evidence["nccl_warnings"].size(), 2u);
  EXPECT_EQ(findings[0].evidence["nccl_warnings"][1]["count"], 2);
  EXPECT_EQ(findings[0].evidence["nccl_warnings"][1]["lines"][1], 11);
}

TEST(IbCompletionError, RetryExceededIsDecodedWithPeerAndHca) {
  InputBuilder b;
  RunView& run = HealthyRun(b, 0);
  run.status = "partial";
  b.AddLogEvent(run, "warn", 120, "node01",
                "NET/IB : Got completion from peer 10.0.0.2<41234> with error 12, opcode 0, len "
                "0, vendor err 129 (Recv) localGid ::ffff:10.0.0.1 remoteGids::ffff:10.0.0.2 hca "
                "mlx5_3");
  b.AddLogEvent(run, "warn", 121, "node01",
                "NET/IB : Got completion from peer 10.0.0.2<41234> with status=12 opcode=0 len=0 "
                "vendor err 129 (Send) hca mlx5_3");
  auto findings = DetectOnly("ib_completion_error", b.Build());
  ASSERT_EQ(findings.size(), 1u);
  const Finding& f = findings[0];
  EXPECT_EQ(f.severity, Severity::kCritical);
  EXPECT_EQ(f.host, "node01");
  EXPECT_EQ(f.device, "mlx5_3");
  EXPECT_EQ(f.value, 2);
  EXPECT_NE(f.message.find("IBV_WC_RETRY_EXC_ERR: transport retry counter exceeded"),
            std::string::npos);
  EXPECT_NE(f.message.find("peer 10.0.0.2<41234>"), std::string::npos);
  EXPECT_NE(f.message.find("vendor err 129"), std::string::npos);
  EXPECT_NE(f.message.find("(line 120)"), std::string::npos);
  // The WARN line is the completion detector's: run_failure does not count it twice.
  auto failures = DetectOnly("run_failure", b.Build());
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_FALSE(failures[0].evidence.contains("nccl_warnings"));
}

TEST(IbCompletionError, OldShapeWithoutPeer) {
  InputBuilder b;
  RunView& run = HealthyRun(b, 0);
  b.AddLogEvent(run, "warn", 3, "",
                "NET/IB : Got completion with error 4, opcode 1, len 21938, vendor err 81");
  auto findings = DetectOnly("ib_completion_error", b.Build());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_FALSE(findings[0].host.has_value());
  EXPECT_NE(findings[0].message.find("IBV_WC_LOC_PROT_ERR"), std::string::npos);
}

TEST(LogEvents, WcStatusNames) {
  EXPECT_STREQ(WcStatusName(12), "IBV_WC_RETRY_EXC_ERR");
  EXPECT_STREQ(WcStatusName(13), "IBV_WC_RNR_RETRY_EXC_ERR");
  EXPECT_STREQ(WcStatusName(5), "IBV_WC_WR_FLUSH_ERR");
  EXPECT_STREQ(WcStatusName(4), "IBV_WC_LOC_PROT_ERR");
  EXPECT_STREQ(WcStatusName(10), "IBV_WC_REM_ACCESS_ERR");
  EXPECT_EQ(WcStatusName(99), nullptr);
  EXPECT_EQ(DescribeWcStatus(99), "status 99 (not an ibv_wc_status)");
}

}  // namespace
}  // namespace fabtrack::analyzer
