#include <gtest/gtest.h>

#include "tests/analyzer/input_builder.h"

namespace fabtrack::analyzer {
namespace {

using testing::InputBuilder;
using testing::kDay;
using testing::kFirstNight;

constexpr int64_t kMiB = 1 << 20;

// Nightly all_reduce runs on 2 nodes, nights 0..n-1: 64 MiB at `busbw`.
void AddNights(InputBuilder& b, int nights, double busbw) {
  for (int night = 0; night < nights; ++night) {
    RunView& run = b.AddRun(night, 2);
    b.AddResult(run, 8 * kMiB, 120, busbw * 0.8);
    b.AddResult(run, 64 * kMiB, 900, busbw);
    b.AddResult(run, 512 * kMiB, 6000, busbw * 1.05);
  }
}

InspectorJobView& AddJob(InputBuilder& b, double ended_at, double allreduce_64m_busbw) {
  InspectorJobView job;
  job.id = 7;
  job.job_id = "48213";
  job.started_at = ended_at - 3600;
  job.ended_at = ended_at;
  job.ingested_at = ended_at + 600;
  job.nnodes = 2;
  job.nranks = 16;
  InspectorGroupView g;
  g.communicator = "0x9a3f";
  g.collective = "all_reduce";
  g.message_bytes = 64 * kMiB;
  g.nranks = 16;
  g.count = 200;
  g.median_us = 800;
  g.median_busbw_gbps = allreduce_64m_busbw;
  g.slowest_rank = 11;
  g.slowest_rank_host = "node02";
  g.slowest_rank_ratio = 3.0;
  g.slowest_host = "node02";
  g.slowest_host_ratio = 1.25;
  job.groups.push_back(g);
  InspectorGroupView small = g;  // latency bound: never compared
  small.message_bytes = 64 * 1024;
  small.median_busbw_gbps = 1;
  job.groups.push_back(small);
  b.input().inspector_jobs.push_back(job);
  return b.input().inspector_jobs.back();
}

std::vector<Finding> FindingsOf(InputBuilder& b) {
  return testing::DetectOnly("job_fabric", b.Build());
}

TEST(JobFabric, JobAtItsBaselineIsSilent) {
  InputBuilder b;
  AddNights(b, 6, 180);
  AddJob(b, kFirstNight + 6 * kDay, 170);
  EXPECT_TRUE(FindingsOf(b).empty());
}

TEST(JobFabric, JobWellBelowTheNightlyBaselineIsFlaggedWithItsSlowestHost) {
  InputBuilder b;
  AddNights(b, 6, 180);
  AddJob(b, kFirstNight + 6 * kDay, 100);  // -44%
  auto findings = FindingsOf(b);
  ASSERT_EQ(findings.size(), 1u);
  const Finding& f = findings[0];
  EXPECT_EQ(f.kind, "job_fabric");
  EXPECT_EQ(f.severity, Severity::kWarning);
  EXPECT_EQ(f.subject, "job 48213");
  EXPECT_EQ(f.host, "node02");
  EXPECT_DOUBLE_EQ(*f.baseline, 180);
  EXPECT_EQ(f.size_bytes, 64 * kMiB);
  EXPECT_NE(f.message.find("all_reduce 64 MiB at 100.0 GB/s busbw against 180.0 GB/s in the "
                           "nightly benchmarks on 2 nodes (-44%, median of 5 runs)"),
            std::string::npos)
      << f.message;
  EXPECT_NE(f.message.find("slowest host node02 (1.25x the median rank's time, rank 11 3.00x)"),
            std::string::npos)
      << f.message;
  EXPECT_EQ(f.evidence["compared"].size(), 1u);  // the 64 KiB group is latency bound
}

TEST(JobFabric, CollapseIsCritical) {
  InputBuilder b;
  AddNights(b, 6, 180);
  AddJob(b, kFirstNight + 6 * kDay, 30);
  auto findings = FindingsOf(b);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].severity, Severity::kCritical);
}

TEST(JobFabric, OnlyEarlierRunsOfTheSameNodeCountAndCollectiveAreTheBaseline) {
  InputBuilder later;  // the benchmarks all ran after the job ended
  AddNights(later, 6, 180);
  AddJob(later, kFirstNight - kDay, 100);
  EXPECT_TRUE(FindingsOf(later).empty());

  InputBuilder other_nodes;
  for (int night = 0; night < 6; ++night) {
    RunView& run = other_nodes.AddRun(night, 4);
    other_nodes.AddResult(run, 64 * kMiB, 900, 180);
  }
  AddJob(other_nodes, kFirstNight + 6 * kDay, 100);
  EXPECT_TRUE(FindingsOf(other_nodes).empty());

  InputBuilder all_gather;  // nccl-tests sizes all_gather over all ranks
  for (int night = 0; night < 6; ++night) {
    RunView& run = all_gather.AddRun(night, 2);
    run.collective = "all_gather";
    all_gather.AddResult(run, 16 * 4 * kMiB, 900, 180);
  }
  InspectorJobView& job = AddJob(all_gather, kFirstNight + 6 * kDay, 100);
  job.groups[0].collective = "all_gather";
  job.groups[0].message_bytes = 4 * kMiB;  // per rank: 64 MiB in all
  auto findings = FindingsOf(all_gather);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_DOUBLE_EQ(*findings[0].baseline, 180);
}

}  // namespace
}  // namespace fabtrack::analyzer
