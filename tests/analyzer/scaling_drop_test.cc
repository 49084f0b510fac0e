#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "analyzer/input_index.h"
#include "core/clock.h"
#include "tests/analyzer/input_builder.h"

namespace fabtrack::analyzer {
namespace {

using testing::InputBuilder;

constexpr int64_t kMiB = 1 << 20;
const std::vector<int64_t> kSmall = {8, 1024, 65536};                  // latency band
const std::vector<int64_t> kLarge = {64 * kMiB, 256 * kMiB, 1 << 30};  // busbw band

std::vector<Finding> FindingsOf(InputBuilder& b, const AnalyzerConfig& config = {}) {
  return testing::DetectOnly("scaling_drop", b.Build(), config);
}

struct Point {
  double efficiency = 1;     // busbw(N) / 100 GB/s
  double latency_ratio = 1;  // t(N) / 20 µs
};

// One sweep in `night`: a run per node count, large sizes at 100 GB/s x E,
// small sizes at 20 µs x ratio (and 1 MiB in between, in neither band).
std::map<int, RunView*> AddSweep(InputBuilder& b, int night, const std::map<int, Point>& curve,
                                 const std::string& backend = "") {
  std::map<int, RunView*> runs;
  double offset = 0;
  for (const auto& [nodes, p] : curve) {
    RunView& run = b.AddRun(night, nodes, offset += 300);
    if (!backend.empty()) {
      run.source = "fabtrack-allreduce";
      run.backend = backend;
    }
    for (int64_t size : kSmall) b.AddResult(run, size, 20 * p.latency_ratio, 0.01);
    b.AddResult(run, kMiB, 50, 30);
    for (int64_t size : kLarge) b.AddResult(run, size, 1000, 100 * p.efficiency);
    runs[nodes] = &run;
  }
  return runs;
}

// A healthy fabric: busbw flat, latency growing like log2(N).
const std::map<int, Point> kHealthy = {
    {1, {3.0, 0.2}}, {2, {1, 1}}, {4, {0.97, 2}}, {8, {0.95, 3}}, {16, {0.93, 4}}};

TEST(ScalingDrop, HealthySweepIsSilent) {
  InputBuilder b;
  AddSweep(b, 0, kHealthy);
  EXPECT_TRUE(FindingsOf(b).empty());
}

TEST(ScalingDrop, ThrottledLinkBreaksLinearityAtItsNodeCount) {
  InputBuilder b;
  auto runs =
      AddSweep(b, 0, {{1, {2, 0.2}}, {2, {1, 1}}, {3, {0.95, 1.5}}, {4, {0.5, 2}}, {8, {0.3, 3}}});
  runs[4]->link_straggler_host = "node04";
  auto findings = FindingsOf(b);
  ASSERT_EQ(findings.size(), 1u);  // one per sweep, at the smallest broken N
  const Finding& f = findings[0];
  EXPECT_EQ(f.kind, "scaling_drop");
  EXPECT_EQ(f.subject, ScalingFamilyName(*runs[4]) + "/busbw");
  EXPECT_EQ(f.severity, Severity::kWarning);  // 0.5 is not below critical_efficiency 0.5
  EXPECT_EQ(f.nodes, 4);
  EXPECT_EQ(f.run_id, runs[4]->id);
  EXPECT_NEAR(*f.value, 0.5, 1e-12);
  EXPECT_DOUBLE_EQ(*f.baseline, 0.8);
  EXPECT_EQ(f.host, "node04");
  EXPECT_EQ(f.evidence["reference_nodes"], 2);
  const nlohmann::json& curve = f.evidence["efficiency"];
  ASSERT_EQ(curve.size(), 4u);  // 2, 3, 4, 8: the single node is not on the curve
  EXPECT_NEAR(curve["2"].get<double>(), 1, 1e-12);
  EXPECT_NEAR(curve["3"].get<double>(), 0.95, 1e-12);
  EXPECT_NEAR(curve["4"].get<double>(), 0.5, 1e-12);
  EXPECT_NEAR(curve["8"].get<double>(), 0.3, 1e-12);
  EXPECT_EQ(f.evidence["large_sizes"], nlohmann::json(kLarge));
  EXPECT_NE(f.message.find("scaling breaks at 4 nodes"), std::string::npos) << f.message;
  EXPECT_NE(f.message.find("node04"), std::string::npos) << f.message;
}

TEST(ScalingDrop, CollapseIsCritical) {
  InputBuilder b;
  AddSweep(b, 0, {{2, {1, 1}}, {4, {0.3, 2}}});
  auto findings = FindingsOf(b);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].severity, Severity::kCritical);

  InputBuilder zero;  // nccl-tests prints 0.00 GB/s for a link that all but stopped
  AddSweep(zero, 0, {{2, {1, 1}}, {4, {0, 2}}});
  findings = FindingsOf(zero);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(*findings[0].value, 0);
}

TEST(ScalingDrop, LatencyGrowingFasterThanTheNodeCount) {
  InputBuilder b;
  // 2 -> 4 nodes: allowed (1 + 1) x 2 = 4x; 4.5x breaks. 3 nodes: 2.5x of 3x allowed.
  auto runs = AddSweep(b, 0, {{2, {1, 1}}, {3, {1, 2.5}}, {4, {0.98, 4.5}}, {8, {0.95, 9}}});
  auto findings = FindingsOf(b);
  ASSERT_EQ(findings.size(), 1u);
  const Finding& f = findings[0];
  EXPECT_EQ(f.subject, ScalingFamilyName(*runs[4]) + "/latency");
  EXPECT_EQ(f.nodes, 4);
  EXPECT_NEAR(*f.value, 4.5, 1e-12);
  EXPECT_NEAR(*f.baseline, 4, 1e-12);
  EXPECT_NEAR(f.evidence["latency_ratio"]["8"].get<double>(), 9, 1e-12);
  EXPECT_EQ(f.evidence["latency_metric"], "time");
  EXPECT_NE(f.message.find("latency grows faster than the node count at 4 nodes"),
            std::string::npos)
      << f.message;
}

// A run with more ranks than CPUs on one machine (a one-machine fabric past
// its CPU count) times the scheduler at small sizes: its latency is not
// compared; its large-message busbw still is.
TEST(ScalingDrop, OversubscribedRunsKeepBusbwButNotLatency) {
  InputBuilder b;
  auto runs = AddSweep(b, 0, {{2, {1, 1}}, {3, {0.5, 60}}, {4, {0.04, 80}}}, "mpi");
  runs[3]->oversubscribed = true;
  runs[4]->oversubscribed = true;
  auto findings = FindingsOf(b);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].subject, ScalingFamilyName(*runs[4]) + "/busbw");
  EXPECT_EQ(findings[0].nodes, 4);
  EXPECT_FALSE(findings[0].evidence["latency_ratio"].contains("4"));
}

TEST(ScalingDrop, BothCurvesBreakingGiveTwoFindings) {
  InputBuilder b;
  AddSweep(b, 0, {{2, {1, 1}}, {4, {0.6, 6}}});
  auto findings = FindingsOf(b);
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_NE(findings[0].subject, findings[1].subject);
}

TEST(ScalingDrop, HarnessLatencyUsesPerIterationMedians) {
  InputBuilder b;
  auto runs = AddSweep(b, 0, {{2, {1, 1}}, {4, {1, 1}}});
  // Mean times equal, but the 4-node medians are 6x: an outlier-free signal.
  for (ResultPoint& r : b.input().results) {
    r.lat_p50_us = r.run_id == runs[4]->id ? 120 : 20;
  }
  auto findings = FindingsOf(b);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].evidence["latency_metric"], "p50");
  EXPECT_NEAR(*findings[0].value, 6, 1e-12);
}

TEST(ScalingDrop, BelowItsOwnHistoryIsFlagged) {
  InputBuilder b;
  for (int night = 0; night < 3; ++night) AddSweep(b, night, {{2, {1, 1}}, {4, {0.97, 2}}});
  auto tonight = AddSweep(b, 3, {{2, {1, 1}}, {4, {0.84, 2}}});  // above 0.8, 0.13 below history
  b.JudgeFrom(3);
  auto findings = FindingsOf(b);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].run_id, tonight[4]->id);
  EXPECT_NEAR(*findings[0].baseline, 0.97, 1e-12);
  EXPECT_EQ(findings[0].evidence["history"]["4"]["sweeps"], 3);
  EXPECT_NE(findings[0].message.find("below the median 0.97 of 3 earlier sweeps"),
            std::string::npos)
      << findings[0].message;
}

TEST(ScalingDrop, HistoryNeedsEnoughSweepsAndRespectsItsSpread) {
  InputBuilder short_history;  // 2 earlier sweeps < min_history 3
  for (int night = 0; night < 2; ++night) {
    AddSweep(short_history, night, {{2, {1, 1}}, {4, {0.97, 2}}});
  }
  AddSweep(short_history, 2, {{2, {1, 1}}, {4, {0.84, 2}}});
  short_history.JudgeFrom(2);
  EXPECT_TRUE(FindingsOf(short_history).empty());

  InputBuilder wandering;  // E(4) wanders by +-0.15 night to night: 0.84 is within it
  const std::vector<double> past = {0.8, 1.1, 0.95, 0.82, 1.08, 0.97};
  for (size_t night = 0; night < past.size(); ++night) {
    AddSweep(wandering, static_cast<int>(night), {{2, {1, 1}}, {4, {past[night], 2}}});
  }
  AddSweep(wandering, 6, {{2, {1, 1}}, {4, {0.84, 2}}});
  wandering.JudgeFrom(6);
  EXPECT_TRUE(FindingsOf(wandering).empty());
}

// Issue 32's noise model: a harness sweep records each size's per-iteration
// CV over its timed iterations. `cv` on every size of every run of the sweep
// but the ones in `noisy` (which get `noisy_cv`).
void SetWithinRunSpread(const std::map<int, RunView*>& sweep, InputBuilder& b, double cv,
                        const std::set<int>& noisy = {}, double noisy_cv = 0) {
  for (const auto& [nodes, run] : sweep) {
    run->source = "fabtrack-allreduce";
    run->iters = 20;
    for (ResultPoint& r : b.input().results) {
      if (r.run_id == run->id) r.lat_cv = noisy.contains(nodes) ? noisy_cv : cv;
    }
  }
}

// Ten steady sweeps (CV 3% over 20 iterations: 0.7% within-run sigma per
// run) whose E(4) sits at 0.97 +- 0.01, then tonight's sweep at `tonight_e`
// with the 4-node run's iterations scattered by `cv4`.
InputBuilder HistoryThenTonight(double tonight_e, double cv4) {
  InputBuilder b;
  const std::vector<double> past = {0.97, 0.96, 0.98, 0.97, 0.965, 0.975, 0.97, 0.98, 0.96, 0.97};
  for (size_t night = 0; night < past.size(); ++night) {
    auto sweep = AddSweep(b, static_cast<int>(night), {{2, {1, 1}}, {4, {past[night], 2}}});
    SetWithinRunSpread(sweep, b, 0.03);
  }
  const int tonight = static_cast<int>(past.size());
  auto sweep = AddSweep(b, tonight, {{2, {1, 1}}, {4, {tonight_e, 2}}});
  SetWithinRunSpread(sweep, b, 0.03, {4}, cv4);
  b.JudgeFrom(tonight);
  return b;
}

// A 4-node run whose iterations scattered by a CV of 30% has a mean off by
// 30% / sqrt(20) = 6.7% (sigma) by its own spread alone: 12% below the
// family's median is under two of its sigmas, no break of the scaling. The
// same 12% from a run as steady as the history's is one; and a collapse to
// 60% stands out of even the noisy run's spread.
TEST(ScalingDrop, ADropWithinTheRunsOwnSpreadIsNoBreak) {
  InputBuilder noisy = HistoryThenTonight(0.85, 0.3);
  EXPECT_TRUE(FindingsOf(noisy).empty()) << FindingsOf(noisy)[0].message;

  AnalyzerConfig off;  // the model off: the history's band alone (the rule before issue 32)
  off.overrides["scaling_drop"]["within_run_noise"] = 0;
  auto before = FindingsOf(noisy, off);
  ASSERT_EQ(before.size(), 1u);
  EXPECT_EQ(before[0].nodes, 4);

  InputBuilder steady = HistoryThenTonight(0.85, 0.03);
  auto findings = FindingsOf(steady);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_NEAR(findings[0].evidence["history"]["4"]["allowed_drop"].get<double>(), 0.1, 1e-12);

  InputBuilder collapse = HistoryThenTonight(0.6, 0.3);
  for (const AnalyzerConfig& config : {AnalyzerConfig{}, off}) {
    findings = FindingsOf(collapse, config);
    ASSERT_EQ(findings.size(), 1u);
    EXPECT_EQ(findings[0].nodes, 4);
    EXPECT_NEAR(*findings[0].value, 0.6, 1e-12);
  }
  // The noisy run's band: 3 sigmas of sqrt(history's spread^2 + its own
  // within-run variance less the typical one), about 0.2 here.
  findings = FindingsOf(collapse);
  const nlohmann::json& h = findings[0].evidence["history"]["4"];
  EXPECT_NEAR(h["within_sigma"].get<double>(), std::sqrt((0.09 + 0.0009) / 20), 1e-9);
  EXPECT_NEAR(h["typical_within_sigma"].get<double>(), std::sqrt(0.0018 / 20), 1e-9);
  EXPECT_GT(h["allowed_drop"].get<double>(), 0.19);
  EXPECT_LT(h["allowed_drop"].get<double>(), 0.23);
}

// A summarised history (schema 015) keeps each run's E(N) with its
// within-run variance: judging on it equals judging on the rows. Figures kept
// before the variance was ({reference id, E(N)}) are still read, the
// variance unknown.
TEST(ScalingDrop, ASummarisedHistoryKeepsTheWithinRunVariance) {
  const std::string key = SummaryKey("scaling_drop.efficiency", "large_min_bytes=67108864");
  auto summarise = [&](InputBuilder& b, bool legacy) {
    AnalysisInput& in = b.input();
    std::map<int64_t, int64_t> ref_by_night;  // night -> its 2-node run's id
    for (const RunView& run : in.runs) {
      if (in.Judged(run)) continue;
      if (run.nodes == 2) ref_by_night[NightOf(run.started_at)] = run.id;
    }
    for (RunView& run : in.runs) {
      if (in.Judged(run)) continue;
      const int64_t ref = ref_by_night.at(NightOf(run.started_at));
      double ref_bw = 0, bw = 0;
      for (const ResultPoint& r : in.results) {
        if (r.size_bytes != 256 * kMiB) continue;
        if (r.run_id == ref) ref_bw = *r.busbw_gbps;
        if (r.run_id == run.id) bw = *r.busbw_gbps;
      }
      std::vector<double> figure = {static_cast<double>(ref), bw / ref_bw};
      if (!legacy) figure.push_back(2 * 0.03 * 0.03 / 20);
      in.summaries[run.id][key] = figure;
      run.summarized = true;
      run.results_loaded = false;
    }
  };
  InputBuilder full = HistoryThenTonight(0.6, 0.3);
  InputBuilder kept = HistoryThenTonight(0.6, 0.3);
  summarise(kept, false);
  auto from_rows = FindingsOf(full);
  auto from_summaries = FindingsOf(kept);
  ASSERT_EQ(from_rows.size(), 1u);
  ASSERT_EQ(from_summaries.size(), 1u);
  EXPECT_NEAR(from_summaries[0].evidence["history"]["4"]["allowed_drop"].get<double>(),
              from_rows[0].evidence["history"]["4"]["allowed_drop"].get<double>(), 1e-9);

  InputBuilder legacy = HistoryThenTonight(0.85, 0.3);
  summarise(legacy, true);
  EXPECT_TRUE(FindingsOf(legacy).empty());  // read, no SummaryMiss; the run's own spread counts
}

// A noisy reference run makes every node count's E(N) read low at once:
// its within-run variance counts in every E(N) of the sweep.
TEST(ScalingDrop, ANoisyReferenceRunWidensEveryNodeCount) {
  InputBuilder b;
  const std::vector<double> past = {0.97, 0.96, 0.98, 0.97, 0.965, 0.975, 0.97, 0.98, 0.96, 0.97};
  for (size_t night = 0; night < past.size(); ++night) {
    auto sweep = AddSweep(b, static_cast<int>(night),
                          {{2, {1, 1}}, {4, {past[night], 2}}, {8, {past[night] - 0.02, 3}}});
    SetWithinRunSpread(sweep, b, 0.03);
  }
  // The 2-node run read 14% high: both E(N) 0.12-0.13 below their medians.
  auto sweep = AddSweep(b, 10, {{2, {1.14, 1}}, {4, {0.97, 2}}, {8, {0.95, 3}}});
  SetWithinRunSpread(sweep, b, 0.03, {2}, 0.3);
  b.JudgeFrom(10);
  EXPECT_TRUE(FindingsOf(b).empty());
  AnalyzerConfig off;
  off.overrides["scaling_drop"]["within_run_noise"] = 0;
  EXPECT_EQ(FindingsOf(b, off).size(), 1u);
}

TEST(ScalingDrop, FewerThanTwoMultiNodeCountsSaySomething) {
  InputBuilder b;
  AddSweep(b, 0, {{1, {5, 0.1}}, {2, {1, 1}}});  // one multi-node count only
  EXPECT_TRUE(FindingsOf(b).empty());

  InputBuilder two;  // 2 and 4: enough
  AddSweep(two, 0, {{2, {1, 1}}, {4, {0.4, 2}}});
  EXPECT_EQ(FindingsOf(two).size(), 1u);
}

TEST(ScalingDrop, RunsWithoutSweepIdGroupByNight) {
  InputBuilder b;
  auto runs = AddSweep(b, 0, {{2, {1, 1}}, {4, {0.4, 2}}});
  for (auto& [nodes, run] : runs) run->sweep_id.reset();
  auto other_night = AddSweep(b, 1, {{8, {0.4, 2}}});  // a different night: not this sweep
  other_night[8]->sweep_id.reset();
  auto findings = FindingsOf(b);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].nodes, 4);
  EXPECT_EQ(findings[0].evidence["efficiency"].size(), 2u);
}

TEST(ScalingDrop, WithoutLargeSizesTheLargestQuarterOfCommonSizesIsUsed) {
  InputBuilder b;
  RunView& two = b.AddRun(0, 2);
  RunView& four = b.AddRun(0, 4, 300);
  // 8 sizes up to 1 MiB: the largest quarter is 512 KiB and 1 MiB. The 4-node
  // run also has 2 MiB, which the reference lacks: not compared.
  for (int64_t size = 8 * 1024; size <= kMiB; size *= 2) {
    b.AddResult(two, size, 10, 10);
    b.AddResult(four, size, 10, size >= 512 * 1024 ? 4 : 10);
  }
  b.AddResult(four, 2 * kMiB, 10, 100);
  auto findings = FindingsOf(b);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_NEAR(*findings[0].value, 0.4, 1e-12);
  EXPECT_EQ(findings[0].evidence["large_sizes"], nlohmann::json({512 * 1024, kMiB}));
}

TEST(ScalingDrop, ComparesOnlySizesBothRunsMeasured) {
  InputBuilder b;
  RunView& two = b.AddRun(0, 2);
  RunView& four = b.AddRun(0, 4, 300);
  // The 4-node run stopped before 1 GiB (where the 2-node run was fastest):
  // over 64 and 256 MiB both runs have a median of 75 GB/s.
  b.AddResult(two, 64 * kMiB, 10, 50);
  b.AddResult(two, 256 * kMiB, 10, 100);
  b.AddResult(two, 1 << 30, 10, 100);
  b.AddResult(four, 64 * kMiB, 10, 50);
  b.AddResult(four, 256 * kMiB, 10, 100);
  EXPECT_TRUE(FindingsOf(b).empty());
}

TEST(ScalingDrop, MpiBackendIsJudgedWithHostPathThresholds) {
  // Host-memory MPI on hosts sharing CPUs: a third of the busbw and latency
  // jumping 20x at 4 nodes is the hosts, not the fabric.
  InputBuilder shared_cpus;
  AddSweep(shared_cpus, 0, {{1, {0, 0.01}}, {2, {1, 1}}, {3, {0.3, 5}}, {4, {0.25, 20}}}, "mpi");
  EXPECT_TRUE(FindingsOf(shared_cpus).empty());

  InputBuilder throttled;  // a 100 Mbit/s link on node 4: busbw falls to a hundredth
  auto runs = AddSweep(throttled, 0, {{2, {1, 1}}, {3, {0.35, 3}}, {4, {0.01, 60}}}, "mpi");
  runs[4]->link_straggler_host = "node04";
  auto findings = FindingsOf(throttled);
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(findings[0].severity, Severity::kCritical);  // busbw first
  EXPECT_EQ(findings[0].nodes, 4);
  EXPECT_DOUBLE_EQ(*findings[0].baseline, 0.1);
  EXPECT_EQ(findings[0].host, "node04");
  EXPECT_EQ(findings[1].subject, ScalingFamilyName(*runs[4]) + "/latency");
  EXPECT_NEAR(*findings[1].baseline, 50, 1e-12);  // (1 + 24) x 4/2
}

TEST(ScalingDrop, OnlySweepsWithAJudgedRunAreJudged) {
  InputBuilder b;
  AddSweep(b, 0, {{2, {1, 1}}, {4, {0.3, 2}}});
  AddSweep(b, 1, kHealthy);
  b.JudgeFrom(1);
  EXPECT_TRUE(FindingsOf(b).empty());
}

TEST(ScalingDrop, ThresholdsAreSettings) {
  InputBuilder b;
  AddSweep(b, 0, {{2, {1, 1}}, {4, {0.85, 3}}});
  EXPECT_TRUE(FindingsOf(b).empty());
  AnalyzerConfig config;
  config.overrides["scaling_drop"]["min_efficiency"] = 0.9;
  config.overrides["scaling_drop"]["latency_tolerance"] = 0.25;  // allowed 2.5x
  auto findings = FindingsOf(b, config);
  ASSERT_EQ(findings.size(), 2u);
}

}  // namespace
}  // namespace fabtrack::analyzer
