// ras_job: a job `fabtrack ras watch` found stuck in the judged window is a
// critical stuck_job problem about "job <id>" that names the ranks holding
// it with their hosts' port changes, in the analysis and its text report; a
// job with only laggards is a job_ranks warning; healthy jobs and verdicts
// before the window raise nothing.
#include <gtest/gtest.h>

#include "analyzer/analyze.h"
#include "analyzer/report/text_report.h"
#include "tests/analyzer/input_builder.h"

namespace fabtrack::analyzer {
namespace {

using testing::InputBuilder;
using testing::kDay;
using testing::kFirstNight;

RasJobView Job(const std::string& id, double judged_at, const std::string& kind,
               const std::string& severity) {
  RasJobView j;
  j.job_id = id;
  j.judged_at = judged_at;
  j.verdict.health = severity;
  j.verdict.snapshots = 3;
  j.verdict.first_taken_at = testing::IsoOf(judged_at - 20);
  j.verdict.last_taken_at = testing::IsoOf(judged_at);
  if (severity != "healthy") {
    j.verdict.findings.push_back(
        {kind,
         severity,
         "0x5e1f00c2a9b4d731",
         kind == "stuck" ? "no collective advanced over 2 snapshots"
                         : "AllReduce: 1 of 4 ranks behind",
         testing::IsoOf(judged_at - 10),
         {RasWatchRank{2, "10.77.0.12", "gpu-w2", "0", 6102, "AllReduce 178, others at 180"}},
         {"gpu-w2: mlx5_3 port 1 link_downed +2 at 2026-12-05T03:12:12Z"},
         {"gpu-w2: link mlx5_3/1 200 Gb/s; 400 Gb/s on the job's other 1 host"}});
    j.verdict.findings[0].ranks[0].nic = "mlx5_0";
  }
  if (kind == "stuck") j.first_stuck_at = j.verdict.last_taken_at;
  return j;
}

TEST(RasJob, AStuckJobIsACriticalProblemNamingItsRanksAndPorts) {
  InputBuilder b;
  b.AddRun(0, 2);
  b.AddRun(5, 2);
  b.JudgeFrom(5);
  const double tonight = kFirstNight + 5 * kDay + 600;
  b.input().ras_jobs = {Job("81234", tonight, "stuck", "critical"),
                        Job("81236", tonight, "", "healthy"),
                        Job("81235", tonight - 60, "laggard", "warning"),
                        Job("70000", kFirstNight + 600, "stuck", "critical")};  // history
  std::vector<Finding> f = testing::DetectOnly("ras_job", b.Build());
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].kind, "stuck_job");
  EXPECT_EQ(f[0].subject, "job 81234");
  EXPECT_EQ(f[0].severity, Severity::kCritical);
  EXPECT_EQ(f[0].host, "gpu-w2");
  EXPECT_EQ(f[0].run_started_at, testing::IsoOf(tonight));
  EXPECT_NE(f[0].message.find("stuck 0x5e1f00c2a9b4d731 since"), std::string::npos) << f[0].message;
  EXPECT_NE(f[0].message.find("(rank 2 on gpu-w2 GPU 0 NIC mlx5_0)"), std::string::npos)
      << f[0].message;
  EXPECT_NE(f[0].message.find("gpu-w2: mlx5_3 port 1 link_downed +2"), std::string::npos);
  EXPECT_NE(f[0].message.find("; gpu-w2: link mlx5_3/1 200 Gb/s; 400 Gb/s on the job's other"),
            std::string::npos)
      << f[0].message;
  EXPECT_EQ(f[0].evidence["first_stuck_at"], testing::IsoOf(tonight));
  EXPECT_EQ(f[1].kind, "job_ranks");
  EXPECT_EQ(f[1].subject, "job 81235");
  EXPECT_EQ(f[1].severity, Severity::kWarning);
}

TEST(RasJob, AProcessDeclaredDeadIsACriticalProblemNamingItsHost) {
  InputBuilder b;
  b.AddRun(0, 2);
  b.AddRun(5, 2);
  b.JudgeFrom(5);
  RasJobView j = Job("81237", kFirstNight + 5 * kDay + 600, "peer_dead", "critical");
  j.verdict.findings[0].communicator = "";
  j.verdict.findings[0].message = "1 process declared dead by RAS's event stream";
  j.verdict.findings[0].ranks = {RasWatchRank{-1, "10.77.0.12", "gpu-w2", "1", 6103, "PEER_DEAD"}};
  b.input().ras_jobs = {j};
  std::vector<Finding> f = testing::DetectOnly("ras_job", b.Build());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].kind, "job_ranks");
  EXPECT_EQ(f[0].severity, Severity::kCritical);
  EXPECT_EQ(f[0].host, "gpu-w2");
  EXPECT_NE(f[0].message.find("peer_dead  since"), std::string::npos) << f[0].message;
  EXPECT_NE(f[0].message.find("1 process declared dead by RAS's event stream (process 6103 on "
                              "gpu-w2 GPU 1)"),
            std::string::npos)
      << f[0].message;
}

TEST(RasJob, TheStuckJobReachesTheReport) {
  InputBuilder b;
  b.AddRun(0, 2);
  b.AddRun(5, 2);
  b.JudgeFrom(5);
  b.input().ras_jobs = {Job("81234", kFirstNight + 5 * kDay + 600, "stuck", "critical")};
  AnalysisResult result = Analyze(b.Build(), AnalyzerConfig{});
  bool problem = false;
  for (const Problem& p : result.problems)
    problem |= p.kind == "stuck_job" && p.subject == "job 81234";
  EXPECT_TRUE(problem);
  std::string text = TextReport(result, testing::IsoOf(kFirstNight + 5 * kDay));
  EXPECT_NE(text.find("job 81234"), std::string::npos) << text;
  EXPECT_NE(text.find("stuck_job"), std::string::npos) << text;
}

}  // namespace
}  // namespace fabtrack::analyzer
