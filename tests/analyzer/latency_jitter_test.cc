#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analyzer/input_index.h"
#include "tests/analyzer/input_builder.h"

namespace fabtrack::analyzer {
namespace {

using testing::InputBuilder;

// Band sizes (<= 1 MiB) and one size above the band.
const std::vector<int64_t> kBandSizes = {8, 64, 512, 4096, 32768, 262144};
constexpr int64_t kAboveBand = 16 << 20;

std::vector<Finding> FindingsOf(InputBuilder& b, const AnalyzerConfig& config = {}) {
  return testing::DetectOnly("latency_jitter", b.Build(), config);
}

// A harness run (NCCL backend unless `backend` says otherwise) whose band
// sizes all have the given per-iteration CV and p99/p50, p50 = 20 µs.
RunView& AddHarnessRun(InputBuilder& b, int night, double cv, double p99_p50,
                       const std::string& backend = "nccl", int nodes = 4) {
  RunView& run = b.AddRun(night, nodes);
  run.source = "fabtrack-allreduce";
  run.backend = backend;
  for (int64_t size : kBandSizes) {
    ResultPoint& r = b.AddResult(run, size, 22, 1);
    r.lat_p50_us = 20;
    r.lat_p99_us = 20 * p99_p50;
    r.lat_cv = cv;
  }
  // Far above the band and wildly jittery: must not count.
  ResultPoint& big = b.AddResult(run, kAboveBand, 5000, 100);
  big.lat_p50_us = 4000;
  big.lat_p99_us = 400000;
  big.lat_cv = 9;
  return run;
}

// Sets the straggler of the run's band sizes: `hosts[i]` at size i, leading
// the median rank by `share` of p50.
void SetStragglers(InputBuilder& b, const RunView& run, const std::vector<std::string>& hosts,
                   double share) {
  size_t i = 0;
  for (ResultPoint& r : b.input().results) {
    if (r.run_id != run.id || r.size_bytes > (1 << 20) || i >= hosts.size()) continue;
    r.straggler_host = hosts[i++];
    r.straggler_excess_us = share * *r.lat_p50_us;
  }
}

TEST(LatencyJitter, SteadyRunIsSilent) {
  InputBuilder b;
  AddHarnessRun(b, 0, 0.05, 1.3);
  EXPECT_TRUE(FindingsOf(b).empty());
}

TEST(LatencyJitter, CpuHogRunIsFlaggedAndNamesTheStraggler) {
  InputBuilder b;
  RunView& run = AddHarnessRun(b, 0, 0.9, 8);
  SetStragglers(b, run, {"node03", "node03", "node01", "node03", "node03", "node03"}, 0.4);
  auto findings = FindingsOf(b);
  ASSERT_EQ(findings.size(), 1u);
  const Finding& f = findings[0];
  EXPECT_EQ(f.kind, "latency_jitter");
  EXPECT_EQ(f.severity, Severity::kWarning);
  EXPECT_EQ(f.subject, SeriesName(run));
  EXPECT_EQ(f.run_id, run.id);
  EXPECT_DOUBLE_EQ(*f.value, 0.9);
  EXPECT_DOUBLE_EQ(*f.baseline, 0.5);  // no history: the threshold
  EXPECT_NE(f.unit->find("CV"), std::string::npos);
  EXPECT_EQ(f.host, "node03");
  // Its largest lead: 40% of p50 = 8 µs, first reached at 8 B.
  EXPECT_EQ(f.size_bytes, 8);
  EXPECT_NE(f.message.find("node03 is the straggler: +8 \u00b5s over the median rank at 8 B"),
            std::string::npos)
      << f.message;
  EXPECT_NE(f.message.find("p99/p50 8.0"), std::string::npos) << f.message;
  EXPECT_EQ(f.evidence["straggler"]["sizes"], 5);
  EXPECT_EQ(f.evidence["sizes"].size(), kBandSizes.size());  // the 16 MiB row is out of band
}

TEST(LatencyJitter, StragglerNeedsAMajorityAndAMaterialLead) {
  InputBuilder rotating;
  RunView& a = AddHarnessRun(rotating, 0, 0.9, 8);
  SetStragglers(rotating, a, {"node01", "node02", "node03", "node04", "node01", "node02"}, 0.4);
  auto findings = FindingsOf(rotating);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_FALSE(findings[0].host.has_value());
  EXPECT_EQ(findings[0].message.find("straggler"), std::string::npos);

  InputBuilder small_lead;  // always node03, but by 5% of p50 only
  RunView& c = AddHarnessRun(small_lead, 0, 0.9, 8);
  SetStragglers(small_lead, c, std::vector<std::string>(6, "node03"), 0.05);
  findings = FindingsOf(small_lead);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_FALSE(findings[0].host.has_value());
}

TEST(LatencyJitter, TailAloneIsReportedAsP99OverP50) {
  InputBuilder b;
  AddHarnessRun(b, 0, 0.3, 7);
  auto findings = FindingsOf(b);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_DOUBLE_EQ(*findings[0].value, 7);
  EXPECT_DOUBLE_EQ(*findings[0].baseline, 5);
  EXPECT_NE(findings[0].unit->find("p99/p50"), std::string::npos);
}

TEST(LatencyJitter, MpiBackendHasItsOwnLooserThresholds) {
  // MPI over kernel TCP on loaded hosts: CV 0.7 is ordinary there.
  InputBuilder ordinary;
  AddHarnessRun(ordinary, 0, 0.7, 6, "mpi");
  EXPECT_TRUE(FindingsOf(ordinary).empty());

  InputBuilder hog;
  AddHarnessRun(hog, 0, 1.5, 12, "mpi");
  auto findings = FindingsOf(hog);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_DOUBLE_EQ(*findings[0].baseline, 0.8);
}

// More ranks than CPUs on a machine: the jitter is the scheduler's, so the
// run is not judged (the same run with a CPU per rank is).
TEST(LatencyJitter, OversubscribedRunsAreNotJudged) {
  InputBuilder b;
  RunView& run = AddHarnessRun(b, 0, 1.5, 12, "mpi");
  run.oversubscribed = true;
  run.max_ranks_per_machine = 4;
  run.cpus_per_machine = 2;
  EXPECT_TRUE(FindingsOf(b).empty());
  b.input().runs.back().oversubscribed = false;
  EXPECT_EQ(FindingsOf(b).size(), 1u);
}

TEST(LatencyJitter, WellAboveItsOwnHistoryIsFlagged) {
  InputBuilder b;
  for (int night = 0; night < 6; ++night) AddHarnessRun(b, night, 0.1, 1.5);
  RunView& tonight = AddHarnessRun(b, 6, 0.4, 2.5);  // below max_cv 0.5, 4x the history
  b.JudgeFrom(6);
  auto findings = FindingsOf(b);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].run_id, tonight.id);
  EXPECT_DOUBLE_EQ(*findings[0].value, 0.4);
  EXPECT_DOUBLE_EQ(*findings[0].baseline, 0.1);
  EXPECT_NE(findings[0].message.find("4.0x the series' median 0.10 over 6 earlier runs"),
            std::string::npos)
      << findings[0].message;
  EXPECT_EQ(findings[0].evidence["cv"]["above_history"], true);
  EXPECT_EQ(findings[0].evidence["cv"]["above_threshold"], false);
}

TEST(LatencyJitter, HistoryNeedsEnoughRunsAFactorAndAFloor) {
  InputBuilder short_history;  // 4 earlier runs < min_history 5
  for (int night = 0; night < 4; ++night) AddHarnessRun(short_history, night, 0.1, 1.5);
  AddHarnessRun(short_history, 4, 0.4, 2.5);
  short_history.JudgeFrom(4);
  EXPECT_TRUE(FindingsOf(short_history).empty());

  InputBuilder small_factor;  // 2.5x < history_factor 3
  for (int night = 0; night < 6; ++night) AddHarnessRun(small_factor, night, 0.14, 1.5);
  AddHarnessRun(small_factor, 6, 0.35, 2.5);
  small_factor.JudgeFrom(6);
  EXPECT_TRUE(FindingsOf(small_factor).empty());

  InputBuilder quiet;  // 10x a very quiet series, but under the floor (0.3)
  for (int night = 0; night < 6; ++night) AddHarnessRun(quiet, night, 0.02, 1.1);
  AddHarnessRun(quiet, 6, 0.2, 1.4);
  quiet.JudgeFrom(6);
  EXPECT_TRUE(FindingsOf(quiet).empty());
}

TEST(LatencyJitter, HistoryIsNotJudged) {
  InputBuilder b;
  AddHarnessRun(b, 0, 2.0, 30);
  AddHarnessRun(b, 1, 0.05, 1.2);
  b.JudgeFrom(1);
  EXPECT_TRUE(FindingsOf(b).empty());
}

TEST(LatencyJitter, ThresholdsAreSettings) {
  InputBuilder b;
  AddHarnessRun(b, 0, 0.3, 2);
  EXPECT_TRUE(FindingsOf(b).empty());
  AnalyzerConfig config;
  config.overrides["latency_jitter"]["max_cv"] = 0.25;
  auto findings = FindingsOf(b, config);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_DOUBLE_EQ(*findings[0].baseline, 0.25);
}

// nccl-tests: `times[i]` is cycle i's time at every band size.
void AddCycles(InputBuilder& b, int night, const std::vector<double>& times) {
  for (size_t i = 0; i < times.size(); ++i) {
    RunView& run = b.AddRun(night, 2, 600.0 * static_cast<double>(i));
    for (int64_t size : kBandSizes) b.AddResult(run, size, times[i], 1);
    b.AddResult(run, kAboveBand, 1000 * (i + 1), 100);  // out of band
  }
}

TEST(LatencyJitter, NcclTestsCyclesOfOneNightAreJudgedTogether) {
  InputBuilder b;
  AddCycles(b, 0, {10, 25, 40});  // CV 0.6 across cycles
  auto findings = FindingsOf(b);
  ASSERT_EQ(findings.size(), 1u);
  const Finding& f = findings[0];
  EXPECT_EQ(f.run_id, 3);  // the night's newest cycle
  EXPECT_NEAR(*f.value, 0.6, 1e-9);
  EXPECT_NE(f.unit->find("across cycles"), std::string::npos);
  EXPECT_EQ(f.evidence["cycles"], nlohmann::json({1, 2, 3}));
  EXPECT_EQ(f.evidence["cv_by_size"].size(), kBandSizes.size());
  EXPECT_NE(f.message.find("3 cycles"), std::string::npos);
}

TEST(LatencyJitter, NcclTestsCyclesAreJudgedAgainstEarlierNights) {
  InputBuilder b;
  for (int night = 0; night < 5; ++night) AddCycles(b, night, {10, 10.5, 11});  // CV 0.048
  AddCycles(b, 5, {10, 15, 20});  // CV 0.33: under max_cv, 7x the earlier nights
  b.JudgeFrom(5);
  auto findings = FindingsOf(b);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_NEAR(*findings[0].value, 1.0 / 3, 1e-9);
  EXPECT_NEAR(*findings[0].baseline, 0.5 / 10.5, 1e-9);
  EXPECT_EQ(findings[0].evidence["cv"]["history_runs"], 5);
}

TEST(LatencyJitter, SteadyOrTooFewCyclesAreSilent) {
  InputBuilder steady;
  AddCycles(steady, 0, {10, 10.4, 9.8, 10.1});
  EXPECT_TRUE(FindingsOf(steady).empty());

  InputBuilder two;
  AddCycles(two, 0, {10, 40});
  EXPECT_TRUE(FindingsOf(two).empty());

  InputBuilder apart;  // one cycle per night is not a set of cycles
  for (int night = 0; night < 3; ++night) AddCycles(apart, night, {10.0 + 15 * night});
  EXPECT_TRUE(FindingsOf(apart).empty());
}

}  // namespace
}  // namespace fabtrack::analyzer
